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
	"strconv"
	"strings"
	"sync"
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
	// Attempts of calls whose context can never end share their deadlines
	// in windows, which may give one up to a 64th longer, never less.
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
	// hdrIdentity and hdrUserAgent are the values of the X-Identity and
	// User-Agent headers, built once and shared by every request (see
	// headerValue).
	hdrIdentity, hdrUserAgent []string
	logger                    *slog.Logger
	http                      *retryablehttp.Client
	now                       func() time.Time
	// obs is nil without WithObserver: every hook is behind one nil check.
	obs Observer
	// shared: the transport is sharedTransport, not the merchant's.
	shared bool
	// banks caches ListBanks's code-to-name map for reconciliation.
	banks struct {
		mu    sync.Mutex
		names map[string]string
	}
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
// retry gets a fresh one, up to a 64th longer when the call's context can
// never end: see DefaultAttemptTimeout); zero means attempts are bounded
// only by the context.
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
	if hs, ok := signer.(*hmacSigner); ok && hs.pool.New == nil {
		return nil, errors.New("paykit: NewClient: HMACSigner has an empty secret")
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
	c.hdrIdentity, c.hdrUserAgent = headerValue(c.apiKey), headerValue(c.userAgent)
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
		base2 = sharedTransport()
		c.shared = true
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
		Backoff:      noBackoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		PrepareRetry: c.prepareRetry,
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

// sharedTransport is the transport of every Client made without
// WithHTTPClient, as net/http shares DefaultTransport: a Client discarded
// after key rotation, or one made per tenant, leaves no pool, sockets or
// goroutines of its own behind, and the per-host connection cap holds for
// the whole process.
var sharedTransport = sync.OnceValue(defaultTransport)

// CloseIdleConnections closes the idle connections of the SDK's shared
// default transport, which every Client made without WithHTTPClient uses
// (other such Clients simply dial again when they need to). A transport
// passed in through WithHTTPClient is the merchant's and is never closed
// here.
func (c *Client) CloseIdleConnections() {
	if c.shared {
		sharedTransport().CloseIdleConnections()
	}
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
	// wantID and wantExtID are the resource a read asks for: the answer
	// must carry them (see vet).
	wantID, wantExtID string
	// reconcile, with fetch and matches, reads the resource back when an
	// attempt's answer was lost or unusable and reports whether it is the
	// one the call meant to produce (see readBack); nil for reads and
	// money moves. It is a zero-size value, and fetch and matches are
	// stored untyped, so that request needs no type parameter and a call
	// builds no closure for a step it almost never runs.
	reconcile      reconciler
	fetch, matches any
	// settle names the read that settles an unknown outcome; zero means
	// the operation's check. It is formatted only when needed.
	settle settleHint
}

// callState follows one call across its attempts. It travels in the
// request's context because retryablehttp's hooks see nothing else: it is
// that context, the caller's with the state as its stateKey value, which
// saves a context.WithValue per call. Its fields are written by one attempt
// at a time, on the calling goroutine, except the trace flags and the body
// count.
type callState struct {
	// Context is the caller's context (after the Observer's CallStart).
	context.Context
	op       *operation
	body     []byte
	attempts int
	// rd and rc are the request body of the first attempt; bodies counts
	// the readers handed out (see nextBody).
	rd     bytes.Reader
	rc     io.ReadCloser
	bodies atomic.Int32
	// buf is the pooled buffer the latest response was read into, given
	// back once the resource is decoded (see releaseBody).
	buf *[]byte
	// trace reports the connection events of a non-read call's attempts.
	trace httptrace.ClientTrace
	// sig holds the X-Signature header's value, so signing an attempt
	// allocates no slice for it.
	sig [1]string
	// attempt1 is the first attempt's context under a shared deadline.
	attempt1 attemptCtx
	// last is the body of the latest attempt's response, read whole by
	// attemptTransport. It is kept here rather than recovered from
	// resp.Body, which net/http wraps (for a client Timeout, say).
	last []byte
	// lastStatus and lastCode are the latest answer's HTTP status and API
	// error code (0 and "" when it got none); lastErr is its transport
	// error; lastPreSend says that error positively happened before the
	// request was written.
	lastStatus  int
	lastCode    string
	lastErr     error
	lastPreSend bool
	// reached is set once an attempt of a non-read call may have reached
	// the server and been applied; reachedBefore is its value before the
	// latest attempt.
	reached, reachedBefore bool
	// reconciled: the call's result was read back, not answered.
	reconciled bool
	// wait is the backoff checkRetry chose before the next attempt.
	wait time.Duration
	// getConn and gotConn are the latest attempt's trace: net/http's
	// transport started looking for a connection, and obtained one.
	getConn, gotConn atomic.Bool
	// obs and call are the Client's Observer and this call's info, nil
	// without one.
	obs  Observer
	call *CallInfo
}

type stateKey struct{}

func stateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(stateKey{}).(*callState)
	return st
}

// Value answers the call state for stateKey and asks the caller's context
// for anything else.
func (st *callState) Value(key any) any {
	if key == (stateKey{}) {
		return st
	}
	return st.Context.Value(key)
}

// nextBody is the call's retryablehttp.ReaderFunc: a reader of the body
// from its start, once for retryablehttp to learn the length and once per
// attempt (and whenever net/http rewinds). The first two share the reader
// inside the call state; later ones are fresh, because net/http may still
// be reading the previous attempt's body after that attempt returned.
//
// Each is an io.NopCloser around a *bytes.Reader, already a ReadCloser so
// retryablehttp wraps nothing more, and a type net/http recognises as a
// body in memory: for any other type it flushes the headers in a write of
// their own before the body, which costs a POST a round of syscalls and
// wake-ups on both ends.
func (st *callState) nextBody() (io.Reader, error) {
	if st.bodies.Add(1) <= 2 {
		st.rd.Reset(st.body)
		if st.rc == nil {
			st.rc = io.NopCloser(&st.rd)
		}
		return st.rc, nil
	}
	return io.NopCloser(bytes.NewReader(st.body)), nil
}

// bodyPool holds the buffers responses are read into. A buffer goes back
// only after the resource it held has been decoded (every decoder copies
// what it keeps) and only if it is small, so one huge answer does not stay
// pinned in memory.
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody is the largest buffer bodyPool keeps.
const maxPooledBody = 256 << 10

// releaseBody gives the latest response's buffer back to bodyPool. It is
// called only on success, after decoding: on any other path the body may
// still be needed for an error, and is left to the garbage collector.
func (st *callState) releaseBody() {
	if p := st.buf; p != nil && cap(*p) <= maxPooledBody {
		st.buf, st.last = nil, nil
		*p = (*p)[:0]
		bodyPool.Put(p)
	}
}

// headerValue makes a header value slice that requests can share: its
// capacity is its length, so a Header.Add on one request reallocates
// rather than writing into the shared array.
func headerValue(v string) []string { return []string{v}[:1:1] }

// hdrJSON is the value of Accept, and of Content-Type for a JSON body.
var hdrJSON = headerValue("application/json")

func (st *callState) onGetConn(string)                { st.getConn.Store(true) }
func (st *callState) onGotConn(httptrace.GotConnInfo) { st.gotConn.Store(true) }

// record notes the outcome of one attempt, and whether it may have been
// applied: a 2xx was; a 5xx other than PAY_004 may have been; a business
// refusal (4xx) was not; a transport error may have been unless it is
// positively known to come before anything was sent.
func (st *callState) record(ctx context.Context, status int, data []byte, err error) {
	st.last, st.lastStatus, st.lastErr, st.lastCode, st.lastPreSend = data, status, err, "", false
	if status >= 400 {
		st.lastCode = apiCode(data)
	}
	if err != nil {
		st.lastPreSend = st.preSend(ctx, err)
	}
	st.reachedBefore = st.reached
	if st.op.class == classRead || st.reached {
		return
	}
	switch {
	case err != nil:
		st.reached = !st.lastPreSend
	case status >= 200 && status < 300:
		st.reached = true
	case status >= 500:
		st.reached = st.lastCode != "PAY_004"
	}
}

// preSend reports whether an attempt's error proves that nothing was sent.
// A connection obtained (httptrace's GotConn) proves nothing was proven:
// the request may have been written. Otherwise the error must be one that
// only happens before sending, or the call's context must have ended while
// net/http's transport (which announced GetConn) was still waiting for a
// connection. A transport that emits no trace proves nothing by silence.
func (st *callState) preSend(ctx context.Context, err error) bool {
	if st.gotConn.Load() {
		return false
	}
	if preSendError(err) {
		return true
	}
	return st.getConn.Load() && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
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
	if c.obs == nil {
		return c.run(ctx, st, &r)
	}
	st.obs, st.call = c.obs, c.callInfo(r.op)
	ctx = c.obs.CallStart(ctx, st.call)
	err := c.run(ctx, st, &r)
	c.obs.CallEnd(ctx, &CallEndInfo{Call: st.call, Attempts: st.attempts, Duration: time.Since(st.call.Start),
		Outcome: outcomeOf(st, err), StatusCode: st.lastStatus, Code: st.lastCode, Err: err})
	return err
}

// callInfo describes a call of op for the Observer.
func (c *Client) callInfo(op *operation) *CallInfo {
	port, _ := strconv.Atoi(c.base.Port())
	if port == 0 {
		port = 443
		if c.base.Scheme == "http" {
			port = 80
		}
	}
	return &CallInfo{Operation: op.name, Method: op.method, Route: op.route, Scheme: c.base.Scheme,
		Host: c.base.Hostname(), Port: port, BasePath: c.basePath, Start: time.Now()}
}

// outcomeOf classifies a call's end for the Observer.
func outcomeOf(st *callState, err error) Outcome {
	var apiErr *Error
	switch {
	case err == nil && st.reconciled:
		return OutcomeReconciled
	case err == nil:
		return OutcomeSuccess
	case errors.Is(err, ErrUnknownOutcome):
		return OutcomeUnknownOutcome
	case errors.As(err, &apiErr):
		return OutcomeBusinessError
	}
	return OutcomeTransportError
}

// run sends the call and concludes it.
func (c *Client) run(ctx context.Context, st *callState, r *request) error {
	st.Context = ctx
	ctx = st
	if r.op.class != classRead {
		// What may have reached the server matters only for calls that
		// change something.
		st.trace = httptrace.ClientTrace{GetConn: st.onGetConn, GotConn: st.onGotConn}
		ctx = httptrace.WithClientTrace(ctx, &st.trace)
	}
	// The URL is assembled from the base parsed once in NewClient, not
	// formatted and parsed again: the request starts with an empty URL
	// that is then overwritten.
	hreq, err := http.NewRequestWithContext(ctx, r.op.method, "", nil)
	if err != nil {
		return fmt.Errorf("paykit: %s: building request: %w", r.op.name, err)
	}
	u := hreq.URL
	*u = c.base
	u.Path = c.basePath + unescapePath(r.path)
	u.RawPath = c.baseRaw + r.path
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	hreq.Host = strings.TrimSuffix(u.Host, ":") // as http.NewRequest sets it
	req, err := retryablehttp.FromRequest(hreq)
	if err == nil && r.body != nil {
		err = req.SetBody(retryablehttp.ReaderFunc(st.nextBody))
		// SetBody learns no length from a NopCloser: without one net/http
		// would probe the body and send it chunked.
		req.ContentLength = int64(len(r.body))
	}
	if err != nil {
		return fmt.Errorf("paykit: %s: building request: %w", r.op.name, err)
	}
	h := req.Header
	h["X-Identity"] = c.hdrIdentity
	h["User-Agent"] = c.hdrUserAgent
	h["Accept"] = hdrJSON
	switch r.contentType {
	case "":
	case "application/json":
		h["Content-Type"] = hdrJSON
	default:
		h["Content-Type"] = []string{r.contentType}
	}
	if err := c.sign(req.Request); err != nil {
		return fmt.Errorf("paykit: %s: %w", r.op.name, err)
	}

	resp, err := c.http.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	switch {
	case err != nil:
		return c.failed(ctx, st, r, err)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return c.answered(ctx, st, r)
	}
	return c.refused(ctx, st, r, c.redact(decodeError(resp.StatusCode, st.last)))
}

// answered concludes a call whose last attempt got a 2xx. A 2xx whose body
// is not the resource asked for is no success the merchant can act on: for
// a read it is an error; for a create or state change it means the
// operation was applied, so the resource is read back; for a money move,
// which cannot be read back, the outcome is unknown.
func (c *Client) answered(ctx context.Context, st *callState, r *request) error {
	if r.out == nil {
		st.releaseBody()
		return nil
	}
	err := decodeBody(st.last, r.out)
	if err != nil {
		err = fmt.Errorf("decoding response (HTTP %d): %s", st.lastStatus, truncate(err.Error(), 200))
	} else {
		err = vet(r)
	}
	if err == nil {
		st.releaseBody()
		return nil
	}
	if r.reconcile != nil {
		ok, rerr := r.reconcile.reconcile(ctx, *r)
		switch {
		case ok:
			st.reconciled = true
			return nil
		case rerr != nil:
			err = fmt.Errorf("%w; reading it back failed: %w", err, rerr)
		default:
			err = fmt.Errorf("%w; the resource read back is not in the state this call asked for", err)
		}
	}
	return c.conclude(st, r, err)
}

// refused concludes a call whose last attempt got an error answer. A
// retried attempt answering the operation's "already done" code, after an
// earlier attempt may have been applied, is reconciled by reading the
// resource back.
func (c *Client) refused(ctx context.Context, st *callState, r *request, apiErr *Error) error {
	if r.reconcile != nil && st.reachedBefore && apiErr.Code != "" && apiErr.Code == r.op.doneCode {
		ok, rerr := r.reconcile.reconcile(ctx, *r)
		switch {
		case ok:
			st.reconciled = true
			c.logger.LogAttrs(ctx, slog.LevelDebug, "paykit: earlier attempt had succeeded",
				slog.String("op", r.op.name), slog.String("code", apiErr.Code))
			return nil
		case rerr != nil:
			return c.conclude(st, r, fmt.Errorf("%w; a retried attempt answered it, and reading the resource back failed: %w", apiErr, rerr))
		case r.op.class == classCreate:
			// The ext_id belongs to a resource that is not this call's:
			// no attempt of this call created anything.
			return apiErr
		}
	}
	return c.conclude(st, r, apiErr)
}

// failed concludes a call that ended without an answer to decode: a
// transport failure, a context that ended, or a signer that failed on a
// retry. An answer an earlier attempt got is kept beside the error, so a
// 5xx that may have created the payment is not replaced by what came after.
func (c *Client) failed(ctx context.Context, st *callState, r *request, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	if st.lastErr == nil && st.lastStatus != 0 {
		// The last attempt was answered; what failed came after it.
		err = fmt.Errorf("%w; attempt %d had answered: %w", err, st.attempts, c.redact(decodeError(st.lastStatus, st.last)))
	}
	return c.conclude(st, r, err)
}

// conclude returns a failed call's error. When the call changes something
// and any attempt may have been applied, the outcome is unknown: the error
// matches ErrUnknownOutcome, keeps its cause for errors.Is and errors.As,
// and names the read that settles it.
func (c *Client) conclude(st *callState, r *request, cause error) error {
	if r.op.class != classRead && st.reached {
		check := r.settle.advice()
		if check == "" {
			check = r.op.check
		}
		return &unknownOutcomeError{op: r.op.name, check: check, cause: cause}
	}
	if apiErr, ok := cause.(*Error); ok {
		return apiErr
	}
	return fmt.Errorf("paykit: %s: %w", r.op.name, cause)
}

// vet checks a decoded resource against what the call asked for: a read
// must answer the resource it named (a cache or proxy answering another
// one is an error, not a different order to act on), and a resource with
// its own success flag must say true.
func vet(r *request) error {
	if r.wantID != "" || r.wantExtID != "" {
		if res, ok := r.out.(interface{ identity() (string, string) }); ok {
			id, extID := res.identity()
			if r.wantID != "" && !strings.EqualFold(id, r.wantID) {
				return fmt.Errorf("the API answered the resource with id %q instead of %q", truncate(id, 64), r.wantID)
			}
			if r.wantExtID != "" && extID != r.wantExtID {
				return fmt.Errorf("the API answered the resource with ext_id %q instead of %q", truncate(extID, 80), truncate(r.wantExtID, 80))
			}
		}
	}
	if v, ok := r.out.(interface{ vet() error }); ok {
		return v.vet()
	}
	return nil
}

// redact removes the API key from an error answer, should a server echo it
// ("unknown API key pk_live_…"), before it reaches an error string or log.
func (c *Client) redact(e *Error) *Error {
	if strings.Contains(e.Message, c.apiKey) {
		e.Message = strings.ReplaceAll(e.Message, c.apiKey, "[api key]")
	}
	if bytes.Contains(e.Data, []byte(c.apiKey)) {
		e.Data = bytes.ReplaceAll(e.Data, []byte(c.apiKey), []byte("[api key]"))
	}
	return e
}

// createByExtID runs a create keyed by the merchant's ext_id. When a
// retried attempt is refused with PAY_003, or the answer cannot be decoded,
// an earlier or this attempt evidently got through: the resource is read
// back with fetch, and the call succeeds with it if matches says it is the
// one this call asked for.
func createByExtID[T any](ctx context.Context, c *Client, op *operation, path string, body any, settle settleHint,
	fetch func(context.Context) (*T, error), matches func(context.Context, *T) (bool, error)) (*T, error) {
	out := new(T)
	if err := c.doJSON(ctx, request{op: op, path: path, out: out, settle: settle,
		reconcile: readBack[T]{}, fetch: fetch, matches: matches}, body); err != nil {
		return nil, err
	}
	return out, nil
}

// reconciler is a reconcile step that takes what it needs from the
// request.
type reconciler interface {
	reconcile(ctx context.Context, r request) (bool, error)
}

// readBack is the reconcile step of every create and state change: fetch
// the resource (r.fetch, a func(context.Context) (*T, error)), and if
// r.matches (a func(context.Context, *T) (bool, error)) says it is the one
// the call meant to produce, store it in r.out, mark it reconciled and
// report success.
type readBack[T any] struct{}

func (readBack[T]) reconcile(ctx context.Context, r request) (bool, error) {
	got, err := r.fetch.(func(context.Context) (*T, error))(ctx)
	if err != nil {
		return false, err
	}
	if ok, err := r.matches.(func(context.Context, *T) (bool, error))(ctx, got); !ok || err != nil {
		return false, err
	}
	if m, ok := any(got).(interface{ markReconciled() }); ok {
		m.markReconciled()
	}
	*r.out.(*T) = *got
	return true, nil
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
	// Every amount field refuses an oversized number before parsing it
	// (wireDec); for a large body, checkNumbers also spares encoding/json
	// scanning megabytes of digits first. Below the threshold that scan
	// costs less than a pass of checkNumbers would on every call.
	if len(data) > prescanThreshold {
		if err := checkNumbers(data); err != nil {
			return err
		}
	}
	if u, ok := out.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, out)
}

// prescanThreshold is the body size from which decodeBody vets numbers
// before decoding: a page of 100 payouts is about 33 KiB.
const prescanThreshold = 64 << 10

// signError is a Signer's failure.
type signError struct{ err error }

func (e *signError) Error() string { return "signing request: " + e.err.Error() }
func (e *signError) Unwrap() error { return e.err }

// sign sets the signature header. It runs before the first attempt and,
// from prepareRetry, before every retry.
func (c *Client) sign(req *http.Request) error {
	st := stateFrom(req.Context())
	sig, err := c.signer.Sign(req, st.body)
	if err != nil {
		return &signError{err}
	}
	if strings.ContainsAny(sig, "\r\n") {
		return &signError{errors.New("signature contains a line break")}
	}
	st.sig[0] = sig
	req.Header["X-Signature"] = st.sig[:1:1]
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
// logs and observes them, and reads the response body whole (capped),
// which lets the retry policy look at an error code and frees the
// connection for reuse.
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
	// window is the deadline window that attempts of calls without any
	// cancellation share (see sharedDeadline).
	window atomic.Pointer[deadlineWindow]
}

// deadlineWindow is one deadline shared by every attempt that starts
// before until and whose call can be neither cancelled nor timed out by its
// caller (a context.Background() call, say). An attempt's own
// context.WithTimeout costs a timer and, with the context net/http hangs
// under it, eight allocations; sharing one per slice of time costs an
// attempt none of that.
type deadlineWindow struct {
	ctx    context.Context // a deadline of until + the attempt timeout
	cancel context.CancelFunc
	until  time.Time
}

// windowSlices is how many windows one attempt timeout spans: an attempt
// gets at most timeout/windowSlices (under 0.5 s of 30 s) more than its
// timeout, never less.
const windowSlices = 64

// sharedDeadline returns the shared deadline context for an attempt that
// starts at now: the current window's, or a new one. The window's context
// is never cancelled early, as attempts of other calls may hang under it;
// its timer releases it at its deadline, so a Client keeps at most
// windowSlices+1 of them (each with a set of the attempts in flight under
// it) alive at a time.
func (t *attemptTransport) sharedDeadline(now time.Time) context.Context {
	if w := t.window.Load(); w != nil && now.Before(w.until) {
		return w.ctx
	}
	until := now.Add(t.timeout / windowSlices)
	ctx, cancel := context.WithDeadline(context.Background(), until.Add(t.timeout))
	t.window.Store(&deadlineWindow{ctx: ctx, cancel: cancel, until: until})
	return ctx
}

// attemptCtx is the context of an attempt under a shared deadline: the
// call's values (the call state, the trace, the Observer's), the shared
// window's deadline and cancellation. Its Value falls through to the
// window's context, so the context net/http derives from it registers with
// the window's and needs no goroutine.
type attemptCtx struct {
	call, window context.Context
}

func (a *attemptCtx) Deadline() (time.Time, bool) { return a.window.Deadline() }
func (a *attemptCtx) Done() <-chan struct{}       { return a.window.Done() }
func (a *attemptCtx) Err() error                  { return a.window.Err() }

func (a *attemptCtx) Value(key any) any {
	if v := a.call.Value(key); v != nil {
		return v
	}
	return a.window.Value(key)
}

// errResponseTooLarge fails an attempt whose body exceeds MaxResponseBytes.
var errResponseTooLarge = fmt.Errorf("paykit: response body larger than %d bytes", MaxResponseBytes)

// errNoResponse fails an attempt whose RoundTripper returned neither a
// response nor an error, which net/http tolerates from no transport.
var errNoResponse = errors.New("paykit: the HTTP transport returned no response and no error")

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	call := req.Context() // every request comes from Client.do, with its callState
	st := stateFrom(call)
	st.attempts++
	st.getConn.Store(false)
	st.gotConn.Store(false)
	start := time.Now()
	var info *AttemptInfo
	if st.obs != nil {
		info = &AttemptInfo{Call: st.call, Attempt: st.attempts, Start: start}
		if actx := st.obs.AttemptStart(call, info); actx != call {
			call = actx
			req = req.WithContext(actx)
		}
	}
	if t.timeout > 0 {
		// A caller's deadline that comes first bounds the attempt already.
		// A call nothing can cancel shares a deadline window. Only the rest
		// need a context of the attempt's own.
		deadline, ok := call.Deadline()
		switch {
		case ok && deadline.Sub(start) <= t.timeout:
		case call.Done() == nil:
			actx := &st.attempt1
			if st.attempts > 1 {
				// net/http may still consult the first attempt's context
				// (a dial it let finish in the background, say).
				actx = new(attemptCtx)
			}
			*actx = attemptCtx{call: call, window: t.sharedDeadline(start)}
			req = req.WithContext(actx)
		default:
			ctx, cancel := context.WithTimeout(call, t.timeout)
			defer cancel() // the body is read before RoundTrip returns
			req = req.WithContext(ctx)
		}
	}
	resp, err := t.base.RoundTrip(req)
	var data []byte
	switch {
	case err != nil:
	case resp == nil:
		err = errNoResponse
	default:
		p := bodyPool.Get().(*[]byte)
		if data, err = bufferBody(resp, p); err != nil {
			resp = nil
		}
		st.buf = p
	}
	if err != nil && req.Context().Err() == context.DeadlineExceeded && call.Err() == nil {
		// The attempt's own timeout fired, not the caller's context.
		err = fmt.Errorf("attempt timed out after %s: %w", t.timeout, err)
	}
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	st.record(req.Context(), status, data, err)
	d := time.Since(start)
	if t.logger.Enabled(call, slog.LevelDebug) {
		t.logAttempt(req, st, status, err, d)
	}
	if info != nil {
		info.Duration, info.StatusCode, info.Code, info.Err = d, status, st.lastCode, err
		st.obs.AttemptEnd(call, info)
	}
	return resp, err
}

func (t *attemptTransport) logAttempt(req *http.Request, st *callState, status int, err error, d time.Duration) {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs,
		slog.String("op", st.op.name),
		slog.String("method", req.Method),
		slog.String("path", req.URL.EscapedPath()),
		slog.Int("attempt", st.attempts),
		slog.Duration("duration", d))
	if status != 0 {
		attrs = append(attrs, slog.Int("status", status))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", maskDigits(err.Error())))
	}
	t.logger.LogAttrs(req.Context(), slog.LevelDebug, "paykit: attempt", attrs...)
}

// bufferBody reads a response body whole, up to MaxResponseBytes, into the
// buffer *p (kept there, grown if need be, for the pool), closes it, and
// puts an empty body in its place: the SDK reads the bytes from the call
// state, never from resp.Body again. A nil body (which a custom
// RoundTripper may return) is an empty one.
func bufferBody(resp *http.Response, p *[]byte) ([]byte, error) {
	if resp.Body == nil {
		resp.Body = http.NoBody
		return nil, nil
	}
	defer resp.Body.Close()
	buf := (*p)[:0]
	// One byte past a known length, so the read that finds EOF needs no
	// room of its own.
	if cl := resp.ContentLength; cl > 0 && cl <= MaxResponseBytes && int(cl) >= cap(buf) {
		buf = make([]byte, 0, cl+1)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // let append pick the growth
		}
		dst := buf[len(buf):cap(buf)]
		if room := MaxResponseBytes + 1 - len(buf); len(dst) > room {
			dst = dst[:room]
		}
		n, err := resp.Body.Read(dst)
		buf = buf[:len(buf)+n]
		if len(buf) > MaxResponseBytes {
			return nil, errResponseTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	*p = buf
	resp.Body = http.NoBody
	return buf, nil
}
