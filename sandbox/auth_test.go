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
	if n := strings.Count(logs.String(), "request accepted without a valid signature"); n != 2 {
		t.Fatalf("%d warnings for unsigned requests:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "merchant accepts unsigned requests") {
		t.Fatal("no warning at start")
	}
	req, _ := http.NewRequest("GET", e.ts.URL+"/v1/balance", nil)
	req.Header.Set("X-Identity", DefaultAPIKey)
	wantStatus(t, e.send(req), 401, "AUTH_001")
	_, _, page := e.uiGet("/sandbox/ui?refresh=0")
	if !strings.Contains(page, `id="unsigned-banner"`) {
		t.Fatal("no banner on the dashboard")
	}
	plain := newEnv(t, Config{})
	if _, _, page := plain.uiGet("/sandbox/ui?refresh=0"); strings.Contains(page, "unsigned-banner") {
		t.Fatal("a banner without an unsigned merchant")
	}
}
