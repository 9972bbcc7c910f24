// Package receivertest is a webhook receiver for the sandbox's tests: one
// that hangs until told to answer, so a test can hold deliveries in flight
// and count them without sleeping. Both package sandbox's tests and
// sandbox/internal/webhook's use it.
package receivertest

import (
	"net/http"
	"net/http/httptest"
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
