package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// A 401 for a wrong signature says what the sandbox signed (method, request
// URI, body length and SHA-256), so a developer can compare it with their
// signer's input; it never shows the secret or the expected signature.
func TestBadSignatureNamesWhatWasSigned(t *testing.T) {
	e := newEnv(t, Config{})
	body := `{"ext_id":"o-1","amount":1500}`
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments?x=1", strings.NewReader(body))
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", "not-it")
	r := e.send(req)
	wantStatus(t, r, 401, "AUTH_001")
	sum := sha256.Sum256([]byte(body))
	eq(t, r.str("message"), "invalid signature: the sandbox signed method POST, request URI /v1/payments?x=1 and a body of "+
		"30 bytes with SHA-256 "+hex.EncodeToString(sum[:]))
	expected, _ := paykit.HMACSigner(DefaultSecret).Sign(req, []byte(body))
	for _, secret := range []string{DefaultSecret, expected} {
		if strings.Contains(string(r.raw), secret) {
			t.Fatalf("the 401 shows a secret: %s", r.raw)
		}
	}
	// A request without a body: length 0 and the SHA-256 of nothing.
	get, _ := http.NewRequest("GET", e.ts.URL+"/v1/balance", nil)
	get.Header.Set("X-Identity", DefaultAPIKey)
	get.Header.Set("X-Signature", "00")
	r = e.send(get)
	wantStatus(t, r, 401, "AUTH_001")
	eq(t, r.str("message"), "invalid signature: the sandbox signed method GET, request URI /v1/balance and a body of "+
		"0 bytes with SHA-256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	// An unknown key still learns nothing.
	req.Header.Set("X-Identity", "pk_nobody")
	wantStatus(t, e.send(req), 401, "AUTH_001")
}

// A merchant that accepts unsigned requests (behind a validation proxy that
// re-serialises bodies) gets them through, loudly: a warning per request
// and a banner on the dashboard. Other merchants still need signatures.
func TestAcceptUnsignedForANamedMerchant(t *testing.T) {
	var logs syncBuffer
	proxy := DefaultMerchant("pk_proxy", "sk_proxy")
	proxy.AcceptUnsigned = true
	e := newEnv(t, Config{Merchants: []Merchant{proxy, DefaultMerchant(DefaultAPIKey, DefaultSecret)},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	for _, sig := range []string{"", "stale-signature-of-1500.50"} {
		req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments", strings.NewReader(`{"ext_id":"p-`+sig+`","amount":1500.5}`))
		req.Header.Set("X-Identity", "pk_proxy")
		if sig != "" {
			req.Header.Set("X-Signature", sig)
		}
		wantStatus(t, e.send(req), 200, "")
	}
	var accepted int
	var started bool
	for _, l := range logs.lines(t) {
		switch l["msg"] {
		case "request accepted without a valid signature (the merchant accepts unsigned requests)":
			accepted++
			if l["level"] != "WARN" || l["api_key"] != "pk_p…" || l["method"] != "POST" || l["path"] != "/v1/payments" {
				t.Errorf("unsigned request line: %v", l)
			}
		case "merchant accepts unsigned requests: X-Signature is not checked for it":
			started = true
			if l["level"] != "WARN" || l["merchant"] != "Merchant 1 (API key pk_p…)" {
				t.Errorf("start line: %v", l)
			}
		}
	}
	if accepted != 2 || !started {
		t.Fatalf("%d warnings for unsigned requests, start warning %v:\n%s", accepted, started, logs.String())
	}
	if strings.Contains(logs.String(), "pk_proxy") || strings.Contains(logs.String(), "sk_proxy") {
		t.Fatalf("the log shows the merchant's key or secret:\n%s", logs.String())
	}
	req, _ := http.NewRequest("GET", e.ts.URL+"/v1/balance", nil)
	req.Header.Set("X-Identity", DefaultAPIKey)
	wantStatus(t, e.send(req), 401, "AUTH_001")
	_, _, page := e.uiGet("/sandbox/ui?refresh=0")
	banner := `id="unsigned-banner"><strong>Signatures off:</strong> Merchant 1 (API key pk_p…) accepts unsigned requests`
	if !strings.Contains(page, banner) || strings.Contains(page, "pk_proxy") {
		t.Fatalf("the dashboard's banner does not name the merchant (want %s):\n%s", banner, page)
	}
	plain := newEnv(t, Config{})
	if _, _, page := plain.uiGet("/sandbox/ui?refresh=0"); strings.Contains(page, "unsigned-banner") {
		t.Fatal("a banner without an unsigned merchant")
	}
}

// strongToken is a control token the sandbox accepts: 256 random bits in hex.
const strongToken = "7c1e9a4f3b2d8e6a0f5c9b1d4e7a2c8f3b6d9e0a1c4f7b2e5d8a3c6f9b0e1d4a"

// A control token that could be guessed is refused at Open, with an error
// that says why and how to make one, and never shows the token; New
// panics with the same message.
func TestWeakControlTokenRefused(t *testing.T) {
	for _, tok := range []string{"a", "ctl-77", "secretsecretsecretsecretsecret", "0123456789abcdef",
		// Issue 37's: a sequence there and back, a keyboard walk, words.
		"0123456789abcdeffedcba9876543210", "1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p", "paykit-sandbox-staging-control-token"} {
		sb, err := Open(Config{AllowRemote: true, ControlToken: tok})
		if err == nil {
			sb.Close()
			t.Fatalf("%q accepted", tok)
		}
		msg := err.Error()
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(msg, "128") ||
			!strings.Contains(msg, "openssl rand -hex 32") || len(tok) > 1 && strings.Contains(msg, tok) {
			t.Fatalf("%q: %v", tok, err)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "too easy to guess") {
				t.Fatalf("New with a weak token: %v", r)
			}
		}()
		New(Config{ControlToken: "a"})
	}()
	sb, err := Open(Config{AllowRemote: true, ControlToken: strongToken})
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t, Config{})
	body := `{"ext_id":"a","amount":150}`

	// No headers at all.
	anon := e.as("", "")
	wantStatus(t, anon.do("POST", "/v1/payments", body), 401, "AUTH_001")
	// Unknown key, wrong secret.
	wantStatus(t, e.as("other", DefaultSecret).do("GET", "/v1/banks", ""), 401, "AUTH_001")
	r := e.as(DefaultAPIKey, "wrong-secret").do("GET", "/v1/banks", "")
	wantStatus(t, r, 401, "AUTH_001")
	eq(t, r.str("data"), "{}")
	if strings.Contains(r.raw, DefaultSecret) || strings.Contains(r.raw, "wrong-secret") {
		t.Fatalf("secret echoed: %s", r.raw)
	}
	// A signature over another body or another path does not verify.
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments", strings.NewReader(body))
	other, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments", nil)
	sig, _ := paykit.HMACSigner(DefaultSecret).Sign(other, []byte(`{"ext_id":"b","amount":150}`))
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", sig)
	wantStatus(t, e.send(req), 401, "AUTH_001")
	req, _ = http.NewRequest("GET", e.ts.URL+"/v1/payouts?limit=1", nil)
	other, _ = http.NewRequest("GET", e.ts.URL+"/v1/payouts?limit=2", nil)
	sig, _ = paykit.HMACSigner(DefaultSecret).Sign(other, nil)
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", sig)
	wantStatus(t, e.send(req), 401, "AUTH_001")
	eq(t, e.sb.Stats(DefaultAPIKey).Payments, 0)

	// Unknown endpoints are 404 once authenticated.
	wantStatus(t, e.do("GET", "/v1/nothing", ""), 404, "NOT_FOUND")
	wantStatus(t, e.do("DELETE", "/v1/payments", ""), 404, "NOT_FOUND")
	// Bodies over the route's cap are refused with 400 PAY_002, not 413.
	wantStatus(t, e.do("POST", "/v1/payments", strings.Repeat(" ", api.JSONBodyCap+1)), http.StatusBadRequest, "PAY_002")
}

func TestCustomSigner(t *testing.T) {
	signer := paykit.SignerFunc(func(r *http.Request, body []byte) (string, error) {
		return r.Method + " " + r.URL.RequestURI() + " " + fmt.Sprint(len(body)), nil
	})
	e := newEnv(t, Config{Merchants: []Merchant{{APIKey: "k", Signer: signer}}})
	req, _ := http.NewRequest("GET", e.ts.URL+"/v1/payments/by-ext-id/a%2Fb?x=1", nil)
	req.Header.Set("X-Identity", "k")
	req.Header.Set("X-Signature", "GET /v1/payments/by-ext-id/a%2Fb?x=1 0")
	wantStatus(t, e.send(req), 404, "PAY_006")
	eq(t, len(e.sb.Terminals("k")), 0)
	eq(t, e.sb.Terminals("nobody") == nil, true)
}

func TestMerchantScoping(t *testing.T) {
	a := DefaultMerchant("key-a", "secret-a")
	b := Merchant{APIKey: "key-b", Secret: "secret-b", Terminals: []Terminal{
		{ID: "b-1", Balance: dec("10"), IsActive: true}, {ID: "b-2", IsActive: true}}}
	e := newEnv(t, Config{Merchants: []Merchant{a, b}})
	eb := e.as("key-b", "secret-b")

	pay := e.createPayment(`{"ext_id":"same","amount":150}`).str("id")
	// B may reuse A's ext_id and cannot see A's payment.
	eb.createPayment(`{"ext_id":"same","amount":150}`)
	wantStatus(t, eb.do("GET", "/v1/payments/"+pay, ""), 404, "PAY_006")
	wantStatus(t, eb.do("POST", "/v1/payments/"+pay+"/cancel", ""), 404, "PAY_006")
	eq(t, e.do("GET", "/v1/payments/"+pay, "").str("status"), "PENDING")

	po := e.do("POST", "/v1/payouts", `{"ext_id":"x","amount":1,"method":"card","requisites":"1","holder_name":"A"}`).str("id")
	wantStatus(t, eb.do("GET", "/v1/payouts/"+po, ""), 404, "PAY_001")
	wantStatus(t, eb.do("GET", "/v1/payouts/by-ext-id/x", ""), 404, "PAY_001")
	eq(t, eb.do("GET", "/v1/payouts", "").str("total"), "0")

	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":1,"address":"T"}`).str("id")
	wantStatus(t, eb.do("GET", "/v1/withdrawals/"+w, ""), 404, "WDR_003")
	wantStatus(t, eb.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":1,"address":"T"}`), 400, "WDR_001")

	// Terminals of another merchant do not exist for a transfer.
	wantStatus(t, eb.do("POST", "/v1/transfers", `{"from_terminal_id":"b-1","to_terminal_id":"term_sandbox_main","amount":1}`), 404, "TRF_002")
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"b-1","amount":1}`), 404, "TRF_002")
	eq(t, strings.Count(eb.do("GET", "/v1/terminals", "").raw, `"id"`), 2)
	eq(t, strings.TrimSpace(eb.do("GET", "/v1/balance", "").raw), `{"balance":10.00,"balance_frozen":0.00,"currency":"USDT"}`)
	eq(t, e.sb.Stats("key-a"), Stats{Payments: 1, Payouts: 1, Withdrawals: 1})
	eq(t, e.sb.Stats("nobody"), Stats{})
}

// Remote mode needs the control token; with it, the controls, inspection
// and dashboard take it as a bearer token or a login cookie.
func TestRemoteModeNeedsTheControlToken(t *testing.T) {
	bare := newEnv(t, Config{AllowRemote: true})
	wantStatus(t, bare.control("/sandbox/reset", `{}`), 403, CodeControlForbidden)

	e := newEnv(t, Config{AllowRemote: true, ControlToken: "ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"})
	get := func(path string, hdr ...string) resp {
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		req.Host = "sandbox.team.internal"
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return e.send(req)
	}
	wantStatus(t, e.control("/sandbox/reset", `{}`), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/state"), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/state", "Authorization", "Bearer wrong"), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/state", "Authorization", "Bearer ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"), 200, "")

	// The dashboard sends a browser to the login form; a login sets an
	// HttpOnly, SameSite=Strict cookie that is not the token itself.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(e.ts.URL + "/sandbox/ui")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusSeeOther)
	eq(t, res.Header.Get("Location"), "/sandbox/login")
	res, _ = noFollow.PostForm(e.ts.URL+"/sandbox/login", url.Values{"token": {"wrong"}})
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusUnauthorized)
	res, _ = noFollow.PostForm(e.ts.URL+"/sandbox/login", url.Values{"token": {"ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"}})
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusSeeOther)
	cookies := res.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode ||
		strings.Contains(cookies[0].Value, "ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d") {
		t.Fatalf("session cookie %+v", cookies)
	}
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/ui?refresh=0", nil)
	req.AddCookie(cookies[0])
	res, _ = noFollow.Do(req)
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusOK)
	wantStatus(t, get("/sandbox/webhooks", "Authorization", "Bearer ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"), 200, "")
	wantStatus(t, get("/sandbox/requests"), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/ui?refresh=0", "Authorization", "Bearer ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"), 200, "")

	// The dashboard's forms act with the login cookie, and not without it
	// (even with the form token).
	uiForm := func(c *http.Cookie) int {
		req, _ := http.NewRequest("POST", e.ts.URL+"/sandbox/ui/clock/advance",
			strings.NewReader(url.Values{"seconds": {"60"}, "token": {web.Token}, "page": {"payments"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.ts.URL)
		if c != nil {
			req.AddCookie(c)
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	before := e.sb.Now()
	eq(t, uiForm(nil), http.StatusUnauthorized)
	eq(t, uiForm(&http.Cookie{Name: "paykit_sandbox_session", Value: "ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"}), http.StatusUnauthorized)
	eq(t, e.sb.Now(), before)
	eq(t, uiForm(cookies[0]), http.StatusSeeOther)
	eq(t, e.sb.Now(), before.Add(time.Minute))

	// Loopback-only mode keeps working without one.
	local := newEnv(t, Config{})
	wantStatus(t, local.control("/sandbox/clock/advance", `{"seconds":1}`), 200, "")
}

// The sandbox wires its Config into the control-token guard: wrong tokens
// are counted per address and logged through Config.Logger (the address
// and the count, never the token), the one past the free failures blocks
// the address's guesses, and never the right token or login. (The
// throttling itself is tested in package guard.)
func TestWrongControlTokensReachTheSandboxLog(t *testing.T) {
	var logs syncBuffer
	sb := New(Config{AllowRemote: true, ControlToken: strongToken, Now: func() time.Time { return base },
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	defer sb.Close()
	for i := range 6 {
		req := httptest.NewRequest("GET", "http://sandbox.example/sandbox/state", nil)
		req.RemoteAddr = "203.0.113.7:5555"
		req.Header.Set("Authorization", fmt.Sprintf("Bearer guess-%d", i))
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	out := logs.String()
	if strings.Contains(out, "guess-") || strings.Contains(out, strongToken) {
		t.Fatalf("the log shows a token:\n%s", out)
	}
	if !strings.Contains(out, `"msg":"wrong control token","client":"203.0.113.7","via":"bearer","failures":6,"blocked_for":"1s"`) {
		t.Fatalf("the sixth failure is not logged with its block:\n%s", out)
	}
	// Behind a proxy that address is everyone's: the next guess is
	// throttled, the right token and the right login still pass.
	send := func(req *http.Request) *httptest.ResponseRecorder {
		req.RemoteAddr = "203.0.113.7:6666"
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, req)
		return rec
	}
	bearer := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "http://sandbox.example/sandbox/state", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return send(req)
	}
	if rec := bearer("guess-blocked"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("a guess during the block: %d %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := bearer(strongToken); rec.Code != http.StatusOK {
		t.Fatalf("the right token from the blocked address: %d %s", rec.Code, rec.Body)
	}
	login := httptest.NewRequest("POST", "http://sandbox.example/sandbox/login", strings.NewReader(url.Values{"token": {strongToken}}.Encode()))
	login.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	login.Header.Set("Origin", "http://sandbox.example")
	if rec := send(login); rec.Code != http.StatusSeeOther || len(rec.Result().Cookies()) != 1 {
		t.Fatalf("the right login from the blocked address: %d %v", rec.Code, rec.Header())
	}
}
