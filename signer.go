package paykit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
	"sync"
)

// Signer computes the X-Signature header of a request. It is to paykit what
// http.RoundTripper is to net/http: one small method that can be swapped.
//
// The service does not publish its signature algorithm: HMACSigner is the
// SDK's default guess. Sign is called for every attempt, retries included,
// after all other headers are set, so a timestamp or nonce works. body is
// the exact bytes sent (nil for none); req.Body must not be read. A Signer
// must be safe for concurrent use.
type Signer interface {
	// Sign returns the X-Signature value for req, whose body is body. An
	// error ends the call unsent (or, on a retry, with the previous
	// attempt's answer).
	Sign(req *http.Request, body []byte) (string, error)
}

// SignerFunc adapts an ordinary function to the Signer interface, in the way
// http.HandlerFunc adapts a function to http.Handler.
//
//	signer := paykit.SignerFunc(func(r *http.Request, body []byte) (string, error) {
//		return mySignature(r.Method, r.URL.RequestURI(), body), nil
//	})
type SignerFunc func(req *http.Request, body []byte) (string, error)

// Sign calls f(req, body).
func (f SignerFunc) Sign(req *http.Request, body []byte) (string, error) { return f(req, body) }

// HMACSigner returns the SDK's default Signer: the lowercase hex encoding of
// HMAC-SHA256, keyed with secret, over the canonical string
//
//	METHOD + "\n" + request URI + "\n" + body
//
// where the request URI is the escaped path and query exactly as sent
// (req.URL.RequestURI(), for example "/v1/payouts?limit=10&status=pending")
// and body is the exact bytes sent, empty for body-less requests.
//
// This is the SDK's convention, not the service's, whose specification
// does not show its algorithm: for another scheme pass your own Signer.
//
// An empty secret yields a Signer whose Sign always fails, so a missing
// configuration value is caught on the first call instead of producing
// signatures anybody could compute. The secret is never printed.
func HMACSigner(secret string) Signer {
	s := &hmacSigner{}
	if secret != "" {
		key := []byte(secret)
		s.pool.New = func() any { return &hmacState{h: hmac.New(sha256.New, key)} }
	}
	return s
}

// hmacState is one pooled signing state, the keyed HMAC with its buffers
// (through the hash.Hash interface they would escape on every call).
type hmacState struct {
	h      hash.Hash
	prefix []byte
	sum    [sha256.Size]byte
	hex    [2 * sha256.Size]byte
}

// errEmptySecret is returned by an HMACSigner made with an empty secret.
var errEmptySecret = errors.New("paykit: HMACSigner has an empty secret")

type hmacSigner struct {
	// pool reuses keyed HMAC states: keying one per call costs more
	// allocations than the raw call makes (BENCHMARKS.md,
	// third round).
	pool sync.Pool
}

func (s *hmacSigner) Sign(req *http.Request, body []byte) (string, error) {
	if s.pool.New == nil {
		return "", errEmptySecret
	}
	st := s.pool.Get().(*hmacState)
	defer s.pool.Put(st)
	st.h.Reset()
	// Buffer the short prefix so the hash sees two writes, not four.
	p := append(st.prefix[:0], req.Method...)
	p = append(p, '\n')
	p = append(p, req.URL.RequestURI()...)
	p = append(p, '\n')
	if cap(p) <= 4<<10 { // keep a modest buffer for the next call
		st.prefix = p
	}
	st.h.Write(p)
	st.h.Write(body)
	hex.Encode(st.hex[:], st.h.Sum(st.sum[:0]))
	return string(st.hex[:]), nil
}

// String keeps the secret out of fmt output such as %v and %+v.
func (s *hmacSigner) String() string { return "paykit.HMACSigner(<redacted>)" }

// GoString keeps the secret out of %#v.
func (s *hmacSigner) GoString() string { return s.String() }
