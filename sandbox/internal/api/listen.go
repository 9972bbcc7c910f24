package api

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/feed"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// ListenPath is the route of the listen feed.
const ListenPath = "/sandbox/listen"

// MaxListenToken bounds the ?token= of a listen session: it becomes a
// header of every forwarded notification.
const MaxListenToken = 256

// keepAlive is how often a feed with nothing to say sends a comment line,
// so that proxies and clients tell a quiet feed from a dead connection.
// A variable so that a test need not wait 15 seconds.
var keepAlive = 15 * time.Second

// writeWait bounds one write of a feed: a listener whose connection
// takes no bytes for this long is cut off (its queue was losing its
// oldest events meanwhile, never holding up the sandbox).
const writeWait = 30 * time.Second

// listenRoutes registers GET /sandbox/listen: the merchant's
// notifications as Server-Sent Events, authenticated as /v1 requests are
// (no control token, no Host check: the signature is the guard).
func (a *API) listenRoutes(mux *http.ServeMux) {
	if a.cfg.Feed == nil {
		return
	}
	mux.HandleFunc("GET "+ListenPath, a.listen)
}

// listenSession is the first event of a listen feed.
type listenSession struct {
	Token    string `json:"token"`
	Position uint64 `json:"position"`
}

// listenNotification is a notification as the feed writes it.
type listenNotification struct {
	Kind      string            `json:"kind"`
	ID        string            `json:"id"`
	Status    string            `json:"status"`
	NotifyURL string            `json:"notify_url"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
}

// listenMissed is a feed's notice of events a listener did not get.
type listenMissed struct {
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

func (a *API) listen(w http.ResponseWriter, r *http.Request) {
	key, _, ok := a.authenticate(w, r, NoBodyCap, spec.CodePAY002)
	if !ok {
		return
	}
	log := a.cfg.Feed.Log(key)
	q := r.URL.Query()
	resume, after, err := resumePosition(r)
	if err != nil {
		WriteError(w, NewError(http.StatusBadRequest, CodeControlInvalid, err.Error()))
		return
	}
	keep, err := kindFilter(q.Get("events"))
	if err != nil {
		WriteError(w, NewError(http.StatusBadRequest, CodeControlInvalid, err.Error()))
		return
	}
	token := q.Get("token")
	if err := CheckListenToken(token); err != nil {
		WriteError(w, NewError(http.StatusBadRequest, CodeControlInvalid, err.Error()))
		return
	}
	if token == "" {
		token = newListenToken()
	}
	sub, from := log.Subscribe(resume, after, keep)
	defer sub.Close()
	stream(w, r, sub, listenSession{Token: token, Position: from}, func(b *bytes.Buffer, it feed.Item[feed.Notification]) {
		n := it.Value
		tok := n.Token
		if tok == "" {
			tok = token
		}
		writeEvent(b, it.Pos, "notification", listenNotification{Kind: n.Kind, ID: n.ID, Status: n.Status,
			NotifyURL: mask.URL(n.NotifyURL), Body: string(n.Body), Headers: map[string]string{
				"Content-Type": "application/json", "User-Agent": webhook.UserAgent, "X-Notification-Token": tok}})
	})
}

// followRequests serves GET /sandbox/requests?follow=1: the request log
// as Server-Sent Events, one "request" event per record, whose id is its
// position; without a position to resume from it begins with the records
// the feed still holds, so a follower sees the recent past, then the rest
// as it happens.
func followRequests(w http.ResponseWriter, r *http.Request, log *feed.Log[any]) {
	resume, after, err := resumePosition(r)
	if err != nil {
		WriteError(w, NewError(http.StatusBadRequest, CodeControlInvalid, err.Error()))
		return
	}
	if !resume {
		resume, after = true, log.Base()
	}
	sub, from := log.Subscribe(resume, after, nil)
	defer sub.Close()
	stream(w, r, sub, struct {
		Position uint64 `json:"position"`
	}{from}, func(b *bytes.Buffer, it feed.Item[any]) { writeEvent(b, it.Pos, "request", it.Value) })
}

// resumePosition reads where a feed resumes: the Last-Event-ID header
// (what an EventSource sends when it reconnects), else ?after=.
func resumePosition(r *http.Request) (bool, uint64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return false, 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return false, 0, fmt.Errorf("the position to resume from (Last-Event-ID or after) must be a decimal position a feed gave, not %q", clip(v))
	}
	return true, n, nil
}

// kindFilter is ?events=payment,payout,withdrawal as a filter; empty
// keeps every kind.
func kindFilter(events string) (func(feed.Notification) bool, error) {
	if events == "" {
		return nil, nil
	}
	var kinds []string
	for _, k := range strings.Split(events, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(feed.Kinds, k) {
			return nil, fmt.Errorf("events: unknown kind %q; the kinds are %s", clip(k), strings.Join(feed.Kinds, ", "))
		}
		kinds = append(kinds, k)
	}
	return func(n feed.Notification) bool { return slices.Contains(kinds, n.Kind) }, nil
}

// CheckListenToken refuses a ?token= that could not be sent as a header
// value as given: the one rule, which the Remote's Listen applies too
// before any request.
func CheckListenToken(t string) error {
	if len(t) > MaxListenToken {
		return fmt.Errorf("token must be at most %d characters", MaxListenToken)
	}
	for _, c := range []byte(t) {
		if c <= ' ' || c >= 0x7f {
			return fmt.Errorf("token must be printable ASCII without spaces")
		}
	}
	return nil
}

// newListenToken makes a session token: 128 random bits, as hex.
func newListenToken() string {
	var b [16]byte
	rand.Read(b[:])
	return "lst_" + hex.EncodeToString(b[:])
}

// clip cuts a value echoed in an error to a readable length.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// stream writes a feed as Server-Sent Events until the client goes, the
// feed ends or a write stalls for writeWait: first the "session" event
// (session), then each item as write renders it (a Missed as a "missed" event), with
// a comment line every keepAlive when there is nothing to say. The
// handler's read deadline is lifted (the http.Server's ReadTimeout would
// otherwise end the request's context) and each write gets its own
// deadline in place of the WriteTimeout.
func stream[T any](w http.ResponseWriter, r *http.Request, sub *feed.Sub[T], session any,
	write func(*bytes.Buffer, feed.Item[T])) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy in front must not hold events back
	var b bytes.Buffer
	writeEvent(&b, 0, "session", session)
	send := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
		if _, err := w.Write(b.Bytes()); err != nil {
			return false
		}
		b.Reset()
		return rc.Flush() == nil
	}
	if !send() {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	var items []feed.Item[T]
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			b.WriteString(": ping\n\n")
		case <-sub.Ready():
			var ended bool
			items, ended = sub.Drain(items[:0])
			if ended {
				return
			}
			for _, it := range items {
				if m := it.Missed; m != nil {
					writeEvent(&b, 0, "missed", listenMissed{From: m.From, To: m.To, Count: m.Count, Reason: m.Reason})
					continue
				}
				write(&b, it)
			}
			clear(items) // the bodies go with the batch
		}
		if b.Len() > 0 && !send() {
			return
		}
	}
}

// writeEvent appends one event: its id when pos is not zero, its name,
// and v as one line of JSON (encoding/json never writes a line break).
func writeEvent(b *bytes.Buffer, pos uint64, event string, v any) {
	if pos != 0 {
		b.WriteString("id: ")
		b.WriteString(strconv.FormatUint(pos, 10))
		b.WriteByte('\n')
	}
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteString("\ndata: ")
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`{}`)
	}
	b.Write(data)
	b.WriteString("\n\n")
}
