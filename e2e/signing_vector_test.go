package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// vector is one signing test vector of docs/other-languages.md.
type vector struct {
	Key, Secret, Method, URI, Body, Signature string
}

// otherLanguagesDoc is docs/other-languages.md, whose signing vectors and
// recipes these tests run.
func otherLanguagesDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/other-languages.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readmeVectors parses the first ```text block of docs/other-languages.md:
// "name: value" lines, vectors separated by a blank line.
func readmeVectors(t *testing.T) []vector {
	t.Helper()
	section := otherLanguagesDoc(t)
	start := strings.Index(section, "```text\n")
	if start < 0 {
		t.Fatal("no ```text block of test vectors in docs/other-languages.md")
	}
	block := section[start+len("```text\n"):]
	block = block[:strings.Index(block, "```")]

	var out []vector
	for _, chunk := range strings.Split(strings.TrimSpace(block), "\n\n") {
		var v vector
		for _, line := range strings.Split(chunk, "\n") {
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("vector line without a name: %q", line)
			}
			value = strings.TrimSpace(value)
			switch name {
			case "key":
				v.Key = value
			case "secret":
				v.Secret = value
			case "method":
				v.Method = value
			case "uri":
				v.URI = value
			case "body":
				v.Body = value
			case "signature":
				v.Signature = value
			default:
				t.Fatalf("unknown vector field %q", name)
			}
		}
		if v.Key == "" || v.Secret == "" || v.Method == "" || v.URI == "" || len(v.Signature) != 64 {
			t.Fatalf("incomplete vector for %s %s", v.Method, v.URI)
		}
		out = append(out, v)
	}
	return out
}

// TestReadmeSigningVectors checks each vector of docs/other-languages.md three ways: against
// paykit.HMACSigner, against an independent Python implementation (when
// python3 is installed), and by sending the request to the sandbox, which
// must accept the signature. Signatures are compared, never printed.
func TestReadmeSigningVectors(t *testing.T) {
	vectors := readmeVectors(t)
	if len(vectors) < 2 {
		t.Fatalf("%d vectors in docs/other-languages.md, want a POST with a body and a GET with a query", len(vectors))
	}
	sb := sandbox.New(sandbox.Config{})
	defer sb.Close()
	ts := httptest.NewServer(sb)
	defer ts.Close()

	for _, v := range vectors {
		name := v.Method + " " + v.URI
		var body []byte
		if v.Body != "" {
			body = []byte(v.Body)
		}
		req, err := http.NewRequestWithContext(t.Context(), v.Method, ts.URL+v.URI, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		sig, err := paykit.HMACSigner(v.Secret).Sign(req, body)
		if err != nil {
			t.Fatal(err)
		}
		if sig != v.Signature {
			t.Errorf("%s: the documented signature is not what paykit.HMACSigner computes", name)
		}
		if py, ok := pythonSignature(t, v); ok && py != v.Signature {
			t.Errorf("%s: the documented signature is not what Python's hmac computes", name)
		}

		if v.Key != sandbox.DefaultAPIKey || v.Secret != sandbox.DefaultSecret {
			continue
		}
		req.Header.Set("X-Identity", v.Key)
		req.Header.Set("X-Signature", v.Signature)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: the sandbox answered HTTP %d to the documented signed request", name, res.StatusCode)
		}
	}
}

// pythonSignature computes the vector's signature with python3's hmac
// module, the recipe docs/other-languages.md gives, when python3 is installed.
func pythonSignature(t *testing.T, v vector) (string, bool) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found: the independent check is skipped")
		return "", false
	}
	in, _ := json.Marshal(v)
	cmd := exec.CommandContext(t.Context(), py, "-c", `
import hashlib, hmac, json, sys
v = json.load(sys.stdin)
msg = v["Method"].encode() + b"\n" + v["URI"].encode() + b"\n" + v["Body"].encode()
sys.stdout.write(hmac.new(v["Secret"].encode(), msg, hashlib.sha256).hexdigest())
`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return string(out), true
}
