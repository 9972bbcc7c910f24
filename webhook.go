package paykit

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unsafe"

	"github.com/paykit-dev/paykit-go/internal/mask"
)

// WebhookTokenHeader is the request header in which the service returns a
// payment's NotificationToken with every notification about that payment.
const WebhookTokenHeader = "X-Notification-Token"

// DefaultWebhookMaxBodyBytes is the body limit of a WebhookHandler whose
// MaxBodyBytes is zero; a payment or payout is well under 4 KiB.
const DefaultWebhookMaxBodyBytes = 1 << 20

// WebhookHandler receives the service's webhook notifications about payments
// and payouts and hands each one, decoded, to a callback. It is an
// http.Handler to mount in any Go HTTP server:
//
//	h := &paykit.WebhookHandler{
//		Token:     notificationToken, // the NotificationToken the payments were created with
//		OnPayment: func(ctx context.Context, p *paykit.Payment) error { … },
//		OnPayout:  func(ctx context.Context, p *paykit.Payout) error { … },
//		Client:    c, // optional, recommended: act on the API's copy, not the body's
//	}
//	mux.Handle("/paykit/webhook", h)
//
// Like http.Server it is configured by setting its exported fields before
// the first request, and must not be copied or changed afterwards. It is
// safe for any number of concurrent deliveries.
//
// # What it answers
//
// The sender learns the outcome from the status code, and the spec does not
// say which ones it retries, so the handler answers 2xx only for what it has
// handled or deliberately ignores, and 5xx for what is worth sending again:
//
//   - 405 (with "Allow: POST") for any method but POST.
//   - 413 for a body over MaxBodyBytes, gzipped or inflated.
//   - 415 for a Content-Encoding other than gzip or identity, or more than
//     one coding: it tells a sender's operator what to change.
//   - 400 for a body that cannot be read or decoded, is not a JSON object
//     with a string "id", or whose kind cannot be told; with Client set,
//     also for an id that is not a UUID.
//   - 401 for a notification that is not verified (see below).
//   - 500, so that the sender retries, when the callback fails or panics,
//     when TokenFor fails, or when reading the resource back fails or
//     returns another resource.
//   - 200 with an empty body otherwise, also for a kind without a callback:
//     nothing acts on it, so it is neither verified nor read back.
//
// A gzipped body is inflated only up to MaxBodyBytes: a bomb is refused
// with 413 as soon as the limit is passed.
//
// # Verification
//
// The service authenticates a payment notification only by the
// NotificationToken given at CreatePayment, returned in the
// X-Notification-Token header. The handler accepts one whose header is
// present exactly once and matches Token, any of Tokens (for rotation), or
// what TokenFor answers for the notified payment (asked only when the
// others do not match; its error answers 500, so that the sender tries
// again). An empty expected token matches nothing, so a missing or empty
// header is always refused. Every configured token is compared, in
// constant time over hashes, so neither contents nor lengths show in the
// timing. Anything else is refused with 401, before the callback runs or
// the API is read.
//
// A merchant who stores a token per order sets TokenFor:
//
//	h.TokenFor = func(ctx context.Context, paymentID, extID string) (string, error) {
//		var tok string
//		err := db.QueryRowContext(ctx,
//			`SELECT notification_token FROM orders WHERE order_id = $1`, extID).Scan(&tok)
//		if errors.Is(err, sql.ErrNoRows) {
//			return "", nil // not ours: refused with 401 unless Token matches
//		}
//		return tok, err // an error answers 500: the sender retries
//	}
//
// With none of Token, Tokens and TokenFor set, every payment notification
// is refused (fail closed), and one error log line says so.
//
// Payout notifications carry no token, so nothing in the request proves
// where it came from. They are refused with 401 unless Client is set (the
// handler then acts on the payout read from the API by the notified id) or
// AllowUnverifiedPayouts is true. An X-Notification-Token on a payout
// proves nothing: it travels with every payment notification, and
// accepting it would let whoever saw one forge "payout failed", on which a
// merchant may pay a second time.
//
// # Telling a payment from a payout
//
// The spec does not show the payload: the body must be a JSON object with
// a string "id" (the resource as GET returns it is expected). Its kind is
// the first of these rules that applies:
//
//  1. "requisites" is an object: payment; a string: payout (the one field
//     both resources have, with a different type in each).
//  2. "holder_name" is present: payout.
//  3. "payment_url" or "valid_until" is present: payment.
//  4. "status" is upper-case (payment statuses are, payout statuses are
//     not), or is "dispute" or "cancelled_appeal" in any case: payment.
//  5. The request carries an X-Notification-Token header: payment, the only
//     kind the service sends a token with.
//
// A body none of them applies to is refused with 400. Keys match as
// encoding/json matches them when it decodes the body afterwards.
//
// # What the callback receives
//
// With Client set (recommended), the callback receives the resource as
// GetPayment or GetPayout returns it, read by the notified id: a forged
// body cannot change the amount or status the merchant acts on; a copy
// with another id (a faulty cache) is refused with 500. The copy may be
// newer than the event notified. Without Client, the callback receives
// the body decoded by the same lenient rules as API responses.
//
// # Repeated deliveries
//
// A notification can arrive more than once (the sender retries after a
// timeout or a 5xx, and its answer may have been lost), and notifications
// of one resource can arrive out of order. Callbacks must be idempotent:
// record each (id, status) pair once, in the same transaction as the work
// it triggers, for example with INSERT … ON CONFLICT DO NOTHING on a table
// keyed by both, and return nil at once when no row was inserted.
//
// # Logging
//
// Nothing the handler logs contains a token or the body; an id is logged
// only once the notification is verified. See Logger, and Observe for a
// per-delivery hook.
type WebhookHandler struct {
	// Token is the NotificationToken the merchant's payments are created
	// with, when one token serves them all.
	Token string

	// Tokens are further accepted tokens: while rotating, list the old one
	// here and set Token to the new one. Empty strings match nothing.
	Tokens []string

	// TokenFor, when set, returns the token one payment was created with,
	// for a token per order. It gets the id and ext_id ("" if none) as the
	// body states them, only when neither Token nor Tokens matched, before
	// anything else is done: untrusted input, fit only to look a token up
	// by. "" means the payment has no token of its own. An error or a
	// panic (recovered and logged) answers 500, so the sender retries.
	TokenFor func(ctx context.Context, paymentID, extID string) (string, error)

	// OnPayment is called with each verified payment notification; nil
	// acknowledges and drops them. An error or a panic (recovered, logged)
	// answers 500 so that the sender retries. The context is the request's.
	OnPayment func(ctx context.Context, p *Payment) error

	// OnPayout is OnPayment's counterpart for payouts.
	OnPayout func(ctx context.Context, p *Payout) error

	// Client, when set, reads every notified payment or payout back from
	// the API, and the callback receives the API's copy instead of the
	// body's. It also makes payout notifications acceptable.
	Client *Client

	// AllowUnverifiedPayouts accepts payout notifications without Client,
	// passing OnPayout the body's payout, which anybody who can reach the
	// handler could have written: only for a notification used as a hint.
	AllowUnverifiedPayouts bool

	// MaxBodyBytes caps the body, a gzipped one both before and after
	// decompression (413 beyond). Zero or negative means
	// DefaultWebhookMaxBodyBytes.
	MaxBodyBytes int64

	// Logger receives a debug line per handled or ignored notification,
	// warnings for refused ones (each saying what to check), errors for
	// failed ones. Nil logs to slog.Default() only what must not pass
	// unseen: the first refusal of each cause (a payment notified without
	// a token because it was created without NotificationToken, a wrong
	// token, a payout without Client, a body too large, …), once per
	// handler and cause; that with no Token, Tokens or TokenFor every
	// payment notification is refused (once); and a recovered panic of a
	// callback or of TokenFor. No line carries a token.
	Logger *slog.Logger

	// Observe, when set, is called once per request, just before the
	// answer is written, with how the delivery was answered, for logs and
	// metrics; an adapter that sets it should call the one it replaces. A
	// callback (or TokenFor) that panics with http.ErrAbortHandler is
	// reported as WebhookCallbackError with StatusCode 0. Nil costs nothing.
	Observe func(ctx context.Context, d WebhookDelivery)

	// The handler holds no state of its own (what it has logged once is
	// in alerts): its value methods, Format and LogValue, copy it, and a
	// copy of a field that ServeHTTP changes would race with it.
}

// webhookKind is what a notification is about.
type webhookKind uint8

const (
	kindUnknown webhookKind = iota
	kindPayment
	kindPayout
)

// String names the kind as WebhookDelivery.Kind does.
func (k webhookKind) String() string {
	switch k {
	case kindPayment:
		return "payment"
	case kindPayout:
		return "payout"
	}
	return ""
}

// verdict is the answer to one delivery and how it is classified.
type verdict struct {
	code    int
	outcome WebhookOutcome
}

var (
	refusedBody  = verdict{http.StatusBadRequest, WebhookRefusedBody}
	refusedToken = verdict{http.StatusUnauthorized, WebhookRefusedToken}
	fetchFailed  = verdict{http.StatusInternalServerError, WebhookFetchFailed}
	accepted     = verdict{http.StatusOK, WebhookAccepted}
	ignored      = verdict{http.StatusOK, WebhookIgnored}
)

// ServeHTTP implements http.Handler.
func (h *WebhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var kind webhookKind
	if h.Observe == nil {
		writeVerdict(w, h.serve(w, r, &kind))
		return
	}
	start := time.Now()
	answered := false
	defer func() {
		if !answered { // a callback aborted the response with http.ErrAbortHandler
			h.observe(r.Context(), WebhookDelivery{Kind: kind.String(), Outcome: WebhookCallbackError,
				Duration: time.Since(start)})
		}
	}()
	v := h.serve(w, r, &kind)
	answered = true
	h.observe(r.Context(), WebhookDelivery{Kind: kind.String(), Outcome: v.outcome, StatusCode: v.code,
		Duration: time.Since(start)})
	writeVerdict(w, v)
}

// observe calls Observe, recovering a panic (logged once): it would drop
// the answer, and the sender would deliver again what was handled.
func (h *WebhookHandler) observe(ctx context.Context, d WebhookDelivery) {
	defer h.recoverObserve(ctx) // a method value, not a closure: no allocation per delivery
	h.Observe(ctx, d)
}

// recoverObserve is deferred by observe; recover works only there.
func (h *WebhookHandler) recoverObserve(ctx context.Context) {
	if v := recover(); v != nil {
		if h.alertOnce(alertObservePanicked) {
			h.alertLogger().LogAttrs(ctx, slog.LevelError, "paykit: webhook: Observe panicked; deliveries are answered without it (logged once)",
				slog.String("panic", mask.Text(truncate(fmt.Sprint(v), 200))))
		}
	}
}

func writeVerdict(w http.ResponseWriter, v verdict) {
	if v.code == http.StatusOK {
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Error(w, http.StatusText(v.code), v.code)
}

// serve handles one delivery; it sets *kind as soon as it is known.
func (h *WebhookHandler) serve(w http.ResponseWriter, r *http.Request, kind *webhookKind) verdict {
	ctx := r.Context()
	log := h.logger()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(ctx, refusedMethodCause, slog.LevelDebug, slog.String("method", truncate(r.Method, 16)))
		return verdict{http.StatusMethodNotAllowed, WebhookRefusedMethod}
	}

	buf := new(bytes.Buffer)
	if v := h.readBody(w, r, buf); v.code != 0 {
		return v
	}
	body := buf.Bytes()

	var probe webhookProbe
	if err := json.Unmarshal(body, &probe); err != nil || probe.ID.shape != shapeString || probe.ID.s == "" {
		h.refuse(ctx, refusedNoIDCause, slog.LevelDebug)
		return refusedBody
	}
	tokens := r.Header.Values(WebhookTokenHeader)
	*kind = probe.kind(len(tokens) > 0)
	switch *kind {
	case kindPayment:
		return h.servePayment(ctx, log, &probe, tokens, body)
	case kindPayout:
		return h.servePayout(ctx, log, &probe, body)
	}
	h.refuse(ctx, refusedKindCause, slog.LevelDebug)
	return refusedBody
}

// readBody reads the body into buf, gunzipped if need be, or refuses it.
func (h *WebhookHandler) readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) verdict {
	limit := h.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultWebhookMaxBodyBytes
	}
	// MaxBytesReader also tells the server to close the connection rather
	// than drain a huge body.
	raw := http.MaxBytesReader(w, r.Body, limit)
	gzipped, ok := gzipEncoded(r.Header)
	if !ok {
		h.refuse(r.Context(), refusedEncodingCause, slog.LevelWarn,
			slog.String("content_encoding", truncate(strings.Join(r.Header.Values("Content-Encoding"), ","), 64)))
		return verdict{http.StatusUnsupportedMediaType, WebhookRefusedBody}
	}
	if !gzipped {
		_, err := buf.ReadFrom(raw)
		return h.readFailed(r, err, limit)
	}
	zr, err := gzip.NewReader(raw)
	if err != nil {
		return h.readFailed(r, err, limit)
	}
	// One byte past the limit tells a larger body without inflating more.
	if _, err := buf.ReadFrom(io.LimitReader(zr, limit+1)); err != nil {
		return h.readFailed(r, err, limit)
	}
	if int64(buf.Len()) > limit {
		return h.readFailed(r, &http.MaxBytesError{Limit: limit}, limit)
	}
	return verdict{}
}

// readFailed: 413 for a body over the limit, 400 for any other error.
func (h *WebhookHandler) readFailed(r *http.Request, err error, limit int64) verdict {
	if err == nil {
		return verdict{}
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		h.refuse(r.Context(), refusedSizeCause, slog.LevelWarn, slog.Int64("limit", limit))
		return verdict{http.StatusRequestEntityTooLarge, WebhookRefusedSize}
	}
	h.refuse(r.Context(), refusedReadCause, slog.LevelDebug, slog.String("error", mask.Text(truncate(err.Error(), 200))))
	return refusedBody
}

// gzipEncoded reads Content-Encoding: gzipped for gzip or x-gzip; not ok
// for any other coding ("identity" is none) or more than one.
func gzipEncoded(hdr http.Header) (gzipped, ok bool) {
	values := hdr.Values("Content-Encoding")
	if len(values) == 0 {
		return false, true
	}
	n := 0
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			switch c = strings.TrimSpace(c); {
			case c == "", strings.EqualFold(c, "identity"):
			case strings.EqualFold(c, "gzip"), strings.EqualFold(c, "x-gzip"):
				gzipped = true
				n++
			default:
				return false, false
			}
		}
	}
	return gzipped, n <= 1
}

func (h *WebhookHandler) servePayment(ctx context.Context, log *slog.Logger, probe *webhookProbe, tokens []string, body []byte) verdict {
	if h.OnPayment == nil {
		log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: no OnPayment, payment notification dropped")
		return ignored
	}
	if v := h.verifyToken(ctx, log, probe.ID.s, body, tokens); v.code != 0 {
		return v
	}
	p, v := resolve(ctx, h, "payment", probe.ID.s, body, (*Client).GetPayment)
	if p == nil {
		return v
	}
	if h.Client != nil {
		// The token vouched for the body's payment, which TokenFor may have
		// chosen by its ext_id: the API's copy, read by the body's id, must
		// be that payment too, or a body with payment B's id, payment A's
		// ext_id and A's token would hand B to the callback.
		var ext struct {
			ExtID probeString `json:"ext_id"`
		}
		_ = json.Unmarshal(body, &ext) // the body was probed: it is a JSON object
		if ext.ExtID.s != "" && ext.ExtID.s != p.ExtID {
			h.refuse(ctx, refusedExtIDCause, slog.LevelWarn, slog.String("id", p.ID))
			return refusedToken
		}
	}
	return h.call(ctx, log, "payment", p.ID, string(p.Status), func(ctx context.Context) error { return h.OnPayment(ctx, p) })
}

func (h *WebhookHandler) servePayout(ctx context.Context, log *slog.Logger, probe *webhookProbe, body []byte) verdict {
	if h.OnPayout == nil {
		log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: no OnPayout, payout notification dropped")
		return ignored
	}
	if h.Client == nil && !h.AllowUnverifiedPayouts {
		h.refuse(ctx, refusedUnverifiedCause, slog.LevelWarn)
		return verdict{http.StatusUnauthorized, WebhookRefusedUnverified}
	}
	p, v := resolve(ctx, h, "payout", probe.ID.s, body, (*Client).GetPayout)
	if p == nil {
		return v
	}
	return h.call(ctx, log, "payout", p.ID, string(p.Status), func(ctx context.Context) error { return h.OnPayout(ctx, p) })
}

// verifyToken checks a payment notification's token (see Verification),
// returning the zero verdict when it is accepted.
func (h *WebhookHandler) verifyToken(ctx context.Context, log *slog.Logger, id string, body []byte, header []string) verdict {
	if h.Token == "" && h.TokenFor == nil && !slices.ContainsFunc(h.Tokens, func(t string) bool { return t != "" }) {
		if h.alertOnce(alertNoToken) {
			h.alertLogger().LogAttrs(ctx, slog.LevelError,
				"paykit: webhook: WebhookHandler has no Token, Tokens or TokenFor, so every payment notification is refused with 401; "+
					"set them to the NotificationToken(s) your payments are created with")
		}
		return refusedToken
	}
	// A missing, repeated (a proxy or a forger added one) or empty header
	// never matches: no expected token is empty.
	if len(header) != 1 || header[0] == "" {
		h.refuse(ctx, refusedNoTokenCause, slog.LevelWarn, slog.Int("headers", len(header)))
		return refusedToken
	}
	got := sha256.Sum256([]byte(header[0]))
	// Every configured token is compared, with no early exit, so the time
	// taken does not tell which one (or whether any) matched.
	match := tokenEqual(&got, h.Token)
	for _, t := range h.Tokens {
		match |= tokenEqual(&got, t)
	}
	if match == 0 && h.TokenFor != nil {
		// ext_id is read only here, so that handlers without TokenFor do
		// not pay for it on every delivery.
		var ext struct {
			ExtID probeString `json:"ext_id"`
		}
		_ = json.Unmarshal(body, &ext) // the body was probed: it is a JSON object
		want, err := h.lookupToken(ctx, id, ext.ExtID.s)
		if err != nil {
			log.LogAttrs(ctx, slog.LevelError, "paykit: webhook: TokenFor failed",
				slog.String("error", mask.Text(truncate(err.Error(), 200))))
			return verdict{http.StatusInternalServerError, WebhookTokenLookupFailed}
		}
		match |= tokenEqual(&got, want)
	}
	if match == 0 {
		h.refuse(ctx, refusedTokenCause, slog.LevelWarn, slog.String("id", truncate(id, 64)))
		return refusedToken
	}
	return verdict{}
}

// lookupToken calls TokenFor, recovering a panic as call does a callback's.
func (h *WebhookHandler) lookupToken(ctx context.Context, id, extID string) (tok string, err error) {
	defer func() {
		if v := recover(); v != nil {
			h.panicked(ctx, "TokenFor", v)
			tok, err = "", errors.New("TokenFor panicked")
		}
	}()
	return h.TokenFor(ctx, id, extID)
}

// panicked logs a recovered panic of the merchant's code, or lets
// http.ErrAbortHandler, which asks net/http to abort the response, go on.
func (h *WebhookHandler) panicked(ctx context.Context, what string, v any, attrs ...slog.Attr) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	h.alertLogger().LogAttrs(ctx, slog.LevelError, "paykit: webhook: "+what+" panicked", append(attrs,
		slog.String("panic", mask.Text(truncate(fmt.Sprint(v), 200))), slog.String("stack", string(debug.Stack())))...)
}

// tokenEqual returns 1 when want is not empty and hashes to *got, else 0.
// Hashes make the time independent of both lengths, which
// subtle.ConstantTimeCompare alone would reveal.
func tokenEqual(got *[sha256.Size]byte, want string) int {
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(got[:], w[:]) & subtle.ConstantTimeLessOrEq(1, len(want))
}

// resolve returns the resource a verified notification is about: the
// API's copy read back by id, or without a Client the body decoded; or nil
// and the answer.
func resolve[T any](ctx context.Context, h *WebhookHandler, kind, id string, body []byte,
	fetch func(*Client, context.Context, string) (*T, error)) (*T, verdict) {
	c := h.Client
	if c == nil {
		v := new(T)
		if err := json.Unmarshal(body, v); err != nil {
			h.refuseKind(ctx, refusedDecodeCause, kind, slog.LevelWarn, slog.String("id", truncate(id, 64)))
			return nil, refusedBody
		}
		return v, verdict{}
	}
	if checkUUID("id", id) != nil {
		h.refuseKind(ctx, refusedUUIDCause, kind, slog.LevelWarn)
		return nil, refusedBody
	}
	// An answer about another resource is a failed read, never passed on.
	v, err := fetch(c, ctx, id)
	if err != nil {
		h.refuseKind(ctx, readBackCause, kind, slog.LevelError, slog.String("id", id), slog.String("error", err.Error()))
		return nil, fetchFailed
	}
	return v, verdict{}
}

// call runs a callback, turning an error or a panic into 500: net/http
// would only close the connection, which a sender may not retry, and log
// to the server's logger.
func (h *WebhookHandler) call(ctx context.Context, log *slog.Logger, kind, id, status string, fn func(context.Context) error) (v verdict) {
	attrs := []slog.Attr{slog.String("kind", kind), slog.String("id", truncate(id, 64)), slog.String("status", truncate(status, 32))}
	defer func() {
		if p := recover(); p != nil {
			h.panicked(ctx, "callback", p, attrs...)
			v = verdict{http.StatusInternalServerError, WebhookCallbackError}
		}
	}()
	if err := fn(ctx); err != nil {
		log.LogAttrs(ctx, slog.LevelError, "paykit: webhook: callback failed", append(attrs,
			slog.String("error", mask.Text(truncate(err.Error(), 200))))...)
		return verdict{http.StatusInternalServerError, WebhookCallbackError}
	}
	log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: handled", attrs...)
	return accepted
}

var discardLogger = slog.New(slog.DiscardHandler)

func (h *WebhookHandler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return discardLogger
}

// alert is one thing a handler logs once: a bit of its alerts entry. The
// refusal causes are alerts too: without a Logger, the first refusal of
// each cause is logged (see refuse).
type alert uint8

const (
	alertNoToken alert = iota
	alertObservePanicked
	refusedMethodCause
	refusedEncodingCause
	refusedSizeCause
	refusedReadCause
	refusedNoIDCause
	refusedKindCause
	refusedNoTokenCause
	refusedTokenCause
	refusedUnverifiedCause
	refusedExtIDCause
	refusedDecodeCause
	refusedUUIDCause
	readBackCause
	numAlerts
)

// refusals says, per refusal cause, what happened (%s: the kind, for
// refuseKind) and what to check.
var refusals = [numAlerts]struct{ msg, check string }{
	refusedMethodCause: {"method not allowed",
		"the service POSTs its notifications; another method is a browser, a probe or a scanner"},
	refusedEncodingCause: {"unsupported Content-Encoding",
		"only gzip or none is accepted; check what a proxy in front of the handler does to the body"},
	refusedSizeCause: {"body too large",
		"raise MaxBodyBytes if the service's notifications are larger"},
	refusedReadCause: {"reading body failed",
		"the connection failed while the body was read; the service delivers again"},
	refusedNoIDCause: {"body is not a JSON object with an id",
		"check that only the service posts to this handler's path"},
	refusedKindCause: {"cannot tell a payment from a payout",
		"the body has neither a requisites object (a payment) nor a requisites string (a payout)"},
	refusedNoTokenCause: {"payment notification refused: missing or repeated " + WebhookTokenHeader,
		"a payment created without NotificationToken is notified without one: create payments with " +
			"CreatePaymentParams.NotificationToken set to the token this handler checks"},
	refusedTokenCause: {"payment notification refused: wrong " + WebhookTokenHeader,
		"the payment was created with a NotificationToken that is not Token, not in Tokens and not what TokenFor returns; " +
			"while rotating, list the old token in Tokens"},
	refusedUnverifiedCause: {"payout notification refused: it cannot be verified without Client (or AllowUnverifiedPayouts)",
		"set Client, which reads each notified payout back from the API"},
	refusedExtIDCause: {"payment notification refused: its ext_id is not the payment's",
		"the body's ext_id is not that of the payment read back by its id: a forged or altered notification"},
	refusedDecodeCause: {"%s body does not decode",
		"the body is not a payment or payout as the API describes it; set Client to read notifications back"},
	refusedUUIDCause: {"%s id is not a UUID, cannot read it back",
		"check that only the service posts to this handler's path"},
	readBackCause: {"reading the %s back failed",
		"check Client (its base URL and API key); the service delivers again"},
}

// refuse logs why a delivery was refused, or could not be handled: to
// Logger at level, every time; without a Logger, the first of each cause
// to slog.Default(), with what to check, so that a handler that refuses
// every delivery (a payment created without NotificationToken, a payout
// without Client) is never silent. No attr carries a token.
func (h *WebhookHandler) refuse(ctx context.Context, cause alert, level slog.Level, attrs ...slog.Attr) {
	h.refuseKind(ctx, cause, "", level, attrs...)
}

// refuseKind is refuse for a cause whose message names the kind
// ("payment", "payout").
func (h *WebhookHandler) refuseKind(ctx context.Context, cause alert, kind string, level slog.Level, attrs ...slog.Attr) {
	r := &refusals[cause]
	msg := r.msg
	if kind != "" {
		msg = fmt.Sprintf(msg, kind)
	}
	if h.Logger != nil {
		if h.Logger.Enabled(ctx, level) {
			h.Logger.LogAttrs(ctx, level, "paykit: webhook: "+msg+"; "+r.check, attrs...)
		}
		return
	}
	if h.alertOnce(cause) {
		slog.Default().LogAttrs(ctx, max(level, slog.LevelWarn), "paykit: webhook: "+msg+"; "+r.check+
			" (logged once per cause while WebhookHandler.Logger is nil; set it to see every one)", attrs...)
	}
}

// alerts holds, per handler that has alerted, the alerts it has logged,
// outside the handler (see its last comment). It is keyed by the
// handler's address, which does not keep the handler alive; a cleanup
// deletes the entry once the handler is collected. (A weak.Pointer key
// would crash Go 1.24.0 for a handler in a global variable.)
var alerts sync.Map // uintptr → *atomic.Uint32

// alertOnce reports whether a is h's first alert of its kind. It runs on
// refusals and failures only, never on an accepted delivery. Should a
// handler reuse the address of a collected one before its entry is
// deleted, an alert may come one refusal late, never be repeated.
func (h *WebhookHandler) alertOnce(a alert) bool {
	key := uintptr(unsafe.Pointer(h))
	v, ok := alerts.Load(key)
	if !ok {
		bits := new(atomic.Uint32)
		if v, ok = alerts.LoadOrStore(key, bits); !ok {
			runtime.AddCleanup(h, func(bits *atomic.Uint32) { alerts.CompareAndDelete(key, bits) }, bits)
		}
	}
	bit := uint32(1) << a
	return v.(*atomic.Uint32).Or(bit)&bit == 0
}

// alertLogger is for what must be seen even without a Logger.
func (h *WebhookHandler) alertLogger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// shape is the JSON type of a probed field.
type shape uint8

const (
	shapeAbsent shape = iota
	shapeNull
	shapeString
	shapeObject
	shapeOther
)

func shapeOf(b []byte) shape {
	switch b[0] { // encoding/json never passes an empty value
	case 'n':
		return shapeNull
	case '"':
		return shapeString
	case '{':
		return shapeObject
	}
	return shapeOther
}

// probeShape records only a field's JSON type: a card number in
// "requisites" is never copied out just to classify the body.
type probeShape shape

// UnmarshalJSON implements json.Unmarshaler.
func (p *probeShape) UnmarshalJSON(b []byte) error {
	*p = probeShape(shapeOf(b))
	return nil
}

// probeString records a field's JSON type and, for a string, its value.
type probeString struct {
	shape shape
	s     string
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *probeString) UnmarshalJSON(b []byte) error {
	p.shape, p.s = shapeOf(b), ""
	if p.shape == shapeString {
		return json.Unmarshal(b, &p.s)
	}
	return nil
}

// webhookProbe is what the handler reads before it knows the kind.
type webhookProbe struct {
	ID         probeString `json:"id"`
	Status     probeString `json:"status"`
	Requisites probeShape  `json:"requisites"`
	HolderName probeShape  `json:"holder_name"`
	PaymentURL probeShape  `json:"payment_url"`
	ValidUntil probeShape  `json:"valid_until"`
}

// kind applies the rules documented on WebhookHandler, in their order.
func (p *webhookProbe) kind(hasToken bool) webhookKind {
	switch shape(p.Requisites) {
	case shapeObject:
		return kindPayment
	case shapeString:
		return kindPayout
	}
	switch {
	case p.HolderName != probeShape(shapeAbsent):
		return kindPayout
	case p.PaymentURL != probeShape(shapeAbsent), p.ValidUntil != probeShape(shapeAbsent):
		return kindPayment
	case p.Status.shape == shapeString && isPaymentStatus(p.Status.s):
		return kindPayment
	case hasToken:
		return kindPayment
	}
	return kindUnknown
}

// isPaymentStatus: upper case (payout statuses are lower case), or one of
// the two the dispute responses send in lower case.
func isPaymentStatus(s string) bool {
	if strings.EqualFold(s, string(PaymentStatusDispute)) || strings.EqualFold(s, string(PaymentStatusCancelledAppeal)) {
		return true
	}
	upper := false
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		upper = upper || unicode.IsUpper(r)
	}
	return upper
}

// WebhookOutcome classifies how a WebhookHandler answered one delivery.
type WebhookOutcome string

// Webhook delivery outcomes.
const (
	// WebhookAccepted: verified and handed to the callback, which succeeded.
	WebhookAccepted WebhookOutcome = "accepted"
	// WebhookIgnored: acknowledged with 200 without a callback (none is set
	// for the notification's kind).
	WebhookIgnored WebhookOutcome = "ignored"
	// WebhookRefusedMethod: not a POST (405).
	WebhookRefusedMethod WebhookOutcome = "refused_method"
	// WebhookRefusedSize: the body is over MaxBodyBytes (413).
	WebhookRefusedSize WebhookOutcome = "refused_size"
	// WebhookRefusedBody: the body cannot be read, decoded or classified
	// (400), or comes in a Content-Encoding other than gzip (415).
	WebhookRefusedBody WebhookOutcome = "refused_body"
	// WebhookRefusedToken: a payment notification whose token does not
	// match, or no token is configured (401).
	WebhookRefusedToken WebhookOutcome = "refused_token"
	// WebhookRefusedUnverified: a payout notification that cannot be
	// verified, without Client or AllowUnverifiedPayouts (401).
	WebhookRefusedUnverified WebhookOutcome = "refused_unverified"
	// WebhookTokenLookupFailed: TokenFor returned an error (500).
	WebhookTokenLookupFailed WebhookOutcome = "token_lookup_failed"
	// WebhookFetchFailed: reading the resource back through Client failed,
	// or the API's copy is not the resource notified (500).
	WebhookFetchFailed WebhookOutcome = "fetch_failed"
	// WebhookCallbackError: the callback returned an error or panicked (500).
	WebhookCallbackError WebhookOutcome = "callback_error"
)

// WebhookDelivery describes how a WebhookHandler answered one request.
// It carries no id, token or body: it is meant for logs and metrics.
type WebhookDelivery struct {
	// Kind is "payment", "payout", or "" when it could not be told.
	Kind string
	// Outcome classifies the answer.
	Outcome WebhookOutcome
	// StatusCode is the HTTP status answered.
	StatusCode int
	// Duration is the time from the request's arrival to the answer.
	Duration time.Duration
}
