package sandbox

import (
	"context"
	"fmt"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/remote"
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
	if fn == nil {
		return fmt.Errorf("sandbox: Listen: %w: no function to call with the events", ErrInvalidArgument)
	}
	if err := api.CheckListenToken(o.token); err != nil {
		// The sandbox would refuse it: say so before any request.
		return fmt.Errorf("sandbox: Listen: %w: %v", ErrInvalidArgument, err)
	}
	return r.conn().Listen(ctx, o.events, o.token, o.resume, o.after, func(ev remote.Event) error {
		return fn(ListenEvent{Session: (*ListenSession)(ev.Session),
			Notification: (*ListenNotification)(ev.Notification), Missed: (*ListenMissed)(ev.Missed)})
	})
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
	if fn == nil {
		return fmt.Errorf("sandbox: FollowRequests: %w: no function to call with the records", ErrInvalidArgument)
	}
	return r.conn().FollowRequests(ctx, func(ev remote.RequestEvent) error {
		return fn(RequestEvent{Position: ev.Position, Record: (*RequestRecord)(ev.Record), Missed: (*ListenMissed)(ev.Missed)})
	})
}
