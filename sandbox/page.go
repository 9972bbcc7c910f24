package sandbox

import (
	"strings"

	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// payPage reads the payment page of payment id; false if there is none.
func (s *Server) payPage(id string) (web.PayData, bool) {
	s.begin()
	now := s.tickLocked()
	p := s.st.payment(id)
	if p == nil {
		s.commit()
		return web.PayData{}, false
	}
	d := web.PayData{Merchant: p.m.name, ExtID: p.extID, Amount: string(scaled(p.amount, 2)), Status: p.status,
		StatusClass: "st st-" + strings.ToLower(p.status), Method: web.MethodText(p.method),
		AmountText: web.MoneyText(p.amount, "RUB"), AmountRUBText: web.MoneyText(p.amount, "RUB"),
		ReqLabel: "Card number", ReqValue: p.reqValue, BankName: p.bank.Name, Holder: p.holder,
		Pending: p.status == statusPending, Action: "/pay/" + p.id, Token: web.PageToken(p.id)}
	d.AmountCopy = d.Amount
	d.PayBy, d.TimeLeft = web.PayBy(p.validUntil, now)
	if p.reqType != "card" {
		d.ReqLabel = "Phone number"
	}
	d.ReqLabelLower = strings.ToLower(d.ReqLabel)
	if p.method == methodCrossBorder {
		// The payer sends the local currency: that is the amount to show
		// big and to copy; the RUB figure is what it is worth.
		d.AmountLocal, d.Currency = string(scaled(p.amountLoc, 2)), p.currency
		d.AmountText, d.AmountCopy = web.MoneyText(p.amountLoc, p.currency), d.AmountLocal
	}
	s.commit()
	return d, true
}

// payerPaid is the payer pressing "I paid": the page's button, or the
// autopilot for a test amount. A PENDING payment becomes PROCESSING as by
// POST /v1/payments/{id}/confirm without a receipt; any other status is
// left alone. ErrNotFound for an unknown id.
func (s *Server) payerPaid(id string) error {
	err := s.payerPress(id)
	return s.orStoreErr(err)
}

func (s *Server) payerPress(id string) error {
	s.begin()
	defer s.commit()
	s.tickLocked()
	p := s.st.payment(id)
	if p == nil {
		return notFound("payment", id)
	}
	if p.status == statusPending {
		s.confirmLocked(p, 0)
	}
	return nil
}
