package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
	"time"
)

// pageTmpl is the hosted payment page: one column for a phone, the
// sandbox's own stylesheet and copy-button script, every value escaped by
// html/template. It works without JavaScript; only the copy buttons need it.
var pageTmpl = template.Must(template.ParseFS(uiFiles, "ui/pay.html"))

type pageData struct {
	ExtID, Amount, Status, StatusClass, Method string
	ReqLabel, ReqLabelLower, ReqValue          string
	BankName, Holder                           string
	AmountLocal, Currency                      string
	Pending                                    bool
	TimeLeft, ValidUntil, Action               string
	// Token is the payment's form token (pageToken).
	Token string
}

// pageToken is the form token of one payment's page: a keyed hash of its
// id under the per-process uiToken, so a page on another site, which can
// read neither, cannot forge the I-paid post.
func pageToken(id string) string {
	m := hmac.New(sha256.New, []byte(uiToken))
	m.Write([]byte("pay:" + id))
	return hex.EncodeToString(m.Sum(nil))
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
	d := pageData{ExtID: p.extID, Amount: string(scaled(p.amount, 0)), Status: p.status,
		StatusClass: "st st-" + strings.ToLower(p.status), Method: p.method,
		ReqLabel: "Card number", ReqValue: p.reqValue, BankName: p.bank.Name, Holder: p.holder,
		Pending: p.status == statusPending, ValidUntil: ts(p.validUntil), Action: "/pay/" + p.id, Token: pageToken(p.id),
		TimeLeft: p.validUntil.Sub(now).Round(time.Second).String()}
	if p.reqType != "card" {
		d.ReqLabel = "Phone number"
	}
	d.ReqLabelLower = strings.ToLower(d.ReqLabel)
	if p.method == methodCrossBorder {
		d.AmountLocal, d.Currency = string(scaled(p.amountLoc, 2)), p.currency
	}
	s.mu.Unlock()
	setHTMLHeaders(w, "no-referrer") // the payer's page names no one it came from
	pageTmpl.Execute(w, d)
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
	if r.ParseForm() != nil || !pageSameOrigin(r) ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(pageToken(r.PathValue("id")))) != 1 {
		http.Error(w, "payment page: cross-site or stale form refused; reload the page and press the button again",
			http.StatusForbidden)
		return
	}
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

// pageSameOrigin is sameOrigin for the payment page, whose no-referrer
// policy makes a browser send "Origin: null" on its own form: then the
// browser's Sec-Fetch-Site must say same-origin (and the token still
// decides).
func pageSameOrigin(r *http.Request) bool {
	if r.Header.Get("Origin") == "null" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	return sameOrigin(r)
}
