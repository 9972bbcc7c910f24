package sandbox

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// Error codes of the /sandbox/ controls. They are the sandbox's own: the
// spec has no controls.
const (
	CodeControlNotFound = "SANDBOX_NOT_FOUND" // 404: unknown payment, payout or withdrawal id
	CodeControlConflict = "SANDBOX_CONFLICT"  // 409: the transition is not allowed from the current status
	CodeControlInvalid  = "SANDBOX_INVALID"   // 400: malformed body, unknown outcome, status or fault mode
)

// controlRoutes registers the unsigned JSON controls. They exist for
// non-Go users of the binary; Go code calls the methods directly.
func (s *Server) controlRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /sandbox/payments/{id}/verify", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Outcome string `json:"outcome"`
		}
		control(w, r, &req, func() (any, error) { return s.verifyPayment(r.PathValue("id"), req.Outcome) })
	})
	mux.HandleFunc("POST /sandbox/payments/{id}/dispute/review", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Outcome string `json:"outcome"`
		}
		control(w, r, &req, func() (any, error) { return s.reviewDispute(r.PathValue("id"), req.Outcome) })
	})
	mux.HandleFunc("POST /sandbox/payouts/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Status string `json:"status"`
		}
		control(w, r, &req, func() (any, error) { return s.setPayoutStatus(r.PathValue("id"), req.Status) })
	})
	mux.HandleFunc("POST /sandbox/withdrawals/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Status string `json:"status"`
			TxHash string `json:"tx_hash"`
		}
		control(w, r, &req, func() (any, error) {
			return s.setWithdrawalStatus(r.PathValue("id"), req.Status, req.TxHash)
		})
	})
	mux.HandleFunc("POST /sandbox/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Seconds int64 `json:"seconds"`
		}
		control(w, r, &req, func() (any, error) {
			if req.Seconds < 0 {
				return nil, errors.New("seconds must not be negative")
			}
			s.Advance(time.Duration(req.Seconds) * time.Second)
			return map[string]string{"now": ts(s.Now())}, nil
		})
	})
	mux.HandleFunc("POST /sandbox/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		control(w, r, &f, func() (any, error) { return struct{}{}, s.InjectFault(f) })
	})
	mux.HandleFunc("POST /sandbox/reset", func(w http.ResponseWriter, r *http.Request) {
		var req struct{}
		control(w, r, &req, func() (any, error) { s.Reset(); return struct{}{}, nil })
	})
	mux.HandleFunc("/sandbox/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newErr(http.StatusNotFound, CodeControlNotFound, "no such control: "+r.Method+" "+r.URL.Path))
	})
}

// control decodes the body into req, runs do and answers its result, or
// maps its error: ErrNotFound to 404, ErrWrongState to 409, anything else
// to 400.
func control(w http.ResponseWriter, r *http.Request, req any, do func() (any, error)) {
	buf, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeError(w, newErr(http.StatusBadRequest, CodeControlInvalid, "body too large or unreadable"))
		return
	}
	if err := decodeJSON(buf, req); err != nil {
		writeError(w, newErr(http.StatusBadRequest, CodeControlInvalid, "body is not valid JSON: "+err.Error()))
		return
	}
	v, err := do()
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.Is(err, ErrNotFound):
		writeError(w, newErr(http.StatusNotFound, CodeControlNotFound, err.Error()))
	case errors.Is(err, ErrWrongState):
		writeError(w, newErr(http.StatusConflict, CodeControlConflict, err.Error()))
	default:
		writeError(w, newErr(http.StatusBadRequest, CodeControlInvalid, err.Error()))
	}
}
