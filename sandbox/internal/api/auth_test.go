package api

import (
	"bytes"
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
	mux := controlMux(NewControlServer(ControlConfig{AllowRemote: true, ControlToken: strongToken, Now: time.Now}, f))
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
	if other.Guard().Session() == ck.Value {
		t.Fatal("two tokens, one session")
	}
	// Without a token there is nothing to log in to.
	plain := controlMux(NewControlServer(ControlConfig{}, f))
	if w := ctlDo(plain, "GET", "/sandbox/login", ``); w.Code != 303 || w.Header().Get("Location") != "/sandbox/ui" {
		t.Fatalf("login page without a token: %d %v", w.Code, w.Header())
	}
}

// The controls answer the guard's throttling in the API's error body:
// past the free failures a wrong token from one address is 429 with
// Retry-After, and the right token from the same address still runs the
// control (behind a proxy every client shares that address).
func TestThrottledTokenAnswer(t *testing.T) {
	f := &fakeControls{}
	mux := controlMux(NewControlServer(ControlConfig{AllowRemote: true, ControlToken: strongToken, Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }}, f))
	const reset = "http://sandbox.example/sandbox/reset"
	for i := range 6 {
		wantAnswer(t, ctlDo(mux, "POST", reset, `{}`, "Authorization", "Bearer wrong"), 401, unauthorized)
		if i == 0 && len(f.calls) != 0 {
			t.Fatalf("a wrong token ran %q", f.calls)
		}
	}
	w := ctlDo(mux, "POST", reset, `{}`, "Authorization", "Bearer wrong")
	wantAnswer(t, w, 429, `{"error":"SANDBOX_UNAUTHORIZED","message":"too many wrong control tokens from this address: try again in 1 s","data":{}}`)
	if w.Header().Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	wantAnswer(t, ctlDo(mux, "POST", reset, `{}`, "Authorization", "Bearer "+strongToken), 200, `{}`)
	if strings.Join(f.calls, "|") != "reset" {
		t.Fatalf("calls %q", f.calls)
	}
}
