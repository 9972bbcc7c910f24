// Package service is the sandbox's application: every API method, control
// and timer runs here as one section (begin, the ledger's rule over the
// store, the notifications, commit), with the clock and its expiry, the
// outbox of webhooks, the injected faults, the request log, the payer
// page and the dashboard's views. Its one type, Service, is what the merchant
// API and the controls (package api), the pages (package web) and the
// autopilot ask for; package sandbox wraps it in the public Server and
// turns its refusals (*ledger.Error) into the package's sentinels.
//
// How a section commits, and how commits share one fsync with -db, is
// described on store.Group, which runs the sections.
package service

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/feed"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Config is what the Service runs with: package sandbox's Config with its
// defaults applied (see sandbox.Config for each field's meaning).
type Config struct {
	Merchants            []Merchant
	Now                  func() time.Time
	RealClock            bool // Now is the real clock: expiry runs on a timer
	PaymentTTL           time.Duration
	USDTRate             decimal.Decimal
	LocalRates           map[string]decimal.Decimal
	MaxSamePendingAmount int
	BaseURL              string
	WebhookClient        *http.Client
	Self                 *SelfAddrs // the addresses webhooks never dial
	WebhookConcurrency   int
	WebhookPerReceiver   int
	ControlToken         string
	LargeBodyConcurrency int
	WebhookMaxAttempts   int
	WebhookRetryWait     time.Duration
	AllowRemote          bool
	Logger               *slog.Logger
	RequestBodyTimeout   time.Duration
	Banks                []ledger.Bank
	Autopilot            autopilot.Config
	DBPath               string
	WebhookFaults        webhook.Faults // its seed chosen when it was 0
	OpenAPI              []byte         // the document GET /openapi.yaml serves
	// TestDB, when set, gives a Service without DBPath a file of its own
	// and the function that removes it after Close (the sandbox's tests).
	TestDB func() (path string, remove func())
}

// Merchant is one configured account (sandbox.Merchant, its signer made).
type Merchant struct {
	APIKey         string
	Name           string
	Signer         paykit.Signer
	AcceptUnsigned bool
	Terminals      []ledger.Terminal // the start and what Reset puts back
}

// Sizes of the bounded logs.
const (
	RequestLogSize  = 500
	DeliveryLogSize = 1000
)

// Service is the sandbox's state and every way to change it. It is safe
// for concurrent use.
type Service struct {
	cfg Config
	mux *http.ServeMux
	// hooks delivers webhooks (webhooks.go).
	hooks webhooks
	// expiryTimer (real clock only) and closed are under mu: Close stops
	// the timer for good.
	expiryTimer *time.Timer
	closed      bool
	api         *api.API                            // the merchant API and health (package api)
	handler     http.Handler                        // api's pipeline around mux
	pilot       *autopilot.Pilot                    // nil with the autopilot off (autopilot.go)
	refuse      func(decimal.Decimal) *ledger.Error // the autopilot's refusal of a create (nil: off)
	removeDB    func()                              // the test binary's own database file (Config.TestDB), removed by Close

	// grp runs the sections over the store: its lock guards the state
	// below and the fields marked "under the lock"; every section under
	// it (begin) ends with commit, which commits the store before the
	// answer is written.
	grp *storage.Group[heldHook]
	tx  storage.Txn // under the lock: the section's transaction, the store's (begin)
	jr  journal     // the diagnostics, kept apart from the resources

	feed    *feed.Hub[feed.Notification] // GET /sandbox/listen: each merchant's notifications (listen.go)
	reqFeed *feed.Log[any]               // GET /sandbox/requests?follow=1: the request log as it grows

	ctl   *api.ControlServer  // the /sandbox/ controls, inspection and login, and their guard
	creds map[string]Merchant // per API key, fixed by Open

	// faultsArmed is false only when no fault is armed, and a request then
	// does not take the lock to look for one (Arrived). It is set true
	// before a section arms a fault, and false, under the lock, by a
	// request that found none armed; a fault armed by a section that is
	// then rolled back leaves it true until the next request looks.
	faultsArmed atomic.Bool
	// countersChanged tells the journal that the request counters changed
	// (without the lock): fixed by Open.
	countersChanged func()

	reqMu    sync.Mutex
	requests map[routeKey]int // under reqMu: per method and route, never per raw path
	reqLog   []RequestRecord  // under reqMu: ring of the latest requests
	reqPos   int              // under reqMu: next slot to overwrite once the ring is full
}

type merchant = ledger.Merchant

type terminal = ledger.Terminal

// defaultMerchantName is the display name of a Merchant without Name.
const defaultMerchantName = "Sandbox merchant"

// checkConfig panics on the programming errors sandbox.New documents (an
// empty or repeated API key, an empty or repeated bank code), as
// http.ServeMux does on a duplicate pattern, and names the merchants
// configured without a name.
func checkConfig(cfg Config) {
	seen := map[string]bool{}
	for i, m := range cfg.Merchants {
		if m.APIKey == "" {
			panic("sandbox: merchant with an empty APIKey")
		}
		if seen[m.APIKey] {
			panic("sandbox: two merchants share one APIKey")
		}
		seen[m.APIKey] = true
		if m.Name == "" {
			cfg.Merchants[i].Name = defaultMerchantName
		}
	}
	codes := map[string]bool{}
	for _, b := range cfg.Banks {
		if b.Code == "" || codes[b.Code] {
			panic("sandbox: a bank with an empty or repeated Code")
		}
		codes[b.Code] = true
	}
}

// Open builds the Service over the store cfg.DBPath names (memory without
// one), with the state a file gives back, and starts what runs by itself:
// expiry, the outbox's deliveries, the autopilot's steps.
func Open(cfg Config) (*Service, error) {
	checkConfig(cfg)
	s := &Service{cfg: cfg, requests: map[routeKey]int{}, creds: make(map[string]Merchant, len(cfg.Merchants))}
	for _, m := range cfg.Merchants {
		s.creds[m.APIKey] = m
	}
	s.feed, s.reqFeed = newFeeds(cfg, feed.RunBase(time.Now()))
	s.ctl = api.NewControlServer(api.ControlConfig{AllowRemote: cfg.AllowRemote, ControlToken: cfg.ControlToken,
		Logger: cfg.Logger, Requests: s.reqFeed}, s)
	restored, err := s.openStore()
	if err != nil {
		return nil, err
	}
	s.hooks = webhooks{webhook.New(webhook.Config{Client: cfg.WebhookClient, MaxAttempts: cfg.WebhookMaxAttempts,
		RetryWait: cfg.WebhookRetryWait, LogSize: DeliveryLogSize, Workers: cfg.WebhookConcurrency,
		PerReceiver: cfg.WebhookPerReceiver, Now: s.Now, Logger: cfg.Logger, Persist: s.deliveryUpdated,
		Faults: cfg.WebhookFaults, RealTimers: cfg.RealClock})}
	s.api = api.New(s, api.Config{BaseURL: cfg.BaseURL, RequestBodyTimeout: cfg.RequestBodyTimeout,
		LargeBodyConcurrency: cfg.LargeBodyConcurrency, Logger: cfg.Logger, Feed: s.feed})
	s.mux = s.routes()
	s.handler = s.api.Pipeline(s.mux)
	s.pilot = autopilot.New(s, cfg.Autopilot, cfg.RealClock)
	if s.pilot != nil {
		s.refuse = s.pilot.RefuseCreate // the 404.04 test amount
	}
	s.begin()
	s.armExpiryLocked(s.nowLocked()) // a stored payment's expiry resumes
	s.commit()
	s.hooks.restore(restored) // stored deliveries: the log, and the outbox sent again
	s.pilot.Resume()          // after the state is there: the steps of resources in flight
	if cfg.Logger != nil {
		for i, m := range cfg.Merchants {
			if m.AcceptUnsigned {
				cfg.Logger.Warn("merchant accepts unsigned requests: X-Signature is not checked for it",
					slog.String("merchant", web.MerchantLabel(i, m.APIKey)))
			}
		}
	}
	return s, nil
}

// routes registers every endpoint: the merchant API and the health
// endpoints (package api, which keeps each route's body cap), the
// controls, the pages, inspection and the OpenAPI document.
func (s *Service) routes() *http.ServeMux {
	mux := http.NewServeMux()
	s.api.Routes(mux)                 // the merchant API and health (package api)
	s.ctl.ControlRoutes(mux)          // the /sandbox/ controls (controls.go)
	s.ctl.Guard().LoginRoutes(mux)    // the dashboard's login (package guard)
	web.Routes(mux, s, s.ctl.Guard()) // the payment page and the dashboard at /sandbox/ui (views.go)
	s.ctl.InspectionRoutes(mux)
	api.OpenAPIRoutes(mux, s.cfg.OpenAPI)
	return mux
}

// ServeHTTP learns the address the request reached (webhooks must not
// dial it), then hands it to the API's pipeline (package api): health
// first, the autopilot steps now due, the request counted by its route,
// an injected fault if one matches, the routes, and the request log.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.cfg.Self.Learn(r) // even a probe names an address webhooks must not dial
	s.handler.ServeHTTP(w, r)
}

// LargeBodiesInFlight is how many large request bodies are being read
// (for the tests of LargeBodyConcurrency).
func (s *Service) LargeBodiesInFlight() int { return s.api.LargeBodiesInFlight() }

// resetLocked rebuilds the starting state from the configuration. The
// caller is in a section (begin).
func (s *Service) resetLocked() {
	s.tx.SetValue(offsetKey, time.Duration(0))
	s.tx.Reset()
	if s.expiryTimer != nil {
		s.expiryTimer.Stop()
	}
	s.tx.SetValue(faultsKey, []api.Fault(nil))
	s.reqMu.Lock()
	s.requests = map[routeKey]int{} // the store forgot the counters not yet written (Reset)
	s.reqMu.Unlock()
}

// Reset puts the sandbox back to its configured start (see
// sandbox.Server.Reset).
func (s *Service) Reset() (err error) {
	s.begin()
	defer s.endErr(&err)
	s.resetLocked()
	s.pilot.Clear()
	return nil
}

// Close stops webhook delivery and the timers, writes what is pending and
// releases the store (see sandbox.Server.Close). It is idempotent.
func (s *Service) Close() {
	s.lock()
	if s.closed {
		s.unlock()
		return
	}
	s.closed = true
	if s.expiryTimer != nil {
		s.expiryTimer.Stop()
	}
	s.unlock()
	s.pilot.Close()
	s.feed.Close() // the listeners' streams end
	s.reqFeed.Close()
	s.hooks.close() // deliveries cut short stay in the outbox for the next start
	s.begin()
	defer s.commit()
	if err := s.grp.Close(); err != nil && s.cfg.Logger != nil {
		s.cfg.Logger.Error("closing the database", slog.String("error", err.Error()))
	}
	if s.removeDB != nil {
		s.removeDB()
	}
}

// FlushWebhooks blocks until every webhook queued so far has been delivered
// or given up on, or ctx ends.
func (s *Service) FlushWebhooks(ctx context.Context) error { return s.hooks.flush(ctx) }

// ResendWebhook sends the logged delivery id again as a new delivery (see
// sandbox.Server.ResendWebhook) and returns it as queued.
func (s *Service) ResendWebhook(id string) (any, error) {
	s.begin()
	if s.closed {
		s.commit()
		return nil, refusal(ledger.WrongState, "the sandbox is closed")
	}
	key, dl, err := s.hooks.prepareResend(id, s.nowLocked())
	if err != nil {
		s.commit()
		return nil, err
	}
	s.outboxLocked(key, dl)
	if out := s.end(); out != nil {
		return nil, out
	}
	return s.hooks.snapshot(dl.rec), nil
}

// Now returns the sandbox clock: Config.Now plus every Advance so far, in
// UTC.
func (s *Service) Now() time.Time {
	s.begin()
	defer s.commit()
	return s.nowLocked()
}

func (s *Service) nowLocked() time.Time {
	return s.cfg.Now().Add(s.offsetLocked()).UTC()
}

// MaxClockOffset bounds how far Advance can move the clock: a century is
// beyond any test's need, and far enough from the limits of time.Duration
// and time.Time that no sum of advances can overflow.
const MaxClockOffset = 100 * 365 * 24 * time.Hour

// Advance moves the clock forward by d (a negative d is ignored, the
// total clamped at 100 years), expires what is due, releases the
// deliveries the webhook faults held until then, runs the autopilot steps
// now due, and returns the clock; the error is what became of the change
// when the store failed (NotKept, MaybeKept).
func (s *Service) Advance(d time.Duration) (time.Time, error) {
	err := s.advance(d)
	now := s.Now() // after the lock is released
	s.hooks.wake(now)
	s.pilot.Run(now)
	if err != nil {
		return time.Time{}, err
	}
	return s.Now(), nil
}

func (s *Service) advance(d time.Duration) (err error) {
	s.begin()
	defer s.endErr(&err)
	if d > 0 {
		off := s.offsetLocked()
		if d > MaxClockOffset-off {
			off = MaxClockOffset
		} else {
			off += d
		}
		s.tx.SetValue(offsetKey, off)
		s.jr.saveOffset(off)
	}
	s.expireDueLocked(s.nowLocked())
	return nil
}

// Stats counts what one merchant created since the last Reset.
type Stats struct {
	Payments, Payouts, Withdrawals, Transfers int
}

// Stats returns the counters of the merchant key (zero for an unknown key).
func (s *Service) Stats(key string) Stats {
	s.begin()
	defer s.commit()
	m := s.tx.Merchant(key)
	if m == nil {
		return Stats{}
	}
	pm, po, wd := s.tx.Counts(m)
	st := Stats{Transfers: m.Transfers}
	for _, n := range pm {
		st.Payments += n
	}
	for _, n := range po {
		st.Payouts += n
	}
	for _, n := range wd {
		st.Withdrawals += n
	}
	return st
}

// DeliveryLog returns the webhook delivery log, newest first (deep copies).
func (s *Service) DeliveryLog() []webhook.Delivery { return s.hooks.deliveries() }

// RequestCount returns how many requests with this method reached the
// sandbox on a route matching pattern (see sandbox.Server.RequestCount).
func (s *Service) RequestCount(method, pattern string) int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	n := 0
	for k, c := range s.requests {
		if (method == "" || method == k.method) && pathMatches(pattern, k.route) {
			n += c
		}
	}
	return n
}

// expireDueLocked cancels every PENDING payment whose valid_until is not
// after now (status CANCELLED, webhook sent). With the real clock a timer
// runs it at the earliest valid_until, so a payment nobody touches still
// expires on time; it also runs on every API request and on Advance, which
// is how an injected clock moves expiry.
func (s *Service) expireDueLocked(now time.Time) {
	for s.grp.Err() == nil {
		expired, more := ledger.ExpireDue(s.tx, now, expiryBatch)
		for _, p := range expired {
			s.paymentMovedLocked(p)
		}
		if !more {
			break
		}
		// A backlog (a restart after a long stop) is committed in batches,
		// so memory and the transaction stay bounded however many expire.
		s.checkpointLocked()
	}
	s.armExpiryLocked(now)
}

// expiryBatch is how many payments expire per transaction (a variable so
// that a test can make a backlog of a few payments).
var expiryBatch = 500

// armExpiryLocked sets the one expiry timer to the earliest valid_until
// (real clock only): one timer for all payments, not one per payment.
func (s *Service) armExpiryLocked(now time.Time) {
	if !s.cfg.RealClock || s.closed {
		return
	}
	next, ok := s.tx.NextExpiry()
	if !ok {
		return
	}
	d := next.Sub(now)
	if s.expiryTimer == nil {
		s.expiryTimer = time.AfterFunc(d, func() {
			s.begin()
			defer s.commit()
			if !s.closed {
				s.expireDueLocked(s.nowLocked())
			}
		})
		return
	}
	s.expiryTimer.Reset(d)
}
