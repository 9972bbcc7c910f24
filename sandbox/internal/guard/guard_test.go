package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// strongToken is a control token the sandbox accepts: 256 random bits in hex.
const strongToken = "7c1e9a4f3b2d8e6a0f5c9b1d4e7a2c8f3b6d9e0a1c4f7b2e5d8a3c6f9b0e1d4a"

// fakeWall is the real-time clock of the failure table, moved by hand.
type fakeWall struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeWall) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeWall) add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func newWall() *fakeWall { return &fakeWall{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// jsonRefuse writes a refusal as package api does: {"error","message","data"}.
func jsonRefuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": code, "message": msg, "data": map[string]any{}})
}

// guardMux serves g's login routes and one guarded view, GET
// /sandbox/state, which answers {"ok":true} once admitted.
func guardMux(g *Guard) *http.ServeMux {
	mux := http.NewServeMux()
	g.LoginRoutes(mux)
	mux.HandleFunc("GET /sandbox/state", func(w http.ResponseWriter, r *http.Request) {
		if g.Admit(w, r, false) {
			fmt.Fprint(w, `{"ok":true}`)
		}
	})
	return mux
}

// TestLocal protects the Host check against DNS rebinding: only loopback
// names and addresses pass, whatever the port, unless remote control is
// allowed.
func TestLocal(t *testing.T) {
	g := New(Config{})
	remote := New(Config{AllowRemote: true})
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "127.0.0.1": true, "127.0.0.1:8080": true,
		"127.5.6.7:1": true, "[::1]": true, "[::1]:8080": true,
		"evil.example": false, "evil.example:8080": false, "localhost.evil.example": false,
		"10.0.0.1:8080": false, "[::2]:80": false, "0.0.0.0:8080": false, "": false,
		"127.0.0.1.nip.io": false, "[fe80::1%25lo]:80": false,
	} {
		r := httptest.NewRequest("GET", "/sandbox/state", nil)
		r.Host = host
		if got := g.Local(r); got != want {
			t.Errorf("Local(Host %q) = %v, want %v", host, got, want)
		}
		if !remote.Local(r) {
			t.Errorf("AllowRemote refused Host %q", host)
		}
	}
}

// A login session belongs to one token: another token's cookie does not
// open this sandbox, and the cookie is not the token.
func TestSessionIsTheTokens(t *testing.T) {
	g := New(Config{ControlToken: strongToken})
	other := New(Config{ControlToken: strongToken + "0"})
	if g.Session() == other.Session() || strings.Contains(g.Session(), strongToken) || len(g.Session()) != 64 {
		t.Fatalf("sessions %q and %q", g.Session(), other.Session())
	}
}

// Wrong control tokens from one address are slowed: a few are answered
// 401, then the address's wrong tokens get 429 with a Retry-After that
// doubles with each further failure, while the right token, other
// addresses and a logged-in session are not affected. 900 wrong tokens in
// a row are thus 6 counted guesses, not 900. Every failure is logged with
// the address, never the token.
func TestWrongControlTokensAreSlowedPerAddress(t *testing.T) {
	var logs bytes.Buffer // the handlers run on the test's goroutine
	wall := newWall()
	g := New(Config{AllowRemote: true, ControlToken: strongToken, Now: wall.now, Refuse: jsonRefuse,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	mux := guardMux(g)
	get := func(addr, tok string, hdr ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "http://sandbox.example/sandbox/state", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", "Bearer "+tok)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	const attacker, colleague = "203.0.113.7:5555", "198.51.100.2:4444"
	counts := map[int]int{}
	for i := range 900 {
		counts[get(attacker, fmt.Sprintf("guess-%d", i)).Code]++
	}
	if counts[401] != freeFailures+1 || counts[429] != 900-freeFailures-1 {
		t.Fatalf("answers to 900 wrong tokens: %v", counts)
	}
	rec := get(attacker, "guess-blocked")
	if rec.Code != 429 || rec.Body.String() != `{"data":{},"error":"SANDBOX_UNAUTHORIZED","message":"too many wrong control tokens from this address: try again in 1 s"}`+"\n" {
		t.Fatalf("a wrong token during the block: %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("a wrong token during the block: Retry-After %q", rec.Header().Get("Retry-After"))
	}
	if rec := get(attacker, strongToken); rec.Code != 200 {
		t.Fatalf("the right token during the block: %d", rec.Code)
	}
	if rec := get(colleague, strongToken); rec.Code != 200 {
		t.Fatalf("another address: %d", rec.Code)
	}
	// A logged-in dashboard behind the same address keeps working.
	if rec := get(attacker, "", "Cookie", SessionCookie+"="+g.Session()); rec.Code != 200 {
		t.Fatalf("a session from the blocked address: %d", rec.Code)
	}
	// The block doubles with each failure after it ends: 1 s, then 2 s.
	wall.add(time.Second)
	if rec := get(attacker, "guess-again"); rec.Code != 401 {
		t.Fatalf("after the first block: %d", rec.Code)
	}
	if rec := get(attacker, "guess-in-second-block"); rec.Code != 429 || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("second block: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	wall.add(2 * time.Second)
	if rec := get(attacker, strongToken); rec.Code != 200 {
		t.Fatalf("the right token after the block: %d", rec.Code)
	}
	// Success forgives nothing: the next wrong token blocks for 4 s.
	if rec := get(attacker, "typo"); rec.Code != 401 {
		t.Fatalf("after a success: %d", rec.Code)
	}
	if rec := get(attacker, "typo-2"); rec.Code != 429 || rec.Header().Get("Retry-After") != "4" {
		t.Fatalf("the block after a success: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	// An IPv6 client is one /64: changing the interface id does not help
	// a guesser, and does not hurt the token's holder.
	for i := range freeFailures + 1 {
		get(fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1), "v6-guess")
	}
	if rec := get("[2001:db8:1:2::ffff]:443", "v6-guess"); rec.Code != 429 {
		t.Fatalf("another address of the same /64: %d", rec.Code)
	}
	if rec := get("[2001:db8:1:2::ffff]:443", strongToken); rec.Code != 200 {
		t.Fatalf("the right token from the same /64: %d", rec.Code)
	}
	out := logs.String()
	if strings.Contains(out, "guess-") || strings.Contains(out, strongToken) {
		t.Fatal("the log shows a token")
	}
	if !strings.Contains(out, `"msg":"wrong control token","client":"203.0.113.7","via":"bearer","failures":6,"blocked_for":"1s"`) {
		t.Fatal("the failure is not logged")
	}
}

// The login form counts against the same address as bearer tokens, and
// answers a wrong token during its block with the form, 429 and
// Retry-After; the right one logs in.
func TestWrongLoginsAreSlowed(t *testing.T) {
	mux := guardMux(New(Config{AllowRemote: true, ControlToken: strongToken, Now: newWall().now}))
	login := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://sandbox.example/sandbox/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		req.RemoteAddr = "203.0.113.9:1000"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://sandbox.example")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	for i := range freeFailures + 1 {
		if rec := login(fmt.Sprintf("guess-%d", i)); rec.Code != 401 {
			t.Fatalf("wrong login %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := login("guess-blocked")
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || rec.Header().Get("Content-Security-Policy") != CSP ||
		!strings.Contains(rec.Body.String(), "Too many wrong control tokens from this address: try again in 1 s.") {
		t.Fatalf("a wrong login during the block: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if rec := login(strongToken); rec.Code != 303 || len(rec.Result().Cookies()) != 1 {
		t.Fatalf("the right login during the block: %d %v", rec.Code, rec.Header())
	}
}

// The failure table is bounded however many addresses fail.
func TestFailureTableIsBounded(t *testing.T) {
	wall := newWall()
	a := newFailures(wall.now, nil)
	for i := range maxAddrs + 500 {
		a.fail(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), "bearer")
		wall.add(time.Millisecond)
	}
	if n := len(a.addrs); n > maxAddrs {
		t.Fatalf("%d addresses kept", n)
	}
	if _, ok := a.addrs["10.0.0.0"]; ok {
		t.Fatal("the oldest address was kept")
	}
	if _, ok := a.addrs[fmt.Sprintf("10.0.%d.%d", (maxAddrs+499)>>8&255, (maxAddrs+499)&255)]; !ok {
		t.Fatal("the newest address was dropped")
	}
}

// Behind a reverse proxy (or a NAT, or one IPv6 /64) every client has one
// address. Many wrong tokens from it, by bearer and by the login form,
// must not lock the operator out: the right token and the right login
// still pass, every time, while the guesses are still refused with 429.
func TestRightTokenPassesBehindASharedAddress(t *testing.T) {
	wall := newWall()
	g := New(Config{AllowRemote: true, ControlToken: strongToken, Now: wall.now, Refuse: jsonRefuse})
	mux := guardMux(g)
	const proxy = "10.0.0.1" // the reverse proxy every request comes from
	port := 40000
	send := func(req *http.Request) *httptest.ResponseRecorder {
		port++ // a new connection from the proxy each time
		req.RemoteAddr = fmt.Sprintf("%s:%d", proxy, port)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	bearer := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "http://sandbox.example/sandbox/state", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return send(req)
	}
	login := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://sandbox.example/sandbox/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://sandbox.example")
		return send(req)
	}
	counts := map[int]int{}
	for i := range 200 {
		counts[bearer(fmt.Sprintf("stranger-%d", i)).Code]++
		counts[login(fmt.Sprintf("stranger-login-%d", i)).Code]++
	}
	if counts[401] != freeFailures+1 || counts[429] != 400-freeFailures-1 {
		t.Fatalf("answers to 400 guesses: %v", counts)
	}
	for i := range 3 { // and again: a right token does not lift the guessers' block
		if rec := bearer(strongToken); rec.Code != 200 || rec.Body.String() != `{"ok":true}` {
			t.Fatalf("the operator's token %d behind the shared address: %d %s", i, rec.Code, rec.Body)
		}
		rec := login(strongToken)
		if ck := rec.Result().Cookies(); rec.Code != 303 || rec.Header().Get("Location") != "/sandbox/ui" ||
			len(ck) != 1 || ck[0].Value != g.Session() {
			t.Fatalf("the operator's login %d behind the shared address: %d %v", i, rec.Code, rec.Header())
		}
		if rec := bearer("stranger-again"); rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
			t.Fatalf("a guess after the operator's success: %d %q", rec.Code, rec.Header().Get("Retry-After"))
		}
		if rec := login("stranger-again"); rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
			t.Fatalf("a login guess after the operator's success: %d %q", rec.Code, rec.Header().Get("Retry-After"))
		}
	}
	// The operator's successes forgave the guessers nothing: once the block
	// ends, the next guess blocks for twice as long as the last.
	g.fails.mu.Lock()
	e := *g.fails.addrs[proxy]
	g.fails.mu.Unlock()
	wall.add(e.until.Sub(wall.now()))
	if rec := bearer("stranger-after"); rec.Code != 401 {
		t.Fatalf("the guess after the block: %d", rec.Code)
	}
	if rec := bearer("stranger-after-2"); rec.Code != 429 || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("the next block: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
}

// A flood of wrong tokens from 4,100 other addresses fills the table; the
// blocked guesser must stay blocked, not be pushed out and handed free
// tries. The flood's addresses are throttled too.
func TestFloodDoesNotEvictABlockedGuesser(t *testing.T) {
	wall := newWall()
	g := New(Config{AllowRemote: true, ControlToken: strongToken, Now: wall.now, Refuse: jsonRefuse})
	mux := guardMux(g)
	bearer := func(addr, tok string) int {
		req := httptest.NewRequest("GET", "http://sandbox.example/sandbox/state", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code
	}
	const guesser = "203.0.113.7:5555"
	for i := range freeFailures + 1 {
		bearer(guesser, fmt.Sprintf("guess-%d", i))
	}
	// Blocked for the maximum, so the flood cannot outlast the block.
	g.fails.mu.Lock()
	g.fails.addrs["203.0.113.7"].until = wall.now().Add(maxBlock)
	g.fails.mu.Unlock()
	if code := bearer(guesser, "guess-blocked"); code != 429 {
		t.Fatalf("the guesser before the flood: %d", code)
	}
	for i := range 4100 {
		wall.add(time.Millisecond)
		bearer(fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255), "flood")
	}
	for i := range freeFailures + 1 {
		if code := bearer(guesser, fmt.Sprintf("free-try-%d", i)); code != 429 {
			t.Fatalf("guess %d after the flood: %d, want 429", i, code)
		}
	}
	if n := len(g.fails.addrs); n > maxAddrs {
		t.Fatalf("%d addresses kept", n)
	}
	// The right token still passes from there.
	if code := bearer(guesser, strongToken); code != 200 {
		t.Fatalf("the right token from the guesser's address: %d", code)
	}
}

// When the table is full of blocked addresses, a new address has no
// entry of its own to be pushed into: its guesses share one overflow
// budget, which blocks like an address, so a guesser with more addresses
// than the table holds still gets only a few free tries in all.
func TestFullTableOfBlockedAddressesSharesOneBudget(t *testing.T) {
	wall := newWall()
	a := newFailures(wall.now, nil)
	for i := range maxAddrs {
		addr := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		for range freeFailures + 1 {
			a.fail(addr, "bearer")
		}
	}
	free := 0
	for i := range 100 {
		addr := fmt.Sprintf("192.0.2.%d", i)
		if a.blocked(addr) == 0 {
			free++
			a.fail(addr, "bearer")
		}
	}
	if free != freeFailures+1 {
		t.Fatalf("%d free guesses from 100 new addresses with the table full of blocked ones, want %d", free, freeFailures+1)
	}
	if n := len(a.addrs); n > maxAddrs+1 {
		t.Fatalf("%d entries kept", n)
	}
	if a.blocked("10.0.0.0") == 0 {
		t.Fatal("a blocked address was pushed out")
	}
}
