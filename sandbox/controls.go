package sandbox

import (
	"errors"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Error codes of the /sandbox/ controls. They are the sandbox's own: the
// spec has no controls.
const (
	CodeControlNotFound = api.CodeControlNotFound // 404: unknown payment, payout or withdrawal id
	CodeControlConflict = api.CodeControlConflict // 409: the transition is not allowed from the current status
	CodeControlInvalid  = api.CodeControlInvalid  // 400: malformed body, unknown outcome, status or fault mode
	// CodeControlForbidden (403) refuses a control or inspection request
	// whose Host is not loopback while Config.AllowRemote is off.
	CodeControlForbidden = api.CodeControlForbidden
	// CodeControlMediaType (415) refuses a control POST without
	// Content-Type: application/json: a web page can send text/plain or a
	// form cross-origin without a preflight, but not JSON.
	CodeControlMediaType = api.CodeControlMediaType
	// CodeControlUnauthorized (401) refuses a control, inspection or
	// dashboard request without the control token of Config.ControlToken.
	CodeControlUnauthorized = api.CodeControlUnauthorized
)

// Outcomes accepted by VerifyPayment and ReviewDispute.
const (
	OutcomeCompleted = ledger.OutcomeCompleted
	OutcomeCancelled = ledger.OutcomeCancelled
	OutcomeApproved  = ledger.OutcomeApproved
	OutcomeRejected  = ledger.OutcomeRejected
)

// VerifyPayment plays the service's verification of a PROCESSING payment:
// "completed" completes it and credits amount/usdt_rate USDT to its
// terminal, "cancelled" cancels it (transfer not found).
func (s *Server) VerifyPayment(id, outcome string) error {
	_, err := s.svc.VerifyPayment(id, outcome)
	return goError(err)
}

// ReviewDispute plays the review of an open dispute: "approved" completes
// the payment and credits its terminal (with the dispute's amount when one
// was given, else the payment's), "rejected" cancels it again.
func (s *Server) ReviewDispute(id, outcome string) error {
	_, err := s.svc.ReviewDispute(id, outcome)
	return goError(err)
}

// Payout statuses.
const (
	PayoutPending    = ledger.PayoutPending
	PayoutProcessing = ledger.PayoutProcessing
	PayoutCompleted  = ledger.PayoutCompleted
	PayoutFailed     = ledger.PayoutFailed
	PayoutCancelled  = ledger.PayoutCancelled
)

// SetPayoutStatus plays the provider's side of a payout: pending may move
// to processing, completed, failed or cancelled, processing to completed,
// failed or cancelled. Entering processing (or completing directly) sets
// provider_order_id; completing sets completed_at. A webhook is sent when
// the payout has a notify_url.
func (s *Server) SetPayoutStatus(id, status string) error {
	_, err := s.svc.SetPayoutStatus(id, status)
	return goError(err)
}

// Withdrawal statuses.
const (
	WithdrawalPending    = ledger.WithdrawalPending
	WithdrawalProcessing = ledger.WithdrawalProcessing
	WithdrawalCompleted  = ledger.WithdrawalCompleted
	WithdrawalFailed     = ledger.WithdrawalFailed
)

// SetWithdrawalStatus plays the blockchain side of a withdrawal: pending
// may move to processing, completed or failed, processing to completed or
// failed. completed takes the frozen sum off the terminal for good; failed
// releases it back to the available balance. txHash, when not empty, is
// recorded as tx_hash; completing without one records a random 64-hex hash.
func (s *Server) SetWithdrawalStatus(id, status, txHash string) error {
	_, err := s.svc.SetWithdrawalStatus(id, status, txHash)
	return goError(err)
}

// Delivery is one webhook notification as the sandbox recorded it: what
// it announced, where it went, and every attempt with the receiver's
// answer. It answers "why did my webhook not arrive" without a packet
// capture. The notification token is never recorded. Its fields are
// documented where it is defined, in the sandbox's webhook layer.
type Delivery = webhook.Delivery

// DeliveryAttempt is one POST of a delivery and what came back.
type DeliveryAttempt = webhook.Attempt

// Delivery states.
const (
	// DeliveryPending is a delivery queued or being retried.
	DeliveryPending = webhook.Pending
	// DeliveryDelivered is a delivery that a receiver answered with a 2xx.
	DeliveryDelivered = webhook.Delivered
	// DeliveryFailed is a delivery given up on: every attempt failed, its
	// URL cannot become a request, or Close stopped it.
	DeliveryFailed = webhook.Failed
)

// DefaultDeliveryLogSize is how many deliveries the log keeps: enough to
// see a test run or a debugging session, bounded so that a sandbox left
// running for days does not grow.
const DefaultDeliveryLogSize = service.DeliveryLogSize

// Errors returned by the Go controls, for errors.Is. The HTTP controls map
// them to 404, 409 and 400.
var (
	ErrNotFound        = errors.New(service.NotFoundText)
	ErrWrongState      = errors.New(service.WrongStateText)
	ErrInvalidArgument = errors.New(service.InvalidText)
)

// ErrStore is wrapped by the errors of a store that cannot be used: a
// commit that failed (disk full, the file removed or damaged underneath).
// After one the Server answers every request 503 SANDBOX_STORE and /readyz
// 503, because what it holds in memory may no longer match the file;
// restarting it on the same file resumes from the last committed state.
var ErrStore = service.ErrStore

// goError is an error of the service as the exported Go methods return
// it: a rule's refusal (*ledger.Error) as the sentinel of its kind with
// the same text, and what became of a change the store failed
// (ledger.NotKept, MaybeKept) as ErrStore.
func goError(err error) error {
	var le *ledger.Error
	if !errors.As(err, &le) {
		return err
	}
	sentinel := ErrInvalidArgument
	switch le.Kind {
	case ledger.NotKept, ledger.MaybeKept:
		return service.Outcome{Out: le}
	case ledger.NotFound:
		sentinel = ErrNotFound
	case ledger.WrongState, ledger.Conflict:
		sentinel = ErrWrongState
	}
	return refusal{msg: le.Message, sentinel: sentinel}
}

// refusal is a refused Go control: its text is the rule's, and errors.Is
// finds its sentinel.
type refusal struct {
	msg      string
	sentinel error
}

func (e refusal) Error() string { return e.msg }
func (e refusal) Unwrap() error { return e.sentinel }

// The listen feed (GET /sandbox/listen) and the request log's follow
// (GET /sandbox/requests?follow=1) keep a window of their latest events
// for a client that reconnects, and a bounded queue per client.
const (
	// DefaultListenWindow is how many of a merchant's latest
	// notifications the listen feed keeps for a listener that resumes
	// (Last-Event-ID); one that resumes from further back is told what it
	// missed.
	DefaultListenWindow = service.ListenWindow
	// DefaultListenBuffer is how many events wait for one slow listener
	// (or request-log follower) before its oldest are dropped, and it is
	// told so: it never holds up the sandbox.
	DefaultListenBuffer = service.ListenBuffer
)

// WebhookFaults make deliveries arrive twice, late or out of order on
// purpose (Config.WebhookFaults). Its fields are documented where it is
// defined, in the sandbox's webhook layer.
type WebhookFaults = webhook.Faults

// ParseWebhookFaults reads the binary's -webhook-faults syntax,
// "duplicate=0.1,reorder=0.1,delay=2s,seed=42" (any of the four, each at
// most once), refusing a rate outside [0,1], a negative delay or an
// unknown name with an error that says which; WebhookFaults.String writes
// it back.
func ParseWebhookFaults(s string) (WebhookFaults, error) { return webhook.ParseFaults(s) }
