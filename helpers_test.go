package paykit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
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

// ctx is the context of calls a test does not cancel.
var ctx = context.Background()

// paymentBody is a payment answer with the given identity, amount and status.
func paymentBody(id, extID, amount, status string) string {
	return fmt.Sprintf(`{"id":%q,"ext_id":%q,"amount":%s,"currency":"RUB","status":%q,"method":"CARD",`+
		`"requisites":{"type":"card","value":"2200123456789012","bank":"Sberbank","bank_code":"sber","holder":"I. I."},`+
		`"valid_until":"2026-11-22T10:20:00Z","created_at":"2026-11-22T10:00:00Z","usdt_rate":92.5}`, id, extID, amount, status)
}

// otherPaymentID names a payment other than paymentID, for answers about
// another resource.
const otherPaymentID = "11111111-2222-4333-8444-555555555555"

// routes answers each "METHOD path" with its status and body, and counts
// the requests per route.
type routes struct {
	mu     sync.Mutex
	answer map[string]func() (int, string)
	hits   map[string]int
}

// newRoutes returns a handler answering each "METHOD path" of answers.
func newRoutes(answers map[string]func() (int, string)) *routes {
	return &routes{answer: answers, hits: map[string]int{}}
}

// fixed is an answer that never changes.
func fixed(status int, body string) func() (int, string) {
	return func() (int, string) { return status, body }
}

func (rt *routes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.EscapedPath()
	rt.mu.Lock()
	rt.hits[key]++
	f := rt.answer[key]
	rt.mu.Unlock()
	if f == nil {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"PAY_006","message":"no route ` + key + `"}`))
		return
	}
	status, body := f()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

// count returns how many requests the route "METHOD path" received.
func (rt *routes) count(key string) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.hits[key]
}

// allSentinels is every sentinel of opSentinels, in the order of their
// names, for tests that loop over them.
var allSentinels = func() []error {
	names := slices.Sorted(maps.Keys(opSentinels))
	out := make([]error, len(names))
	for i, n := range names {
		out[i] = opSentinels[n]
	}
	return out
}()

// opRequireValidation asserts that err is a *ValidationError on field that
// matches ErrInvalidParameters, and that nothing was sent.
func opRequireValidation(t *testing.T, err error, rec *recorder, field string) {
	t.Helper()
	require.Error(t, err)
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "want *ValidationError, got %T: %v", err, err)
	assert.Equal(t, field, ve.Field, "ValidationError.Field")
	assert.ErrorIs(t, err, ErrInvalidParameters)
	assert.Equal(t, 0, rec.count(), "no request may be sent before validation passes")
}

// opRequireAPIError asserts that err carries an *Error with code and status.
func opRequireAPIError(t *testing.T, err error, code string, status int) *Error {
	t.Helper()
	require.Error(t, err)
	var apiErr *Error
	require.True(t, errors.As(err, &apiErr), "want *Error, got %T: %v", err, err)
	assert.Equal(t, code, apiErr.Code, "Error.Code")
	assert.Equal(t, status, apiErr.HTTPStatus, "Error.HTTPStatus")
	return apiErr
}

// opAssertTime compares a decoded time exactly, location included.
func opAssertTime(t *testing.T, want, got time.Time, field string) {
	t.Helper()
	assert.True(t, want.Equal(got), "%s: want %s, got %s", field, want, got)
	assert.Equal(t, time.UTC, got.Location(), "%s: location", field)
	assert.Equal(t, want, got, field)
}

// opErrBody is an API error body as the spec shapes it.
func opErrBody(code, message string) string {
	return fmt.Sprintf(`{"error":%q,"message":%q,"data":{}}`, code, message)
}

// opSentinels lists every sentinel, to check that an error matches exactly
// the expected ones.
var opSentinels = map[string]error{
	"ErrInvalidParameters":     ErrInvalidParameters,
	"ErrDuplicateExtID":        ErrDuplicateExtID,
	"ErrNoRequisites":          ErrNoRequisites,
	"ErrTooManySameAmount":     ErrTooManySameAmount,
	"ErrPaymentNotFound":       ErrPaymentNotFound,
	"ErrPaymentNotCancellable": ErrPaymentNotCancellable,
	"ErrPaymentNotConfirmable": ErrPaymentNotConfirmable,
	"ErrDisputeNotAllowed":     ErrDisputeNotAllowed,
	"ErrDisputeExists":         ErrDisputeExists,
	"ErrDisputeNotActive":      ErrDisputeNotActive,
	"ErrPayoutNotFound":        ErrPayoutNotFound,
	"ErrInternal":              ErrInternal,
	"ErrWithdrawalNotFound":    ErrWithdrawalNotFound,
	"ErrInsufficientFunds":     ErrInsufficientFunds,
	"ErrTerminalNotFound":      ErrTerminalNotFound,
	"ErrUnauthorized":          ErrUnauthorized,
	"ErrUnknownOutcome":        ErrUnknownOutcome,
}

// opAssertOnlySentinels asserts err matches the named sentinels and no other.
func opAssertOnlySentinels(t *testing.T, err error, want ...string) {
	t.Helper()
	wanted := map[string]bool{}
	for _, w := range want {
		_, ok := opSentinels[w]
		require.True(t, ok, "unknown sentinel %s", w)
		wanted[w] = true
	}
	for name, s := range opSentinels {
		assert.Equal(t, wanted[name], errors.Is(err, s), "errors.Is(err, %s) for %v", name, err)
	}
}
