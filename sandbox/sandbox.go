package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Config describes the starting state and the knobs of a Server. The zero
// value is usable: one default merchant, the real clock and the defaults
// listed in the package documentation.
type Config struct {
	// Merchants are the accounts the sandbox knows. Empty means one
	// merchant, DefaultMerchant(DefaultAPIKey, DefaultSecret).
	Merchants []Merchant
	// Now is the base clock; nil means time.Now. Advance adds an offset on
	// top of it, so tests can freeze time here and still move it forward.
	Now func() time.Time
	// PaymentTTL is the span from created_at to valid_until; default 20
	// minutes.
	PaymentTTL time.Duration
	// USDTRate is RUB per 1 USDT, fixed into each payment at creation and
	// returned as usdt_rate; default 92.50.
	USDTRate decimal.Decimal
	// LocalRates maps a country code (TJ, KZ, UZ, KG) to the number of
	// local currency units per 1 RUB used for amount_local. Missing
	// countries take the defaults in DefaultLocalRates.
	LocalRates map[string]decimal.Decimal
	// MaxSamePendingAmount is how many PENDING payments of one merchant
	// may share an amount before the next one is refused with PAY_005;
	// default 5.
	MaxSamePendingAmount int
	// BaseURL is the prefix of payment_url links (BaseURL + "/pay/" + id).
	// Empty means the scheme and Host of the create request, which is right
	// for httptest.NewServer and for the binary on loopback.
	BaseURL string
	// WebhookClient sends webhooks; nil means the sandbox's own: a 5
	// second timeout per attempt, no proxy, and a dialer that refuses every
	// address the sandbox listens on (see ListenAddrs). A client given here
	// keeps its own transport, so only the controls' refusal of webhook
	// deliveries protects the sandbox from itself; redirects are never
	// followed either way (a 3xx is a failed attempt).
	WebhookClient *http.Client
	// ListenAddrs are the addresses the sandbox is served on ("127.0.0.1:8080",
	// "0.0.0.0:8080"): webhook deliveries never connect to them, so a
	// notify_url cannot point at the sandbox's own controls. The Server
	// also learns every local address a request arrives on, which covers
	// httptest.NewServer; the binary sets this from its listener.
	ListenAddrs []string
	// WebhookConcurrency caps the webhook attempts in flight at once (so
	// the sockets open); default DefaultWebhookConcurrency.
	WebhookConcurrency int
	// WebhookPerReceiver caps the attempts in flight to one receiver (host
	// and port); default DefaultWebhookPerReceiver. Deliveries beyond
	// either cap wait their turn; none is dropped.
	WebhookPerReceiver int
	// ControlToken, when set, is required on every /sandbox/ control and
	// inspection request (Authorization: Bearer TOKEN) and, through a login
	// form that sets an HttpOnly, SameSite=Strict cookie, on the dashboard.
	// With AllowRemote it is mandatory: a remote sandbox without one refuses
	// every control. Loopback-only sandboxes work without it. A token that
	// could be guessed (under 128 bits of estimated entropy: short, from a
	// small alphabet, or patterned) is refused by Open with
	// ErrInvalidArgument; `openssl rand -hex 32` makes a good one. Wrong
	// tokens are slowed per client address: after a few, the address is
	// answered 429 with Retry-After for a time that doubles with each
	// further one, and each is logged (without the token).
	ControlToken string
	// LargeBodyConcurrency caps how many request bodies over 1 MB (receipts
	// of confirm) are read at once, so that unauthenticated-looking floods
	// of 10 MB uploads cannot pin memory; a request that finds no slot
	// within a quarter of RequestBodyTimeout is answered 503. Default
	// DefaultLargeBodyConcurrency.
	LargeBodyConcurrency int
	// WebhookMaxAttempts caps the attempts of one delivery; default 5.
	WebhookMaxAttempts int
	// WebhookRetryWait is the wait after the first failed attempt, doubled
	// after each further failure; default 1 second. Tests set it to a
	// millisecond or so.
	WebhookRetryWait time.Duration
	// AllowRemote lets the /sandbox/ controls, inspection endpoints and
	// dashboard answer requests whose Host is not a loopback name or
	// address, for a sandbox a team shares or a container reached by its
	// service name. It requires ControlToken: with it off, a web page the
	// developer visits cannot drive the controls through DNS rebinding; with
	// it on, only holders of the token can.
	AllowRemote bool
	// Logger receives one line per request (method, route, status,
	// duration, error code) and one per webhook delivery attempt. nil
	// keeps the Server silent, which is what tests want; the binary logs
	// to stderr. No line carries an API key, signature, notification
	// token, card or phone number.
	Logger *slog.Logger
	// RequestBodyTimeout bounds how long a request body may take to
	// arrive once the handler starts reading it; a body that stalls longer
	// is cut off with 400 PAY_002. Default DefaultRequestBodyTimeout.
	RequestBodyTimeout time.Duration
	// Banks is the list GET /v1/banks answers and payments pick from; nil
	// means DefaultBanks(). Codes must be unique and non-empty.
	Banks []Bank
	// Autopilot moves payments, disputes, payouts and withdrawals along by
	// themselves, with outcomes chosen by TestValues. Off by default.
	Autopilot Autopilot
	// DBPath is the SQLite file that keeps every merchant's state across
	// restarts (see "Persistence" in the package documentation). Empty
	// keeps everything in memory, gone with the Server. The file is created
	// when missing; one that is not an SQLite database, fails its integrity
	// check, comes from a newer sandbox or is held by another process is
	// refused (Open returns the error), never reset.
	DBPath string
	// WebhookFaults make webhook deliveries arrive twice, late or out of
	// order on purpose, at the rates given, so that a receiver can be
	// shown to survive them (the binary's -webhook-faults). A rate outside
	// [0,1] or a negative delay is refused by Open with
	// ErrInvalidArgument. Seed 0 (with any fault set) picks a seed at
	// random; /sandbox/state and the dashboard show the seed in use, so a
	// run can be replayed. FlushWebhooks waits for delayed and held
	// deliveries too: with an injected clock, Advance past them first.
	// The listen feed is not affected: it carries each notification once,
	// in order.
	WebhookFaults WebhookFaults
}

// Merchant is one account of the sandbox: the API key that X-Identity
// carries, the secret or Signer that X-Signature is checked with, and the
// terminals that hold its USDT.
type Merchant struct {
	// APIKey is what X-Identity carries; it must be unique across
	// merchants and non-empty.
	APIKey string
	// Secret is the signing secret of the default HMACSigner. It is unused
	// when Signer is set.
	Secret string
	// Signer verifies X-Signature: the sandbox signs the incoming request
	// with it and compares the result in constant time. nil means
	// paykit.HMACSigner(Secret), the SDK's default, so a client built with
	// the same signer always agrees with the sandbox.
	Signer paykit.Signer
	// AcceptUnsigned lets this merchant's requests through without a
	// valid X-Signature (X-Identity is still required), for a validation
	// proxy such as Prism in front of the sandbox: it re-serialises bodies
	// (1500.50 becomes 1500.5), so no signature over the original bytes
	// can match. Off by default, and loud: the sandbox logs a warning at
	// start and for every request it lets through unsigned, and the
	// dashboard shows a banner.
	AcceptUnsigned bool
	// Name is the merchant's display name: the payer page names it as the
	// payee, and the dashboard heads its terminals with it. Empty means
	// "Sandbox merchant". Shown as text, never as HTML.
	Name string
	// Terminals are the merchant's terminals at start and after Reset. The
	// first active one serves payments and is credited when they complete.
	Terminals []Terminal
}

// Terminal is the starting state of one terminal, and the snapshot that
// Server.Terminals returns. Terminal ids are scoped to their merchant: two
// merchants may use the same ids without seeing each other's terminals.
type Terminal struct {
	// ID is the terminal id of the API (terminal_id, from_terminal_id).
	ID string
	// Name is the display name GET /v1/terminals returns.
	Name string
	// Balance is the available USDT.
	Balance decimal.Decimal
	// BalanceFrozen is the USDT held by pending or processing withdrawals.
	BalanceFrozen decimal.Decimal
	// WithdrawalFee is the USDT charged per withdrawal from this terminal.
	WithdrawalFee decimal.Decimal
	// IsActive tells whether the terminal serves payments and
	// withdrawals; an inactive one still holds money and takes transfers.
	IsActive bool
}

// Credentials and terminal ids of the default merchant. They are stable so
// that docs, examples and scripts can hard-code them.
const (
	DefaultAPIKey = "pk_sandbox"
	DefaultSecret = "sk_sandbox_secret"
	// DefaultMainTerminalID is the first terminal of DefaultMerchant: it
	// starts with 1000.00 USDT and receives the USDT of completed payments.
	DefaultMainTerminalID = "term_sandbox_main"
	// DefaultReserveTerminalID is the second terminal: active and empty, a
	// target for transfers.
	DefaultReserveTerminalID = "term_sandbox_reserve"
)

// Defaults applied to a zero Config.
const (
	DefaultPaymentTTL           = 20 * time.Minute
	DefaultMaxSamePendingAmount = 5
	DefaultWebhookMaxAttempts   = 5
	DefaultWebhookRetryWait     = time.Second
	DefaultWebhookConcurrency   = 32
	DefaultWebhookPerReceiver   = 4
	DefaultLargeBodyConcurrency = api.DefaultLargeBodyConcurrency
)

// DefaultUSDTRate is the RUB price of 1 USDT when Config.USDTRate is zero.
var DefaultUSDTRate = decimal.RequireFromString("92.50")

// DefaultLocalRates are the local currency units per 1 RUB used for
// CROSS_BORDER amount_local when Config.LocalRates does not name the
// country. They are round illustrative figures, not live rates.
func DefaultLocalRates() map[string]decimal.Decimal {
	return map[string]decimal.Decimal{
		"TJ": decimal.RequireFromString("0.12"),   // TJS
		"KZ": decimal.RequireFromString("5.60"),   // KZT
		"UZ": decimal.RequireFromString("140.50"), // UZS
		"KG": decimal.RequireFromString("0.96"),   // KGS
	}
}

// DefaultMerchant returns a merchant with two active terminals,
// DefaultMainTerminalID holding 1000.00 USDT and DefaultReserveTerminalID
// holding nothing, both with a withdrawal fee of 1.50 USDT: enough to try
// transfers and withdrawals without completing any payment first.
func DefaultMerchant(apiKey, secret string) Merchant {
	fee := decimal.RequireFromString("1.50")
	zero := decimal.RequireFromString("0.00")
	return Merchant{
		APIKey: apiKey,
		Secret: secret,
		Terminals: []Terminal{
			{ID: DefaultMainTerminalID, Name: "Main terminal", Balance: decimal.RequireFromString("1000.00"),
				BalanceFrozen: zero, WithdrawalFee: fee, IsActive: true},
			{ID: DefaultReserveTerminalID, Name: "Reserve terminal", Balance: zero,
				BalanceFrozen: zero, WithdrawalFee: fee, IsActive: true},
		},
	}
}

// Server is the sandbox: an http.Handler serving the whole API, the hosted
// payment page and the /sandbox/ controls. It is safe for concurrent use.
// Create it with New and stop its webhook deliveries with Close.
type Server struct {
	svc *service.Service // the application: every section of the state
}

// defaultMerchantName is the display name of a Merchant without Name.
const defaultMerchantName = "Sandbox merchant"

// New builds a Server from cfg, filling in defaults. It panics when two
// merchants share an API key, as http.ServeMux does on a duplicate pattern:
// that is a programming error, not a runtime condition. It also panics when
// Config.DBPath names a file that cannot be used; programs that take the
// path from a user call Open, which returns that error instead.
func New(cfg Config) *Server {
	s, err := Open(cfg)
	if err != nil {
		panic(err)
	}
	return s
}

// Open is New for a Config whose DBPath may fail: a file that is not an
// SQLite database, is corrupt, was written by a newer sandbox, or is held
// by another process is refused with an error that says so, and left
// untouched. The programming errors New panics on still panic.
func Open(cfg Config) (*Server, error) {
	if len(cfg.Merchants) == 0 {
		cfg.Merchants = []Merchant{DefaultMerchant(DefaultAPIKey, DefaultSecret)}
	}
	cfg.Merchants = slices.Clone(cfg.Merchants) // the caller's slice is left as it was
	for i := range cfg.Merchants {
		if cfg.Merchants[i].Name == "" {
			cfg.Merchants[i].Name = defaultMerchantName
		}
	}
	seen := map[string]bool{}
	for _, m := range cfg.Merchants {
		if m.APIKey == "" {
			panic("sandbox: merchant with an empty APIKey")
		}
		if seen[m.APIKey] {
			panic("sandbox: two merchants share one APIKey")
		}
		seen[m.APIKey] = true
	}
	banks := DefaultBanks()
	if cfg.Banks != nil {
		banks = slices.Clone(cfg.Banks)
	}
	codes := map[string]bool{}
	for _, b := range banks {
		if b.Code == "" || codes[b.Code] {
			panic("sandbox: a bank with an empty or repeated Code")
		}
		codes[b.Code] = true
	}
	if err := checkControlToken(cfg.ControlToken); err != nil {
		return nil, err
	}
	if err := cfg.WebhookFaults.Check(); err != nil {
		return nil, fmt.Errorf("sandbox: %w: %v", ErrInvalidArgument, err)
	}
	if cfg.WebhookFaults.On() && cfg.WebhookFaults.Seed == 0 {
		cfg.WebhookFaults.Seed = rand.Int64N(math.MaxInt64) + 1
	}
	realClock := cfg.Now == nil
	if realClock {
		cfg.Now = time.Now
	}
	if cfg.PaymentTTL <= 0 {
		cfg.PaymentTTL = DefaultPaymentTTL
	}
	if !cfg.USDTRate.IsPositive() {
		cfg.USDTRate = DefaultUSDTRate
	}
	if cfg.MaxSamePendingAmount <= 0 {
		cfg.MaxSamePendingAmount = DefaultMaxSamePendingAmount
	}
	self := service.NewSelfAddrs(cfg.ListenAddrs)
	if cfg.WebhookClient == nil {
		cfg.WebhookClient = webhook.NewClient(self.IsSelf)
	} else {
		c := *cfg.WebhookClient
		c.CheckRedirect = webhook.NoRedirects
		cfg.WebhookClient = &c
	}
	orDefault(&cfg.WebhookConcurrency, DefaultWebhookConcurrency)
	orDefault(&cfg.WebhookPerReceiver, DefaultWebhookPerReceiver)
	orDefault(&cfg.LargeBodyConcurrency, DefaultLargeBodyConcurrency)
	orDefault(&cfg.WebhookMaxAttempts, DefaultWebhookMaxAttempts)
	orDefault(&cfg.WebhookRetryWait, DefaultWebhookRetryWait)
	orDefault(&cfg.RequestBodyTimeout, DefaultRequestBodyTimeout)
	rates := DefaultLocalRates()
	for k, v := range cfg.LocalRates {
		if v.IsPositive() {
			rates[k] = v
		}
	}
	sc := service.Config{Now: cfg.Now, RealClock: realClock, PaymentTTL: cfg.PaymentTTL, USDTRate: cfg.USDTRate,
		LocalRates: rates, MaxSamePendingAmount: cfg.MaxSamePendingAmount, BaseURL: cfg.BaseURL,
		WebhookClient: cfg.WebhookClient, Self: self, WebhookConcurrency: cfg.WebhookConcurrency,
		WebhookPerReceiver: cfg.WebhookPerReceiver, ControlToken: cfg.ControlToken,
		LargeBodyConcurrency: cfg.LargeBodyConcurrency, WebhookMaxAttempts: cfg.WebhookMaxAttempts,
		WebhookRetryWait: cfg.WebhookRetryWait, AllowRemote: cfg.AllowRemote, Logger: cfg.Logger,
		RequestBodyTimeout: cfg.RequestBodyTimeout, Autopilot: cfg.Autopilot, DBPath: cfg.DBPath,
		OpenAPI: openapiYAML, TestDB: testDBPath, WebhookFaults: cfg.WebhookFaults}
	for _, b := range banks {
		sc.Banks = append(sc.Banks, ledger.Bank(b))
	}
	for _, m := range cfg.Merchants {
		sm := service.Merchant{APIKey: m.APIKey, Name: m.Name, Signer: m.Signer, AcceptUnsigned: m.AcceptUnsigned}
		if sm.Signer == nil {
			sm.Signer = paykit.HMACSigner(m.Secret)
		}
		for _, t := range m.Terminals {
			sm.Terminals = append(sm.Terminals, ledger.Terminal{ID: t.ID, Name: t.Name,
				Balance: ledger.Balance{Available: t.Balance, Frozen: t.BalanceFrozen}, Fee: t.WithdrawalFee, Active: t.IsActive})
		}
		sc.Merchants = append(sc.Merchants, sm)
	}
	svc, err := service.Open(sc)
	if err != nil {
		return nil, err
	}
	return &Server{svc: svc}, nil
}

// orDefault sets *v to d when it is not positive: the zero value of a
// Config knob means its default.
func orDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Reset puts the sandbox back to the state New built: configured merchants
// and balances, no payments, payouts or withdrawals, no faults, clock offset
// zero. Webhooks already queued are still delivered.
func (s *Server) Reset() { s.svc.Reset() }

// Close stops webhook delivery: queued deliveries are dropped and attempts
// in flight are cancelled. The handler keeps answering requests, but no
// further webhook is sent. With Config.DBPath, Close also writes what is
// pending and releases the file (a new Server may open it); deliveries it
// dropped stay in the file's outbox for that next Server, and the handler
// then answers 503 SANDBOX_STORE, since nothing it would change could be
// kept. Close is idempotent.
func (s *Server) Close() { s.svc.Close() }

// FlushWebhooks blocks until every webhook queued so far has been delivered
// or given up on, or ctx ends. Tests and the quickstart use it instead of
// sleeping.
func (s *Server) FlushWebhooks(ctx context.Context) error { return s.svc.FlushWebhooks(ctx) }

// ResendWebhook sends the logged delivery id (a Delivery.ID from
// Deliveries) again: the same JSON body, to the same notify_url with the
// same notification token, as a new delivery with its own attempts and
// retries, whose ResendOf names id. It returns that new delivery as queued.
// A merchant uses it to replay a notification their receiver mishandled,
// without changing the resource's status. The body is the one first sent,
// not the resource's current state, as a real service's redelivery would
// be. ErrNotFound when id is not in the log (never was, or pushed out of
// the bounded log); ErrWrongState after Close. Use FlushWebhooks to wait
// for it.
func (s *Server) ResendWebhook(id string) (Delivery, error) {
	d, err := s.svc.ResendWebhook(id)
	if err != nil {
		return Delivery{}, goError(err)
	}
	return d.(Delivery), nil
}

// Now returns the sandbox clock: Config.Now plus every Advance so far, in
// UTC.
func (s *Server) Now() time.Time { return s.svc.Now() }

// Advance moves the sandbox clock forward by d and expires every PENDING
// payment whose valid_until has passed (status CANCELLED, webhook sent).
// With the autopilot on, it then runs every autopilot step now due, so
// Advance returns with them done.
// A negative d is ignored and the total offset is clamped at 100 years:
// time in the sandbox never runs backwards, not even when huge advances
// would overflow.
func (s *Server) Advance(d time.Duration) { s.svc.Advance(d) }

// Terminals returns a snapshot of the terminals of the merchant with the
// given API key, in their configured order, or nil for an unknown key.
// Tests use it to check balances without a signed request.
func (s *Server) Terminals(apiKey string) []Terminal {
	ts := s.svc.Terminals(apiKey)
	if ts == nil {
		return nil
	}
	out := make([]Terminal, 0, len(ts))
	for _, t := range ts {
		out = append(out, Terminal{ID: t.ID, Name: t.Name, Balance: t.Available, BalanceFrozen: t.Frozen,
			WithdrawalFee: t.Fee, IsActive: t.Active})
	}
	return out
}

// Stats counts what one merchant has created since the last Reset. SDK
// tests use it to prove that a retried create or money move took effect
// exactly once.
type Stats struct {
	// Payments is how many payments the merchant created.
	Payments int
	// Payouts is how many payouts the merchant created.
	Payouts int
	// Withdrawals is how many withdrawals the merchant created.
	Withdrawals int
	// Transfers is how many transfers succeeded.
	Transfers int
}

// Stats returns the counters of the merchant with the given API key (zero
// for an unknown key).
func (s *Server) Stats(apiKey string) Stats { return Stats(s.svc.Stats(apiKey)) }

// Deliveries returns the webhook delivery log, newest first: the last
// DefaultDeliveryLogSize deliveries with their attempts and the receivers'
// answers. The result is a deep copy.
func (s *Server) Deliveries() []Delivery { return s.svc.DeliveryLog() }

// RequestCount returns how many requests with this method reached the
// sandbox on a route matching pattern, faulted ones included. An empty
// method matches any. Requests are counted per route, not per raw path
// (so that the counters stay bounded), and pattern is matched against the
// route's template: "/v1/payments/{id}/confirm" (any {name} works) counts
// every confirm, "/v1/transfers" every transfer, while a path with a
// concrete id such as "/v1/payments/abc" matches no templated route and
// counts 0. Retry tests count attempts with it.
func (s *Server) RequestCount(method, pattern string) int { return s.svc.RequestCount(method, pattern) }

// testDBPath, when set, gives each Server without Config.DBPath a file of
// its own and the function that removes it after Close. Only the package's
// tests set it (PAYKIT_SANDBOX_TEST_DB=file, in sqlite_test.go), so the
// whole suite runs once more on SQLite; a program never does.
var testDBPath func() (path string, remove func())
