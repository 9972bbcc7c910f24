package service

import (
	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
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
func (s *Service) CreatePayout(key string, in api.NewPayout) (_ payout, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	now := s.tickLocked()
	p, lerr := ledger.CreatePayout(s.tx, s.tx.Merchant(key), in, now)
	if lerr != nil {
		return payout{}, lerr
	}
	s.pilot.PayoutEntered(now, p.ID, p.Status, p.Requisites)
	return payoutCopy(p), nil
}

// Payout is the merchant's payout id.
func (s *Service) Payout(key, id string) (_ payout, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	p := s.tx.Payout(id)
	if p == nil || p.Merchant == nil || p.Merchant.APIKey != key {
		return payout{}, payoutNotFound
	}
	return payoutCopy(p), nil
}

// PayoutByExtID is the merchant's payout by its ext_id.
func (s *Service) PayoutByExtID(key, extID string) (_ payout, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	m := s.tx.Merchant(key)
	if m == nil {
		return payout{}, payoutNotFound
	}
	p := s.tx.PayoutByExt(m, extID)
	if p == nil {
		return payout{}, payoutNotFound
	}
	return payoutCopy(p), nil
}

// Payouts is one page of the merchant's payouts.
func (s *Service) Payouts(key string, q api.PayoutQuery) ([]payout, int) {
	s.begin()
	defer s.commit()
	m := s.tx.Merchant(key)
	if m == nil {
		return nil, 0
	}
	page, total := s.tx.ListPayouts(m, ledger.PayoutFilter{Status: q.Status, From: q.From, To: q.To}, q.Limit, q.Offset)
	out := make([]payout, 0, len(page))
	for _, p := range page {
		out = append(out, payoutCopy(p))
	}
	return out, total
}

// SetPayoutStatus plays the provider's side of a payout (see
// sandbox.Server.SetPayoutStatus) and returns the payout's view.
func (s *Service) SetPayoutStatus(id, status string) (_ any, err error) {
	s.begin()
	defer s.endErr(&err)
	now := s.tickLocked()
	if lerr := ledger.CheckPayoutTarget(status); lerr != nil {
		return nil, controlError(lerr)
	}
	p := s.tx.Payout(id)
	if p == nil {
		return nil, notFound("payout", id)
	}
	if lerr := ledger.ChangePayout(s.tx, p, status, now); lerr != nil {
		return nil, controlError(lerr)
	}
	s.pilot.PayoutEntered(now, p.ID, status, p.Requisites)
	v := api.PayoutView(p)
	s.notifyLocked(hook{Key: "payout:" + p.ID, Resource: "payout", ID: p.ID, Status: status, At: now},
		p.Merchant, p.NotifyURL, "", v)
	return &v, nil
}
