package api

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// strongToken is a control token the sandbox accepts: 256 random bits in hex.
const strongToken = "7c1e9a4f3b2d8e6a0f5c9b1d4e7a2c8f3b6d9e0a1c4f7b2e5d8a3c6f9b0e1d4a"

const (
	unauthorized = `{"error":"SANDBOX_UNAUTHORIZED","message":"this sandbox needs its control token: send Authorization: Bearer TOKEN, or log in at /sandbox/login","data":{}}`
	foreignHost  = `{"error":"SANDBOX_FORBIDDEN","message":"the sandbox controls answer only a loopback Host (localhost, 127.0.0.1, [::1]); start it with remote control allowed to change this","data":{}}`
)

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

// TestLocalRequest protects the Host check against DNS rebinding: only
// loopback names and addresses pass, whatever the port, unless remote
// control is allowed.
func TestLocalRequest(t *testing.T) {
	s := NewControlServer(ControlConfig{}, &fakeControls{})
	remote := NewControlServer(ControlConfig{AllowRemote: true}, &fakeControls{})
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "127.0.0.1": true, "127.0.0.1:8080": true,
		"127.5.6.7:1": true, "[::1]": true, "[::1]:8080": true,
		"evil.example": false, "evil.example:8080": false, "localhost.evil.example": false,
		"10.0.0.1:8080": false, "[::2]:80": false, "0.0.0.0:8080": false, "": false,
		"127.0.0.1.nip.io": false, "[fe80::1%25lo]:80": false,
	} {
		r := httptest.NewRequest("GET", "/sandbox/state", nil)
		r.Host = host
		if got := s.localRequest(r); got != want {
			t.Errorf("localRequest(Host %q) = %v, want %v", host, got, want)
		}
		if !remote.localRequest(r) {
			t.Errorf("AllowRemote refused Host %q", host)
		}
	}
}

// TestGuardRefusals protects the guard's other refusals, each before the
// control runs: a webhook delivery, a foreign Host, remote control without
// a token (the dashboard's assets excepted), a POST that is not JSON.
func TestGuardRefusals(t *testing.T) {
	f := &fakeControls{}
	mux := controlMux(NewControlServer(ControlConfig{}, f))
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/reset", `{}`, "User-Agent", webhook.UserAgent),
		403, `{"error":"SANDBOX_FORBIDDEN","message":"a webhook delivery is not a control request","data":{}}`)
	wantAnswer(t, ctlDo(mux, "POST", "http://evil.example:8080/sandbox/reset", `{}`), 403, foreignHost)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		wantAnswer(t, ctlDo(mux, "POST", "/sandbox/reset", `{}`, "Content-Type", ct),
			415, `{"error":"SANDBOX_UNSUPPORTED_MEDIA_TYPE","message":"control requests need Content-Type: application/json","data":{}}`)
	}
	if len(f.calls) != 0 {
		t.Fatalf("a refused request ran: %q", f.calls)
	}
	wantAnswer(t, ctlDo(mux, "POST", "http://localhost:1/sandbox/reset", `{}`, "Content-Type", "application/json; charset=utf-8"), 200, `{}`)

	open := controlMux(NewControlServer(ControlConfig{AllowRemote: true}, f))
	wantAnswer(t, ctlDo(open, "POST", "http://sandbox.example/sandbox/reset", `{}`),
		403, `{"error":"SANDBOX_FORBIDDEN","message":"remote control needs a control token: set Config.ControlToken (-control-token, PAYKIT_SANDBOX_CONTROL_TOKEN)","data":{}}`)
	// The assets pass the guard (here to the unknown-control answer).
	wantAnswer(t, ctlDo(open, "GET", "http://sandbox.example/sandbox/ui/assets/style.css", ``),
		404, `{"error":"SANDBOX_NOT_FOUND","message":"no such control: GET /sandbox/ui/assets/style.css","data":{}}`)
}

// TestControlTokenCheck protects the token check: none or a wrong one is
// 401 (a browser's dashboard GET goes to the login form), the bearer
// token or the login's cookie passes, the cookie is not the token, and a
// stale cookie is only a 401.
func TestControlTokenCheck(t *testing.T) {
	f := &fakeControls{}
	mux := controlMux(NewControlServer(ControlConfig{AllowRemote: true, ControlToken: strongToken, Now: newWall().now}, f))
	const state = "http://sandbox.example/sandbox/state"
	w := ctlDo(mux, "GET", state, ``)
	wantAnswer(t, w, 401, unauthorized)
	if got := w.Header().Get("WWW-Authenticate"); got != `Bearer realm="paykit-sandbox"` {
		t.Fatalf("WWW-Authenticate %q", got)
	}
	wantAnswer(t, ctlDo(mux, "GET", state, ``, "Authorization", "Bearer wrong"), 401, unauthorized)
	wantAnswer(t, ctlDo(mux, "GET", state, ``, "Authorization", strongToken), 401, unauthorized) // not a bearer
	wantAnswer(t, ctlDo(mux, "GET", state, ``, "Authorization", "Bearer  "+strongToken+" "), 200, `{"backlog":3}`)
	wantAnswer(t, ctlDo(mux, "POST", "http://sandbox.example/sandbox/reset", `{}`, "Authorization", "Bearer "+strongToken), 200, `{}`)
	if w := ctlDo(mux, "GET", "http://sandbox.example/sandbox/ui?refresh=0", ``); w.Code != 303 || w.Header().Get("Location") != "/sandbox/login" {
		t.Fatalf("dashboard without a token: %d %q", w.Code, w.Header().Get("Location"))
	}

	login := func(tok, origin string) *httptest.ResponseRecorder {
		return ctlDo(mux, "POST", "http://sandbox.example/sandbox/login", url.Values{"token": {tok}}.Encode(),
			"Content-Type", "application/x-www-form-urlencoded", "Origin", origin)
	}
	if w := login(strongToken, "http://evil.example"); w.Code != 403 || w.Header().Get("Set-Cookie") != "" {
		t.Fatalf("cross-origin login: %d %v", w.Code, w.Header())
	}
	if w := login("wrong", "http://sandbox.example"); w.Code != 401 || w.Header().Get("Set-Cookie") != "" ||
		!strings.Contains(w.Body.String(), "That is not this sandbox&#39;s control token.") {
		t.Fatalf("wrong login: %d %v %s", w.Code, w.Header(), w.Body)
	}
	w = login(strongToken, "http://sandbox.example")
	cookies := w.Result().Cookies()
	if w.Code != 303 || w.Header().Get("Location") != "/sandbox/ui" || len(cookies) != 1 {
		t.Fatalf("login: %d %v", w.Code, w.Header())
	}
	ck := cookies[0]
	if ck.Name != "paykit_sandbox_session" || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/sandbox/" ||
		strings.Contains(ck.Value, strongToken) || len(ck.Value) != 64 {
		t.Fatalf("session cookie %+v", ck)
	}
	wantAnswer(t, ctlDo(mux, "GET", state, ``, "Cookie", ck.Name+"="+ck.Value), 200, `{"backlog":3}`)
	wantAnswer(t, ctlDo(mux, "GET", state, ``, "Cookie", ck.Name+"="+strongToken), 401, unauthorized)
	if strings.Join(f.calls, "|") != "reset" {
		t.Fatalf("calls %q", f.calls)
	}
	// Another token's session does not open this sandbox.
	other := NewControlServer(ControlConfig{AllowRemote: true, ControlToken: strongToken + "0"}, f)
	if other.loginSession() == ck.Value {
		t.Fatal("two tokens, one session")
	}
	// Without a token there is nothing to log in to.
	plain := controlMux(NewControlServer(ControlConfig{}, f))
	if w := ctlDo(plain, "GET", "/sandbox/login", ``); w.Code != 303 || w.Header().Get("Location") != "/sandbox/ui" {
		t.Fatalf("login page without a token: %d %v", w.Code, w.Header())
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
	c := NewControlServer(ControlConfig{AllowRemote: true, ControlToken: strongToken, Now: wall.now,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, &fakeControls{})
	mux := controlMux(c)
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
	if counts[401] != loginFreeFailures+1 || counts[429] != 900-loginFreeFailures-1 {
		t.Fatalf("answers to 900 wrong tokens: %v", counts)
	}
	rec := get(attacker, strongToken)
	wantAnswer(t, rec, 429, `{"error":"SANDBOX_UNAUTHORIZED","message":"too many wrong control tokens from this address: try again in 1 s","data":{}}`)
	if rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("the right token during the block: Retry-After %q", rec.Header().Get("Retry-After"))
	}
	if rec := get(colleague, strongToken); rec.Code != 200 {
		t.Fatalf("another address: %d", rec.Code)
	}
	// A logged-in dashboard behind the same address keeps working.
	if rec := get(attacker, "", "Cookie", loginCookie+"="+c.loginSession()); rec.Code != 200 {
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
	for i := range loginFreeFailures + 1 {
		get(fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1), "v6-guess")
	}
	if rec := get("[2001:db8:1:2::ffff]:443", strongToken); rec.Code != 429 {
		t.Fatalf("another address of the same /64: %d", rec.Code)
	}
	out := logs.String()
	if strings.Contains(out, "guess-") || strings.Contains(out, strongToken) {
		t.Fatalf("the log shows a token:\n%s", out)
	}
	if !strings.Contains(out, `"msg":"wrong control token","client":"203.0.113.7","via":"bearer","failures":6,"blocked_for":"1s"`) {
		t.Fatalf("the failure is not logged:\n%s", out)
	}
}

// The login form counts against the same address as bearer tokens, and
// answers its block with the form, 429 and Retry-After.
func TestWrongLoginsAreSlowed(t *testing.T) {
	mux := controlMux(NewControlServer(ControlConfig{AllowRemote: true, ControlToken: strongToken, Now: newWall().now}, &fakeControls{}))
	login := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://sandbox.example/sandbox/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		req.RemoteAddr = "203.0.113.9:1000"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://sandbox.example")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	for i := range loginFreeFailures + 1 {
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
func TestLoginFailureTableIsBounded(t *testing.T) {
	wall := newWall()
	a := newLoginFailures(wall.now, nil)
	for i := range loginMaxAddrs + 500 {
		a.fail(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), "bearer")
		wall.add(time.Millisecond)
	}
	if n := len(a.addrs); n > loginMaxAddrs {
		t.Fatalf("%d addresses kept", n)
	}
	if _, ok := a.addrs["10.0.0.0"]; ok {
		t.Fatal("the oldest address was kept")
	}
	if _, ok := a.addrs[fmt.Sprintf("10.0.%d.%d", (loginMaxAddrs+499)>>8&255, (loginMaxAddrs+499)&255)]; !ok {
		t.Fatal("the newest address was dropped")
	}
}
