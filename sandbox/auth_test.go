package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	paykit "github.com/paykit-dev/paykit-go"
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
