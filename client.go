package paykit

import (
	"cmp"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK's version, sent in the User-Agent header. Between
// releases it is the next version marked as a development build
// ("0.3.0-dev"); in a release it is that release's version, whose tag
// exists and whose CHANGELOG.md section is the newest (a test checks both;
// RELEASING.md moves it).
const Version = "0.3.0-dev"

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
	// DefaultMaxIdleConnsPerHost is the idle-connection pool, and the
	// connection cap, of the default transport per host: net/http's 2 would
	// make a busy backend open and close connections all the time.
	DefaultMaxIdleConnsPerHost = 64
	// MaxResponseBytes caps a response body. A larger answer keeps its
	// status but cannot be read: a 2xx over the cap is read back on a
	// create or state change, an unknown outcome on a money move, an error
	// on a read.
	MaxResponseBytes = 16 << 20
)

// Client calls the merchant API. It is safe for concurrent use by many
// goroutines and reuses connections; make one per API key and share it.
type Client struct {
	base        url.URL
	basePath    string // base path without trailing slash, unescaped
	baseRawPath string // the same, escaped
	apiKey      string
	signer      Signer
	userAgent   string
	logger      *slog.Logger
	http        *retryablehttp.Client
	now         func() time.Time // tests set it
	obs         Observer         // nil without WithObserver
	shared      bool             // the transport is sharedTransport
	banks       bankCache
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
// jar, on a copy of hc that never follows redirects (Go would forward
// X-Identity and X-Signature to the redirect's host). hc.Timeout bounds
// each attempt, body included (see DefaultAttemptTimeout); zero leaves
// attempts bounded only by the context.
//
// A write (every method but GET) reaches hc's transport with a body it
// can read once and no GetBody, so neither net/http's HTTP/1.1 and HTTP/2
// transports nor a RoundTripper that resends through GetBody can put it on
// the wire twice within one attempt. A RoundTripper that keeps the bytes
// it read and sends them again cannot be stopped; when it sends through
// net/http with the request's context, the SDK sees each write (httptrace)
// and treats the attempt as possibly applied, so a money move it sent
// twice ends in ErrUnknownOutcome. A transport that is not net/http's, or
// that drops the request's context, is seen only by the answer it returns:
// do not give the SDK one that resends.
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
// status, attempt number, duration, error) and one per retry, with its
// reason, to l; the SDK is silent without it. Nothing logged carries a
// body, the API key, the secret, a signature, a card or a phone number.
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
	if strings.ContainsFunc(apiKey, isControl) {
		// net/http refuses such a header value on every attempt, after
		// the call has begun: refused here, it is a configuration error,
		// not a call whose outcome is unknown.
		return nil, errors.New("paykit: NewClient: API key contains a control character")
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
	}
	if len(cfg.observers) > 0 {
		c.obs = observers{os: cfg.observers, logger: cmp.Or(cfg.logger, slog.Default()), once: new(sync.Once)}
	}
	c.basePath = strings.TrimRight(base.Path, "/")
	c.baseRawPath = strings.TrimRight(base.EscapedPath(), "/")
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
		base2 = sharedTransport()
		c.shared = true
	}
	// The timeout moves into attemptTransport, to bound each attempt.
	inner.Transport = &attemptTransport{base: base2, logger: c.logger, apiKey: apiKey, timeout: inner.Timeout}
	inner.Timeout = 0
	inner.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	// go-retryablehttp runs the attempts with the SDK's retry check and
	// re-signing hooks. Its logger stays nil: the default prints every URL.
	c.http = &retryablehttp.Client{
		HTTPClient:   &inner,
		RetryWaitMin: cfg.waitMin,
		RetryWaitMax: cfg.waitMax,
		RetryMax:     cfg.maxRetries,
		CheckRetry:   c.checkRetry,
		Backoff:      backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		PrepareRetry: c.prepareRetry,
	}
	return c, nil
}

// isControl: an ASCII control character (tab included) or DEL.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

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

// sharedTransport serves every Client made without WithHTTPClient, as
// net/http shares DefaultTransport: a discarded Client leaves no pool or
// goroutines behind, and the per-host cap holds for the whole process.
var sharedTransport = sync.OnceValue(defaultTransport)

// CloseIdleConnections closes the idle connections of the SDK's shared
// default transport, which every Client made without WithHTTPClient uses
// (the others dial again when they need to). A transport passed in
// through WithHTTPClient is never closed here.
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

// Do makes a signed call to any path of the API below /v1/: the escape
// hatch, in the manner of go-github's NewRequest/Do and stripe-go's
// RawRequest, for a field or an endpoint the SDK does not model yet.
//
// path is the escaped path and optional query ("/v1/payments/…",
// "/v1/payouts?status=completed"). body nil sends no body; anything else is
// sent as JSON with encoding/json (a json.RawMessage as it is; note that
// decimal.Decimal marshals as a JSON string unless you pass its digits as a
// json.Number). out nil discards the answer; otherwise the answer is
// decoded into it with encoding/json, so a *json.RawMessage, a map or a
// struct of your own all work.
//
// Errors map exactly as for the typed methods (*Error with its sentinels,
// ErrUnauthorized, …). A GET is a read, retried like GetPayment. Every
// other method is treated as a money move, since the SDK cannot know what
// it does: it is re-sent only after a failure known to come before
// sending, and when its answer is lost, or a 2xx cannot be decoded into
// out, the error matches ErrUnknownOutcome. An out that is not a non-nil
// pointer, or points to a type encoding/json never decodes into (a func,
// a channel, a complex number, or a slice, array, map or pointer of one),
// is refused before sending.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	u, err := url.ParseRequestURI(path)
	switch {
	case method == "" || strings.ToUpper(method) != method || strings.ContainsFunc(method, func(r rune) bool { return r < 'A' || r > 'Z' }):
		return invalid("method", "must be an upper-case HTTP method such as GET or POST")
	case err != nil || !strings.HasPrefix(path, "/v1/") || u.Host != "" || u.Fragment != "" ||
		strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") || strings.ContainsAny(path, " \r\n\t"):
		return invalid("path", "must be an escaped path below /v1/, such as /v1/payments/{id}")
	case method == http.MethodGet && body != nil:
		return invalid("body", "a GET has no body")
	case out != nil && !decodable(out):
		return invalid("out", "must be nil or a non-nil pointer to a value encoding/json can decode the answer into")
	}
	var q url.Values
	if u.RawQuery != "" {
		if q, err = url.ParseQuery(u.RawQuery); err != nil {
			return invalid("path", "has a malformed query")
		}
	}
	k := &call{op: doOperation(method, u.EscapedPath()), path: u.EscapedPath(), query: q, in: body}
	if out == nil {
		_, err = send[discard](ctx, c, k, nil)
		return err
	}
	_, err = sendInto(ctx, c, k, &rawOut{out}, nil)
	return err
}

// decodable reports whether encoding/json can decode into out: a non-nil
// pointer to a type it decodes. Anything else fails only after the
// request has been sent.
func decodable(out any) bool {
	v := reflect.ValueOf(out)
	return v.Kind() == reflect.Pointer && !v.IsNil() && decodableType(v.Type().Elem(), 0)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodableType reports whether encoding/json can decode an answer into a
// t: not a func, a channel, a complex number or an unsafe.Pointer, nor a
// pointer, slice, array or map of one (nor a map whose keys it cannot
// take), unless t decodes itself. A struct's fields are not looked into:
// one the answer does not name is never decoded.
func decodableType(t reflect.Type, depth int) bool {
	if depth > 8 || reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return true // deeper than any answer type: let encoding/json judge
	}
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return false
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return decodableType(t.Elem(), depth+1)
	case reflect.Map:
		switch k := t.Key(); {
		case reflect.PointerTo(k).Implements(textUnmarshaler),
			k.Kind() == reflect.String, k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			return false
		}
		return decodableType(t.Elem(), depth+1)
	}
	return true
}

// rawOut is Do's answer: decoded into the caller's value, with no facts
// to check.
type rawOut struct{ v any }

func (r *rawOut) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, r.v) }

// discard is an answer nobody reads (CheckCredentials, Do with a nil out):
// any 2xx body will do, even an empty one.
type discard struct{}

func (*discard) emptyOK() bool { return true }
