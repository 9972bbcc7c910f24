package sandbox

import (
	"html/template"
	"net/http"
	"strings"
)

// pageTmpl is the hosted payment page: one column for a phone, the
// sandbox's own stylesheet and copy-button script, every value escaped by
// html/template. It works without JavaScript; only the copy buttons need it.
var pageTmpl = template.Must(template.ParseFS(uiFiles, "ui/pay.html"))

// pageData is what the payment page shows. Amounts come twice: in words
// for the eye (moneyText: "1,500.50 RUB") and as bare digits for the copy
// buttons ("1500.50"), which a bank app's amount field accepts.
type pageData struct {
	ExtID, Amount, Status, StatusClass, Method string
	AmountText, AmountRUBText, AmountCopy      string
	ReqLabel, ReqLabelLower, ReqValue          string
	BankName, Holder                           string
	AmountLocal, Currency                      string
	Pending                                    bool
	TimeLeft, PayBy, Action                    string
}

func (s *Server) getPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	now := s.tickLocked()
	p := s.payments[r.PathValue("id")]
	if p == nil {
		s.mu.Unlock()
		http.Error(w, "payment not found", http.StatusNotFound)
		return
	}
	d := pageData{ExtID: p.extID, Amount: string(scaled(p.amount, 2)), Status: p.status,
		StatusClass: "st st-" + strings.ToLower(p.status), Method: methodText(p.method),
		AmountText: moneyText(p.amount, "RUB"), AmountRUBText: moneyText(p.amount, "RUB"),
		ReqLabel: "Card number", ReqValue: p.reqValue, BankName: p.bank.Name, Holder: p.holder,
		Pending: p.status == statusPending, Action: "/pay/" + p.id}
	d.AmountCopy = d.Amount
	d.PayBy, d.TimeLeft = payBy(p.validUntil, now)
	if p.reqType != "card" {
		d.ReqLabel = "Phone number"
	}
	d.ReqLabelLower = strings.ToLower(d.ReqLabel)
	if p.method == methodCrossBorder {
		// The payer sends the local currency: that is the amount to show
		// big and to copy; the RUB figure is what it is worth.
		d.AmountLocal, d.Currency = string(scaled(p.amountLoc, 2)), p.currency
		d.AmountText, d.AmountCopy = moneyText(p.amountLoc, p.currency), d.AmountLocal
	}
	s.mu.Unlock()
	setHTMLHeaders(w, "no-referrer") // the payer's page names no one it came from
	pageTmpl.Execute(w, d)
}

// postPage is the I-paid button: it confirms the payment as
// POST /v1/payments/{id}/confirm would (no receipt) and redirects back to
// the page (303, so a reload does not post again). A payment that is no
// longer PENDING is left alone; the page then shows its status.
func (s *Server) postPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.tickLocked()
	p := s.payments[r.PathValue("id")]
	if p == nil {
		s.mu.Unlock()
		http.Error(w, "payment not found", http.StatusNotFound)
		return
	}
	if p.status == statusPending {
		s.confirmLocked(p, 0)
	}
	s.mu.Unlock()
	http.Redirect(w, r, "/pay/"+p.id, http.StatusSeeOther)
}
