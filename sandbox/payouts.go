package sandbox

import (
	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Payout statuses.
const (
	PayoutPending    = ledger.PayoutPending
	PayoutProcessing = ledger.PayoutProcessing
	PayoutCompleted  = ledger.PayoutCompleted
	PayoutFailed     = ledger.PayoutFailed
	PayoutCancelled  = ledger.PayoutCancelled
)

type payout = ledger.Payout

// payoutNotFound is the spec's PAY_001 with 404.
var payoutNotFound = &ledger.Error{Kind: ledger.NotFound, Code: spec.CodePAY001, Message: "payout not found"}

// payoutCopy is p as the API may keep it.
func payoutCopy(p *payout) payout {
	c := *p
	c.Merchant = nil
	return c
}

// CreatePayout creates a payout from a request the API checked field by
// field (the ledger's rule: a repeated ext_id is PAY_003).
func (b apiBackend) CreatePayout(key string, in api.NewPayout) (_ payout, lerr *ledger.Error) {
	s := b.s
	s.begin()
	defer s.endInto(&lerr)
	now := s.tickLocked()
	p, lerr := ledger.CreatePayout(s.st.core, s.merchants[key], in, now)
	if lerr != nil {
		return payout{}, lerr
	}
	s.pilot.PayoutEntered(now, p.ID, p.Status, p.Requisites)
	return payoutCopy(p), nil
}

// Payout is the merchant's payout id.
func (b apiBackend) Payout(key, id string) (_ payout, lerr *ledger.Error) {
	s := b.s
	s.begin()
	defer s.endInto(&lerr)
	p := s.st.core.Payout(id)
	if p == nil || p.Merchant == nil || p.Merchant != s.merchants[key] {
		return payout{}, payoutNotFound
	}
	return payoutCopy(p), nil
}

// PayoutByExtID is the merchant's payout by its ext_id.
func (b apiBackend) PayoutByExtID(key, extID string) (_ payout, lerr *ledger.Error) {
	s := b.s
	s.begin()
	defer s.endInto(&lerr)
	m := s.merchants[key]
	if m == nil {
		return payout{}, payoutNotFound
	}
	p := s.st.core.PayoutByExt(m, extID)
	if p == nil {
		return payout{}, payoutNotFound
	}
	return payoutCopy(p), nil
}

// Payouts is one page of the merchant's payouts.
func (b apiBackend) Payouts(key string, q api.PayoutQuery) ([]payout, int) {
	s := b.s
	s.begin()
	defer s.commit()
	m := s.merchants[key]
	if m == nil {
		return nil, 0
	}
	page, total := s.st.core.ListPayouts(m, ledger.PayoutFilter{Status: q.Status, From: q.From, To: q.To}, q.Limit, q.Offset)
	out := make([]payout, 0, len(page))
	for _, p := range page {
		out = append(out, payoutCopy(p))
	}
	return out, total
}

// SetPayoutStatus plays the provider's side of a payout: pending may move
// to processing, completed, failed or cancelled, processing to completed,
// failed or cancelled. Entering processing (or completing directly) sets
// provider_order_id; completing sets completed_at. A webhook is sent when
// the payout has a notify_url.
func (s *Server) SetPayoutStatus(id, status string) error {
	_, err := s.setPayoutStatus(id, status)
	return err
}

func (s *Server) setPayoutStatus(id, status string) (_ *api.PayoutBody, err error) {
	s.begin()
	defer s.endErr(&err)
	now := s.tickLocked()
	if lerr := ledger.CheckPayoutTarget(status); lerr != nil {
		return nil, controlError(lerr)
	}
	p := s.st.core.Payout(id)
	if p == nil {
		return nil, notFound("payout", id)
	}
	if lerr := ledger.ChangePayout(s.st.core, p, status, now); lerr != nil {
		return nil, controlError(lerr)
	}
	s.pilot.PayoutEntered(now, p.ID, status, p.Requisites)
	v := api.PayoutView(p)
	s.notifyLocked(hook{Key: "payout:" + p.ID, Resource: "payout", ID: p.ID, Status: status, At: now},
		p.Merchant, p.NotifyURL, "", v)
	return &v, nil
}
