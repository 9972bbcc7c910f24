package service

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// The dashboard at /sandbox/ui is the browser face of the controls: the
// people who test a checkout (QA, product, frontend) see what their test
// created and press the outcome the real service would decide, without
// writing curl. Everything it shows is read in one section and every action
// calls the same method the JSON controls call, so the dashboard can never
// do something the controls cannot.

// The Service is the pages' web.Backend itself: every form action is the
// control verb the JSON API and the Go controls call.

// StoreDown tells an error of a store that cannot be used (the payment
// page answers it 503).
func (s *Service) StoreDown(err error) bool { return errors.Is(stored(err), ErrStore) }

// ActionError is a form action's refusal as the dashboard shows it: the
// status the JSON control answers it with (the API's table, by its kind)
// and its message, a failed store's as the Go controls word it.
func (s *Service) ActionError(err error) (int, string) {
	err = stored(err)
	return api.ControlStatus(err), err.Error()
}

// Invalid is the refusal of a form field that cannot be read.
func (s *Service) Invalid(msg string) error { return refusal(ledger.Invalid, msg) }

// Dashboard reads the state the page needs in one section (after lazy expiry,
// so what is due shows as CANCELLED); web renders it after the lock is
// released.
func (s *Service) Dashboard(page, errMsg string, refresh int) web.Data {
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
	if f := s.webhookFaults(); f != nil {
		d.WebhookFaults = web.Faults(f.Duplicate, f.Reorder, f.Delay, f.Seed)
	}
	if p := s.pilot; p != nil {
		cfg := p.Config()
		d.Autopilot = &web.Autopilot{Steps: p.Pending(), Verify: web.Delay(cfg.VerifyDelay), Review: web.Delay(cfg.ReviewDelay),
			Payout: web.Delay(cfg.PayoutDelay), Withdrawal: web.Delay(cfg.WithdrawalDelay), IgnoreTestValues: cfg.IgnoreTestValues}
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
		d.TestValueGroups = web.TestValueGroups(autopilot.TestValues)
	}
	s.commit()
	if page == "webhooks" {
		d.Deliveries = s.uiDeliveries()
	}
	return d
}

func (s *Service) uiPaymentsLocked(now time.Time) []web.Payment {
	ps := s.tx.RecentPayments(uiListLimit) // newest first
	out := make([]web.Payment, 0, len(ps))
	for _, p := range ps {
		v := web.Payment{ID: p.ID, ShortID: web.ShortID(p.ID), ExtID: p.ExtID, Amount: web.MoneyText(p.Amount, "RUB"), Method: web.MethodText(p.Method),
			Status: p.Status, ReqLabel: web.ReqLabel(p.ReqType), ReqMasked: web.MaskNumber(p.ReqValue), Bank: p.Bank.Name,
			Created: web.Time(p.CreatedAt), CreatedTime: web.ClockTime(p.CreatedAt),
			ValidUntil: web.Time(p.ValidUntil), ValidUntilTime: web.ClockTime(p.ValidUntil),
			CanVerify: p.Status == statusProcessing, CanReview: p.Status == statusDispute}
		if p.Status == statusPending {
			v.TimeLeft = web.TimeLeft(p.ValidUntil.Sub(now))
		}
		if p.Method == spec.MethodCrossBorder {
			v.AmountLocal = web.MoneyText(p.AmountLocal, p.Currency)
		}
		if d := p.Dispute; d != nil {
			v.Dispute = &web.Dispute{Comment: d.Comment, ReceiptURL: d.ReceiptURL, Created: web.Time(d.CreatedAt),
				CreatedTime: web.ClockTime(d.CreatedAt)}
			if d.Amount != nil {
				v.Dispute.Amount = web.MoneyText(*d.Amount, "RUB")
			}
		}
		out = append(out, v)
	}
	return out
}

func (s *Service) uiPayoutsLocked() []web.Payout {
	var out []web.Payout
	for _, p := range s.tx.RecentPayouts(uiListLimit) { // newest first
		v := web.Payout{ID: p.ID, ShortID: web.ShortID(p.ID), ExtID: p.ExtID, Amount: web.MoneyText(p.Amount, "RUB"), Method: web.MethodText(p.Method),
			ReqMasked: web.MaskNumber(p.Requisites), Holder: p.HolderName, Bank: p.Bank, Status: p.Status,
			ProviderOrderID: p.ProviderOrderID, Created: web.Time(p.CreatedAt), CreatedTime: web.ClockTime(p.CreatedAt), Moves: ledger.PayoutMoves(p.Status)}
		if !p.CompletedAt.IsZero() {
			v.Completed = web.Time(p.CompletedAt)
		}
		out = append(out, v)
	}
	return out
}

func (s *Service) uiWithdrawalsLocked() []web.Withdrawal {
	ws := s.tx.RecentWithdrawals(uiListLimit) // newest first
	out := make([]web.Withdrawal, 0, len(ws))
	for _, w := range ws {
		out = append(out, web.Withdrawal{ID: w.ID, ShortID: web.ShortID(w.ID), Terminal: w.Terminal.ID, Amount: web.MoneyText(w.Amount, "USDT"),
			Fee: web.MoneyText(w.Fee, "USDT"), Address: w.Address, TxHash: w.TxHash, Status: w.Status,
			Created: web.Time(w.CreatedAt), CreatedTime: web.ClockTime(w.CreatedAt), Updated: web.Time(w.UpdatedAt), Moves: ledger.WithdrawalMoves(w.Status)})
	}
	return out
}

func (s *Service) uiMerchantsLocked() []web.Merchant {
	out := make([]web.Merchant, 0, len(s.cfg.Merchants))
	for i, mc := range s.cfg.Merchants {
		m := s.tx.Merchant(mc.APIKey)
		um := web.Merchant{Name: mc.Name, Label: web.MerchantLabel(i, mc.APIKey)}
		for _, t := range m.Terminals {
			um.Terminals = append(um.Terminals, web.Terminal{ID: t.ID, Name: t.Name,
				Balance: web.MoneyText(t.Available, ""), Frozen: web.MoneyText(t.Frozen, ""),
				Fee: web.MoneyText(t.Fee, ""), Active: t.Active})
		}
		out = append(out, um)
	}
	return out
}

func (s *Service) uiFaultsLocked() []web.Fault {
	faults := s.faultsLocked()
	out := make([]web.Fault, 0, len(faults))
	for _, f := range faults {
		v := web.Fault{Method: f.Method, Path: f.Path, Mode: f.Mode, Count: f.Count}
		if v.Method == "" {
			v.Method = "any"
		}
		switch f.Mode {
		case api.FaultErrorBefore:
			v.Detail = fmt.Sprintf("answers %d %s", f.Status, uiFaultCode(&f))
		case api.FaultRetryAfter:
			v.Detail = fmt.Sprintf("answers 503 %s, Retry-After %ds", uiFaultCode(&f), f.RetryAfterS)
		case api.FaultDelay:
			v.Detail = fmt.Sprintf("waits %d ms, then processes", f.DelayMS)
		case api.FaultDropAfter:
			v.Detail = "processes, then drops the connection"
		}
		out = append(out, v)
	}
	return out
}

// uiDeliveries reads the webhook log (newest first, tokens never recorded)
// and says in words what each attempt got back.
func (s *Service) uiDeliveries() []web.Delivery {
	ds, bodies := s.DeliveryLog(), s.hooks.bodies()
	out := make([]web.Delivery, 0, len(ds))
	for _, d := range ds {
		v := web.Delivery{ID: d.ID, ExtID: d.ExtID, ResendOf: d.ResendOf, Resource: d.Resource + " " + d.ResourceID,
			Status: d.ResourceStatus, Target: d.URL, State: d.State, Faults: web.DeliveryFaults(d.Faults, d.DelayedBy)}
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
func (s *Service) unsignedMerchants() []string {
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
func uiFaultCode(f *api.Fault) string {
	if f.Code != "" {
		return f.Code
	}
	return "with the route's internal error code"
}
