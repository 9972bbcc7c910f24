package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
)

// WithMerchant makes the Remote authenticate as a merchant where a route
// asks for it (Listen): apiKey as X-Identity and signer's X-Signature,
// exactly as the SDK signs a GET (the same paykit.Signer a paykit.Client
// of that merchant is built with, such as paykit.HMACSigner(secret)).
// The control token, if any, is still sent to the controls only.
func WithMerchant(apiKey string, signer paykit.Signer) RemoteOption {
	return func(r *Remote) { r.apiKey, r.signer = apiKey, signer }
}

// ListenEvent is one event of the listen feed: exactly one of Session,
// Notification and Missed is set.
type ListenEvent struct {
	// Session begins every connection to the feed (a reconnection too).
	Session *ListenSession
	// Notification is a notification the sandbox sent, or would have sent,
	// for one of the merchant's resources.
	Notification *ListenNotification
	// Missed says that notifications were lost to this listener.
	Missed *ListenMissed
}

// ListenSession is the first event of a connection to the feed.
type ListenSession struct {
	// Token is the notification token the feed puts in
	// X-Notification-Token for resources created without one (payouts
	// never have one): the token asked for (ListenToken), or one the
	// sandbox made for the session, which Listen keeps across its
	// reconnections. Configure a local paykit.WebhookHandler with it. It
	// is a secret of the merchant's: do not log it.
	Token string `json:"token"`
	// Position is where the connection's notifications begin: what
	// Listen resumes from if the connection ends before any arrives.
	Position uint64 `json:"position"`
}

// ListenNotification is one notification of the feed: the body and
// headers a notify_url receives for it.
type ListenNotification struct {
	// Position is the notification's place in the merchant's feed,
	// strictly increasing; Listen resumes after the last one it handed
	// over.
	Position uint64 `json:"-"`
	// Kind is "payment", "payout" or "withdrawal".
	Kind string `json:"kind"`
	// ID is the resource's id.
	ID string `json:"id"`
	// Status is the status the resource entered, as the body writes it.
	Status string `json:"status"`
	// NotifyURL is the resource's notify_url, its password and query
	// values masked as the delivery log shows them; empty when it has none
	// (a withdrawal never has one).
	NotifyURL string `json:"notify_url"`
	// Headers are the headers of the delivery: Content-Type, User-Agent
	// and X-Notification-Token (the resource's token, or the session's).
	Headers map[string]string `json:"headers"`
	// Body is the exact JSON body of the delivery.
	Body []byte `json:"-"`
}

// ListenMissed says that the listener did not get the notifications at
// positions From to To: it was too slow and the sandbox dropped its oldest
// ones rather than wait (Reason "slow"), it resumed from further back than
// the sandbox keeps (DefaultListenWindow, Reason "window"), or the
// sandbox restarted, and what the listener may have missed before the
// restart cannot be told (Reason "restart", Count -1, From 0 when the
// position resumed from belongs to another run or sandbox).
type ListenMissed struct {
	// From is the first position not received (0: unknown, see above).
	From uint64 `json:"from"`
	// To is the last position not received.
	To uint64 `json:"to"`
	// Count is how many were lost in that range, -1 when it cannot be
	// told. With ListenEvents, a Reason "window" counts every kind.
	Count int `json:"count"`
	// Reason is "slow", "window" or "restart".
	Reason string `json:"reason"`
}

// ListenOption configures Listen.
type ListenOption func(*listenOptions)

type listenOptions struct {
	events []string
	token  string
	after  uint64
	resume bool
}

// ListenEvents keeps only the notifications of these kinds ("payment",
// "payout", "withdrawal").
func ListenEvents(kinds ...string) ListenOption {
	return func(o *listenOptions) { o.events = append(o.events, kinds...) }
}

// ListenToken asks the sandbox to put token, instead of a token of its
// own making, in the notifications of resources created without one: the
// token a local receiver is already configured with.
func ListenToken(token string) ListenOption { return func(o *listenOptions) { o.token = token } }

// ListenAfter resumes the feed after position, as a reconnection does:
// the notifications the sandbox still keeps after it are handed over
// first (and a Missed for what it no longer keeps).
func ListenAfter(position uint64) ListenOption {
	return func(o *listenOptions) { o.after, o.resume = position, true }
}

// Listen follows the merchant's listen feed (GET /sandbox/listen) and
// calls fn with each event, in order, until ctx ends or fn returns an
// error (which Listen returns). It needs WithMerchant, not the control
// token: a merchant sees only its own resources' notifications.
//
// A connection that ends (the sandbox restarted, the network failed, no
// keep-alive for 45 seconds) is made again after a wait that grows from
// 100 ms to 5 s, resuming after the last notification handed to fn, so
// nothing is lost without a Missed saying so; each connection begins with
// a Session event, and the session's token is kept across them. A refusal
// that another try cannot change (401: wrong key or signature; 400: a bad
// option) ends Listen with a *ControlError. fn is never called
// concurrently; a slow fn makes the sandbox drop this listener's oldest
// notifications (Missed), never slows the sandbox.
func (r *Remote) Listen(ctx context.Context, fn func(ListenEvent) error, opts ...ListenOption) error {
	var o listenOptions
	for _, opt := range opts {
		opt(&o)
	}
	if r.apiKey == "" || r.signer == nil {
		return fmt.Errorf("sandbox: Listen: %w: no merchant credentials (NewRemote with WithMerchant)", ErrInvalidArgument)
	}
	if err := checkListenToken(o.token); err != nil {
		return err
	}
	q := url.Values{}
	if len(o.events) > 0 {
		q.Set("events", strings.Join(o.events, ","))
	}
	s := &sseStream{r: r, path: "/sandbox/listen", merchant: true, resume: o.resume, after: o.after}
	return s.run(ctx, func(ev sseEvent) error {
		switch ev.name {
		case "session":
			var v ListenSession
			if err := json.Unmarshal(ev.data, &v); err != nil {
				return errBadEvent
			}
			if o.token == "" {
				o.token = v.Token // the same token on every reconnection
			}
			// Where this connection's notifications begin: after a
			// restart, the new run's start, so the next reconnection
			// neither hears of the restart again nor gets its
			// notifications twice.
			s.resume, s.after = true, v.Position
			return fn(ListenEvent{Session: &v})
		case "notification":
			var v ListenNotification
			var body struct {
				Body *string `json:"body"`
			}
			if ev.id == 0 || json.Unmarshal(ev.data, &v) != nil || json.Unmarshal(ev.data, &body) != nil || body.Body == nil {
				return errBadEvent
			}
			v.Position, v.Body = ev.id, []byte(*body.Body)
			return fn(ListenEvent{Notification: &v})
		case "missed":
			var v ListenMissed
			if err := json.Unmarshal(ev.data, &v); err != nil {
				return errBadEvent
			}
			return fn(ListenEvent{Missed: &v})
		}
		return nil // an event of a later sandbox: not ours to read
	}, func() url.Values {
		qq := url.Values{}
		for k, v := range q {
			qq[k] = v
		}
		if o.token != "" {
			qq.Set("token", o.token)
		}
		return qq
	})
}

// checkListenToken refuses, before any request, a token the sandbox would
// refuse.
func checkListenToken(t string) error {
	if len(t) > 256 {
		return fmt.Errorf("sandbox: Listen: %w: the token is longer than 256 characters", ErrInvalidArgument)
	}
	for _, c := range []byte(t) {
		if c <= ' ' || c >= 0x7f {
			return fmt.Errorf("sandbox: Listen: %w: the token must be printable ASCII without spaces", ErrInvalidArgument)
		}
	}
	return nil
}

// RequestEvent is one event of the request log's follow: a record, or a
// notice of records the follower did not get.
type RequestEvent struct {
	// Position is the record's place in the log, strictly increasing
	// (zero for a Missed).
	Position uint64
	// Record is the request, masked as the request log is; nil for a
	// Missed.
	Record *RequestRecord
	// Missed says records were lost to this follower (see ListenMissed).
	Missed *ListenMissed
}

// FollowRequests follows the request log live (GET
// /sandbox/requests?follow=1, with the control token like the other
// inspection views) and calls fn with each record as the sandbox answers
// it, oldest first, beginning with the records it still keeps of this run
// (at most DefaultRequestLogSize), until ctx ends or fn returns an error.
// It reconnects and resumes as Listen does. Filter by path, status or
// method in fn.
func (r *Remote) FollowRequests(ctx context.Context, fn func(RequestEvent) error) error {
	s := &sseStream{r: r, path: "/sandbox/requests"}
	return s.run(ctx, func(ev sseEvent) error {
		switch ev.name {
		case "session":
			var v struct {
				Position uint64 `json:"position"`
			}
			if err := json.Unmarshal(ev.data, &v); err != nil {
				return errBadEvent
			}
			s.resume, s.after = true, v.Position
		case "request":
			var v RequestRecord
			if ev.id == 0 || json.Unmarshal(ev.data, &v) != nil {
				return errBadEvent
			}
			return fn(RequestEvent{Position: ev.id, Record: &v})
		case "missed":
			var v ListenMissed
			if err := json.Unmarshal(ev.data, &v); err != nil {
				return errBadEvent
			}
			return fn(RequestEvent{Missed: &v})
		}
		return nil
	}, func() url.Values { return url.Values{"follow": {"1"}} })
}

// errBadEvent ends a connection whose event cannot be read: the stream
// is not what the sandbox writes, and the next connection resumes.
var errBadEvent = errors.New("sandbox: the feed sent an event that cannot be read")

// Bounds of a feed as Remote reads it: no answer, however malformed or
// huge, makes it hold unbounded memory or spin.
const (
	maxEventBytes  = 4 << 20          // one event's lines
	feedSilence    = 45 * time.Second // three keep-alives missed: the connection is dead
	feedRetryFirst = 100 * time.Millisecond
	feedRetryMax   = 5 * time.Second
)

// sseStream is one feed followed across reconnections.
type sseStream struct {
	r        *Remote
	path     string
	merchant bool // sign as the merchant (else the control token)
	resume   bool
	after    uint64 // the last position handed over
}

type sseEvent struct {
	id      uint64
	name    string
	data    []byte
	hasData bool
}

// errStop carries the caller's error out of a connection.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// run connects, hands each event to handle and reconnects after the
// connection ends, until ctx ends, handle's caller returns an error, or
// the sandbox refuses for good.
func (s *sseStream) run(ctx context.Context, handle func(sseEvent) error, query func() url.Values) error {
	wait := feedRetryFirst
	for {
		got, err := s.connect(ctx, handle, query())
		var stop errStop
		var ce *ControlError
		switch {
		case errors.As(err, &stop):
			return stop.err
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &ce) && ce.StatusCode/100 == 4 && ce.StatusCode != http.StatusTooManyRequests:
			return err
		}
		if got {
			wait = feedRetryFirst // it worked for a while: the next try is quick
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, feedRetryMax)
	}
}

// connect makes one connection and reads it to its end; got says whether
// an event arrived.
func (s *sseStream) connect(ctx context.Context, handle func(sseEvent) error, q url.Values) (got bool, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u := s.r.base + s.path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u, nil)
	if err != nil {
		return false, errStop{err}
	}
	req.Header.Set("Accept", "text/event-stream")
	if s.resume {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(s.after, 10))
	}
	if s.merchant {
		req.Header.Set("X-Identity", s.r.apiKey)
		sig, err := s.r.signer.Sign(req, nil)
		if err != nil {
			return false, errStop{fmt.Errorf("sandbox: signing the listen request: %w", err)}
		}
		if strings.ContainsAny(sig, "\r\n") {
			return false, errStop{errors.New("sandbox: signing the listen request: the signature contains a line break")}
		}
		req.Header.Set("X-Signature", sig)
	} else if s.r.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.r.token)
	}
	hc := *s.r.hc
	hc.Timeout = 0 // the stream lasts; silence is watched below
	res, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		e := &ControlError{StatusCode: res.StatusCode, Message: http.StatusText(res.StatusCode)}
		var eb struct{ Error, Message string }
		if json.Unmarshal(data, &eb) == nil {
			e.Code, e.Message = eb.Error, eb.Message
		}
		return false, e
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, fmt.Errorf("sandbox: %s answered %q, not an event stream", s.path, ct)
	}
	// A watchdog: a connection silent for feedSilence is given up.
	alive := make(chan struct{}, 1)
	go func() {
		t := time.NewTimer(feedSilence)
		defer t.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-alive:
				t.Reset(feedSilence)
			case <-t.C:
				cancel()
				return
			}
		}
	}()
	rd := bufio.NewReaderSize(res.Body, 64<<10)
	var ev sseEvent
	var size int
	for {
		line, err := readLine(rd, maxEventBytes-size)
		if err != nil {
			return got, err
		}
		select {
		case alive <- struct{}{}:
		default:
		}
		size += len(line)
		switch {
		case len(line) == 0: // the end of an event
			if ev.name != "" || ev.hasData {
				if ev.name == "" {
					ev.name = "message"
				}
				if err := handle(ev); err != nil {
					if errors.Is(err, errBadEvent) {
						return got, err
					}
					return got, errStop{err}
				}
				got = true
				if ev.id != 0 {
					s.resume, s.after = true, ev.id
				}
			}
			ev, size = sseEvent{}, 0
		case line[0] == ':': // a comment: the keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "id":
				n, err := strconv.ParseUint(string(value), 10, 64)
				if err != nil {
					return got, errBadEvent
				}
				ev.id = n
			case "event":
				ev.name = string(value)
			case "data":
				if ev.hasData {
					ev.data = append(ev.data, '\n')
				}
				ev.data, ev.hasData = append(ev.data, value...), true
			}
		}
	}
}

// readLine reads one line without its end (LF, CRLF or CR-less), refusing
// one longer than limit.
func readLine(rd *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := rd.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, errors.New("sandbox: the feed sent an event larger than 4 MB")
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}
