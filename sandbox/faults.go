package sandbox

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault modes.
const (
	// FaultErrorBefore answers Fault.Status (default 500) with an error body
	// whose code is Fault.Code (default DefaultFaultCode) without processing
	// the request.
	FaultErrorBefore = "error_before"
	// FaultDropAfter processes the request fully, then closes the connection
	// without answering: the client cannot know that it took effect.
	FaultDropAfter = "drop_after"
	// FaultDelay stalls Fault.DelayMS milliseconds (or until the client
	// gives up), then processes the request normally.
	FaultDelay = "delay"
	// FaultRetryAfter answers 503 with a Retry-After header of
	// Fault.RetryAfterS seconds (default 1) without processing the request.
	FaultRetryAfter = "retry_after"
)

// DefaultFaultCode is the error code of an error_before or retry_after
// answer whose Fault names no code.
const DefaultFaultCode = "SYS_001"

// Fault is a one-shot (or Count-shot) failure injected in front of the
// API. Method is an HTTP method ("" = any). Path is an escaped request path,
// exact or with {name} segments that match any single segment, e.g.
// "/v1/payments/{id}/confirm". Count is how many matching requests the fault
// applies to (0 = 1). Faults are matched before authentication, in the
// order they were injected; the first match is used.
type Fault struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Mode        string `json:"mode"`
	Count       int    `json:"count"`
	Status      int    `json:"status"`
	Code        string `json:"code"`
	DelayMS     int    `json:"delay_ms"`
	RetryAfterS int    `json:"retry_after_s"`
}

// InjectFault arms f for the next Count matching requests. It returns an
// error wrapping ErrInvalidArgument for an unknown mode, a path that does
// not start with "/" or negative numbers.
func (s *Server) InjectFault(f Fault) error {
	switch f.Mode {
	case FaultErrorBefore, FaultDropAfter, FaultDelay, FaultRetryAfter:
	default:
		return fmt.Errorf("%w: fault mode must be error_before, drop_after, delay or retry_after", ErrInvalidArgument)
	}
	if !strings.HasPrefix(f.Path, "/") {
		return fmt.Errorf("%w: fault path must start with /", ErrInvalidArgument)
	}
	if f.Count < 0 || f.DelayMS < 0 || f.RetryAfterS < 0 || f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return fmt.Errorf("%w: fault count, delay, retry-after and status must be in range", ErrInvalidArgument)
	}
	f.Method = strings.ToUpper(f.Method)
	if f.Count == 0 {
		f.Count = 1
	}
	if f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	if f.Code == "" {
		f.Code = DefaultFaultCode
	}
	if f.RetryAfterS == 0 {
		f.RetryAfterS = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
	return nil
}

// takeFault counts the request and consumes one shot of the first fault
// that matches it.
func (s *Server) takeFault(r *http.Request) *Fault {
	path := r.URL.EscapedPath()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[r.Method+" "+path]++
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == r.Method) && pathMatches(f.Path, path) {
			shot := *f
			if f.Count--; f.Count <= 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
			return &shot
		}
	}
	return nil
}

func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if len(p) > 2 && p[0] == '{' && p[len(p)-1] == '}' {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if p != xs[i] {
			return false
		}
	}
	return true
}

func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, f *Fault) {
	switch f.Mode {
	case FaultErrorBefore:
		writeError(w, newErr(f.Status, f.Code, "sandbox: injected fault"))
	case FaultRetryAfter:
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfterS))
		writeError(w, newErr(http.StatusServiceUnavailable, f.Code, "sandbox: injected fault, retry later"))
	case FaultDelay:
		t := time.NewTimer(time.Duration(f.DelayMS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		s.mux.ServeHTTP(w, r)
	case FaultDropAfter:
		s.mux.ServeHTTP(&discardWriter{h: http.Header{}}, r)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		// No hijacking (HTTP/2, a recorder): abort the response instead,
		// which net/http turns into a reset connection.
		panic(http.ErrAbortHandler)
	}
}

// discardWriter swallows the answer of a request whose connection
// drop_after is going to cut.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
