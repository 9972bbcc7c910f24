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

// syncBuffer is a bytes.Buffer safe for concurrent log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

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
// 401, then the address gets 429 with a Retry-After that doubles with
// each further failure, even for the right token (or guessing would go on
// at full speed), while other addresses and a logged-in session are not
// affected. 900 wrong tokens in a row are thus 6 guesses, not 900. Every
// failure is logged with the address, never the token.
func TestWrongControlTokensAreSlowedPerAddress(t *testing.T) {
	var logs syncBuffer
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
	rec := get(attacker, strongToken)
	if rec.Code != 429 || rec.Body.String() != `{"data":{},"error":"SANDBOX_UNAUTHORIZED","message":"too many wrong control tokens from this address: try again in 1 s"}`+"\n" {
		t.Fatalf("the right token during the block: %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("the right token during the block: Retry-After %q", rec.Header().Get("Retry-After"))
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
	if rec := get(attacker, strongToken); rec.Code != 429 || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("second block: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	wall.add(2 * time.Second)
	if rec := get(attacker, strongToken); rec.Code != 200 {
		t.Fatalf("the right token after the block: %d", rec.Code)
	}
	// Success forgets the address's failures.
	if rec := get(attacker, "typo"); rec.Code != 401 {
		t.Fatalf("after a success: %d", rec.Code)
	}
	// An IPv6 client is one /64: changing the interface id does not help.
	for i := range freeFailures + 1 {
		get(fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1), "v6-guess")
	}
	if rec := get("[2001:db8:1:2::ffff]:443", strongToken); rec.Code != 429 {
		t.Fatalf("another address of the same /64: %d", rec.Code)
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
// answers its block with the form, 429 and Retry-After.
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
	rec := login(strongToken)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), "Too many wrong control tokens") {
		t.Fatalf("login during the block: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
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
