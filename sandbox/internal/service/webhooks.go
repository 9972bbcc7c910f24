package service

import (
	"context"
	"errors"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Delivery is one webhook notification as the sandbox recorded it.
type Delivery = webhook.Delivery

// hook names what a notification announces, for the delivery log.
type hook = webhook.Hook

// delivery is a webhook delivery in the form the store keeps in its
// outbox: where it goes, the token, the body, its record in the log.
type delivery struct {
	url   string
	token string
	body  []byte
	rec   *Delivery
}

func (dl delivery) out() webhook.Outgoing {
	return webhook.Outgoing{URL: dl.url, Token: dl.token, Body: dl.body, Rec: dl.rec}
}

func deliveryOf(o webhook.Outgoing) delivery {
	return delivery{url: o.URL, token: o.Token, body: o.Body, rec: o.Rec}
}

// deliverer is what the Server needs of webhook delivery: the webhook
// layer's Dispatcher (queues, workers, retries, log, self guard).
type deliverer interface {
	Prepare(h webhook.Hook, target, token string, v any) (string, webhook.Outgoing, bool)
	Queue(key string, o webhook.Outgoing)
	Restore(list []webhook.Stored)
	Resend(id string, at time.Time) (string, webhook.Outgoing, error)
	Snapshot(rec *Delivery) Delivery
	Deliveries() []Delivery
	Bodies() map[string][]byte
	Backlog() int
	Flush(ctx context.Context) error
	Close()
	Wake(now time.Time)
}

// webhooks is the Server's side of its deliverer: the store's form of a
// delivery in and out, and the deliverer's refusals as the Server's errors.
type webhooks struct{ d deliverer }

// prepare snapshots v as the delivery of h (see webhook.Dispatcher.Prepare).
func (w webhooks) prepare(h hook, target, token string, v any) (string, delivery, bool) {
	key, o, ok := w.d.Prepare(h, target, token, v)
	return key, deliveryOf(o), ok
}

// queue sends dl, behind the earlier deliveries under key.
func (w webhooks) queue(key string, dl delivery) { w.d.Queue(key, dl.out()) }

// restore puts the stored deliveries back: the log, and the outbox sent
// again.
func (w webhooks) restore(list []webhook.Stored) { w.d.Restore(list) }

// prepareResend builds the delivery that resends the logged delivery id;
// ErrNotFound when the log does not have it.
func (w webhooks) prepareResend(id string, at time.Time) (string, delivery, error) {
	key, o, err := w.d.Resend(id, at)
	if errors.Is(err, webhook.ErrUnknownDelivery) {
		return "", delivery{}, notFound("webhook delivery", id)
	}
	return key, deliveryOf(o), err
}

func (w webhooks) snapshot(rec *Delivery) Delivery { return w.d.Snapshot(rec) }
func (w webhooks) deliveries() []Delivery          { return w.d.Deliveries() }
func (w webhooks) bodies() map[string][]byte       { return w.d.Bodies() }
func (w webhooks) backlog() int                    { return w.d.Backlog() }
func (w webhooks) flush(ctx context.Context) error { return w.d.Flush(ctx) }
func (w webhooks) close()                          { w.d.Close() }

// wake releases the deliveries the faults delayed or held until now.
func (w webhooks) wake(now time.Time) { w.d.Wake(now) }

// webhookFaults are the delivery faults in force, nil when none.
func (s *Service) webhookFaults() *webhook.Faults {
	if f := s.cfg.WebhookFaults; f.On() {
		return &f
	}
	return nil
}
