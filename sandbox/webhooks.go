package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// dispatcher delivers webhooks. Each resource has its own FIFO queue and at
// most one worker goroutine, so notifications of one payment arrive in the
// order of its transitions even when a delivery is being retried, while
// different resources do not wait for each other.
type dispatcher struct {
	client      *http.Client
	maxAttempts int
	wait        time.Duration
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	closeOnce   sync.Once

	mu      sync.Mutex
	closed  bool
	queues  map[string][]delivery // present while a worker runs for the key
	pending int                   // queued or in-flight deliveries
	idle    chan struct{}         // closed when pending drops to zero
}

type delivery struct {
	url   string
	token string
	body  []byte
}

func newDispatcher(client *http.Client, maxAttempts int, wait time.Duration) *dispatcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &dispatcher{client: client, maxAttempts: maxAttempts, wait: wait, ctx: ctx, cancel: cancel,
		queues: map[string][]delivery{}}
}

// enqueue snapshots v now (the payload must show the state of this
// transition, not a later one) and queues it behind earlier deliveries of
// the same resource.
func (d *dispatcher) enqueue(key, url, token string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if d.pending == 0 {
		d.idle = make(chan struct{})
	}
	d.pending++
	q, running := d.queues[key]
	d.queues[key] = append(q, delivery{url: url, token: token, body: body})
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
	wait := d.wait
	for attempt := 1; attempt <= d.maxAttempts; attempt++ {
		if d.ctx.Err() != nil {
			return
		}
		if d.attempt(dl) {
			return
		}
		if attempt == d.maxAttempts {
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

func (d *dispatcher) attempt(dl delivery) bool {
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, dl.url, bytes.NewReader(dl.body))
	if err != nil {
		return true // a URL that cannot become a request never will: give up
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paykit-sandbox-webhooks")
	if dl.token != "" {
		req.Header.Set("X-Notification-Token", dl.token)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 300
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
