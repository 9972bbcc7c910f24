package sandbox

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestOpenAPICopyIsCurrent proves the embedded copy is the committed
// document byte for byte, so what the sandbox serves is what the contract
// tests validate against.
func TestOpenAPICopyIsCurrent(t *testing.T) {
	root, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, openapiYAML) {
		t.Fatal("sandbox/openapi.yaml differs from ../openapi.yaml: run cp openapi.yaml sandbox/openapi.yaml")
	}
	if !bytes.Equal(OpenAPI(), root) {
		t.Fatal("OpenAPI() does not return the document")
	}
}

// TestServesOpenAPI fetches GET /openapi.yaml over loopback HTTP, without
// credentials, and compares the bytes with the committed document.
func TestServesOpenAPI(t *testing.T) {
	root, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sb := New(Config{})
	defer sb.Close()
	ts := httptest.NewServer(sb)
	defer ts.Close()

	res, err := http.Get(ts.URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("Content-Type %q, want application/yaml", ct)
	}
	if !bytes.Equal(body, root) {
		t.Errorf("served %d bytes that differ from ../openapi.yaml (%d bytes)", len(body), len(root))
	}

	res, err = http.Post(ts.URL+"/openapi.yaml", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /openapi.yaml: HTTP %d, want 405", res.StatusCode)
	}
}

// docOperations scans openapi.yaml's paths section for "METHOD /path"
// pairs. The root module has no YAML library, and the document's layout
// (two-space indent, one path per line) is fixed enough for a scan.
func docOperations(t *testing.T, doc []byte) []string {
	t.Helper()
	var ops []string
	inPaths, path := false, ""
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case line == "paths:":
			inPaths = true
		case inPaths && len(line) > 0 && line[0] != ' ':
			inPaths = false
		case inPaths && strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":"):
			path = strings.TrimSuffix(strings.TrimSpace(line), ":")
		case inPaths && path != "" && (line == "    get:" || line == "    post:"):
			ops = append(ops, strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(line), ":"))+" "+path)
		}
	}
	if len(ops) == 0 {
		t.Fatal("no operations found in openapi.yaml")
	}
	return ops
}

// TestOpenAPIRoutesMatchSandbox keeps the document and the router in step
// both ways: every documented operation reaches a real handler of the
// sandbox (not a catch-all), and every /v1 route the sandbox registers is
// documented.
func TestOpenAPIRoutesMatchSandbox(t *testing.T) {
	sb := New(Config{})
	defer sb.Close()
	served := map[string]bool{}
	for _, op := range docOperations(t, openapiYAML) {
		method, path, _ := strings.Cut(op, " ")
		target := strings.NewReplacer("{id}", "7f0c4d7e-1d3a-4c55-9d6a-2b4f3c1e9a10", "{extId}", "order-1").Replace(path)
		_, pattern := sb.svc.Probe().Mux().Handler(httptest.NewRequest(method, target, nil))
		if pattern == "" || pattern == "/v1/" || pattern == "/sandbox/" {
			t.Errorf("%s is documented but the sandbox has no route for it (pattern %q)", op, pattern)
			continue
		}
		served[pattern] = true
	}
	for _, pattern := range sb.svc.Probe().Patterns() {
		if pattern != "/v1/" && !served[pattern] {
			t.Errorf("the sandbox serves %q but openapi.yaml does not document it", pattern)
		}
	}
}
