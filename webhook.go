package paykit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"unicode"
)

// WebhookTokenHeader is the request header in which the service returns a
// payment's NotificationToken with every notification about that payment.
const WebhookTokenHeader = "X-Notification-Token"

// DefaultWebhookMaxBodyBytes is the body limit of a WebhookHandler whose
// MaxBodyBytes is zero. A payment or payout is well under 4 KiB; the limit
// only stops a sender from making the handler buffer arbitrary amounts.
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
//   - 413 for a body over MaxBodyBytes.
//   - 400 for a body that is not a JSON object, has no string "id", whose kind
//     (payment or payout) cannot be told, or that does not decode into a
//     Payment or Payout; with Client set, also for an id that is not a UUID.
//   - 401 for a notification that is not verified (see below).
//   - 500 when the callback returns an error or panics, or when reading the
//     resource back through Client fails, so that the sender retries.
//   - 200 with an empty body otherwise, including for a notification whose
//     kind has no callback: it is dropped without being verified or read
//     back, since nothing acts on it.
//
// # Verification
//
// The service authenticates a payment notification only by the
// NotificationToken given at CreatePayment, returned in the
// X-Notification-Token header. The handler compares it with Token in
// constant time (also constant in the tokens' lengths); a missing, repeated
// or wrong header is refused with 401. An empty Token refuses every payment
// notification: a handler deployed with a missing configuration value must
// fail closed, not accept forgeries, and it says so in one error log line.
// Create payments with a NotificationToken, or their notifications cannot
// be accepted.
//
// Payout notifications carry no token (a payout cannot be created with one),
// so nothing in the request proves where it came from. They are refused
// with 401 unless Client is set, in which case the handler acts on the
// payout it reads from the API by the notified id, or unless
// AllowUnverifiedPayouts is true. A payout notification that does carry an
// X-Notification-Token is treated like any other payout: the token does not
// authenticate payouts. The service never sends one there, and the token
// travels with every payment notification, so accepting it for payouts would
// let whoever saw one of those forge "payout failed" notifications, on which
// a merchant may pay a second time.
//
// # Telling a payment from a payout
//
// The spec does not show the payload, so the handler relies on as little as
// it can: the body must be a JSON object with a string "id" (the resource
// itself, as GET returns it, is what is expected). Its kind is the first of
// these rules that applies:
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
// encoding/json matches them (case-insensitively; the last duplicate wins),
// the same way the body is decoded afterwards.
//
// # What the callback receives
//
// With Client set, the callback receives the resource as GetPayment or
// GetPayout returns it, read by the notified id: a forged or altered body
// cannot change the amount or status the merchant acts on, and only "id"
// (and the kind) is taken from the body. This is the recommended setup. The
// copy is the resource's state when it was read, which may be newer than
// the event that caused the notification. Without Client, the callback
// receives the body decoded by the same lenient rules as API responses.
//
// # Repeated deliveries
//
// A notification can arrive more than once (the sender retries after a
// timeout or a 5xx, and its answer may have been lost), and notifications
// of one resource can arrive out of order. Callbacks must be idempotent.
// The usual way is to record each (id, status) pair once, in the same
// transaction as the work it triggers:
//
//	OnPayment: func(ctx context.Context, p *paykit.Payment) error {
//		tx, err := db.BeginTx(ctx, nil)
//		if err != nil {
//			return err // 500: the sender retries
//		}
//		defer tx.Rollback()
//		res, err := tx.ExecContext(ctx, `INSERT INTO payment_events (payment_id, status)
//			VALUES ($1, $2) ON CONFLICT DO NOTHING`, p.ID, p.Status)
//		if err != nil {
//			return err
//		}
//		if n, _ := res.RowsAffected(); n == 0 {
//			return nil // this (id, status) was handled before
//		}
//		if p.Status == paykit.PaymentStatusCompleted {
//			if err := markOrderPaid(ctx, tx, p.ExtID, p.Amount); err != nil {
//				return err
//			}
//		}
//		return tx.Commit()
//	},
//
// # Logging
//
// Nothing the handler logs contains the token or the body; an id is logged
// only once the notification is accepted. See Logger.
type WebhookHandler struct {
	// Token is the NotificationToken the merchant's payments are created
	// with. Empty refuses every payment notification.
	Token string

	// OnPayment is called with each verified payment notification. A nil
	// OnPayment acknowledges payment notifications and drops them. An error
	// answers 500 so that the sender retries; a panic is recovered, logged
	// and answered the same way. The context is the request's.
	OnPayment func(ctx context.Context, p *Payment) error

	// OnPayout is OnPayment's counterpart for payouts.
	OnPayout func(ctx context.Context, p *Payout) error

	// Client, when set, is used to read every notified payment or payout
	// back from the API (GetPayment, GetPayout) and the callback receives
	// the API's copy instead of the body's. It also makes payout
	// notifications acceptable.
	Client *Client

	// AllowUnverifiedPayouts accepts payout notifications without Client,
	// passing the body's payout, which anybody who can reach the handler
	// could have written, to OnPayout. Only for merchants who use the
	// notification as a hint and look the payout up themselves.
	AllowUnverifiedPayouts bool

	// MaxBodyBytes caps the request body; a larger one is answered 413 and
	// not read further. Zero or negative means DefaultWebhookMaxBodyBytes.
	MaxBodyBytes int64

	// Logger receives one debug line per handled or ignored notification,
	// warnings for refused ones and errors for failed ones. Nil logs
	// nothing, like a Client made without WithLogger, with two exceptions
	// that go to slog.Default() then, because they must not pass unseen:
	// the error that an empty Token refuses payment notifications (logged
	// once) and a recovered panic of a callback.
	Logger *slog.Logger

	emptyToken sync.Once
}

// webhookKind is what a notification is about.
type webhookKind uint8

const (
	kindUnknown webhookKind = iota
	kindPayment
	kindPayout
)

// ServeHTTP implements http.Handler.
func (h *WebhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	code := h.serve(w, r)
	if code == http.StatusOK {
		w.WriteHeader(http.StatusOK)
		return
	}
	http.Error(w, http.StatusText(code), code)
}

// serve handles one delivery and returns the status code to answer.
func (h *WebhookHandler) serve(w http.ResponseWriter, r *http.Request) int {
	ctx := r.Context()
	log := h.logger()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: method not allowed", slog.String("method", truncate(r.Method, 16)))
		return http.StatusMethodNotAllowed
	}

	buf := webhookBuffers.Get().(*bytes.Buffer)
	defer putWebhookBuffer(buf)
	if code := h.readBody(w, r, buf); code != 0 {
		return code
	}
	body := buf.Bytes()

	var probe webhookProbe
	if err := json.Unmarshal(body, &probe); err != nil || probe.ID.shape != shapeString || probe.ID.s == "" {
		log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: body is not a JSON object with an id")
		return http.StatusBadRequest
	}
	tokens := r.Header.Values(WebhookTokenHeader)
	kind := probe.kind(len(tokens) > 0)
	switch kind {
	case kindPayment:
		return h.servePayment(ctx, log, &probe, tokens, body)
	case kindPayout:
		return h.servePayout(ctx, log, &probe, body)
	}
	log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: cannot tell a payment from a payout")
	return http.StatusBadRequest
}

// readBody reads the body into buf, returning 0 or the status to answer.
func (h *WebhookHandler) readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) int {
	limit := h.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultWebhookMaxBodyBytes
	}
	// MaxBytesReader, unlike a LimitReader, also tells the server to close
	// the connection instead of draining the rest of a huge body.
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	if err == nil {
		return 0
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		h.logger().LogAttrs(r.Context(), slog.LevelWarn, "paykit: webhook: body too large", slog.Int64("limit", limit))
		return http.StatusRequestEntityTooLarge
	}
	h.logger().LogAttrs(r.Context(), slog.LevelDebug, "paykit: webhook: reading body failed", slog.String("error", err.Error()))
	return http.StatusBadRequest
}

func (h *WebhookHandler) servePayment(ctx context.Context, log *slog.Logger, probe *webhookProbe, tokens []string, body []byte) int {
	if h.OnPayment == nil {
		log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: no OnPayment, payment notification dropped")
		return http.StatusOK
	}
	if h.Token == "" {
		h.emptyToken.Do(func() {
			h.alertLogger().LogAttrs(ctx, slog.LevelError,
				"paykit: webhook: WebhookHandler.Token is empty, so every payment notification is refused with 401; set it to the NotificationToken your payments are created with")
		})
		return http.StatusUnauthorized
	}
	if !tokenMatches(tokens, h.Token) {
		log.LogAttrs(ctx, slog.LevelWarn, "paykit: webhook: payment notification refused: missing or wrong "+WebhookTokenHeader)
		return http.StatusUnauthorized
	}
	p, code := resolve(ctx, log, h.Client, "payment", probe.ID.s, body, (*Client).GetPayment)
	if p == nil {
		return code
	}
	return h.call(ctx, log, "payment", p.ID, string(p.Status), func(ctx context.Context) error { return h.OnPayment(ctx, p) })
}

func (h *WebhookHandler) servePayout(ctx context.Context, log *slog.Logger, probe *webhookProbe, body []byte) int {
	if h.OnPayout == nil {
		log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: no OnPayout, payout notification dropped")
		return http.StatusOK
	}
	if h.Client == nil && !h.AllowUnverifiedPayouts {
		log.LogAttrs(ctx, slog.LevelWarn,
			"paykit: webhook: payout notification refused: it cannot be verified without Client (or AllowUnverifiedPayouts)")
		return http.StatusUnauthorized
	}
	p, code := resolve(ctx, log, h.Client, "payout", probe.ID.s, body, (*Client).GetPayout)
	if p == nil {
		return code
	}
	return h.call(ctx, log, "payout", p.ID, string(p.Status), func(ctx context.Context) error { return h.OnPayout(ctx, p) })
}

// resolve returns the resource a verified notification is about: with a
// Client, the API's copy read back by id; without one, the body decoded.
// When there is none it returns nil and the status to answer.
func resolve[T any](ctx context.Context, log *slog.Logger, c *Client, kind, id string, body []byte,
	fetch func(*Client, context.Context, string) (*T, error)) (*T, int) {
	if c == nil {
		v := new(T)
		if err := json.Unmarshal(body, v); err != nil {
			log.LogAttrs(ctx, slog.LevelWarn, "paykit: webhook: "+kind+" body does not decode", slog.String("id", truncate(id, 64)))
			return nil, http.StatusBadRequest
		}
		return v, http.StatusOK
	}
	if checkUUID("id", id) != nil {
		log.LogAttrs(ctx, slog.LevelWarn, "paykit: webhook: "+kind+" id is not a UUID, cannot read it back")
		return nil, http.StatusBadRequest
	}
	v, err := fetch(c, ctx, id)
	if err != nil {
		log.LogAttrs(ctx, slog.LevelError, "paykit: webhook: reading the "+kind+" back failed",
			slog.String("id", id), slog.String("error", err.Error()))
		return nil, http.StatusInternalServerError
	}
	return v, http.StatusOK
}

// call runs a callback, turning an error or a panic into 500. A panic is
// recovered rather than left to net/http because net/http would only close
// the connection, which a sender may not retry, and would log to the
// server's logger, not the handler's.
func (h *WebhookHandler) call(ctx context.Context, log *slog.Logger, kind, id, status string, fn func(context.Context) error) (code int) {
	attrs := []slog.Attr{slog.String("kind", kind), slog.String("id", truncate(id, 64)), slog.String("status", truncate(status, 32))}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v) // the callback asks net/http to abort the response
		}
		h.alertLogger().LogAttrs(ctx, slog.LevelError, "paykit: webhook: callback panicked", append(attrs,
			slog.String("panic", maskDigits(truncate(fmt.Sprint(v), 200))),
			slog.String("stack", string(debug.Stack())))...)
		code = http.StatusInternalServerError
	}()
	if err := fn(ctx); err != nil {
		log.LogAttrs(ctx, slog.LevelError, "paykit: webhook: callback failed", append(attrs,
			slog.String("error", maskDigits(truncate(err.Error(), 200))))...)
		return http.StatusInternalServerError
	}
	log.LogAttrs(ctx, slog.LevelDebug, "paykit: webhook: handled", attrs...)
	return http.StatusOK
}

// tokenMatches compares the header's values with the expected token. It
// hashes both sides first so that the comparison takes the same time
// whatever their lengths: subtle.ConstantTimeCompare returns at once on a
// length mismatch, which would tell an attacker the token's length.
func tokenMatches(got []string, want string) bool {
	if len(got) != 1 {
		return false // absent, or repeated (a proxy or a forger added one)
	}
	g, w := sha256.Sum256([]byte(got[0])), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

var discardLogger = slog.New(slog.DiscardHandler)

func (h *WebhookHandler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return discardLogger
}

// alertLogger is for what must be seen even without a Logger.
func (h *WebhookHandler) alertLogger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// webhookBuffers recycles body buffers: deliveries come in bursts, and a
// fresh buffer grows through several reallocations for every body.
var webhookBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps one oversized body from pinning its memory forever.
const maxPooledBuffer = 64 << 10

func putWebhookBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuffer {
		return
	}
	b.Reset()
	webhookBuffers.Put(b)
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

// probeShape records only a field's JSON type, so that a card number in
// "requisites" is never copied out of the body just to be classified.
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

// webhookProbe is the little of a notification the handler looks at before
// it knows what the notification is.
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

// isPaymentStatus reports whether a status can only be a payment's: written
// in upper case (payout statuses are lower case), or one of the two payment
// statuses that the dispute responses send in lower case.
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
