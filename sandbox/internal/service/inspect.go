package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// RequestRecord is one line of the request log (sandbox.RequestRecord,
// which the JSON of /sandbox/requests is).
type RequestRecord struct {
	At       time.Time     `json:"at"`
	Method   string        `json:"method"`
	Route    string        `json:"route"`
	Path     string        `json:"path"`
	Status   int           `json:"status"`
	Code     string        `json:"code,omitempty"`
	Fault    string        `json:"fault,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Merchant string        `json:"merchant,omitempty"`
}

// recordRequest appends the request to the ring and logs it.
func (s *Service) recordRequest(sv api.Served) {
	d := sv.Duration
	rec := RequestRecord{Method: knownMethod(sv.Method), Route: routePath(sv.Pattern),
		Path: api.MaskedPath(sv.Path), Status: sv.Status, Code: sv.Code, Fault: sv.Fault, Duration: d}
	if sv.Merchant != "" {
		rec.Merchant = mask.Key(sv.Merchant) // as the logs show keys
	}
	// No section: the line is kept with a later commit, and its time is
	// read under the same lock (a line is no answer: it waits for no sync).
	s.lock()
	rec.At = s.nowLocked()
	s.jr.logRequest(rec)
	s.unlock()
	s.reqFeed.Publish(rec)
	s.reqMu.Lock()
	if len(s.reqLog) < RequestLogSize {
		s.reqLog = append(s.reqLog, rec)
	} else {
		s.reqLog[s.reqPos] = rec
		s.reqPos = (s.reqPos + 1) % RequestLogSize
	}
	s.reqMu.Unlock()
	if l := s.cfg.Logger; l != nil {
		// Durations carry their unit ("1.25ms"): a JSON handler would
		// otherwise write bare nanoseconds.
		attrs := []slog.Attr{slog.String("method", rec.Method), slog.String("route", rec.Route),
			slog.Int("status", rec.Status), slog.String("duration", d.String())}
		if rec.Code != "" {
			attrs = append(attrs, slog.String("code", rec.Code))
		}
		if rec.Fault != "" {
			attrs = append(attrs, slog.String("fault", rec.Fault))
		}
		level := slog.LevelInfo
		if rec.Status >= 500 {
			level = slog.LevelError // an answer the sandbox could not give
		}
		l.LogAttrs(context.Background(), level, "request", attrs...)
	}
}

// RequestLog returns the request log, newest first.
func (s *Service) RequestLog() []RequestRecord {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	n := len(s.reqLog)
	out := make([]RequestRecord, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s.reqLog[((s.reqPos-1-i)%n+n)%n])
	}
	return out
}

// StateView is the snapshot of GET /sandbox/state (sandbox.State's JSON).
type StateView struct {
	Now       time.Time       `json:"now"`
	Merchants []MerchantState `json:"merchants"`
	Autopilot struct {
		Enabled      bool `json:"enabled"`
		PendingSteps int  `json:"pending_steps"`
	} `json:"autopilot"`
	Webhooks struct {
		Backlog int             `json:"backlog"`
		Faults  *webhook.Faults `json:"faults,omitempty"`
	} `json:"webhooks"`
}

// MerchantState is one merchant of StateView, by configured index.
type MerchantState struct {
	Index       int                `json:"index"`
	Terminals   []api.TerminalBody `json:"terminals"`
	Payments    map[string]int     `json:"payments"`
	Payouts     map[string]int     `json:"payouts"`
	Withdrawals map[string]int     `json:"withdrawals"`
	Transfers   int                `json:"transfers"`
}

// StateView reads the snapshot in one section, after expiry.
func (s *Service) StateView() StateView {
	s.begin()
	defer s.commit()
	now := s.tickLocked()
	st := StateView{Now: now, Merchants: []MerchantState{}}
	st.Autopilot.Enabled, st.Autopilot.PendingSteps = s.pilot != nil, s.pilot.Pending()
	st.Webhooks.Backlog, st.Webhooks.Faults = s.hooks.backlog(), s.webhookFaults()
	for i, mc := range s.cfg.Merchants {
		m := s.tx.Merchant(mc.APIKey)
		ms := MerchantState{Index: i, Terminals: []api.TerminalBody{}, Transfers: m.Transfers}
		for _, t := range m.Terminals {
			ms.Terminals = append(ms.Terminals, api.TerminalView(t))
		}
		ms.Payments, ms.Payouts, ms.Withdrawals = s.tx.Counts(m)
		st.Merchants = append(st.Merchants, ms)
	}
	return st
}
