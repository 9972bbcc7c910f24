package sandbox

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
)

// DefaultRequestLogSize is how many requests GET /sandbox/requests and
// Server.Requests keep: the latest ones, enough to debug a flow, bounded
// so that a sandbox left running does not grow.
const DefaultRequestLogSize = service.RequestLogSize

// RequestRecord is one request as the sandbox saw it, for
// GET /sandbox/requests. It holds no header, no body and no query values:
// the API key, the signature, card and phone numbers never enter it.
type RequestRecord struct {
	// At is the sandbox clock when the request finished.
	At time.Time `json:"at"`
	// Method is the HTTP method, or OTHER for a non-standard token.
	Method string `json:"method"`
	// Route is the route template that served it, such as
	// "/v1/payments/{id}/confirm", or "(unmatched)".
	Route string `json:"route"`
	// Path is the request path, truncated, with long digit runs masked
	// (an ext_id may carry a phone number); ids stay readable.
	Path string `json:"path"`
	// Status is the HTTP status answered; 0 when a drop_after fault cut
	// the connection or the client went away first.
	Status int `json:"status"`
	// Code is the error code of an error answer, else empty.
	Code string `json:"code,omitempty"`
	// Fault is the mode of the injected fault that hit the request.
	Fault string `json:"fault,omitempty"`
	// Duration is the wall-clock time spent serving it.
	Duration time.Duration `json:"duration_ns"`
	// Merchant is the API key the request was authenticated with, shown by
	// its start as the logs show keys ("pk_s…"); empty for a request no
	// merchant signed (controls, inspection, the pages, a refused one).
	Merchant string `json:"merchant,omitempty"`
}

// Requests returns the latest requests (at most DefaultRequestLogSize),
// newest first, including the /sandbox/ ones.
func (s *Server) Requests() []RequestRecord {
	log := s.svc.RequestLog()
	out := make([]RequestRecord, len(log))
	for i, r := range log {
		out[i] = RequestRecord(r)
	}
	return out
}

// State is a snapshot of what the sandbox holds, for GET /sandbox/state
// and the dashboard.
type State struct {
	// Now is the sandbox clock.
	Now time.Time `json:"now"`
	// Merchants are the configured merchants, in Config order. Their API
	// keys are left out: the endpoint needs no credentials.
	Merchants []MerchantState `json:"merchants"`
	// Autopilot says whether the autopilot runs and how many of its steps
	// wait: a staging check in any language polls it to 0 instead of
	// sleeping.
	Autopilot AutopilotState `json:"autopilot"`
	// Webhooks is the delivery backlog.
	Webhooks WebhooksState `json:"webhooks"`
}

// WebhooksState is the webhook part of State.
type WebhooksState struct {
	// Backlog is how many deliveries are not finished: queued behind the
	// delivery caps, being sent, or waiting to retry. It grows while a
	// receiver is slow or down (nothing is dropped) and is 0 once every
	// webhook so far has been delivered or given up on.
	Backlog int `json:"backlog"`
	// Faults are the delivery faults in force (Config.WebhookFaults, its
	// seed filled in when it was 0), nil when none.
	Faults *WebhookFaults `json:"faults,omitempty"`
}

// AutopilotState is the autopilot part of State.
type AutopilotState struct {
	// Enabled is Config.Autopilot.Enabled.
	Enabled bool `json:"enabled"`
	// PendingSteps is AutopilotPending: steps scheduled and not yet run.
	PendingSteps int `json:"pending_steps"`
}

// MerchantState is one merchant's terminals and how many of its
// resources are in each status.
type MerchantState struct {
	// Index is the merchant's position in Config.Merchants, which names
	// it without its API key.
	Index int `json:"index"`
	// Terminals are its terminals with their balances, in configured order.
	Terminals []TerminalState `json:"terminals"`
	// Payments counts its payments by status (PENDING, PROCESSING, ...).
	Payments map[string]int `json:"payments"`
	// Payouts counts its payouts by status (pending, processing, ...).
	Payouts map[string]int `json:"payouts"`
	// Withdrawals counts its withdrawals by status.
	Withdrawals map[string]int `json:"withdrawals"`
	// Transfers counts its successful transfers.
	Transfers int `json:"transfers"`
}

// TerminalState is a terminal's balances as GET /v1/terminals shows them.
type TerminalState struct {
	// ID is the terminal id.
	ID string `json:"id"`
	// Name is the terminal's display name.
	Name string `json:"name"`
	// Balance is the available USDT.
	Balance decimal.Decimal `json:"balance"`
	// BalanceFrozen is the USDT held by pending or processing withdrawals.
	BalanceFrozen decimal.Decimal `json:"balance_frozen"`
	// WithdrawalFee is the USDT charged per withdrawal.
	WithdrawalFee decimal.Decimal `json:"withdrawal_fee"`
	// IsActive tells whether the terminal serves payments and withdrawals.
	IsActive bool `json:"is_active"`
}

// MarshalJSON writes the amounts as GET /v1/terminals does: bare JSON
// numbers with at least two decimals, so a script reads them the same way.
func (t TerminalState) MarshalJSON() ([]byte, error) {
	return json.Marshal(api.TerminalView(&ledger.Terminal{ID: t.ID, Name: t.Name,
		Balance: ledger.Balance{Available: t.Balance, Frozen: t.BalanceFrozen}, Fee: t.WithdrawalFee, Active: t.IsActive}))
}

// State snapshots every merchant's terminals and resource counts.
func (s *Server) State() State {
	v := s.svc.StateView()
	st := State{Now: v.Now, Merchants: make([]MerchantState, 0, len(v.Merchants)),
		Autopilot: AutopilotState(v.Autopilot), Webhooks: WebhooksState(v.Webhooks)}
	for _, m := range v.Merchants {
		ms := MerchantState{Index: m.Index, Terminals: make([]TerminalState, 0, len(m.Terminals)),
			Payments: m.Payments, Payouts: m.Payouts, Withdrawals: m.Withdrawals, Transfers: m.Transfers}
		for _, t := range m.Terminals {
			ms.Terminals = append(ms.Terminals, TerminalState{ID: t.ID, Name: t.Name, Balance: decimal.Decimal(t.Balance),
				BalanceFrozen: decimal.Decimal(t.BalanceFrozen), WithdrawalFee: decimal.Decimal(t.WithdrawalFee), IsActive: t.IsActive})
		}
		st.Merchants = append(st.Merchants, ms)
	}
	return st
}
