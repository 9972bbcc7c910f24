package sandbox

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
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
