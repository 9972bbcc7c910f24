// Package receivertest is a webhook receiver for the sandbox's tests: one
// that hangs until told to answer, so a test can hold deliveries in flight
// and count them without sleeping. Both package sandbox's tests and
// sandbox/internal/webhook's use it.
package receivertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Hanging answers nothing until Answer is called.
type Hanging struct {
	*httptest.Server
	// Arrived gets a value as each request comes in (buffered for 10,000).
	Arrived chan struct{}
	// Served counts the requests answered.
	Served  atomic.Int64
	release chan struct{}
}

// NewHanging starts a hanging receiver, answered and closed when t ends.
func NewHanging(t testing.TB) *Hanging {
	h := &Hanging{release: make(chan struct{}), Arrived: make(chan struct{}, 10000)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		h.Arrived <- struct{}{}
		<-h.release
		h.Served.Add(1)
	}))
	t.Cleanup(h.Close)
	t.Cleanup(h.Answer)
	return h
}

// Answer lets the receiver answer every request, now and later; a second
// call does nothing.
func (h *Hanging) Answer() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

// Recording answers every request at once with 200 and keeps each body
// and its X-Notification-Token, in the order they came.
type Recording struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	tokens []string
}

// NewRecording starts a recording receiver, closed when t ends.
func NewRecording(t testing.TB) *Recording {
	r := &Recording{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.tokens = append(r.tokens, req.Header.Get("X-Notification-Token"))
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// Bodies are the bodies received so far, oldest first.
func (r *Recording) Bodies() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

// Tokens are the X-Notification-Token headers received so far, in the
// order of Bodies ("" for none).
func (r *Recording) Tokens() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tokens)
}
