package paykit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"

// Defaults of a Client made without options.
const (
	// DefaultMaxRetries is how many times a failed attempt is retried when
	// its operation's retry class allows it.
	DefaultMaxRetries = 3
	// DefaultRetryWaitMin and DefaultRetryWaitMax bound the exponential
	// backoff between attempts (a Retry-After header can lengthen a wait).
	DefaultRetryWaitMin = 200 * time.Millisecond
	DefaultRetryWaitMax = 5 * time.Second
	// DefaultAttemptTimeout bounds one attempt of the default HTTP client,
	// headers and body included. A context deadline bounds the whole call.
	DefaultAttemptTimeout = 30 * time.Second
	// DefaultMaxIdleConnsPerHost is the idle-connection pool of the default
	// transport. net/http keeps only 2 idle connections per host, so a
	// backend calling from many goroutines would open and close connections
	// (and TLS sessions) all the time; 64 keeps them warm. The default
	// transport also opens no more than 64 connections per host.
	DefaultMaxIdleConnsPerHost = 64
	// MaxResponseBytes caps a response body; a larger one fails the attempt.
	MaxResponseBytes = 16 << 20
)

// Client calls the merchant API. It is safe for concurrent use by many
// goroutines and reuses connections; make one per API key and share it.
type Client struct {
	base      url.URL
	basePath  string // base path without trailing slash, unescaped
	baseRaw   string // the same, escaped
	apiKey    string
	signer    Signer
	userAgent string
	logger    *slog.Logger
	http      *retryablehttp.Client
	now       func() time.Time
	// obs is nil without WithObserver: every hook is behind one nil check.
	obs Observer
}

// Option configures a Client in NewClient.
type Option func(*clientConfig) error

type clientConfig struct {
	httpClient *http.Client
	maxRetries int
	waitMin    time.Duration
	waitMax    time.Duration
	logger     *slog.Logger
	userAgent  string
	insecure   bool
	observers  []Observer
}

// WithHTTPClient sends requests through hc's transport, timeout and cookie
// jar. The SDK works on a copy of hc: it never follows redirects (Go would
// forward X-Identity and X-Signature to the redirect's host), whatever hc's
// CheckRedirect says, and it leaves hc itself untouched. hc.Timeout bounds
// each attempt (the SDK applies it per attempt, response body included, so a
// retry gets a fresh one); zero means attempts are bounded only by the
// context.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *clientConfig) error {
		if hc == nil {
			return errors.New("paykit: WithHTTPClient(nil)")
		}
		c.httpClient = hc
		return nil
	}
}

// WithMaxRetries sets how many times an attempt is retried when the
// operation's retry class allows it (see the README); 0 disables retries.
func WithMaxRetries(n int) Option {
	return func(c *clientConfig) error {
		if n < 0 {
			return fmt.Errorf("paykit: WithMaxRetries(%d): must not be negative", n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithRetryWait bounds the exponential backoff with full jitter between
// attempts: the n-th retry waits a random time between min and
// min(max, min·2ⁿ). A Retry-After header lengthens the wait, even past max.
func WithRetryWait(minWait, maxWait time.Duration) Option {
	return func(c *clientConfig) error {
		if minWait <= 0 || maxWait < minWait {
			return fmt.Errorf("paykit: WithRetryWait(%s, %s): need 0 < min <= max", minWait, maxWait)
		}
		c.waitMin, c.waitMax = minWait, maxWait
		return nil
	}
}

// WithLogger sends one debug line per attempt (operation, method, path,
// status, attempt number, duration, error) to l. The SDK is silent without
// it. Nothing logged carries a body, the API key, the secret, a signature,
// a card or a phone number.
func WithLogger(l *slog.Logger) Option {
	return func(c *clientConfig) error {
		if l == nil {
			return errors.New("paykit: WithLogger(nil)")
		}
		c.logger = l
		return nil
	}
}

// WithUserAgent puts the merchant's product token in front of the SDK's own
// in the User-Agent header ("shop/1.2 paykit-go/0.1.0 go1.24"), so the
// service can tell integrations apart while the SDK version stays visible.
func WithUserAgent(ua string) Option {
	return func(c *clientConfig) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("paykit: WithUserAgent: contains a line break")
		}
		c.userAgent = strings.TrimSpace(ua)
		return nil
	}
}

// WithInsecureHTTP allows a plain http:// base URL to a host other than
// loopback. The API key and signatures then cross the network in clear text:
// meant for a sandbox on a private test network, never for production.
func WithInsecureHTTP() Option {
	return func(c *clientConfig) error {
		c.insecure = true
		return nil
	}
}

// NewClient returns a client of the API at baseURL (for example
// "https://api.example.com"; a path prefix is kept) that authenticates with
// apiKey and signs every request with signer.
//
// It refuses an empty key, a nil signer, a base URL that is not absolute
// http(s) or that carries credentials, a query or a fragment, and plain
// http:// to any host but loopback unless WithInsecureHTTP is given.
func NewClient(baseURL, apiKey string, signer Signer, opts ...Option) (*Client, error) {
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("paykit: NewClient: empty API key")
	}
	if strings.ContainsAny(apiKey, "\r\n") {
		return nil, errors.New("paykit: NewClient: API key contains a line break")
	}
	if signer == nil {
		return nil, errors.New("paykit: NewClient: nil Signer")
	}
	cfg := clientConfig{
		maxRetries: DefaultMaxRetries,
		waitMin:    DefaultRetryWaitMin,
		waitMax:    DefaultRetryWaitMax,
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	base, err := parseBaseURL(baseURL, cfg.insecure)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:   *base,
		apiKey: apiKey,
		signer: signer,
		logger: cfg.logger,
		now:    time.Now,
		obs:    combineObservers(cfg.observers),
	}
	c.basePath = strings.TrimRight(base.Path, "/")
	c.baseRaw = strings.TrimRight(base.EscapedPath(), "/")
	c.userAgent = "paykit-go/" + Version + " " + runtime.Version()
	if cfg.userAgent != "" {
		c.userAgent = cfg.userAgent + " " + c.userAgent
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}

	hc := cfg.httpClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultAttemptTimeout}
	}
	inner := *hc // never mutate the merchant's client
	base2 := inner.Transport
	if base2 == nil {
		base2 = defaultTransport()
	}
	// The attempt timeout moves from http.Client into attemptTransport:
	// http.Client enforces its Timeout cheaply only when it sees a bare
	// *http.Transport, and with any wrapper it starts a timer goroutine
	// for every request instead.
	inner.Transport = &attemptTransport{base: base2, logger: c.logger, timeout: inner.Timeout}
	inner.Timeout = 0
	inner.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	c.http = &retryablehttp.Client{
		HTTPClient:   &inner,
		Logger:       nil, // its default logger prints every URL to stderr
		RetryWaitMin: cfg.waitMin,
		RetryWaitMax: cfg.waitMax,
		RetryMax:     cfg.maxRetries,
		CheckRetry:   c.checkRetry,
		Backoff:      c.backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		PrepareRetry: c.sign,
	}
	return c, nil
}

func parseBaseURL(raw string, insecure bool) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, errors.New("paykit: NewClient: malformed base URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("paykit: NewClient: base URL must be absolute http:// or https://")
	case u.Host == "":
		return nil, errors.New("paykit: NewClient: base URL has no host")
	case u.User != nil:
		return nil, errors.New("paykit: NewClient: base URL must not carry credentials")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, errors.New("paykit: NewClient: base URL must not have a query or fragment")
	case u.Scheme == "http" && !insecure && !isLoopback(u.Hostname()):
		return nil, errors.New("paykit: NewClient: plain http:// is allowed only to loopback; use https:// or WithInsecureHTTP()")
	}
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2 * DefaultMaxIdleConnsPerHost
	t.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	// Without a cap, goroutines that find no idle connection each dial a
	// new one, and those beyond the idle pool are closed once returned:
	// under load the server sees connections come and go. With the cap a
	// call waits for a connection instead (within its timeout).
	t.MaxConnsPerHost = DefaultMaxIdleConnsPerHost
	return t
}

// String keeps the API key out of fmt output such as %v and %+v.
func (c *Client) String() string { return "paykit.Client(" + c.base.String() + ")" }

// GoString keeps the API key out of %#v.
func (c *Client) GoString() string { return c.String() }

// request is one API call as the resource methods describe it.
type request struct {
	op          *operation
	path        string // escaped path below the base, e.g. "/v1/payments/…"
	query       url.Values
	body        []byte
	contentType string
	out         any // decoded from a 2xx body when non-nil
	// reconcile runs when a retried attempt answers op.doneCode: an earlier
	// attempt evidently did the work. It reads the resource back and
	// reports whether it is the one the call meant to produce.
	reconcile func(ctx context.Context) (bool, error)
}

// callState follows one call across its attempts. It travels in the
// request's context because retryablehttp's hooks see nothing else.
type callState struct {
	op       *operation
	body     []byte
	attempts int
	// last is the body of the latest attempt's response, read whole by
	// attemptTransport. It is kept here rather than recovered from
	// resp.Body, which net/http wraps (for a client Timeout, say).
	last []byte
	// gotConn is set once an attempt obtained a connection: from then on
	// the request may have reached the server.
	gotConn atomic.Bool
}

type stateKey struct{}

func stateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(stateKey{}).(*callState)
	return st
}

// doJSON marshals in as the request body and runs the call.
func (c *Client) doJSON(ctx context.Context, r request, in any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("paykit: %s: encoding request: %w", r.op.name, err)
	}
	r.body, r.contentType = body, "application/json"
	return c.do(ctx, r)
}

// do is the one request pipeline: build, sign, send, retry by the
// operation's class, reconcile, decode. Every endpoint method ends here.
func (c *Client) do(ctx context.Context, r request) error {
	if ctx == nil {
		return errors.New("paykit: nil context")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("paykit: %s: %w", r.op.name, err)
	}
	st := &callState{op: r.op, body: r.body}
	ctx = context.WithValue(ctx, stateKey{}, st)
	if r.op.class == classMoneyMove {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { st.gotConn.Store(true) },
		})
	}

	u := c.base
	u.Path = c.basePath + unescapePath(r.path)
	u.RawPath = c.baseRaw + r.path
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	var body any
	if r.body != nil {
		body = r.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.op.method, u.String(), body)
	if err != nil {
		return fmt.Errorf("paykit: %s: building request: %w", r.op.name, err)
	}
	h := req.Header
	h["X-Identity"] = []string{c.apiKey}
	h["User-Agent"] = []string{c.userAgent}
	h["Accept"] = []string{"application/json"}
	if r.contentType != "" {
		h["Content-Type"] = []string{r.contentType}
	}
	if err := c.sign(req.Request); err != nil {
		return err
	}

	resp, err := c.http.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return c.transportFailure(ctx, st, err)
	}
	data := st.last
	resp.Body.Close()

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if r.out == nil {
			return nil
		}
		if err := decodeBody(data, r.out); err != nil {
			return fmt.Errorf("paykit: %s: decoding response (HTTP %d): %s", r.op.name, resp.StatusCode, truncate(err.Error(), 200))
		}
		return nil
	}

	apiErr := decodeError(resp.StatusCode, data)
	if st.attempts > 1 && r.reconcile != nil && apiErr.Code != "" && apiErr.Code == r.op.doneCode {
		ok, rerr := r.reconcile(ctx)
		if rerr != nil {
			return fmt.Errorf("paykit: %s: a retried attempt answered %s, and reading the resource back failed (%w): %w",
				r.op.name, apiErr.Code, rerr, apiErr)
		}
		if ok {
			c.logger.LogAttrs(ctx, slog.LevelDebug, "paykit: earlier attempt had succeeded",
				slog.String("op", r.op.name), slog.String("code", apiErr.Code))
			return nil
		}
	}
	if r.op.class == classMoneyMove && resp.StatusCode >= 500 {
		return &unknownOutcomeError{op: r.op.name, check: r.op.check, cause: apiErr}
	}
	return apiErr
}

// createByExtID runs a create keyed by the merchant's ext_id. When a
// retried attempt is refused with PAY_003, an earlier attempt evidently got
// through: the resource is read back with fetch, and the call succeeds with
// it if matches says it is the one this call asked for.
func createByExtID[T any](ctx context.Context, c *Client, op *operation, path string, body any,
	fetch func(context.Context) (*T, error), matches func(*T) bool) (*T, error) {
	out := new(T)
	if err := c.doJSON(ctx, request{op: op, path: path, out: out, reconcile: readBack(out, fetch, matches)}, body); err != nil {
		return nil, err
	}
	return out, nil
}

// readBack makes a request's reconcile step: fetch the resource, and if it
// matches, store it in out and report success.
func readBack[T any](out *T, fetch func(context.Context) (*T, error), matches func(*T) bool) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		got, err := fetch(ctx)
		if err != nil || !matches(got) {
			return false, err
		}
		*out = *got
		return true, nil
	}
}

// decodeBody decodes a response body into out. A resource that decodes
// itself (every one of this package does, through json.Unmarshal into a wire
// struct) is handed the body directly: going through json.Unmarshal first
// would scan the whole body once more just to validate it.
func decodeBody(data []byte, out any) error {
	if t := bytes.TrimSpace(data); len(t) == 0 || string(t) == "null" {
		// A success without a resource is not one the merchant can act on.
		return errors.New("no resource in the response body")
	}
	if u, ok := out.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, out)
}

// transportFailure wraps an error that left no response to decode: a
// transport failure, a context that ended, or a signer that failed on a retry.
func (c *Client) transportFailure(ctx context.Context, st *callState, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	if st.op.class == classMoneyMove && st.gotConn.Load() {
		return &unknownOutcomeError{op: st.op.name, check: st.op.check, cause: err}
	}
	return fmt.Errorf("paykit: %s: %w", st.op.name, err)
}

// sign sets the authentication headers. It runs before the first attempt
// and, as retryablehttp's PrepareRetry, before every retry, so a signer that
// covers a timestamp or nonce signs each attempt afresh.
func (c *Client) sign(req *http.Request) error {
	st := stateFrom(req.Context())
	sig, err := c.signer.Sign(req, st.body)
	if err != nil {
		return fmt.Errorf("paykit: %s: signing request: %w", st.op.name, err)
	}
	if strings.ContainsAny(sig, "\r\n") {
		return fmt.Errorf("paykit: %s: signing request: signature contains a line break", st.op.name)
	}
	req.Header["X-Signature"] = []string{sig}
	return nil
}

// unescapePath decodes an escaped path for url.URL.Path; the escaped form
// goes in RawPath, so an ext_id such as "a/b?c#d" travels as a%2Fb%3Fc%23d.
func unescapePath(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

// attemptTransport wraps the merchant's or the default transport. Each
// attempt passes through it once, so it is where the SDK counts attempts,
// logs them, and reads the response body whole (capped), which lets the
// retry policy look at an error code and frees the connection for reuse.
//
// It deliberately has no CloseIdleConnections method: retryablehttp calls
// that on the whole pool after every failed call, which would tear down the
// warm connections of every other goroutine sharing the Client.
type attemptTransport struct {
	base   http.RoundTripper
	logger *slog.Logger
	// timeout bounds one attempt, response body included: the Timeout of
	// the http.Client the Client was made with.
	timeout time.Duration
}

// errResponseTooLarge fails an attempt whose body exceeds MaxResponseBytes.
var errResponseTooLarge = fmt.Errorf("paykit: response body larger than %d bytes", MaxResponseBytes)

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	call := req.Context() // every request comes from Client.do, with its callState
	st := stateFrom(call)
	st.attempts++
	start := time.Now()
	if t.timeout > 0 {
		ctx, cancel := context.WithTimeout(call, t.timeout)
		defer cancel() // the body is read before RoundTrip returns
		req = req.WithContext(ctx)
	}
	resp, err := t.base.RoundTrip(req)
	var data []byte
	if err == nil {
		if data, err = bufferBody(resp); err != nil {
			resp = nil
		}
	}
	if err != nil && req.Context().Err() == context.DeadlineExceeded && call.Err() == nil {
		// The attempt's own timeout fired, not the caller's context.
		err = fmt.Errorf("attempt timed out after %s: %w", t.timeout, err)
	}
	st.last = data
	if t.logger.Enabled(call, slog.LevelDebug) {
		t.logAttempt(req, st, resp, err, time.Since(start))
	}
	return resp, err
}

func (t *attemptTransport) logAttempt(req *http.Request, st *callState, resp *http.Response, err error, d time.Duration) {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs,
		slog.String("op", st.op.name),
		slog.String("method", req.Method),
		slog.String("path", req.URL.EscapedPath()),
		slog.Int("attempt", st.attempts),
		slog.Duration("duration", d))
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", maskDigits(err.Error())))
	}
	t.logger.LogAttrs(req.Context(), slog.LevelDebug, "paykit: attempt", attrs...)
}

// bufferBody reads a response body whole, up to MaxResponseBytes, closes
// it, and puts an in-memory reader in its place.
func bufferBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	var buf bytes.Buffer
	if resp.ContentLength > 0 && resp.ContentLength <= MaxResponseBytes {
		buf.Grow(int(resp.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if n > MaxResponseBytes {
		return nil, errResponseTooLarge
	}
	data := buf.Bytes()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return data, nil
}
