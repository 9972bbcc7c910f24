package sandbox

import (
	"crypto/subtle"
	"errors"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
	"net/http"
	"strings"
)

func (s *Server) getPage(w http.ResponseWriter, r *http.Request) {
	s.begin()
	now := s.tickLocked()
	p := s.st.payment(r.PathValue("id"))
	if p == nil {
		s.commit()
		http.Error(w, "payment not found", http.StatusNotFound)
		return
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
	web.RenderPay(w, d)
}

// postPage is the I-paid button: it confirms the payment as
// POST /v1/payments/{id}/confirm would (no receipt) and redirects back to
// the page (303, so a reload does not post again). A payment that is no
// longer PENDING is left alone; the page then shows its status.
//
// Like the dashboard's forms it refuses a cross-site post (Origin,
// Sec-Fetch-Site) and one without the page's form token, so that a page
// elsewhere cannot press I-paid for a payer.
func (s *Server) postPage(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if r.ParseForm() != nil || !web.PageSameOrigin(r) ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(web.PageToken(r.PathValue("id")))) != 1 {
		http.Error(w, "payment page: cross-site or stale form refused; reload the page and press the button again",
			http.StatusForbidden)
		return
	}
	id := r.PathValue("id")
	if err := s.payerPaid(id); err != nil {
		if errors.Is(err, ErrStore) {
			http.Error(w, "the sandbox's database cannot be used; try again after it is restarted", http.StatusServiceUnavailable)
			return
		}
		http.Error(w, "payment not found", http.StatusNotFound)
		return
	}
	http.Redirect(w, r, "/pay/"+id, http.StatusSeeOther)
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
