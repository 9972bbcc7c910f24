package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Payout statuses.
const (
	PayoutPending    = "pending"
	PayoutProcessing = "processing"
	PayoutCompleted  = "completed"
	PayoutFailed     = "failed"
	PayoutCancelled  = "cancelled"
)

// payoutRecord is what a change of a payout's status records: the
// provider's order id once the provider has the payout, the completion
// time when it is paid. A payout moves no terminal money.
type payoutRecord struct {
	order    bool
	complete bool
}

// payoutMoves is every change of a payout's status there is (completed,
// failed and cancelled are final): the controls, the dashboard and the
// autopilot move a payout only along these rows.
var payoutMoves = []statusMove[payoutRecord]{
	{PayoutPending, PayoutProcessing, payoutRecord{order: true}},
	{PayoutPending, PayoutCompleted, payoutRecord{order: true, complete: true}},
	{PayoutPending, PayoutFailed, payoutRecord{}},
	{PayoutPending, PayoutCancelled, payoutRecord{}},
	{PayoutProcessing, PayoutCompleted, payoutRecord{order: true, complete: true}},
	{PayoutProcessing, PayoutFailed, payoutRecord{}},
	{PayoutProcessing, PayoutCancelled, payoutRecord{}},
}

// PayoutMoves lists the statuses a payout in status from may move to, in
// the table's order (the dashboard's buttons).
func PayoutMoves(from string) []string { return targets(payoutMoves, from) }

// CheckPayoutTarget refuses a status no payout can be moved to (pending
// is where one starts), before the payout is looked up.
func CheckPayoutTarget(to string) *Error {
	switch to {
	case PayoutProcessing, PayoutCompleted, PayoutFailed, PayoutCancelled:
		return nil
	}
	return &Error{Kind: Invalid, Field: "status", Message: "payout status must be processing, completed, failed or cancelled"}
}

// MovePayout changes p's status to to at now, recording what the table's
// row says: the one place a payout's status changes. An unknown target is
// Invalid, a change the table lacks WrongState; neither touches p.
func MovePayout(p *Payout, to string, now time.Time) *Error {
	if err := CheckPayoutTarget(to); err != nil {
		return err
	}
	m, ok := findMove(payoutMoves, p.Status, to)
	if !ok {
		return &Error{Kind: WrongState, Message: fmt.Sprintf("payout %s is %s, cannot become %s", p.ID, p.Status, to)}
	}
	if m.effect.order && p.ProviderOrderID == "" {
		p.ProviderOrderID = "prv_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	}
	if m.effect.complete {
		p.CompletedAt = now.Truncate(time.Second)
	}
	p.Status = to
	return nil
}
