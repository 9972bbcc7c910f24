package sandbox

import (
	"html/template"
	"net/http"
	"time"
)

// pageTmpl is the hosted payment page: plain HTML, no JavaScript, every
// value escaped by html/template.
var pageTmpl = template.Must(template.New("pay").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Payment {{.ExtID}}</title></head>
<body>
<h1>Pay {{.Amount}} RUB</h1>
<p>Order: <span id="ext-id">{{.ExtID}}</span></p>
<p>Status: <strong id="status">{{.Status}}</strong></p>
<h2>Transfer to</h2>
<dl>
<dt>Method</dt><dd>{{.Method}}</dd>
<dt>{{.ReqLabel}}</dt><dd id="requisites">{{.ReqValue}}</dd>
<dt>Bank</dt><dd id="bank">{{.BankName}}</dd>
<dt>Recipient</dt><dd id="holder">{{.Holder}}</dd>
{{- if .AmountLocal}}
<dt>Amount in {{.Currency}}</dt><dd id="amount-local">{{.AmountLocal}}</dd>
{{- end}}
</dl>
{{- if .Pending}}
<p>Time left: <span id="time-left">{{.TimeLeft}}</span> (valid until {{.ValidUntil}})</p>
<form method="post" action="{{.Action}}"><button type="submit">I have paid</button></form>
{{- else if eq .Status "PROCESSING"}}
<p>Thank you: your transfer is being verified.</p>
{{- end}}
</body>
</html>
`))

type pageData struct {
	ExtID, Amount, Status, Method        string
	ReqLabel, ReqValue, BankName, Holder string
	AmountLocal, Currency                string
	Pending                              bool
	TimeLeft, ValidUntil, Action         string
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
	d := pageData{ExtID: p.extID, Amount: string(scaled(p.amount, 0)), Status: p.status, Method: p.method,
		ReqLabel: "Card number", ReqValue: p.reqValue, BankName: p.bank.Name, Holder: p.holder,
		Pending: p.status == statusPending, ValidUntil: ts(p.validUntil), Action: "/pay/" + p.id,
		TimeLeft: p.validUntil.Sub(now).Round(time.Second).String()}
	if p.reqType != "card" {
		d.ReqLabel = "Phone number"
	}
	if p.method == methodCrossBorder {
		d.AmountLocal, d.Currency = string(scaled(p.amountLoc, 2)), p.currency
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
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
