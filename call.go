package paykit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/mask"
)

// The one call path, read top to bottom in sendInto. What to check is the
// operation's row in policy.go, so a resource method cannot forget a
// check: it only names the resource (id, ext_id) and what else the answer
// must match.

// call is one API call. Only log changes after it is built: attemptTransport
// appends each attempt, one at a time, on the calling goroutine.
type call struct {
	op          *operation
	path        string // escaped path below the base, e.g. "/v1/payments/…"
	query       url.Values
	in          any // sent as JSON when set; otherwise body, as contentType
	body        []byte
	contentType string
	// id and extID name the resource; the operation's ident says which one
	// the answer must carry.
	id, extID string
	obs       Observer // nil without one
	info      *CallInfo
	log       []attempt
	// first and trace live in the call's one allocation.
	first [1]attempt
	trace connTrace
}

const contentJSON = "application/json"

type callKey struct{}

func callOf(ctx context.Context) *call {
	k, _ := ctx.Value(callKey{}).(*call)
	return k
}

func (k *call) last() *attempt {
	if len(k.log) == 0 {
		return nil
	}
	return &k.log[len(k.log)-1]
}

// applied reports whether any of the first n attempts may have been
// applied by the server.
func (k *call) applied(n int) bool {
	for i := range k.log[:n] {
		if k.log[i].mayHaveApplied() {
			return true
		}
	}
	return false
}

// factsOf returns what identifies a decoded answer: zero for a type
// without facts, which then fails any check that needs one.
func factsOf(v any) facts {
	if r, ok := v.(interface{ facts() facts }); ok {
		return r.facts()
	}
	return facts{}
}

type facts struct {
	id, extID, status string
	amount            decimal.Decimal
}

// want compares a decoded resource (the answer, or the copy read back, as
// from says) with what the call asked beyond its identity, such as a
// create's amount; the error says why when the verdict is not same.
type want[P any] func(ctx context.Context, got P, from seenIn) (sameness, error)

func send[T any](ctx context.Context, c *Client, k *call, w want[*T]) (*T, error) {
	return sendInto(ctx, c, k, new(T), w)
}

// sendInto is the call path, top to bottom.
func sendInto[T any](ctx context.Context, c *Client, k *call, out *T, w want[*T]) (res *T, err error) {
	if ctx == nil {
		return nil, errors.New("paykit: nil context")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("paykit: %s: %w", k.op.name, err)
	}
	if c.obs != nil {
		k.obs, k.info = c.obs, c.callInfo(k.op)
		ctx = c.obs.CallStart(ctx, k.info)
		defer func() { c.endCall(ctx, k, res, err) }()
	}

	// 1. Build and sign.
	if k.in != nil {
		if k.body, err = json.Marshal(k.in); err != nil {
			return nil, fmt.Errorf("paykit: %s: encoding body: %w", k.op.name, err)
		}
		k.contentType = contentJSON
	}
	req, err := c.newRequest(ctx, k)
	if err != nil {
		return nil, err
	}

	// 2. Send. The attempts are retryablehttp's loop; their facts are in
	// k.log, so the response it hands back is not needed.
	_, sendErr := c.http.Do(req)
	last := k.last()

	// 3. Classify the last answer.
	var cause error
	switch {
	case sendErr != nil || last == nil || last.status == 0:
		return nil, c.conclude(k, c.noAnswer(ctx, k, sendErr))
	case last.status < 200 || last.status >= 300:
		apiErr := c.apiError(last)
		// "Already done" on a retry after an attempt that may have done
		// it, or on a send a layer below repeated: read back below.
		// Anything else is the answer.
		if apiErr.Code == "" || apiErr.Code != k.op.doneCode || !k.applied(len(k.log)-1) && !last.resent {
			return nil, c.conclude(k, apiErr)
		}
		cause = apiErr
	case last.resent && k.op.class == classMoneyMove:
		// The service applied the last send; an earlier one of the same
		// attempt may have moved the money too.
		cause = errResent
	default:
		// 4. Decode and check: the answer must be the resource, about what
		// was asked, as asked.
		if cause = accept(ctx, k, last, out, w); cause == nil {
			last.release() // decoded: every decoder copies what it keeps
			return out, nil
		}
		last.secrets.scrubAnswer(cause)
	}

	// 5. Read back what a create or state change did, when its answer was
	// lost, unusable, about another resource, or "already done".
	if k.op.settle != nil {
		got, rerr := readBack(ctx, c, k, w)
		if rerr == nil {
			c.logger.LogAttrs(ctx, slog.LevelDebug, "paykit: settled by reading back",
				slog.String("op", k.op.name), slog.String("read", k.op.settle.name))
			return got, nil
		}
		if apiErr, done := cause.(*Error); done {
			var other *mismatchError
			if k.op.class == classCreate && errors.As(rerr, &other) {
				// The ext_id belongs to a resource that provably is not
				// this call's: no attempt of this call created anything.
				return nil, apiErr
			}
			// Unsettled, "already done" is neither a refusal nor a
			// success: its text stays, its sentinel (ErrDuplicateExtID
			// and the like, "someone else's") does not.
			cause = errors.New(apiErr.Error())
		}
		cause = fmt.Errorf("%w; reading it back: %w", cause, rerr)
	}

	// 6. Conclude.
	return nil, c.conclude(k, cause)
}

// accept decodes a 2xx answer into out and checks it against the
// operation's row and the call's want.
func accept[P any](ctx context.Context, k *call, a *attempt, out P, w want[P]) error {
	if a.tooLarge {
		return &answerError{fmt.Sprintf("the answer (HTTP %d) is larger than %d bytes", a.status, MaxResponseBytes)}
	}
	if err := decodeBody(a.body, out); err != nil {
		return &answerError{fmt.Sprintf("decoding response (HTTP %d): %s", a.status, truncate(a.secrets.scrub(err.Error()), 200))}
	}
	// Whether it differs or cannot be compared, an answer that is not
	// the resource as asked is read back (or, for a money move, ends in
	// ErrUnknownOutcome): the verdict matters only for a read-back.
	if v, err := k.check(factsOf(out)); v != same {
		return &answerError{err.Error()}
	}
	if w != nil {
		if v, err := w(ctx, out, inAnswer); v != same {
			return &answerError{err.Error()}
		}
	}
	return nil
}

// check applies the operation's row to an answer's facts: a fact it needs
// and does not carry is cannotTell, an identity that is not the call's
// different. Ids are UUIDs, compared without regard to case; an ext_id is
// the merchant's own string, compared exactly.
func (k *call) check(f facts) (sameness, error) {
	n := k.op.needs
	switch {
	case n&needID != 0 && f.id == "" || k.op.ident == identID && f.id == "":
		return cannotTell, errors.New("the answer carries no id")
	case n&needExtID != 0 && f.extID == "" || k.op.ident == identExtID && f.extID == "":
		return cannotTell, errors.New("the answer carries no ext_id")
	case n&needAmount != 0 && f.amount.IsZero():
		return cannotTell, errors.New("the answer carries no amount")
	case n&needStatus != 0 && f.status == "":
		return cannotTell, errors.New("the answer carries no status")
	case k.op.ident == identID && !strings.EqualFold(f.id, k.id):
		return different, fmt.Errorf("the answer is about id %q, not %q", truncate(f.id, 64), k.id)
	case k.op.ident == identExtID && f.extID != k.extID:
		return different, fmt.Errorf("the answer is about ext_id %q, not %q", truncate(f.extID, 80), truncate(k.extID, 80))
	}
	return same, nil
}

// readBack reads the resource of k with the operation's settling read,
// which checks its own answer's identity, and returns it if w finds it the
// same. Only a resource that provably differs is a *mismatchError; one that
// cannot be compared is a plain error, which ends in ErrUnknownOutcome.
func readBack[T any](ctx context.Context, c *Client, k *call, w want[*T]) (*T, error) {
	s := k.op.settle
	path := strings.Replace(s.route, "{id}", k.id, 1)
	path = strings.Replace(path, "{extId}", pathSegment(k.extID), 1)
	got, err := send[T](ctx, c, &call{op: s, path: path, id: k.id, extID: k.extID}, nil)
	if err != nil {
		return nil, err
	}
	if w != nil {
		switch v, err := w(ctx, got, inReadBack); v {
		case different:
			return nil, &mismatchError{err}
		case cannotTell:
			return nil, fmt.Errorf("the resource read back cannot be compared with this call: %w", err)
		}
	}
	if r, ok := any(got).(interface{ reconciled() *bool }); ok {
		*r.reconciled() = true
	}
	return got, nil
}

// errResent is a money move's 2xx to an attempt a layer below the SDK
// sent more than once.
var errResent = errors.New("a layer below the SDK sent the request more than once within one attempt, " +
	"so it may have been applied more than once")

// answerError is an answer that arrived but is not the resource asked
// for: undecodable, incomplete, about another resource, or not as asked.
type answerError struct{ msg string }

func (e *answerError) Error() string { return e.msg }

// mismatchError is a read-back that found the resource, but not as the
// call would have left it.
type mismatchError struct{ err error }

func (e *mismatchError) Error() string {
	return "the resource read back is not as this call asked: " + e.err.Error()
}

// conclude returns a failed call's error: ErrUnknownOutcome, beside its
// cause and naming the read that settles it, when the call changes
// something and any attempt may have been applied.
func (c *Client) conclude(k *call, cause error) error {
	if k.op.class != classRead && k.applied(len(k.log)) {
		return &unknownOutcomeError{op: k.op.name, check: k.op.adviceFor(k.id, k.extID), cause: cause}
	}
	if apiErr, ok := cause.(*Error); ok {
		return apiErr
	}
	return fmt.Errorf("paykit: %s: %w", k.op.name, cause)
}

// noAnswer describes a call that ended without an answer to decode: a
// transport failure, a context that ended, or a signer that failed on a
// retry. An answer an earlier attempt got is kept beside the error, so a
// 5xx that may have created the payment is not replaced by what came after.
func (c *Client) noAnswer(ctx context.Context, k *call, err error) error {
	if err == nil {
		err = errNoResponse
	}
	// net/http's error names the URL: an ext_id in it may hold a card number.
	if ue, ok := err.(*url.Error); ok {
		ue.URL = mask.Path(ue.URL)
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	if a := k.last(); a != nil && a.err == nil && a.status != 0 {
		err = fmt.Errorf("%w; attempt %d had answered: %w", err, a.n, c.apiError(a))
	}
	return err
}

// apiError decodes a non-2xx answer, with the API key and the signature
// scrubbed.
func (c *Client) apiError(a *attempt) *Error {
	e := decodeError(a.status, a.body, a.secrets)
	e.retryAfter, _ = retryAfter(a.header, c.now())
	return e
}

// decodeBody decodes an answer's body into out. A resource that decodes
// itself gets the body directly: json.Unmarshal would validate it first,
// one more scan of the whole body.
func decodeBody(data []byte, out any) error {
	if e, ok := out.(interface{ emptyOK() bool }); ok && e.emptyOK() {
		return nil
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || string(t) == "null" {
		return errors.New("no resource in the response body")
	}
	if u, ok := out.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, out)
}

// apiCode reads the error code of an error body, sanitized; "" if none.
func apiCode(body []byte) string {
	var wire struct {
		Error flexString `json:"error"`
	}
	if json.Unmarshal(body, &wire) != nil || wire.Error == "" {
		return ""
	}
	return sanitizeCode(string(wire.Error))
}
