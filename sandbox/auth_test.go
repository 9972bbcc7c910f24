package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
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
