package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Fault modes (sandbox.Fault's, served here; sandbox's godoc says what
// each does).
const (
	// FaultErrorBefore answers an error without processing the request.
	FaultErrorBefore = "error_before"
	// FaultDropAfter processes the request, then closes the connection
	// without an answer.
	FaultDropAfter = "drop_after"
	// FaultDelay stalls, then processes the request.
	FaultDelay = "delay"
	// FaultRetryAfter answers 503 with Retry-After.
	FaultRetryAfter = "retry_after"
)

// DefaultFaultCode is the error code of an error_before or retry_after
// answer whose fault names no code, on a route for which the spec names no
// internal error of its own.
const DefaultFaultCode = spec.CodeSYS001

// operationRoutes are the route patterns of the operations the spec's
// table of error codes names as raising an internal error.
var operationRoutes = map[string]string{
	"create payment":  "POST /v1/payments",
	"confirm payment": "POST /v1/payments/{id}/confirm",
	"create payout":   "POST /v1/payouts",
	"cancel dispute":  "POST /v1/payments/{id}/dispute/cancel",
}

// internalErrorCodes are the spec's internal-error codes (HTTP 500) by
// route, read from its table (spec.ErrorCodes) so that the rule is written
// once: PAY_001 for create and confirm payment, SYS_001 for create payout
// and cancel dispute. The other routes name none, and take
// DefaultFaultCode.
var internalErrorCodes = func() map[string]string {
	m := map[string]string{}
	for _, c := range spec.ErrorCodes {
		if c.HTTPStatus != http.StatusInternalServerError {
			continue
		}
		for _, op := range c.RaisedBy {
			route, ok := operationRoutes[op]
			if !ok {
				panic("sandbox: no route for the spec's operation " + op)
			}
			m[route] = c.Code
		}
	}
	return m
}()

// FaultCode is the code of a fault without its own on the route pattern:
// the route's internal error.
func FaultCode(pattern string) string {
	if c, ok := internalErrorCodes[pattern]; ok {
		return c
	}
	return DefaultFaultCode
}

// serveFault answers a request hit by fault f (its code filled), mux
// serving the request when the mode lets it through; limit and badBody are
// the route's body cap and invalid-body code (invalidCodeOf).
func (a *API) serveFault(w http.ResponseWriter, r *http.Request, f Fault, limit int64, badBody string, mux http.Handler) {
	switch f.Mode {
	case FaultErrorBefore:
		WriteError(w, NewError(f.Status, f.Code, "sandbox: injected fault"))
	case FaultRetryAfter:
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfterS))
		WriteError(w, NewError(http.StatusServiceUnavailable, f.Code, "sandbox: injected fault, retry later"))
	case FaultDelay:
		// Read the body before the delay: net/http watches the connection, and so
		// cancels r.Context when the client goes away, only once the body
		// has been read to its end. Without this a POST abandoned during
		// the delay would still be applied afterwards. The key is checked
		// before, as the route checks it (authenticated): an unknown key
		// is refused before a byte of its body is read, and, like a body
		// the route could not read, without the delay, since nothing of
		// such a request is processed.
		if _, _, aerr := a.identify(r, r.Header.Get("X-Identity")); aerr != nil {
			w.Header().Set("Connection", "close")
			WriteError(w, aerr)
			return
		}
		if _, aerr := a.readBody(w, r, limit, badBody); aerr != nil {
			WriteError(w, aerr)
			return
		}
		t := time.NewTimer(time.Duration(f.DelayMS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		// Both may have become ready together; the client's departure wins.
		if r.Context().Err() != nil {
			return
		}
		mux.ServeHTTP(w, r)
	case FaultDropAfter:
		mux.ServeHTTP(&v1DiscardWriter{h: http.Header{}}, r)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
			return
		}
		// No hijacking (HTTP/2, a recorder): abort the response instead,
		// which net/http turns into a reset connection.
		panic(http.ErrAbortHandler)
	}
}

// v1DiscardWriter swallows the answer of a request whose connection
// drop_after is going to cut.
type v1DiscardWriter struct{ h http.Header }

func (d *v1DiscardWriter) Header() http.Header         { return d.h }
func (d *v1DiscardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *v1DiscardWriter) WriteHeader(int)             {}
