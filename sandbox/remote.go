package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/remote"
)

// Remote is a typed client of a running sandbox's /sandbox/ controls and
// inspection endpoints: the binary, a container, or a sandbox shared by a
// team. It is for code that cannot hold the *Server (a CI job that starts
// cmd/paykit-sandbox or an image from docker-compose), so that it does not
// hand-write the JSON POSTs. Its methods mirror the Server's Go controls.
//
// With WithControlToken it sends the control token of remote mode as
// Authorization: Bearer; a refused control comes back as a *ControlError
// that matches ErrNotFound, ErrWrongState or ErrInvalidArgument with
// errors.Is, like the Server's own methods. A Remote is safe for concurrent
// use.
type Remote struct {
	base  string
	token string
	hc    *http.Client
	// apiKey and signer authenticate as a merchant (WithMerchant), for
	// Listen.
	apiKey string
	signer paykit.Signer
}

// RemoteOption configures a Remote in NewRemote.
type RemoteOption func(*Remote)

// WithControlToken sends token as Authorization: Bearer on every request,
// as a sandbox started with -control-token requires.
func WithControlToken(token string) RemoteOption { return func(r *Remote) { r.token = token } }

// WithRemoteHTTPClient sends through hc instead of a client with a 60
// second timeout (FlushWebhooks may take that long).
func WithRemoteHTTPClient(hc *http.Client) RemoteOption { return func(r *Remote) { r.hc = hc } }

// NewRemote returns a client of the sandbox at baseURL, such as
// "http://127.0.0.1:8080".
func NewRemote(baseURL string, opts ...RemoteOption) (*Remote, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sandbox: NewRemote: %q is not an http(s) base URL", baseURL)
	}
	r := &Remote{base: u.String(), hc: &http.Client{Timeout: 60 * time.Second}}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// String keeps the control token out of fmt output.
func (r *Remote) String() string { return "sandbox.Remote(" + r.base + ")" }

// Format keeps the control token out of every fmt verb, %#v and %+v
// included, for a *Remote and a Remote alike: it prints String's text
// (with %#v, a Go-like form whose token is masked).
func (r Remote) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		tok := ""
		if r.token != "" {
			tok = "****"
		}
		fmt.Fprintf(f, "&sandbox.Remote{base:%q, token:%q}", r.base, tok)
		return
	}
	io.WriteString(f, r.String())
}

// LogValue keeps the control token out of slog output: the base URL, and
// whether a token is set.
func (r Remote) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base", r.base), slog.Bool("control_token", r.token != ""))
}

// ControlError is a control or inspection request the sandbox refused.
type ControlError struct {
	// StatusCode is the HTTP status: 404, 409, 400, 401, 403, 415.
	StatusCode int
	// Code is the sandbox's error code, such as SANDBOX_CONFLICT.
	Code string
	// Message is the sandbox's explanation.
	Message string
}

// Error formats the code, status and message; none of them carries the
// control token.
func (e *ControlError) Error() string {
	return fmt.Sprintf("sandbox: %s (HTTP %d): %s", e.Code, e.StatusCode, e.Message)
}

// Is maps the refusal onto the errors of the Go controls: 404 is
// ErrNotFound, 409 ErrWrongState, 400 ErrInvalidArgument, and 503
// SANDBOX_STORE ErrStore.
func (e *ControlError) Is(target error) bool {
	switch e.StatusCode {
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusConflict:
		return target == ErrWrongState
	case http.StatusBadRequest:
		return target == ErrInvalidArgument
	case http.StatusServiceUnavailable:
		// The sandbox's database failed: the Server's own controls
		// return ErrStore then.
		return target == ErrStore && e.Code == spec.CodeSandboxStore
	}
	return false
}

// VerifyPayment plays the service's verification of a PROCESSING payment:
// outcome is OutcomeCompleted or OutcomeCancelled.
func (r *Remote) VerifyPayment(ctx context.Context, id, outcome string) error {
	return r.postID(ctx, "payments", id, "/verify", map[string]string{"outcome": outcome})
}

// ReviewDispute plays the service's review of a disputed payment: outcome
// is OutcomeApproved or OutcomeRejected.
func (r *Remote) ReviewDispute(ctx context.Context, id, outcome string) error {
	return r.postID(ctx, "payments", id, "/dispute/review", map[string]string{"outcome": outcome})
}

// SetPayoutStatus moves a payout to processing, completed, failed or
// cancelled.
func (r *Remote) SetPayoutStatus(ctx context.Context, id, status string) error {
	return r.postID(ctx, "payouts", id, "/status", map[string]string{"status": status})
}

// SetWithdrawalStatus moves a withdrawal to processing, completed (with
// txHash, or a generated one when empty) or failed.
func (r *Remote) SetWithdrawalStatus(ctx context.Context, id, status, txHash string) error {
	body := map[string]string{"status": status}
	if txHash != "" {
		body["tx_hash"] = txHash
	}
	return r.postID(ctx, "withdrawals", id, "/status", body)
}

// Advance moves the sandbox clock forward by d and returns the new time.
// The control counts whole seconds, so a negative d or one with a
// fraction of a second is refused before any request.
func (r *Remote) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	var out struct {
		Now time.Time `json:"now"`
	}
	if err := checkAdvance(d); err != nil {
		return time.Time{}, err
	}
	err := r.conn().Post(ctx, "/sandbox/clock/advance", map[string]int64{"seconds": int64(d / time.Second)}, &out)
	return out.Now, err
}

// InjectFault installs a fault (see Fault).
func (r *Remote) InjectFault(ctx context.Context, f Fault) error {
	return r.conn().Post(ctx, "/sandbox/faults", f, nil)
}

// Reset puts the sandbox back to its starting state.
func (r *Remote) Reset(ctx context.Context) error {
	return r.conn().Post(ctx, "/sandbox/reset", struct{}{}, nil)
}

// FlushWebhooks waits until every webhook queued so far has been delivered
// or given up on, as Server.FlushWebhooks does: call it before asserting
// what a webhook did.
func (r *Remote) FlushWebhooks(ctx context.Context) error {
	return r.conn().Post(ctx, "/sandbox/webhooks/flush", struct{}{}, nil)
}

// ResendWebhook sends a logged delivery (an id from Deliveries) again, as
// Server.ResendWebhook does, and returns the new delivery.
func (r *Remote) ResendWebhook(ctx context.Context, id string) (Delivery, error) {
	var d Delivery
	if id == "" {
		return d, fmt.Errorf("sandbox: ResendWebhook: %w: empty delivery id", ErrInvalidArgument)
	}
	err := r.conn().Post(ctx, "/sandbox/webhooks/"+url.PathEscape(id)+"/resend", struct{}{}, &d)
	return d, err
}

// State returns the balances and resource counts (GET /sandbox/state).
func (r *Remote) State(ctx context.Context) (State, error) {
	var s State
	err := r.conn().Get(ctx, "/sandbox/state", &s)
	return s, err
}

// Requests returns the latest requests the sandbox answered, newest first
// (GET /sandbox/requests).
func (r *Remote) Requests(ctx context.Context) ([]RequestRecord, error) {
	var out struct {
		Requests []RequestRecord `json:"requests"`
	}
	err := r.conn().Get(ctx, "/sandbox/requests", &out)
	return out.Requests, err
}

// Deliveries returns the webhook delivery log, newest first (GET
// /sandbox/webhooks).
func (r *Remote) Deliveries(ctx context.Context) ([]Delivery, error) {
	var out struct {
		Deliveries []Delivery `json:"deliveries"`
	}
	err := r.conn().Get(ctx, "/sandbox/webhooks", &out)
	return out.Deliveries, err
}

// postID posts a control about one resource, refusing an empty id before
// any request (it would name another route).
func (r *Remote) postID(ctx context.Context, kind, id, tail string, in any) error {
	if id == "" {
		return fmt.Errorf("sandbox: %w: empty %s id", ErrInvalidArgument, strings.TrimSuffix(kind, "s"))
	}
	return r.conn().Post(ctx, "/sandbox/"+kind+"/"+url.PathEscape(id)+tail, in, nil)
}

// conn is the Remote on the wire (package remote), its refusals
// *ControlError.
func (r *Remote) conn() *remote.Conn {
	return &remote.Conn{Base: r.base, Token: r.token, HC: r.hc, APIKey: r.apiKey, Signer: r.signer,
		Refused: func(status int, code, message string) error {
			return &ControlError{StatusCode: status, Code: code, Message: message}
		},
		// A 4xx other than 429 ends a feed: another try cannot change it.
		Final: func(err error) bool {
			var ce *ControlError
			return errors.As(err, &ce) && ce.StatusCode/100 == 4 && ce.StatusCode != http.StatusTooManyRequests
		}}
}
