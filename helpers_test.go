package paykit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testKey    = "pk_test_key_9f8e7d"
	testSecret = "sk_test_secret_1a2b3c"
	testBase   = "https://api.paykit.test"
	paymentID  = "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"
	payoutID   = "0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2d"
	withdrawID = "9a8b7c6d-5e4f-4321-8765-43210fedcba9"
)

// captured is what crossed the wire in one request.
type captured struct {
	Method, URI, ContentType, Identity, Signature, UserAgent string
	Body                                                     []byte
}

// recorder keeps every request a mock transport or test server received.
type recorder struct {
	mu   sync.Mutex
	reqs []captured
}

func (r *recorder) record(req *http.Request) captured {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	c := captured{Method: req.Method, URI: req.URL.RequestURI(), ContentType: req.Header.Get("Content-Type"),
		Identity: req.Header.Get("X-Identity"), Signature: req.Header.Get("X-Signature"),
		UserAgent: req.Header.Get("User-Agent"), Body: body}
	r.mu.Lock()
	r.reqs = append(r.reqs, c)
	r.mu.Unlock()
	return c
}

func (r *recorder) all() []captured {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]captured(nil), r.reqs...)
}

func (r *recorder) count() int { return len(r.all()) }

// last returns the one request the test expected; it fails unless exactly
// one was made.
func (r *recorder) only(t *testing.T) captured {
	t.Helper()
	all := r.all()
	require.Len(t, all, 1, "requests sent")
	return all[0]
}

// mockHTTP returns an http.Client over a fresh httpmock transport (never
// the global one, which is not safe in parallel tests) that answers every
// request with status and body and records it in rec when rec is not nil.
func mockHTTP(t *testing.T, status int, body string, rec *recorder) *http.Client {
	t.Helper()
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		if rec != nil {
			rec.record(req)
		}
		resp := httpmock.NewStringResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	})
	return &http.Client{Transport: mt}
}

// echoFields are the request fields a create's answer repeats.
var echoFields = []string{"ext_id", "amount", "method", "requisites", "holder_name", "bank",
	"from_terminal_id", "to_terminal_id", "address"}

// echoClient is mockClient for tests of what a create sends: its answer is
// body with the fields of the request that an answer repeats (ext_id,
// amount, method, …) copied in, digits as sent, so that the answer is
// about the resource asked for.
func echoClient(t *testing.T, status int, body string) (*Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		got := rec.record(req)
		var in, out map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			return nil, err
		}
		if json.Unmarshal(got.Body, &in) == nil {
			for _, k := range echoFields {
				if v, ok := in[k]; ok {
					out[k] = v
				}
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		resp := httpmock.NewBytesResponse(status, b)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	})
	c, err := NewClient(testBase, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: mt}), WithMaxRetries(0))
	require.NoError(t, err)
	return c, rec
}

// mockClient returns a client, without retries, whose own http.Client
// answers every request with status and body, and the recorder of what it
// sent.
func mockClient(t *testing.T, status int, body string, opts ...Option) (*Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts = append([]Option{WithHTTPClient(mockHTTP(t, status, body, rec)), WithMaxRetries(0)}, opts...)
	c, err := NewClient(testBase, testKey, HMACSigner(testSecret), opts...)
	require.NoError(t, err)
	return c, rec
}

// serverClient returns a client of a real loopback server running h.
func serverClient(t *testing.T, h http.Handler, opts ...Option) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts = append([]Option{WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), opts...)
	require.NoError(t, err)
	return c, srv
}

// wantSignature computes the documented HMAC independently of signer.go.
func wantSignature(method, uri string, body []byte) string {
	m := hmac.New(sha256.New, []byte(testSecret))
	m.Write([]byte(method + "\n" + uri + "\n"))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// assertWire checks method, URI, authentication headers and exact body.
func assertWire(t *testing.T, got captured, method, uri, contentType, body string) {
	t.Helper()
	assert.Equal(t, method, got.Method, "method")
	assert.Equal(t, uri, got.URI, "request URI")
	assert.Equal(t, contentType, got.ContentType, "content type")
	assert.Equal(t, testKey, got.Identity, "X-Identity")
	assert.Equal(t, wantSignature(method, uri, got.Body), got.Signature, "X-Signature")
	assert.Contains(t, got.UserAgent, "paykit-go/"+Version)
	if body != "<multipart>" {
		assert.Equal(t, body, string(got.Body), "body")
	}
}

// dec parses a decimal literal for a test.
func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// assertDec compares decimals by value (1.50 equals 1.5).
func assertDec(t *testing.T, want string, got decimal.Decimal, field string) {
	t.Helper()
	assert.True(t, dec(want).Equal(got), "%s: want %s, got %s", field, want, got)
}
