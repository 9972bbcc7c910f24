package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Error codes of the /sandbox/ controls. They are the sandbox's own: the
// spec has no controls.
const (
	CodeControlNotFound = "SANDBOX_NOT_FOUND" // 404: unknown payment, payout or withdrawal id
	CodeControlConflict = "SANDBOX_CONFLICT"  // 409: the transition is not allowed from the current status
	CodeControlInvalid  = "SANDBOX_INVALID"   // 400: malformed body, unknown outcome, status or fault mode
	// CodeControlForbidden (403) refuses a control or inspection request
	// whose Host is not loopback while Config.AllowRemote is off.
	CodeControlForbidden = "SANDBOX_FORBIDDEN"
	// CodeControlMediaType (415) refuses a control POST without
	// Content-Type: application/json: a web page can send text/plain or a
	// form cross-origin without a preflight, but not JSON.
	CodeControlMediaType = "SANDBOX_UNSUPPORTED_MEDIA_TYPE"
	// CodeControlUnauthorized (401) refuses a control, inspection or
	// dashboard request without the control token of Config.ControlToken.
	CodeControlUnauthorized = "SANDBOX_UNAUTHORIZED"
)

// localRequest reports whether r names the sandbox by a loopback Host:
// "localhost", an address in 127.0.0.0/8 or ::1, with or without a port.
// A browser sends the page's host name, so a DNS-rebinding page
// (evil.example resolving to 127.0.0.1) is refused even though it reaches
// the loopback socket. Always true with Config.AllowRemote.
func (s *Server) localRequest(r *http.Request) bool {
	if s.cfg.AllowRemote {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// guardControl admits a request to a control, an inspection endpoint or
// the dashboard, or answers the refusal itself and returns false: 403
// SANDBOX_FORBIDDEN for a Host that is not loopback (see localRequest),
// 415 SANDBOX_UNSUPPORTED_MEDIA_TYPE for a POST whose Content-Type is not
// application/json when requireJSON is set. Together they stop a web page
// the developer visits from driving the sandbox: it can neither pass a
// loopback Host through DNS rebinding nor send JSON cross-origin without a
// CORS preflight, which the sandbox never answers.
func (s *Server) guardControl(w http.ResponseWriter, r *http.Request, requireJSON bool) bool {
	if r.Header.Get("User-Agent") == webhook.UserAgent {
		// A webhook delivery pointed at the sandbox is never a command,
		// whatever dialled it.
		api.WriteError(w, api.NewError(http.StatusForbidden, CodeControlForbidden, "a webhook delivery is not a control request"))
		return false
	}
	if !s.localRequest(r) {
		api.WriteError(w, api.NewError(http.StatusForbidden, CodeControlForbidden,
			"the sandbox controls answer only a loopback Host (localhost, 127.0.0.1, [::1]); start it with remote control allowed to change this"))
		return false
	}
	if s.cfg.AllowRemote && s.cfg.ControlToken == "" && !strings.HasPrefix(r.URL.Path, "/sandbox/ui/assets/") {
		api.WriteError(w, api.NewError(http.StatusForbidden, CodeControlForbidden,
			"remote control needs a control token: set Config.ControlToken (-control-token, PAYKIT_SANDBOX_CONTROL_TOKEN)"))
		return false
	}
	// The dashboard's stylesheet and script are not secret, and the login
	// page needs them.
	public := strings.HasPrefix(r.URL.Path, "/sandbox/ui/assets/")
	if s.cfg.ControlToken != "" && !public {
		switch s.checkAuth(w, r) {
		case authOK:
		case authBlocked:
			return false
		default:
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/sandbox/ui") {
				http.Redirect(w, r, "/sandbox/login", http.StatusSeeOther)
				return false
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="paykit-sandbox"`)
			api.WriteError(w, api.NewError(http.StatusUnauthorized, CodeControlUnauthorized,
				"this sandbox needs its control token: send Authorization: Bearer TOKEN, or log in at /sandbox/login"))
			return false
		}
	}
	if requireJSON && r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			api.WriteError(w, api.NewError(http.StatusUnsupportedMediaType, CodeControlMediaType,
				"control requests need Content-Type: application/json"))
			return false
		}
	}
	return true
}

// controlRoutes registers the unsigned JSON controls. They exist for
// non-Go users of the binary; Go code calls the methods directly.
func (s *Server) controlRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /sandbox/payments/{id}/verify", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Outcome string `json:"outcome"`
		}
		s.control(w, r, &req, func() (any, error) { return s.verifyPayment(r.PathValue("id"), req.Outcome) })
	})
	mux.HandleFunc("POST /sandbox/payments/{id}/dispute/review", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Outcome string `json:"outcome"`
		}
		s.control(w, r, &req, func() (any, error) { return s.reviewDispute(r.PathValue("id"), req.Outcome) })
	})
	mux.HandleFunc("POST /sandbox/payouts/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Status string `json:"status"`
		}
		s.control(w, r, &req, func() (any, error) { return s.setPayoutStatus(r.PathValue("id"), req.Status) })
	})
	mux.HandleFunc("POST /sandbox/withdrawals/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Status string `json:"status"`
			TxHash string `json:"tx_hash"`
		}
		s.control(w, r, &req, func() (any, error) {
			return s.setWithdrawalStatus(r.PathValue("id"), req.Status, req.TxHash)
		})
	})
	mux.HandleFunc("POST /sandbox/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Seconds int64 `json:"seconds"`
		}
		s.control(w, r, &req, func() (any, error) {
			if req.Seconds < 0 {
				return nil, errors.New("seconds must not be negative")
			}
			// Multiplying a huge count would wrap around to a negative or
			// small duration; Advance clamps the total anyway.
			d := maxClockOffset
			if req.Seconds < int64(maxClockOffset/time.Second) {
				d = time.Duration(req.Seconds) * time.Second
			}
			s.Advance(d)
			return map[string]string{"now": api.Timestamp(s.Now())}, nil
		})
	})
	mux.HandleFunc("POST /sandbox/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		s.control(w, r, &f, func() (any, error) { return struct{}{}, s.InjectFault(f) })
	})
	mux.HandleFunc("POST /sandbox/webhooks/flush", func(w http.ResponseWriter, r *http.Request) {
		var req struct{}
		s.control(w, r, &req, func() (any, error) {
			// As FlushWebhooks: until every queued delivery is delivered or
			// given up on, within the request and a minute at most.
			ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
			defer cancel()
			if err := s.FlushWebhooks(ctx); err != nil {
				return nil, fmt.Errorf("%w: webhooks still pending: %v", ErrWrongState, err)
			}
			return struct{}{}, nil
		})
	})
	mux.HandleFunc("POST /sandbox/webhooks/{id}/resend", func(w http.ResponseWriter, r *http.Request) {
		var req struct{}
		s.control(w, r, &req, func() (any, error) { return s.ResendWebhook(r.PathValue("id")) })
	})
	mux.HandleFunc("POST /sandbox/reset", func(w http.ResponseWriter, r *http.Request) {
		var req struct{}
		s.control(w, r, &req, func() (any, error) { s.Reset(); return struct{}{}, nil })
	})
	mux.HandleFunc("/sandbox/", func(w http.ResponseWriter, r *http.Request) {
		if !s.guardControl(w, r, false) {
			return
		}
		api.WriteError(w, api.NewError(http.StatusNotFound, CodeControlNotFound, "no such control: "+r.Method+" "+r.URL.Path))
	})
}

// control guards the request (guardControl), decodes the body into req, runs do and answers its result, or
// maps its error: ErrNotFound to 404, ErrWrongState to 409, a failed
// store (ErrStore) to 503 SANDBOX_STORE, anything else to 400.
func (s *Server) control(w http.ResponseWriter, r *http.Request, req any, do func() (any, error)) {
	if !s.guardControl(w, r, true) {
		return
	}
	buf, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		api.WriteError(w, api.NewError(http.StatusBadRequest, CodeControlInvalid, "body too large or unreadable"))
		return
	}
	if err := decodeStrict(buf, req); err != nil {
		api.WriteError(w, api.NewError(http.StatusBadRequest, CodeControlInvalid, "body is not valid JSON: "+err.Error()))
		return
	}
	if err := s.storeFailed(); err != nil {
		api.WriteError(w, api.StoreUnavailable())
		return
	}
	v, err := do()
	if serr := s.storeFailed(); serr != nil {
		err = serr // what the control did was not kept
	}
	switch {
	case errors.Is(err, ErrStore):
		api.WriteError(w, api.StoreUnavailable())
	case err == nil:
		api.WriteJSON(w, http.StatusOK, v)
	case errors.Is(err, ErrNotFound):
		api.WriteError(w, api.NewError(http.StatusNotFound, CodeControlNotFound, err.Error()))
	case errors.Is(err, ErrWrongState):
		api.WriteError(w, api.NewError(http.StatusConflict, CodeControlConflict, err.Error()))
	default:
		api.WriteError(w, api.NewError(http.StatusBadRequest, CodeControlInvalid, err.Error()))
	}
}

// decodeStrict decodes a control's body refusing unknown fields: a webhook
// payload ({"id":…,"status":"completed",…}) posted at a control is not a
// command, and neither is a typo.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
