package api

import (
	"context"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/control"
	"github.com/paykit-dev/paykit-go/sandbox/internal/feed"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Backend is what the merchant API asks of the sandbox, in the domain's
// terms: ledger resources (copies, which the API may keep and render after
// the change is committed), a rule's *ledger.Error, plain values. Each
// change is one section of the sandbox (begin, the rule, the store,
// commit) and has committed or been refused when the method returns. The
// API key names the merchant; an unknown one finds nothing. A method that
// returns a *ledger.Error says there what became of its section's changes
// when the store failed: ledger.NotKept (rolled back, nowhere) or
// ledger.MaybeKept (committed, the sync that would make it durable
// failed), instead of the rule's own answer.
type Backend interface {
	// Credential is how requests of apiKey are authenticated: its signer,
	// and whether a request without a valid signature is accepted. ok is
	// false for a key no merchant has. It takes no lock: credentials are
	// fixed when the sandbox opens.
	Credential(apiKey string) (signer paykit.Signer, unsigned, ok bool)
	// StoreFailed is the store's failure, nil while it is usable: every
	// request that arrives afterwards is answered 503 SANDBOX_STORE, as is
	// a read that ends afterwards; a change is answered by its own
	// section's outcome.
	StoreFailed() error
	// Ready says whether the sandbox can serve (GET /readyz).
	Ready(ctx context.Context) error
	// CatchUp runs what the sandbox clock has made due (autopilot steps)
	// before a request is served, so that a read sees them done.
	CatchUp()
	// Arrived counts a request outside /sandbox/ under its route pattern
	// ("" when none matched) and takes one shot of the first injected
	// fault matching its method and escaped path, if any.
	Arrived(method, pattern, path string) (Fault, bool)
	// Served records a served request (the request log).
	Served(Served)

	// CreatePayment creates a payment of apiKey's merchant from a request
	// the API has checked field by field.
	CreatePayment(apiKey string, in NewPayment) (ledger.Payment, *ledger.Error)
	// Payment is the merchant's payment id (PAY_006 when it has none).
	Payment(apiKey, id string) (ledger.Payment, *ledger.Error)
	// PaymentByExtID is the merchant's payment by its ext_id.
	PaymentByExtID(apiKey, extID string) (ledger.Payment, *ledger.Error)
	// ConfirmPayment is the payer's "I paid", with the size of the receipt
	// sent (0 for none).
	ConfirmPayment(apiKey, id string, receipt int) (ledger.Payment, *ledger.Error)
	// CancelPayment cancels a PENDING payment.
	CancelPayment(apiKey, id string) (ledger.Payment, *ledger.Error)
	// OpenDispute opens d on a cancelled payment; the sandbox dates it.
	OpenDispute(apiKey, id string, d ledger.Dispute) (ledger.Payment, *ledger.Error)
	// CancelDispute withdraws an open dispute.
	CancelDispute(apiKey, id string) (ledger.Payment, *ledger.Error)

	// CreatePayout creates a payout of the merchant.
	CreatePayout(apiKey string, in NewPayout) (ledger.Payout, *ledger.Error)
	// Payout is the merchant's payout id (PAY_001 404 when it has none).
	Payout(apiKey, id string) (ledger.Payout, *ledger.Error)
	// PayoutByExtID is the merchant's payout by its ext_id.
	PayoutByExtID(apiKey, extID string) (ledger.Payout, *ledger.Error)
	// Payouts is one page of the merchant's payouts matching q, oldest
	// first, and how many match in all.
	Payouts(apiKey string, q PayoutQuery) ([]ledger.Payout, int)

	// Terminals are the merchant's terminals in their configured order.
	Terminals(apiKey string) []ledger.Terminal
	// Transfer moves amount USDT between two of the merchant's terminals.
	Transfer(apiKey, from, to string, amount decimal.Decimal) *ledger.Error
	// CreateWithdrawal holds a withdrawal's money on its terminal.
	CreateWithdrawal(apiKey string, in NewWithdrawal) (ledger.Withdrawal, *ledger.Error)
	// Withdrawal is the merchant's withdrawal id (WDR_003 when none).
	Withdrawal(apiKey, id string) (ledger.Withdrawal, *ledger.Error)
	// Banks is the bank list, in its configured order.
	Banks() []ledger.Bank
}

// NewPayment, NewPayout and NewWithdrawal are create requests as the API
// accepted them (every field within the spec's rules), in the form the
// ledger's creation rules take them.
type (
	NewPayment    = ledger.NewPayment
	NewPayout     = ledger.NewPayout
	NewWithdrawal = ledger.NewWithdrawal
)

// PayoutQuery selects a page of payouts.
type PayoutQuery struct {
	// Status is a payout status, "" for all.
	Status string
	// From and To bound created_at, both inclusive; zero is unbounded.
	From, To time.Time
	// Limit and Offset page the result.
	Limit, Offset int
}

// Fault is an injected fault: the body of POST /sandbox/faults, and one
// shot of it as the API serves it (declared with the control verbs).
type Fault = control.Fault

// Served is one request as the API served it, for the request log.
type Served struct {
	// Method is the request's method token, as sent.
	Method string
	// Pattern is the route pattern that served it, "" for none.
	Pattern string
	// Path is the escaped request path, unmasked: the sandbox masks it
	// (MaskedPath) for its request log.
	Path string
	// Status is the HTTP status answered; 0 when none was (a dropped
	// connection, a client gone).
	Status int
	// Code is the error code of an error answer.
	Code string
	// Fault is the mode of the injected fault that hit it.
	Fault string
	// Duration is the wall-clock time spent serving it.
	Duration time.Duration
	// Merchant is the API key the request was authenticated with (a /v1
	// request or the listen feed), unmasked: the sandbox masks it; ""
	// when none was.
	Merchant string
}

// Config is how the API serves, fixed when the sandbox opens.
type Config struct {
	// BaseURL, when set, is the prefix of every payment_url; otherwise
	// the request's own scheme and Host.
	BaseURL string
	// RequestBodyTimeout bounds how long a body may take to arrive.
	RequestBodyTimeout time.Duration
	// LargeBodyConcurrency caps the bodies over 1 MB read at once.
	LargeBodyConcurrency int
	// Logger receives the reason of a failed readiness check and a
	// warning per request accepted without a valid signature (its key and
	// path masked); nil logs nothing.
	Logger *slog.Logger
	// Feed is the merchants' notifications, one Log per API key, which GET
	// /sandbox/listen serves; nil leaves the route out.
	Feed *feed.Hub[feed.Notification]
}

// API is the merchant API over a Backend.
type API struct {
	b           Backend
	cfg         Config
	largeBodies v1Semaphore
	caps        map[string]int64 // body cap per route pattern, fixed by Routes
}

// New is the API of b.
func New(b Backend, cfg Config) *API {
	if cfg.RequestBodyTimeout <= 0 {
		cfg.RequestBodyTimeout = DefaultRequestBodyTimeout
	}
	if cfg.LargeBodyConcurrency <= 0 {
		cfg.LargeBodyConcurrency = DefaultLargeBodyConcurrency
	}
	return &API{b: b, cfg: cfg, largeBodies: make(v1Semaphore, cfg.LargeBodyConcurrency), caps: map[string]int64{}}
}

// LargeBodiesInFlight is how many large bodies are being read now (for
// tests that wait for an upload to hold its slot).
func (a *API) LargeBodiesInFlight() int { return len(a.largeBodies) }
