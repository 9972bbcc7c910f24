package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Delivery states.
const (
	// DeliveryPending is a delivery queued or being retried.
	DeliveryPending = "pending"
	// DeliveryDelivered is a delivery that a receiver answered with a 2xx.
	DeliveryDelivered = "delivered"
	// DeliveryFailed is a delivery given up on: every attempt failed, its
	// URL cannot become a request, or Close stopped it.
	DeliveryFailed = "failed"
)

// DefaultDeliveryLogSize is how many deliveries the log keeps: enough to
// see a test run or a debugging session, bounded so that a sandbox left
// running for days does not grow.
const DefaultDeliveryLogSize = 1000

// Delivery is one webhook notification as the sandbox recorded it: what
// it announced, where it went, and every attempt with the receiver's
// answer. It answers "why did my webhook not arrive" without a packet
// capture. The notification token is never recorded.
type Delivery struct {
	// ID identifies the delivery in the log; it is the sandbox's own and
	// is not sent to the receiver.
	ID string `json:"id"`
	// Resource is "payment" or "payout": the kind of object announced.
	Resource string `json:"resource"`
	// ResourceID is the id of the payment or payout.
	ResourceID string `json:"resource_id"`
	// ExtID is the merchant's own ext_id of the payment or payout, as the
	// payload carries it: the id a merchant's logs know the order by.
	ExtID string `json:"ext_id"`
	// ResourceStatus is the status the notification announces, as the
	// payload writes it (PROCESSING for a payment, processing for a payout).
	ResourceStatus string `json:"resource_status"`
	// URL is the receiver's notify_url, with any password in it masked.
	URL string `json:"url"`
	// State is DeliveryPending, DeliveryDelivered or DeliveryFailed.
	State string `json:"state"`
	// Attempts are the POSTs made so far, oldest first.
	Attempts []DeliveryAttempt `json:"attempts"`
	// CreatedAt is the sandbox clock when the status change queued the
	// delivery, so it lines up with the resource's own timestamps.
	CreatedAt time.Time `json:"created_at"`
	// ResendOf is the ID of the delivery this one repeats (Server.ResendWebhook),
	// empty for a delivery a status change made.
	ResendOf string `json:"resend_of,omitempty"`
}

// DeliveryAttempt is one POST of a delivery and what came back.
type DeliveryAttempt struct {
	// At is the sandbox clock when the attempt started.
	At time.Time `json:"at"`
	// StatusCode is the receiver's HTTP status; 0 when no answer came.
	StatusCode int `json:"status_code"`
	// Error is the transport error when no answer came, else empty.
	Error string `json:"error,omitempty"`
	// Duration is the wall-clock time the attempt took (real time even
	// when the sandbox clock is frozen or advanced).
	Duration time.Duration `json:"duration_ns"`
}

// dispatcher delivers webhooks. Each resource has its own FIFO queue and at
// most one worker goroutine, so notifications of one payment arrive in the
// order of its transitions even when a delivery is being retried, while
// different resources do not wait for each other.
//
// Sockets are bounded: at most Config.WebhookConcurrency attempts are in
// flight at once, and at most Config.WebhookPerReceiver to one receiver
// (host and port). A delivery that finds no free slot waits in its queue:
// none is ever dropped, and the API, which only enqueues, never waits for
// a receiver.
type dispatcher struct {
	client      *http.Client
	maxAttempts int
	total       semaphore
	perReceiver int
	receivers   map[string]semaphore // by host:port, under mu
	wait        time.Duration
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	closeOnce   sync.Once

	// now is the sandbox clock, for the timestamps of the log. It takes
	// the Server's lock, so it is never called with d.mu or d.logMu held.
	now func() time.Time
	// logger gets one line per attempt; nil is silent.
	logger *slog.Logger
	// persist receives a copy of a delivery's record after each attempt
	// and at its end, for the store; nil keeps nothing. Set before the
	// first delivery is queued.
	persist func(Delivery)

	mu      sync.Mutex
	closed  bool
	queues  map[string][]delivery // present while a worker runs for the key
	pending int                   // queued or in-flight deliveries
	idle    chan struct{}         // closed when pending drops to zero

	logMu  sync.Mutex
	log    []logged // ring of the latest deliveries
	logPos int      // next slot to overwrite once the ring is full
	logCap int
}

// logged is one entry of the ring: the record shown to callers, and what
// a resend needs to POST the same body to the same receiver again (the
// token stays here, never in the exported record).
type logged struct {
	key string
	dl  delivery
}

type delivery struct {
	url   string
	token string
	body  []byte
	rec   *Delivery // its entry in the log, updated under logMu
}

func newDispatcher(client *http.Client, maxAttempts int, wait time.Duration, logCap int, now func() time.Time,
	logger *slog.Logger, total, perReceiver int) *dispatcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &dispatcher{client: client, maxAttempts: maxAttempts, wait: wait, ctx: ctx, cancel: cancel,
		queues: map[string][]delivery{}, logCap: logCap, now: now, logger: logger,
		total: make(semaphore, total), perReceiver: perReceiver, receivers: map[string]semaphore{}}
}

// slots takes a socket slot in total and one for the receiver of target,
// waiting for them; it returns the release, or nil when the dispatcher
// closed first.
func (d *dispatcher) slots(target string) func() {
	host := "(invalid URL)"
	if u, err := url.Parse(target); err == nil {
		host = u.Host
	}
	d.mu.Lock()
	rs := d.receivers[host]
	if rs == nil {
		rs = make(semaphore, d.perReceiver)
		d.receivers[host] = rs
	}
	d.mu.Unlock()
	if !rs.acquire(d.ctx) {
		return nil
	}
	if !d.total.acquire(d.ctx) {
		rs.release()
		return nil
	}
	return func() { d.total.release(); rs.release() }
}

// hook names what a notification announces, for the delivery log.
type hook struct {
	key      string // queue key: one FIFO per resource
	resource string // "payment" or "payout"
	id       string
	status   string
	at       time.Time // sandbox clock at the transition
}

// enqueue snapshots v now (the payload must show the state of this
// transition, not a later one) and queues it behind earlier deliveries of
// the same resource.
func (d *dispatcher) prepare(h hook, target, token string, v any) (string, delivery, bool) {
	body, err := json.Marshal(v)
	if err != nil {
		return "", delivery{}, false
	}
	var ids struct {
		ExtID string `json:"ext_id"`
	}
	json.Unmarshal(body, &ids) // both payloads carry ext_id; a missing one stays empty
	rec := &Delivery{ID: "dlv_" + uuid.NewString(), Resource: h.resource, ResourceID: h.id, ExtID: ids.ExtID,
		ResourceStatus: h.status, URL: redactURL(target), State: DeliveryPending, CreatedAt: h.at}
	return h.key, delivery{url: target, token: token, body: body, rec: rec}, true
}

// prepareResend builds the new delivery that resends the logged delivery
// id: the same body, receiver and token, its own record. The caller queues
// it (through the outbox, as any delivery).
func (d *dispatcher) prepareResend(id string, at time.Time) (string, delivery, error) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	for _, e := range d.log {
		if o := e.dl.rec; o.ID == id {
			rec := &Delivery{ID: "dlv_" + uuid.NewString(), Resource: o.Resource, ResourceID: o.ResourceID, ExtID: o.ExtID,
				ResourceStatus: o.ResourceStatus, URL: o.URL, State: DeliveryPending, CreatedAt: at, ResendOf: o.ID}
			return e.key, delivery{url: e.dl.url, token: e.dl.token, body: e.dl.body, rec: rec}, nil
		}
	}
	return "", delivery{}, notFound("webhook delivery", id)
}

// snapshot copies a delivery record under logMu.
func (d *dispatcher) snapshot(rec *Delivery) Delivery {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	c := *rec
	c.Attempts = append([]DeliveryAttempt{}, rec.Attempts...)
	return c
}

// storedDelivery is a delivery as the store gives it back at start.
type storedDelivery struct {
	key string
	dl  delivery
}

// restore puts the stored deliveries (oldest first) back: into the log,
// and those still pending at the last stop into the queues, so a webhook
// the sandbox owed is sent after a restart (at least once: one in flight
// at a kill may arrive twice).
func (d *dispatcher) restore(list []storedDelivery) {
	for _, sd := range list {
		if sd.dl.rec.State == DeliveryPending {
			d.queue(sd.key, sd.dl)
		} else {
			d.record(sd.key, sd.dl)
		}
	}
}

// queue records dl in the log and hands it to the resource's worker; once
// the dispatcher is closed it does nothing (with a file, the outbox keeps
// dl for the next start).
func (d *dispatcher) queue(key string, dl delivery) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.record(key, dl)
	if d.pending == 0 {
		d.idle = make(chan struct{})
	}
	d.pending++
	q, running := d.queues[key]
	d.queues[key] = append(q, dl)
	if !running {
		d.wg.Add(1)
		go d.run(key)
	}
}

func (d *dispatcher) run(key string) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		q := d.queues[key]
		if len(q) == 0 {
			delete(d.queues, key)
			d.mu.Unlock()
			return
		}
		next := q[0]
		d.mu.Unlock()

		d.deliver(next)

		d.mu.Lock()
		d.queues[key] = d.queues[key][1:]
		d.pending--
		if d.pending == 0 {
			close(d.idle)
		}
		d.mu.Unlock()
	}
}

// deliver POSTs one notification, retrying transport errors and non-2xx
// answers with exponential backoff (wait, 2*wait, 4*wait, ...) until
// maxAttempts, then gives up. It stops at once when the dispatcher closes.
func (d *dispatcher) deliver(dl delivery) {
	state := DeliveryFailed
	made := 0
	defer func() {
		if state == DeliveryFailed && made > 0 && d.ctx.Err() == nil {
			d.logGaveUp(dl, made)
		}
		d.finish(dl.rec, state)
	}()
	wait := d.wait
	for attempt := 1; attempt <= d.maxAttempts; attempt++ {
		if d.ctx.Err() != nil {
			return
		}
		made = attempt
		ok, retry := d.attempt(dl, attempt)
		if ok {
			state = DeliveryDelivered
			return
		}
		if !retry || attempt == d.maxAttempts {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-d.ctx.Done():
			t.Stop()
			return
		}
		wait *= 2
	}
}

// attempt makes one POST and records it. ok is a 2xx answer; retry is
// false when trying again cannot help.
func (d *dispatcher) attempt(dl delivery, n int) (ok, retry bool) {
	at := d.now()
	start := time.Now()
	a := DeliveryAttempt{At: at}
	defer func() {
		a.Duration = time.Since(start)
		d.addAttempt(dl.rec, a)
		d.logAttempt(dl, n, a)
	}()
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, dl.url, bytes.NewReader(dl.body))
	if err != nil {
		// A URL that cannot become a request never will: give up.
		a.Error = "invalid notify_url"
		return false, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	if dl.token != "" {
		req.Header.Set("X-Notification-Token", dl.token)
	}
	release := d.slots(dl.url)
	if release == nil {
		a.Error = "sandbox closed"
		return false, false
	}
	defer release()
	resp, err := d.client.Do(req)
	if err != nil {
		a.Error = transportError(err)
		return false, true
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	a.StatusCode = resp.StatusCode
	ok = resp.StatusCode >= 200 && resp.StatusCode < 300
	if !ok && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// Redirects are not followed: the receiver did not take the
		// notification, and another URL is not the merchant's notify_url.
		a.Error = "redirect not followed"
	}
	return ok, !ok
}

// transportError is the cause of a failed POST without the URL that
// *url.Error prefixes: a notify_url's query may carry the merchant's own
// secret.
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// logAttempt writes one line per attempt: resource, status announced,
// target host (not the full URL), attempt number, and the answer.
func (d *dispatcher) logAttempt(dl delivery, n int, a DeliveryAttempt) {
	if d.logger == nil {
		return
	}
	host := "(invalid URL)"
	if u, err := url.Parse(dl.url); err == nil {
		host = u.Host
	}
	attrs := []slog.Attr{slog.String("resource", dl.rec.Resource), slog.String("resource_id", dl.rec.ResourceID),
		slog.String("status", dl.rec.ResourceStatus), slog.String("target_host", host), slog.Int("attempt", n),
		slog.String("duration", a.Duration.String())}
	level := slog.LevelInfo
	if a.StatusCode != 0 {
		attrs = append(attrs, slog.Int("response_status", a.StatusCode))
	}
	if a.Error != "" {
		attrs = append(attrs, slog.String("error", a.Error))
	}
	if a.StatusCode < 200 || a.StatusCode > 299 {
		level = slog.LevelWarn // a failed attempt: someone's webhook is not arriving
	}
	d.logger.LogAttrs(context.Background(), level, "webhook attempt", attrs...)
}

// logGaveUp writes the ERROR line of a delivery the sandbox stopped
// trying: the merchant will never get this notification unless someone
// resends it. A sandbox that is closing gives up silently.
func (d *dispatcher) logGaveUp(dl delivery, attempts int) {
	if d.logger == nil {
		return
	}
	host := "(invalid URL)"
	if u, err := url.Parse(dl.url); err == nil {
		host = u.Host
	}
	d.logger.LogAttrs(context.Background(), slog.LevelError, "webhook given up",
		slog.String("resource", dl.rec.Resource), slog.String("resource_id", dl.rec.ResourceID),
		slog.String("status", dl.rec.ResourceStatus), slog.String("target_host", host),
		slog.Int("attempts", attempts), slog.String("delivery_id", dl.rec.ID))
}

// redactURL masks the secrets a notify_url may carry: its password and
// every query value (?api_key=...). The log is shown to anyone who can
// reach the inspection endpoints and the dashboard.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// record appends dl to the ring, overwriting the oldest entry once full.
func (d *dispatcher) record(key string, dl delivery) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	if d.logCap <= 0 {
		return
	}
	e := logged{key: key, dl: dl}
	if len(d.log) < d.logCap {
		d.log = append(d.log, e)
		return
	}
	d.log[d.logPos] = e
	d.logPos = (d.logPos + 1) % d.logCap
}

func (d *dispatcher) addAttempt(rec *Delivery, a DeliveryAttempt) {
	d.logMu.Lock()
	rec.Attempts = append(rec.Attempts, a)
	d.logMu.Unlock()
	if d.persist != nil && d.ctx.Err() == nil {
		d.persist(d.snapshot(rec))
	}
}

func (d *dispatcher) finish(rec *Delivery, state string) {
	d.logMu.Lock()
	rec.State = state
	d.logMu.Unlock()
	// A delivery cut short by Close stays pending in the store: the next
	// start sends it again, which is what a graceful stop owes.
	if d.persist != nil && (state == DeliveryDelivered || d.ctx.Err() == nil) {
		d.persist(d.snapshot(rec))
	}
}

// deliveries copies the log, newest first. The copies share nothing with
// the log, so callers may keep or modify them.
func (d *dispatcher) deliveries() []Delivery {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	out := make([]Delivery, 0, len(d.log))
	n := len(d.log)
	for i := 0; i < n; i++ {
		// The newest entry sits just before logPos (or at the end while
		// the ring is filling).
		rec := d.log[((d.logPos-1-i)%n+n)%n].dl.rec
		c := *rec
		c.Attempts = append([]DeliveryAttempt{}, rec.Attempts...) // [], not null, while none was made
		out = append(out, c)
	}
	return out
}

// bodies maps each logged delivery's ID to the JSON body it POSTs, for the
// dashboard's payload view. The bodies are shared, not copied: nothing
// writes to a body after enqueue.
func (d *dispatcher) bodies() map[string][]byte {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	out := make(map[string][]byte, len(d.log))
	for _, e := range d.log {
		out[e.dl.rec.ID] = e.dl.body
	}
	return out
}

func (d *dispatcher) flush(ctx context.Context) error {
	for {
		d.mu.Lock()
		if d.pending == 0 {
			d.mu.Unlock()
			return nil
		}
		idle := d.idle
		d.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (d *dispatcher) close() {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		d.mu.Unlock()
		d.cancel()
		d.wg.Wait()
	})
}
