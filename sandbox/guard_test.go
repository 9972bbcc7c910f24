package sandbox

import (
	"net/http"
	"strings"
	"testing"
)

// A DNS-rebinding page (foreign Host) and a cross-origin text/plain or
// form POST are refused before the control runs; AllowRemote lifts only
// the Host check.
func TestControlGuard(t *testing.T) {
	e := newEnv(t, Config{})
	post := func(host, ct, body string) resp {
		req, _ := http.NewRequest("POST", e.ts.URL+"/sandbox/clock/advance", strings.NewReader(body))
		if host != "" {
			req.Host = host
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		return e.send(req)
	}
	wantStatus(t, post("evil.example:8080", "application/json", `{"seconds":60}`), 403, CodeControlForbidden)
	wantStatus(t, post("", "text/plain", `{"seconds":60}`), 415, CodeControlMediaType)
	wantStatus(t, post("", "application/x-www-form-urlencoded", `{"seconds":60}`), 415, CodeControlMediaType)
	wantStatus(t, post("", "", `{"seconds":60}`), 415, CodeControlMediaType)
	eq(t, e.sb.Now(), base) // nothing ran

	// The unknown-control fallback is guarded too: it reveals nothing to
	// a foreign Host.
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/nope", nil)
	req.Host = "evil.example"
	wantStatus(t, e.send(req), 403, CodeControlForbidden)

	r := post("localhost:1", "application/json; charset=utf-8", `{"seconds":60}`)
	wantStatus(t, r, 200, "")
	eq(t, r.str("now"), "2025-03-01T12:01:00Z")

	open := newEnv(t, Config{AllowRemote: true, ControlToken: "ctl-token-1-9f3c2a7b1e8d4c6f0a5b9e2d"})
	req, _ = http.NewRequest("POST", open.ts.URL+"/sandbox/clock/advance", strings.NewReader(`{"seconds":60}`))
	req.Host = "sandbox.ci.internal:8080"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer ctl-token-1-9f3c2a7b1e8d4c6f0a5b9e2d")
	wantStatus(t, open.send(req), 200, "")
	req, _ = http.NewRequest("POST", open.ts.URL+"/sandbox/clock/advance", strings.NewReader(`{"seconds":60}`))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Authorization", "Bearer ctl-token-1-9f3c2a7b1e8d4c6f0a5b9e2d")
	wantStatus(t, open.send(req), 415, CodeControlMediaType)
}
