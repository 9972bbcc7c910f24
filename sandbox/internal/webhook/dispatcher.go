// Package webhook delivers the sandbox's webhook notifications: one FIFO
// queue per resource, a bounded pool of workers with a cap per receiver,
// retries with doubling waits, a bounded log of every delivery and its
// attempts, and the self guard that keeps a delivery from ever reaching
// the sandbox itself (guard.go). It knows nothing of payments or stores:
// its owner hands it bodies to send (Prepare, Queue), a clock and a place
// to keep each record's changes (Config).
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paykit-dev/paykit-go/internal/mask"
)

// Delivery states.
const (
	// Pending is a delivery queued or being retried.
	Pending = "pending"
	// Delivered is a delivery that a receiver answered with a 2xx.
	Delivered = "delivered"
	// Failed is a delivery given up on: every attempt failed, its URL
	// cannot become a request, or Close stopped it.
	Failed = "failed"
)

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
	// State is Pending, Delivered or Failed.
	State string `json:"state"`
	// Attempts are the POSTs made so far, oldest first.
	Attempts []Attempt `json:"attempts"`
	// CreatedAt is the sandbox clock when the status change queued the
	// delivery, so it lines up with the resource's own timestamps.
	CreatedAt time.Time `json:"created_at"`
	// ResendOf is the ID of the delivery this one repeats (Dispatcher.Resend,
	// or the duplicate fault), empty for a delivery a status change made.
	ResendOf string `json:"resend_of,omitempty"`
	// Faults are the delivery faults (Config.Faults) this delivery was
	// given: "delay", "reorder", "duplicate" (it is the copy); empty for
	// none.
	Faults []string `json:"faults,omitempty"`
	// DelayedBy is the wait the delay fault put before its first attempt,
	// on the sandbox clock.
	DelayedBy time.Duration `json:"delayed_ns,omitempty"`
}

// ErrUnknownDelivery is Resend's answer for an id not in the log.
var ErrUnknownDelivery = errors.New("webhook delivery not in the log")

// Attempt is one POST of a delivery and what came back.
type Attempt struct {
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

// Dispatcher delivers webhooks. Each resource has its own FIFO queue, so
// notifications of one payment arrive in the order of its transitions even
// when a delivery is being retried, while different resources do not wait
// for each other.
//
// Goroutines and sockets are bounded: at most Config.WebhookConcurrency
// workers make attempts, at most Config.WebhookPerReceiver of them to one
// receiver (host and port), and a worker exists only while there is an
// attempt to make. A queued delivery, or one waiting out its retry delay
// (a timer, no goroutine), is data: its payload and its log record. None
// is ever dropped, and the API, which only enqueues, never waits for a
// receiver; Backlog says how many wait.
type Dispatcher struct {
	client      *http.Client
	maxAttempts int
	workers     int // cap on workers, Config.WebhookConcurrency
	perReceiver int
	wait        time.Duration
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	closeOnce   sync.Once

	// now, logger and persist are Config's Now, Logger and Persist: now
	// and persist are never called with d.mu or d.logMu held.
	now     func() time.Time
	logger  *slog.Logger
	persist func(Delivery)

	mu        sync.Mutex
	closed    bool
	queues    map[string]*hookQueue     // by resource key, present while it holds deliveries
	receivers map[string]*receiverQueue // by host:port, present while it has work
	runnable  []*receiverQueue          // receivers with a due queue and a free slot, taking turns
	running   int                       // workers alive
	starting  int                       // workers started that have not yet taken work
	pending   int                       // queued, in-flight or retrying deliveries
	idle      chan struct{}             // closed when pending drops to zero

	// The delivery faults (faults.go), under mu: the seeded draws, the
	// queues whose head waits for its delay or hold, the clock they wait
	// on, and the timers that wake them with the real clock.
	faults     Faults
	rng        *rand.Rand
	seq        uint64
	parked     []*hookQueue
	clock      time.Time
	realTimers bool
	wakers     map[*time.Timer]struct{}

	logMu  sync.Mutex
	log    []logged // ring of the latest deliveries
	logPos int      // next slot to overwrite once the ring is full
	logCap int
}

// hookQueue is the FIFO of one resource. Its head is always in exactly
// one place: due in its receiver's queue, in a worker's attempt, or
// waiting for its retry timer.
type hookQueue struct {
	key      string
	items    []Outgoing
	attempts int         // attempts made on items[0]
	timer    *time.Timer // the retry wait of items[0], nil when not waiting
	parked   bool        // items[0] waits for its delay or hold (Dispatcher.parked)
}

// receiverQueue is the resource queues whose head is due to one receiver,
// in the order they became due, and the attempts in flight to it.
type receiverQueue struct {
	host     string
	due      []*hookQueue
	inflight int
	listed   bool // in Dispatcher.runnable
}

// logged is one entry of the ring: the record shown to callers, and what
// a resend needs to POST the same body to the same receiver again (the
// token stays here, never in the exported record).
type logged struct {
	key string
	dl  Outgoing
}

// Outgoing is one notification to send: where, with which token, what
// body, and its record in the log (updated under the log's lock; read it
// through Snapshot).
type Outgoing struct {
	// URL is the receiver's notify_url, as given (secrets and all).
	URL string
	// Token is sent as X-Notification-Token when not empty; it is never
	// put in the log.
	Token string
	// Body is the JSON payload, snapshotted when the delivery was made.
	Body []byte
	// Rec is the delivery's entry in the log.
	Rec *Delivery

	// The delivery faults' decisions (faults.go): no attempt before
	// notBefore (a wait of wait), held for reordering until holdUntil (a
	// wait of holdWait) or until the next delivery of the resource
	// overtakes it; seq orders deliveries that become free together.
	notBefore, holdUntil time.Time
	wait, holdWait       time.Duration
	seq                  uint64
}

// Config is what a Dispatcher is built with.
type Config struct {
	// Client makes the POSTs (NewClient's, in the sandbox: no redirects,
	// no self-delivery).
	Client *http.Client
	// MaxAttempts is how many POSTs a delivery gets before it is given up.
	MaxAttempts int
	// RetryWait is the wait after the first failed attempt, doubled after
	// each further one.
	RetryWait time.Duration
	// LogSize is how many deliveries the log keeps (the oldest go first).
	LogSize int
	// Workers caps the goroutines making attempts, PerReceiver those
	// making attempts to one receiver (host and port).
	Workers, PerReceiver int
	// Now is the owner's clock, for the timestamps of the log. It may take
	// the owner's lock: it is never called with the Dispatcher's held.
	Now func() time.Time
	// Logger gets one line per attempt; nil is silent.
	Logger *slog.Logger
	// Persist receives a copy of a delivery's record after each attempt
	// and at its end, for the owner's store; nil keeps nothing. It may
	// take the owner's lock: it is never called with the Dispatcher's
	// held (Queue may be called under the owner's lock).
	Persist func(Delivery)
	// Faults make deliveries arrive twice, late or out of order on purpose
	// (checked with Faults.Check by the owner); the zero value sends every
	// delivery once, in order, at once.
	Faults Faults
	// RealTimers: Now is the real clock (plus an offset), so a delayed or
	// held delivery is released by a timer as well as by Wake; otherwise
	// only Wake releases it (an injected clock moves only when told).
	RealTimers bool
}

// New returns a Dispatcher with no deliveries; Close stops it.
func New(c Config) *Dispatcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &Dispatcher{client: c.Client, maxAttempts: c.MaxAttempts, wait: c.RetryWait, ctx: ctx, cancel: cancel,
		queues: map[string]*hookQueue{}, receivers: map[string]*receiverQueue{}, logCap: c.LogSize, now: c.Now,
		logger: c.Logger, workers: c.Workers, perReceiver: c.PerReceiver, persist: c.Persist,
		faults: c.Faults, rng: newRand(c.Faults.Seed), realTimers: c.RealTimers, wakers: map[*time.Timer]struct{}{}}
}

// Faults are the delivery faults the Dispatcher was made with.
func (d *Dispatcher) Faults() Faults { return d.faults }

// receiverOf is the host and port a delivery goes to: the unit of
// Config.WebhookPerReceiver, and the target_host of the log lines.
func receiverOf(target string) string {
	if u, err := url.Parse(target); err == nil {
		return u.Host
	}
	return "(invalid URL)"
}

// dueLocked puts q, whose head is ready for an attempt, in its receiver's
// line, and makes sure a worker will take it.
func (d *Dispatcher) dueLocked(q *hookQueue) {
	host := receiverOf(q.items[0].URL)
	rq := d.receivers[host]
	if rq == nil {
		rq = &receiverQueue{host: host}
		d.receivers[host] = rq
	}
	rq.due = append(rq.due, q)
	d.listLocked(rq)
	d.spawnLocked()
}

// listLocked makes rq runnable when it has a due queue and a free slot.
func (d *Dispatcher) listLocked(rq *receiverQueue) {
	if !rq.listed && len(rq.due) > 0 && rq.inflight < d.perReceiver {
		rq.listed = true
		d.runnable = append(d.runnable, rq)
	}
}

// spawnLocked starts a worker when there is work no worker is on its way
// to, and the cap allows: one at a time, each new worker starting the
// next if work remains, so the pool grows to what is runnable and no more.
func (d *Dispatcher) spawnLocked() {
	if d.closed || d.starting > 0 || d.running >= d.workers || len(d.runnable) == 0 {
		return
	}
	d.running++
	d.starting++
	d.wg.Add(1)
	go d.work()
}

// work makes attempts until nothing is runnable, then ends.
func (d *Dispatcher) work() {
	defer d.wg.Done()
	d.mu.Lock()
	d.starting--
	for !d.closed && len(d.runnable) > 0 {
		rq := d.runnable[0]
		d.runnable[0] = nil
		d.runnable = d.runnable[1:]
		rq.listed = false
		q := rq.due[0]
		rq.due[0] = nil
		rq.due = rq.due[1:]
		rq.inflight++
		d.listLocked(rq) // at the back of the line: receivers take turns
		d.spawnLocked()
		dl, n := q.items[0], q.attempts+1
		d.mu.Unlock()

		ok, retry := d.attempt(dl, n)

		d.mu.Lock()
		rq.inflight--
		d.listLocked(rq)
		q.attempts = n
		if !ok && retry && n < d.maxAttempts && !d.closed {
			q.timer = time.AfterFunc(d.backoff(n), func() { d.retry(q) })
		} else {
			d.mu.Unlock()
			d.done(dl, ok, n)
			d.mu.Lock()
			d.popLocked(q)
		}
		if len(rq.due) == 0 && rq.inflight == 0 && !rq.listed {
			delete(d.receivers, rq.host)
		}
	}
	d.running--
	d.mu.Unlock()
}

// backoff is the wait after failed attempt n: wait, 2*wait, 4*wait, ...,
// no longer doubled once it would overflow (a large -webhook-attempts).
func (d *Dispatcher) backoff(n int) time.Duration {
	w := d.wait
	for i := 1; i < n && w <= math.MaxInt64/2; i++ {
		w *= 2
	}
	return w
}

// retry makes q's head due again once its wait is over.
func (d *Dispatcher) retry(q *hookQueue) {
	d.mu.Lock()
	defer d.mu.Unlock()
	q.timer = nil
	if !d.closed {
		d.dueLocked(q)
	}
}

// done ends a delivery: its final state in the log and the store, and the
// ERROR line of one given up on (a closing sandbox gives up silently).
func (d *Dispatcher) done(dl Outgoing, ok bool, attempts int) {
	state := Delivered
	if !ok {
		state = Failed
		if d.ctx.Err() == nil {
			d.logGaveUp(dl, attempts)
		}
	}
	d.finish(dl.Rec, state)
}

// popLocked removes q's finished head; the next delivery of the resource
// becomes due, or the queue goes.
func (d *Dispatcher) popLocked(q *hookQueue) {
	q.items[0] = Outgoing{}
	q.items = q.items[1:]
	q.attempts = 0
	d.pending--
	if d.pending == 0 {
		close(d.idle)
	}
	if len(q.items) > 0 && !d.closed {
		d.readyLocked(q)
	} else if len(q.items) == 0 {
		delete(d.queues, q.key)
	}
}

// Backlog is how many deliveries are not finished: queued, in flight or
// waiting to retry.
func (d *Dispatcher) Backlog() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pending
}

// Hook names what a notification announces, for the delivery log.
type Hook struct {
	Key      string    // queue key: one FIFO per resource
	Resource string    // "payment" or "payout"
	ID       string    // the resource's id
	Status   string    // the status announced, as the payload writes it
	At       time.Time // the owner's clock at the transition
}

// Prepare snapshots v now (the payload must show the state of this
// transition, not a later one) as the delivery to queue under the
// returned key, behind earlier deliveries of the same resource; false
// when v cannot be encoded. The caller queues it (Queue), once it has
// kept it.
func (d *Dispatcher) Prepare(h Hook, target, token string, v any) (string, Outgoing, bool) {
	body, err := json.Marshal(v)
	if err != nil {
		return "", Outgoing{}, false
	}
	var ids struct {
		ExtID string `json:"ext_id"`
	}
	json.Unmarshal(body, &ids) // both payloads carry ext_id; a missing one stays empty
	rec := &Delivery{ID: "dlv_" + uuid.NewString(), Resource: h.Resource, ResourceID: h.ID, ExtID: ids.ExtID,
		ResourceStatus: h.Status, URL: mask.URL(target), State: Pending, CreatedAt: h.At}
	return h.Key, Outgoing{URL: target, Token: token, Body: body, Rec: rec}, true
}

// Resend builds the new delivery that resends the logged delivery
// id: the same body, receiver and token, its own record. The caller queues
// it (through the outbox, as any delivery).
func (d *Dispatcher) Resend(id string, at time.Time) (string, Outgoing, error) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	for _, e := range d.log {
		if o := e.dl.Rec; o.ID == id {
			rec := &Delivery{ID: "dlv_" + uuid.NewString(), Resource: o.Resource, ResourceID: o.ResourceID, ExtID: o.ExtID,
				ResourceStatus: o.ResourceStatus, URL: o.URL, State: Pending, CreatedAt: at, ResendOf: o.ID}
			return e.key, Outgoing{URL: e.dl.URL, Token: e.dl.Token, Body: e.dl.Body, Rec: rec}, nil
		}
	}
	return "", Outgoing{}, fmt.Errorf("%w: %q", ErrUnknownDelivery, id)
}

// Snapshot copies a delivery record under the log's lock.
func (d *Dispatcher) Snapshot(rec *Delivery) Delivery {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	return copyRecord(rec)
}

// copyRecord copies rec, sharing nothing with it; the caller holds the
// log's lock. Attempts is [], not null, while none was made.
func copyRecord(rec *Delivery) Delivery {
	c := *rec
	c.Attempts = append([]Attempt{}, rec.Attempts...)
	c.Faults = slices.Clone(rec.Faults)
	return c
}

// Stored is a delivery as its owner's store gives it back at start.
type Stored struct {
	// Key is the queue the delivery goes in: one FIFO per resource.
	Key string
	// Out is the delivery; one whose record is Pending is sent again.
	Out Outgoing
}

// Restore puts the stored deliveries (oldest first) back: into the log,
// and those still pending at the last stop into the queues, so a webhook
// the sandbox owed is sent after a restart (at least once: one in flight
// at a kill may arrive twice).
func (d *Dispatcher) Restore(list []Stored) {
	for _, sd := range list {
		if sd.Out.Rec.State == Pending {
			d.Queue(sd.Key, sd.Out)
		} else {
			d.Record(sd.Key, sd.Out)
		}
	}
}

// Queue records dl in the log and puts it behind the earlier deliveries
// of its resource; once the dispatcher is closed it does nothing (with a
// file, the outbox keeps dl for the next start).
func (d *Dispatcher) Queue(key string, dl Outgoing) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.seq++
	dl.seq = d.seq
	items := []Outgoing{dl}
	if d.faults.On() { // dl's draws (faults.go), and its duplicate
		if dup := d.decideLocked(&items[0]); dup != nil {
			d.seq++
			dup.seq = d.seq
			items = append(items, *dup)
		}
	}
	for _, it := range items {
		d.Record(key, it)
		if d.pending == 0 {
			d.idle = make(chan struct{})
		}
		d.pending++
	}
	q := d.queues[key]
	switch {
	case q == nil:
		q = &hookQueue{key: key, items: items}
		d.queues[key] = q
		d.readyLocked(q)
	case q.parked && !q.items[0].holdUntil.IsZero():
		// The head held for reordering is overtaken: this one goes first.
		held := &q.items[0]
		held.holdUntil, held.holdWait = time.Time{}, 0
		q.items = append(items, q.items...)
		d.unparkLocked(q)
		d.readyLocked(q)
	default:
		q.items = append(q.items, items...) // its head is being delivered: these follow
	}
}

// attempt makes one POST and records it. ok is a 2xx answer; retry is
// false when trying again cannot help.
func (d *Dispatcher) attempt(dl Outgoing, n int) (ok, retry bool) {
	at := d.now()
	start := time.Now()
	a := Attempt{At: at}
	defer func() {
		a.Duration = time.Since(start)
		d.addAttempt(dl.Rec, a)
		d.logAttempt(dl, n, a)
	}()
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, dl.URL, bytes.NewReader(dl.Body))
	if err != nil {
		// A URL that cannot become a request never will: give up.
		a.Error = "invalid notify_url"
		return false, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if dl.Token != "" {
		req.Header.Set("X-Notification-Token", dl.Token)
	}
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
func (d *Dispatcher) logAttempt(dl Outgoing, n int, a Attempt) {
	if d.logger == nil {
		return
	}
	attrs := []slog.Attr{slog.String("resource", dl.Rec.Resource), slog.String("resource_id", dl.Rec.ResourceID),
		slog.String("status", dl.Rec.ResourceStatus), slog.String("target_host", receiverOf(dl.URL)), slog.Int("attempt", n),
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
func (d *Dispatcher) logGaveUp(dl Outgoing, attempts int) {
	if d.logger == nil {
		return
	}
	d.logger.LogAttrs(context.Background(), slog.LevelError, "webhook given up",
		slog.String("resource", dl.Rec.Resource), slog.String("resource_id", dl.Rec.ResourceID),
		slog.String("status", dl.Rec.ResourceStatus), slog.String("target_host", receiverOf(dl.URL)),
		slog.Int("attempts", attempts), slog.String("delivery_id", dl.Rec.ID))
}

// Record appends dl to the ring, overwriting the oldest entry once full.
func (d *Dispatcher) Record(key string, dl Outgoing) {
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

func (d *Dispatcher) addAttempt(rec *Delivery, a Attempt) {
	d.logMu.Lock()
	rec.Attempts = append(rec.Attempts, a)
	d.logMu.Unlock()
	if d.persist != nil && d.ctx.Err() == nil {
		d.persist(d.Snapshot(rec))
	}
}

func (d *Dispatcher) finish(rec *Delivery, state string) {
	d.logMu.Lock()
	rec.State = state
	d.logMu.Unlock()
	// A delivery cut short by Close stays pending in the store: the next
	// start sends it again, which is what a graceful stop owes.
	if d.persist != nil && (state == Delivered || d.ctx.Err() == nil) {
		d.persist(d.Snapshot(rec))
	}
}

// Deliveries copies the log, newest first. The copies share nothing with
// the log, so callers may keep or modify them.
func (d *Dispatcher) Deliveries() []Delivery {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	out := make([]Delivery, 0, len(d.log))
	n := len(d.log)
	for i := 0; i < n; i++ {
		// The newest entry sits just before logPos (or at the end while
		// the ring is filling).
		out = append(out, copyRecord(d.log[((d.logPos-1-i)%n+n)%n].dl.Rec))
	}
	return out
}

// Bodies maps each logged delivery's ID to the JSON body it POSTs, for the
// dashboard's payload view. The bodies are shared, not copied: nothing
// writes to a body after enqueue.
func (d *Dispatcher) Bodies() map[string][]byte {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	out := make(map[string][]byte, len(d.log))
	for _, e := range d.log {
		out[e.dl.Rec.ID] = e.dl.Body
	}
	return out
}

// Flush waits until no delivery is queued, in flight or waiting to retry,
// or ctx is done.
func (d *Dispatcher) Flush(ctx context.Context) error {
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

// Close stops the workers and the retry timers, cancelling the attempts in
// flight, and gives up on what is left: failed in the log, still pending
// in the store's outbox for the next start.
func (d *Dispatcher) Close() {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		for _, q := range d.queues {
			if q.timer != nil {
				q.timer.Stop()
			}
		}
		for t := range d.wakers {
			t.Stop()
		}
		clear(d.wakers)
		d.parked = nil
		d.mu.Unlock()
		d.cancel()
		d.wg.Wait()
		d.mu.Lock()
		var left []*Delivery
		for _, q := range d.queues {
			for _, dl := range q.items {
				left = append(left, dl.Rec)
			}
		}
		clear(d.queues)
		clear(d.receivers)
		d.runnable = nil
		if d.pending > 0 {
			d.pending = 0
			close(d.idle)
		}
		d.mu.Unlock()
		for _, rec := range left {
			d.finish(rec, Failed) // not persisted: the context is cancelled
		}
	})
}
