package paykit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/paykit-dev/paykit-go/internal/mask"
)

// The adapter between the call path (call.go) and go-retryablehttp: what
// an attempt is, how a request is built and signed, the hooks the retry
// loop asks (checkRetry, prepareRetry), and the RoundTripper that records,
// bounds and reads each attempt whole into pooled buffers. The decisions
// themselves are policy.go's; the algorithm is call.go's.

// attempt is what one HTTP attempt of a call came to.
type attempt struct {
	n          int       // counts from 1
	start, end time.Time // end only when an Observer or the debug log reports it
	status     int       // 0 when no response arrived
	header     http.Header
	code       string // the API error code of a non-2xx answer, sanitized
	body       []byte
	buf        *[]byte // the pooled buffer body lives in (see bodyPool)
	tooLarge   bool    // the body was over MaxResponseBytes; the status is kept
	err        error
	preSend    bool // err positively happened before anything was sent
	// resent: a layer below the SDK wrote the request more than once
	// within this attempt (see oneSend); any of them may have been applied.
	resent  bool
	secrets secrets // what the attempt sent that its answer must not bring into an error
}

// newRequest builds and signs the call's first request. The URL is the base
// parsed once in NewClient, not parsed again per call (BENCHMARKS.md,
// third round).
func (c *Client) newRequest(ctx context.Context, k *call) (*retryablehttp.Request, error) {
	ctx = context.WithValue(ctx, callKey{}, k)
	k.log = k.first[:0]
	if k.op.class != classRead {
		// What may have reached the server matters only for calls that
		// change something. The hooks are set before WithClientTrace,
		// which composes a caller's own ClientTrace into them: assigning
		// them afterwards would silence the caller's hooks.
		k.trace.hooks = httptrace.ClientTrace{GetConn: k.trace.onGetConn, GotConn: k.trace.onGotConn,
			WroteHeaders: k.trace.onWroteHeaders}
		ctx = httptrace.WithClientTrace(ctx, &k.trace.hooks)
	}
	hreq, err := http.NewRequestWithContext(ctx, k.op.method, "", nil)
	if err != nil {
		return nil, fmt.Errorf("paykit: %s: building request: %w", k.op.name, err)
	}
	u := hreq.URL
	*u = c.base
	u.Path, u.RawPath = c.basePath+unescapePath(k.path), c.baseRawPath+k.path
	if len(k.query) > 0 {
		u.RawQuery = k.query.Encode()
	}
	hreq.Host = u.Host
	// The body is not given to retryablehttp, whose SetBody sets GetBody,
	// which lets net/http send a write again by itself: attemptTransport
	// gives each attempt a body of its own (oneSend). Reads have none.
	req, err := retryablehttp.FromRequest(hreq)
	if err != nil {
		return nil, fmt.Errorf("paykit: %s: building request: %w", k.op.name, err)
	}
	h := req.Header
	h["X-Identity"] = []string{c.apiKey}
	h["User-Agent"] = []string{c.userAgent}
	h["Accept"] = []string{contentJSON}
	if k.contentType != "" {
		h["Content-Type"] = []string{k.contentType}
	}
	sig, err := c.sign(req.Request, k.body)
	if err != nil {
		return nil, fmt.Errorf("paykit: %s: %w", k.op.name, err)
	}
	h["X-Signature"] = []string{sig}
	return req, nil
}

// signError is a Signer's failure.
type signError struct{ err error }

func (e *signError) Error() string { return "signing request: " + e.err.Error() }
func (e *signError) Unwrap() error { return e.err }

// sign signs an attempt: the first, and every retry (prepareRetry), so a
// signer that covers a timestamp or nonce works.
func (c *Client) sign(req *http.Request, body []byte) (string, error) {
	sig, err := c.signer.Sign(req, body)
	if err != nil {
		return "", &signError{err}
	}
	if strings.ContainsAny(sig, "\r\n") {
		return "", &signError{errors.New("signature contains a line break")}
	}
	return sig, nil
}

// checkRetry is retryablehttp's CheckRetry: the table's verdict on the
// attempt that just ended, its reason logged. A wait that would outlast the
// context's deadline is not started: the answer in hand beats a bare
// "context deadline exceeded" after a futile sleep.
func (c *Client) checkRetry(ctx context.Context, _ *http.Response, _ error) (bool, error) {
	k := callOf(ctx)
	a := k.last()
	if a == nil {
		return false, nil
	}
	ok, why := retryable(k.op, a)
	if !ok {
		return false, nil
	}
	ra, _ := retryAfter(a.header, c.now())
	switch {
	case a.n > c.http.RetryMax:
		ok, why = false, "no retries left"
	case ra > maxRetryAfter:
		ok, why = false, "Retry-After asks for more than a minute"
	case ctx.Err() != nil:
		return false, ctx.Err()
	default:
		if dl, has := ctx.Deadline(); has && dl.Sub(c.now()) < max(backoffCeil(c.http.RetryWaitMin, c.http.RetryWaitMax, a.n), ra) {
			ok, why = false, "the wait would outlast the context's deadline"
		}
	}
	if ok {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "paykit: retrying", slog.String("op", k.op.name),
			slog.Int("attempt", a.n), slog.String("reason", why))
	}
	return ok, nil
}

// prepareRetry is retryablehttp's PrepareRetry, run after the backoff wait.
// It signs on a header map of its own: the previous attempt's request may
// still be in net/http's hands.
func (c *Client) prepareRetry(req *http.Request) error {
	k := callOf(req.Context())
	if k.obs != nil {
		a := k.last()
		k.obs.RetryWait(req.Context(), &RetryInfo{Call: k.info, Attempt: a.n, Wait: time.Since(a.end)})
	}
	sig, err := c.sign(req, k.body)
	if err != nil {
		return err
	}
	req.Header = req.Header.Clone()
	req.Header["X-Signature"] = []string{sig}
	return nil
}

// attemptTransport wraps the merchant's or the default transport: each
// attempt passes through it once, to be recorded, logged, observed, bounded
// by the attempt timeout and read whole (capped), which frees the
// connection. It has no CloseIdleConnections: retryablehttp calls that
// after every failed call, which would close every goroutine's warm
// connections.
type attemptTransport struct {
	base    http.RoundTripper
	logger  *slog.Logger
	apiKey  string        // scrubbed from the error codes attempts report
	timeout time.Duration // the http.Client's Timeout, per attempt
	window  atomic.Pointer[deadlineWindow]
}

// deadlineWindow is one deadline shared by the attempts that start before
// until and whose call nothing can cancel (context.Background()). A
// context.WithTimeout of their own costs a timer and allocations on every
// attempt (what the windows save: BENCHMARKS.md, third round).
type deadlineWindow struct {
	ctx    context.Context // until + the attempt timeout; never cancelled early
	cancel context.CancelFunc
	until  time.Time
}

// windowSlices: an attempt gets at most a 64th of the timeout more than
// its timeout, never less.
const windowSlices = 64

func (t *attemptTransport) sharedDeadline(now time.Time) context.Context {
	if w := t.window.Load(); w != nil && now.Before(w.until) {
		return w.ctx
	}
	until := now.Add(t.timeout / windowSlices)
	ctx, cancel := context.WithDeadline(context.Background(), until.Add(t.timeout))
	t.window.Store(&deadlineWindow{ctx: ctx, cancel: cancel, until: until})
	return ctx
}

// attemptCtx is an attempt's context under a shared window: the call's
// values, the window's deadline. Value falls through to the window, so
// the context net/http derives registers with it and needs no goroutine.
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

// errNoResponse: a RoundTripper returned neither a response nor an error.
var errNoResponse = errors.New("paykit: the HTTP transport returned no response and no error")

// connTrace learns whether an attempt of a write obtained a connection
// (until it has, nothing can have been sent) and how many times its
// request was written: more than once is a resend below the SDK.
type connTrace struct {
	hooks            httptrace.ClientTrace
	getConn, gotConn atomic.Bool
	writes           atomic.Int32
}

func (t *connTrace) onGetConn(string)                { t.getConn.Store(true) }
func (t *connTrace) onGotConn(httptrace.GotConnInfo) { t.gotConn.Store(true) }
func (t *connTrace) onWroteHeaders()                 { t.writes.Add(1) }

// oneSend gives req, an attempt's own copy of a write's request, a body
// that can be sent once: net/http's HTTP/1.1 and HTTP/2 transports, and
// any layer that resends through GetBody, can then not put the write on
// the wire a second time within the attempt.
//
// What each layer does with it (Go's net/http, transport.go and
// h2_bundle.go):
//   - GetBody is nil, so neither transport can rewind the body: HTTP/1.1
//     resends a request with a body only through GetBody, HTTP/2 after a
//     stream reset (PROTOCOL_ERROR, REFUSED_STREAM) or a GOAWAY only
//     through GetBody. The one resend HTTP/2 keeps is on a connection it
//     found unusable before opening the stream, when nothing was sent.
//   - The body is never nil, even for a write without one (CancelPayment,
//     CancelDispute, Do without a body): HTTP/2 resends a request with a
//     nil body whatever GetBody says. Over HTTP/1.1 such a write carries
//     "Transfer-Encoding: chunked" and an empty body instead of
//     "Content-Length: 0"; over HTTP/2 an empty DATA frame ends it.
//   - The body is a reader net/http knows to be in memory, so HTTP/1.1
//     still writes headers and body in one write.
//
// A layer that keeps the bytes it read and sends them again (a retrying
// RoundTripper passed in with WithHTTPClient, a proxy on the far side of
// a connection) cannot be stopped from below. Through net/http it still
// reports each write to the request's httptrace hooks, and a second one
// marks the attempt resent, so the call treats it as possibly applied
// (more than once, for a money move: ErrUnknownOutcome). A transport that
// does not use net/http's client, or drops the request's context, is not
// seen: only the answer it returns is.
func oneSend(req *http.Request, body []byte) *http.Request {
	req.Body, req.GetBody, req.ContentLength = io.NopCloser(bytes.NewReader(body)), nil, int64(len(body))
	return req
}

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	k := callOf(req.Context())
	start := time.Now()
	a := attempt{n: len(k.log) + 1, start: start}
	a.secrets.apiKey = t.apiKey
	if sig := req.Header["X-Signature"]; len(sig) == 1 {
		a.secrets.signature = sig[0]
	}
	ctx := req.Context()
	var info *AttemptInfo
	if k.obs != nil {
		info = &AttemptInfo{Call: k.info, Attempt: a.n, Start: start}
		ctx = k.obs.AttemptStart(ctx, info)
	}
	outer := ctx // the call's, as the Observer left it
	trace := &k.trace
	trace.getConn.Store(false)
	trace.gotConn.Store(false)
	trace.writes.Store(0)
	if t.timeout > 0 {
		// A caller's earlier deadline bounds the attempt already; a call
		// nothing can cancel shares a deadline window.
		dl, ok := ctx.Deadline()
		switch {
		case ok && dl.Sub(start) <= t.timeout:
		case ctx.Done() == nil:
			ctx = &attemptCtx{call: ctx, window: t.sharedDeadline(start)}
		default:
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t.timeout)
			defer cancel() // the body is read before RoundTrip returns
		}
	}
	switch {
	case k.op.class != classRead:
		req = oneSend(req.WithContext(ctx), k.body)
	case ctx != req.Context():
		req = req.WithContext(ctx)
	}

	resp, err := t.base.RoundTrip(req)
	a.resent = trace.writes.Load() > 1
	switch {
	case err != nil:
	case resp == nil:
		err = errNoResponse
	default:
		a.status, a.header = resp.StatusCode, resp.Header
		a.buf = bodyPool.Get().(*[]byte)
		a.body, a.tooLarge, err = readBody(resp, a.buf)
		if err != nil {
			a.status, resp = 0, nil
		}
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && outer.Err() == nil { // the attempt's own timeout
			err = fmt.Errorf("attempt timed out after %s: %w", t.timeout, err)
		}
		a.err = err
		// Nothing was sent only after an error known to come before
		// sending, or a context that ended while waiting for a connection.
		a.preSend = k.op.class != classRead && !trace.gotConn.Load() && (preSendError(err) ||
			trace.getConn.Load() && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)))
	}
	if a.status >= 400 {
		if a.code = apiCode(a.body); t.apiKey != "" && strings.Contains(a.code, t.apiKey) {
			a.code = invalidCode
		}
	}
	// The end is read only for those who report durations: a clock read
	// is a system call on some virtual machines.
	logging := t.logger.Enabled(ctx, slog.LevelDebug)
	if logging || info != nil {
		a.end = time.Now()
	}
	k.log = append(k.log, a)
	if logging {
		t.logAttempt(ctx, req, k, &a)
	}
	if info != nil {
		info.Duration, info.StatusCode, info.Code, info.Err = a.end.Sub(start), a.status, a.code, err
		k.obs.AttemptEnd(ctx, info)
	}
	return resp, err
}

func (t *attemptTransport) logAttempt(ctx context.Context, req *http.Request, k *call, a *attempt) {
	attrs := []slog.Attr{slog.String("op", k.op.name), slog.String("method", req.Method),
		slog.String("path", mask.Path(req.URL.EscapedPath())), slog.Int("attempt", a.n), slog.Duration("duration", a.end.Sub(a.start))}
	if a.status != 0 {
		attrs = append(attrs, slog.Int("status", a.status))
	}
	if a.err != nil {
		attrs = append(attrs, slog.String("error", mask.Text(a.err.Error())))
	}
	t.logger.LogAttrs(ctx, slog.LevelDebug, "paykit: attempt", attrs...)
}

// bodyPool holds the buffers answers are read into, given back once
// decoded and only if small, so a page of payouts does not cost a fresh
// buffer per call (BENCHMARKS.md, third round).
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBody = 256 << 10

func (a *attempt) release() {
	if p := a.buf; p != nil && cap(*p) <= maxPooledBody {
		a.buf, a.body = nil, nil
		*p = (*p)[:0]
		bodyPool.Put(p)
	}
}

// readBody reads a response body whole, up to MaxResponseBytes, into *p,
// closes it and leaves an empty one in its place. A larger body is not
// kept, but its status is: a 2xx over the cap is an unreadable answer, not
// a lost connection. A nil body is an empty one.
func readBody(resp *http.Response, p *[]byte) (data []byte, tooLarge bool, err error) {
	if resp.Body == nil {
		resp.Body = http.NoBody
		return nil, false, nil
	}
	defer resp.Body.Close()
	data = (*p)[:0]
	if cl := resp.ContentLength; cl > 0 && cl <= MaxResponseBytes && int(cl) >= cap(data) {
		data = make([]byte, 0, cl+1) // the read that finds EOF needs no room of its own
	}
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // let append pick the growth
		}
		n, err := resp.Body.Read(data[len(data):min(cap(data), MaxResponseBytes+1)])
		data = data[:len(data)+n]
		if len(data) > MaxResponseBytes {
			resp.Body = http.NoBody
			return nil, true, nil
		}
		if err == io.EOF {
			*p = data
			resp.Body = http.NoBody
			return data, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
}

// unescapePath decodes an escaped path for url.URL.Path; the escaped form
// goes in RawPath, so an ext_id such as "a/b?c#d" travels as a%2Fb%3Fc%23d.
func unescapePath(p string) string {
	if u, err := url.PathUnescape(p); err == nil { // no allocation without a '%'

		return u
	}
	return p
}
