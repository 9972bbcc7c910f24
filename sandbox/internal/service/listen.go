package service

import (
	"encoding/json"

	"github.com/paykit-dev/paykit-go/sandbox/internal/feed"
)

// The listen feed's window and queue (sandbox.DefaultListenWindow and
// DefaultListenBuffer say what they bound).
const (
	ListenWindow = 1000
	ListenBuffer = 256
)

// heldNote is a notification for the listen feed of a merchant, made by a
// section and published once the section has committed, as its webhook
// is queued.
type heldNote struct {
	merchant string // API key; empty: none
	n        feed.Notification
	view     any // the body's value, encoded at release when n.Body is nil
}

// newFeeds makes the listen feed (a Log per merchant) and the request
// log's feed, their positions above every earlier run's.
func newFeeds(cfg Config, base uint64) (*feed.Hub[feed.Notification], *feed.Log[any]) {
	keys := make([]string, len(cfg.Merchants))
	for i, m := range cfg.Merchants {
		keys[i] = m.APIKey
	}
	return feed.NewHub[feed.Notification](keys, base, ListenWindow, ListenBuffer),
		feed.New[any](base, RequestLogSize, ListenBuffer)
}

// notifyLocked announces that a resource of merchant m entered a status:
// the webhook to its notify_url when it has one (a snapshot of v, kept in
// the outbox), and the merchant's listen feed, which carries the
// notifications of resources without a notify_url or token too. Both go
// out once the section commits.
func (s *Service) notifyLocked(h hook, m *merchant, target, token string, v any) {
	note := heldNote{n: feed.Notification{Kind: h.Resource, ID: h.ID, Status: h.Status, NotifyURL: target, Token: token}, view: v}
	if m != nil {
		note.merchant = m.APIKey
	}
	if target == "" {
		if note.merchant != "" && s.feed.Used(note.merchant) {
			s.grp.Hold(heldHook{note: note})
		}
		return
	}
	key, dl, ok := s.hooks.prepare(h, target, token, v)
	if !ok {
		return
	}
	note.n.Body = dl.body // the very bytes the receiver gets
	s.tx.Outbox(key, dl.out())
	s.grp.Hold(heldHook{key: key, dl: dl, note: note})
}

// release sends what a committed section held: the webhook to its queue,
// the notification to the listen feed (encoded only when someone ever
// listened to the merchant: nobody else can read it).
func (s *Service) release(h heldHook) {
	if h.dl.rec != nil {
		s.hooks.queue(h.key, h.dl)
	}
	if nt := h.note; nt.merchant != "" && s.feed.Used(nt.merchant) {
		if nt.n.Body == nil {
			b, err := json.Marshal(nt.view)
			if err != nil {
				return
			}
			nt.n.Body = b
		}
		s.feed.Publish(nt.merchant, nt.n)
	}
}
