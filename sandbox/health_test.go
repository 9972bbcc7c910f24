package sandbox

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// /healthz and /readyz answer without credentials, for any Host, past an
// armed fault, and stay out of the request log.
func TestHealthEndpoints(t *testing.T) {
	e := newEnv(t, Config{})
	if err := e.sb.InjectFault(Fault{Path: "/healthz", Mode: FaultErrorBefore, Status: 500, Code: "X", Count: 5}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/healthz": `{"status":"ok"}`, "/readyz": `{"status":"ready"}`} {
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		req.Host = "evil.example"
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.TrimSpace(string(body)) != want || res.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %s %v", path, res.StatusCode, body, res.Header)
		}
		res, err = http.Post(e.ts.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
			t.Fatalf("POST %s: %d", path, res.StatusCode)
		}
	}
	if n := len(e.sb.Requests()); n != 0 {
		t.Fatalf("%d health requests logged", n)
	}
}
