package sandbox

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// The dashboard at /sandbox/ui is the browser face of the controls: the
// people who test a checkout (QA, product, frontend) see what their test
// created and press the outcome the real service would decide, without
// writing curl. Everything it shows is read under s.mu and every action
// calls the same method the JSON controls call, so the dashboard can never
// do something the controls cannot.

// uiRoutes registers the dashboard: GET pages, GET assets, and one POST
// route per action (forms cannot send the JSON the controls take).
func (s *Server) uiRoutes(mux *http.ServeMux) {
	assets := http.FileServerFS(web.Assets)
	mux.Handle("GET /pay/assets/", http.StripPrefix("/pay/assets", assets))
	mux.Handle("GET /sandbox/ui/assets/", s.uiGuard(false, http.StripPrefix("/sandbox/ui/assets", assets)))

	mux.Handle("GET /sandbox/ui", s.uiGuard(false, s.uiPage("payments")))
	mux.Handle("GET /sandbox/ui/{$}", s.uiGuard(false, http.RedirectHandler("/sandbox/ui", http.StatusMovedPermanently)))
	for _, p := range web.Pages {
		mux.Handle("GET /sandbox/ui/"+p.Name, s.uiGuard(false, s.uiPage(p.Name)))
	}

	mux.Handle("POST /sandbox/ui/payments/{id}/verify", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.verifyPayment(r.PathValue("id"), r.PostFormValue("outcome"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/payments/{id}/dispute/review", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.reviewDispute(r.PathValue("id"), r.PostFormValue("outcome"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/payouts/{id}/status", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.setPayoutStatus(r.PathValue("id"), r.PostFormValue("status"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/withdrawals/{id}/status", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.setWithdrawalStatus(r.PathValue("id"), r.PostFormValue("status"), strings.TrimSpace(r.PostFormValue("tx_hash")))
		return err
	})))
	mux.Handle("POST /sandbox/ui/clock/advance", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		secs, err := formInt(r, "seconds")
		if err != nil {
			return err
		}
		// Ten years is far beyond any valid_until; the cap keeps the
		// Duration from overflowing.
		if secs < 0 || secs > 10*365*24*3600 {
			return fmt.Errorf("%w: seconds must be from 0 to 315360000", ErrInvalidArgument)
		}
		s.Advance(time.Duration(secs) * time.Second)
		return nil
	})))
	mux.Handle("POST /sandbox/ui/faults", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		f := Fault{Method: r.PostFormValue("method"), Path: strings.TrimSpace(r.PostFormValue("path")),
			Mode: r.PostFormValue("mode"), Code: strings.TrimSpace(r.PostFormValue("code"))}
		for _, n := range []struct {
			name string
			dst  *int
		}{{"count", &f.Count}, {"status", &f.Status}, {"delay_ms", &f.DelayMS}, {"retry_after_s", &f.RetryAfterS}} {
			v, err := formInt(r, n.name)
			if err != nil {
				return err
			}
			*n.dst = int(v)
		}
		return s.InjectFault(f)
	})))
	mux.Handle("POST /sandbox/ui/webhooks/{id}/resend", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.ResendWebhook(r.PathValue("id"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/reset", s.uiGuard(true, s.uiAction(func(*http.Request) error {
		s.Reset()
		return nil
	})))
}

// formInt reads an optional whole number from a form field; empty is 0.
func formInt(r *http.Request, name string) (int64, error) {
	v := strings.TrimSpace(r.PostFormValue(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s must be a whole number", ErrInvalidArgument, name)
	}
	return n, nil
}

// uiGuard applies the loopback-Host rule of the JSON controls to every
// dashboard route and, for the POST forms, refuses cross-site submissions.
func (s *Server) uiGuard(form bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.guardControl(w, r, false) {
			return
		}
		if form {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := r.ParseForm(); err != nil {
				http.Error(w, "sandbox dashboard: unreadable form", http.StatusBadRequest)
				return
			}
			if !web.SameOrigin(r) || subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(web.Token)) != 1 {
				http.Error(w, "sandbox dashboard: cross-site form post refused: "+
					"the form must come from a dashboard page of this sandbox", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// uiAction runs one form action and answers like the JSON control would in
// spirit: success is a 303 back to the page the form came from (so a reload
// does not post again); an error re-renders that page with the error at the
// top and the status the JSON control would have answered.
func (s *Server) uiAction(do func(r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := web.PageName(r.PostFormValue("page"))
		refresh := web.Refresh(r.PostFormValue("refresh"))
		err := do(r)
		if err == nil {
			http.Redirect(w, r, web.Href(page, refresh), http.StatusSeeOther)
			return
		}
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, ErrNotFound):
			status = http.StatusNotFound
		case errors.Is(err, ErrWrongState):
			status = http.StatusConflict
		}
		// No auto-refresh on an error page: its URL is the POST action, and
		// the tester has to read the error first.
		s.renderUI(w, page, status, err.Error(), 0)
	})
}

func (s *Server) uiPage(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderUI(w, name, http.StatusOK, "", web.Refresh(r.URL.Query().Get("refresh")))
	})
}

// renderUI reads the state the page needs under s.mu (after lazy expiry, so
// what is due shows as CANCELLED) and renders it. Rendering happens after
// the lock is released.
func (s *Server) renderUI(w http.ResponseWriter, page string, status int, errMsg string, refresh int) {
	d := web.Data{Page: page, Token: web.Token, Refresh: refresh, RefreshArg: strconv.Itoa(refresh), Error: errMsg,
		Unsigned:       s.unsignedMerchants(),
		RefreshOffHref: web.Href(page, 0), RefreshOnHref: web.Href(page, web.DefaultRefresh)}
	for _, p := range web.Pages {
		if p.Name == page {
			d.Title = p.Title
		}
		d.Nav = append(d.Nav, web.NavItem{Title: p.Title, Href: web.Href(p.Name, refresh), Current: p.Name == page})
	}
	s.begin()
	now := s.tickLocked()
	d.Now = now.Format("2006-01-02 15:04:05 UTC")
	d.Backlog = s.hooks.backlog()
	if p := s.pilot; p != nil {
		d.Autopilot = &web.Autopilot{Steps: p.pending(), Verify: web.Delay(p.cfg.VerifyDelay), Review: web.Delay(p.cfg.ReviewDelay),
			Payout: web.Delay(p.cfg.PayoutDelay), Withdrawal: web.Delay(p.cfg.WithdrawalDelay), IgnoreTestValues: p.cfg.IgnoreTestValues}
	}
	switch page {
	case "payments":
		d.Payments = s.uiPaymentsLocked(now)
	case "payouts":
		d.Payouts = s.uiPayoutsLocked()
	case "withdrawals":
		d.Withdrawals = s.uiWithdrawalsLocked()
	case "terminals":
		d.Merchants = s.uiMerchantsLocked()
	case "faults":
		d.Faults = s.uiFaultsLocked()
	case "testvalues":
		d.TestValueGroups = web.TestValueGroups(TestValues)
	}
	s.commit()
	if page == "webhooks" {
		d.Deliveries = s.uiDeliveries()
	}
	web.Render(w, status, d)
}

func (s *Server) uiPaymentsLocked(now time.Time) []web.Payment {
	ps := s.st.recentPayments(uiListLimit) // newest first
	out := make([]web.Payment, 0, len(ps))
	for _, p := range ps {
		v := web.Payment{ID: p.id, ShortID: web.ShortID(p.id), ExtID: p.extID, Amount: web.MoneyText(p.amount, "RUB"), Method: web.MethodText(p.method),
			Status: p.status, ReqLabel: web.ReqLabel(p.reqType), ReqMasked: web.MaskNumber(p.reqValue), Bank: p.bank.Name,
			Created: web.Time(p.createdAt), CreatedTime: web.ClockTime(p.createdAt),
			ValidUntil: web.Time(p.validUntil), ValidUntilTime: web.ClockTime(p.validUntil),
			CanVerify: p.status == statusProcessing, CanReview: p.status == statusDispute}
		if p.status == statusPending {
			v.TimeLeft = web.TimeLeft(p.validUntil.Sub(now))
		}
		if p.method == methodCrossBorder {
			v.AmountLocal = web.MoneyText(p.amountLoc, p.currency)
		}
		if d := p.dispute; d != nil {
			v.Dispute = &web.Dispute{Comment: d.comment, ReceiptURL: d.receiptURL, Created: web.Time(d.createdAt),
				CreatedTime: web.ClockTime(d.createdAt)}
			if d.amount != nil {
				v.Dispute.Amount = web.MoneyText(*d.amount, "RUB")
			}
		}
		out = append(out, v)
	}
	return out
}

func (s *Server) uiPayoutsLocked() []web.Payout {
	var out []web.Payout
	for _, p := range s.st.recentPayouts(uiListLimit) { // newest first
		v := web.Payout{ID: p.id, ShortID: web.ShortID(p.id), ExtID: p.extID, Amount: web.MoneyText(p.amount, "RUB"), Method: web.MethodText(p.method),
			ReqMasked: web.MaskNumber(p.requisites), Holder: p.holderName, Bank: p.bank, Status: p.status,
			ProviderOrderID: p.providerOrderID, Created: web.Time(p.createdAt), CreatedTime: web.ClockTime(p.createdAt), Moves: ledger.PayoutMoves(p.status)}
		if !p.completedAt.IsZero() {
			v.Completed = web.Time(p.completedAt)
		}
		out = append(out, v)
	}
	return out
}

func (s *Server) uiWithdrawalsLocked() []web.Withdrawal {
	ws := s.st.recentWithdrawals(uiListLimit) // newest first
	out := make([]web.Withdrawal, 0, len(ws))
	for _, w := range ws {
		out = append(out, web.Withdrawal{ID: w.id, ShortID: web.ShortID(w.id), Terminal: w.terminal.id, Amount: web.MoneyText(w.amount, "USDT"),
			Fee: web.MoneyText(w.fee, "USDT"), Address: w.address, TxHash: w.txHash, Status: w.status,
			Created: web.Time(w.createdAt), CreatedTime: web.ClockTime(w.createdAt), Updated: web.Time(w.updatedAt), Moves: ledger.WithdrawalMoves(w.status)})
	}
	return out
}

func (s *Server) uiMerchantsLocked() []web.Merchant {
	out := make([]web.Merchant, 0, len(s.cfg.Merchants))
	for i, mc := range s.cfg.Merchants {
		m := s.merchants[mc.APIKey]
		um := web.Merchant{Name: mc.Name, Label: web.MerchantLabel(i, mc.APIKey)}
		for _, t := range m.terminals {
			um.Terminals = append(um.Terminals, web.Terminal{ID: t.id, Name: t.name,
				Balance: web.MoneyText(t.Available, ""), Frozen: web.MoneyText(t.Frozen, ""),
				Fee: web.MoneyText(t.fee, ""), Active: t.active})
		}
		out = append(out, um)
	}
	return out
}

func (s *Server) uiFaultsLocked() []web.Fault {
	out := make([]web.Fault, 0, len(s.faults))
	for _, f := range s.faults {
		v := web.Fault{Method: f.Method, Path: f.Path, Mode: f.Mode, Count: f.Count}
		if v.Method == "" {
			v.Method = "any"
		}
		switch f.Mode {
		case FaultErrorBefore:
			v.Detail = fmt.Sprintf("answers %d %s", f.Status, uiFaultCode(f))
		case FaultRetryAfter:
			v.Detail = fmt.Sprintf("answers 503 %s, Retry-After %ds", uiFaultCode(f), f.RetryAfterS)
		case FaultDelay:
			v.Detail = fmt.Sprintf("waits %d ms, then processes", f.DelayMS)
		case FaultDropAfter:
			v.Detail = "processes, then drops the connection"
		}
		out = append(out, v)
	}
	return out
}

// uiDeliveries reads the webhook log (newest first, tokens never recorded)
// and says in words what each attempt got back.
func (s *Server) uiDeliveries() []web.Delivery {
	ds, bodies := s.Deliveries(), s.hooks.bodies()
	out := make([]web.Delivery, 0, len(ds))
	for _, d := range ds {
		v := web.Delivery{ID: d.ID, ExtID: d.ExtID, ResendOf: d.ResendOf, Resource: d.Resource + " " + d.ResourceID,
			Status: d.ResourceStatus, Target: d.URL, State: d.State}
		if b, ok := bodies[d.ID]; ok {
			v.Payload, v.PayloadSize = web.PayloadText(b), len(b)
		}
		for _, a := range d.Attempts {
			ua := web.Attempt{At: web.Time(a.At), OK: a.StatusCode >= 200 && a.StatusCode < 300}
			switch {
			case a.StatusCode != 0:
				ua.Answer = fmt.Sprintf("%d %s", a.StatusCode, http.StatusText(a.StatusCode))
			case a.Error != "":
				ua.Answer = "no answer: " + a.Error
			default:
				ua.Answer = "no answer"
			}
			ua.Answer += " in " + web.Elapsed(a.Duration)
			v.Attempts = append(v.Attempts, ua)
		}
		out = append(out, v)
	}
	return out
}

// unsignedMerchants names the merchants that accept unsigned requests, as
// the dashboard's merchant list labels them, for its banner.
func (s *Server) unsignedMerchants() []string {
	var out []string
	for i, m := range s.cfg.Merchants {
		if m.AcceptUnsigned {
			out = append(out, web.MerchantLabel(i, m.APIKey))
		}
	}
	return out
}

// uiFaultCode names the code a fault answers with: its own, or the one
// its route gives.
func uiFaultCode(f *Fault) string {
	if f.Code != "" {
		return f.Code
	}
	return "with the route's internal error code"
}

// maskKey shows the start of an API key, as the dashboard does
// (web.MaskKey), for the logs and store errors that name a merchant.
func maskKey(k string) string { return web.MaskKey(k) }
