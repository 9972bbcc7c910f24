package webhook

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/receivertest"
)

var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return base }

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// The ring keeps the newest entries only.
func TestDeliveriesRingBounded(t *testing.T) {
	d := New(Config{Client: http.DefaultClient, MaxAttempts: 1, RetryWait: time.Millisecond, LogSize: 3, Now: clock, Workers: 4, PerReceiver: 4})
	defer d.Close()
	for i := range 5 {
		d.Record("k", Outgoing{Rec: &Delivery{ID: string(rune('a' + i))}})
	}
	got := d.Deliveries()
	eq(t, len(got), 3)
	eq(t, got[0].ID+got[1].ID+got[2].ID, "edc")
}

// 2,000 deliveries to a receiver that never answers, half queued by status
// changes and half restored by a restart, hold a few goroutines (the
// per-receiver slots), not one each; none is dropped, and all arrive once
// the receiver answers.
func TestWebhookBacklogHoldsFewGoroutines(t *testing.T) {
	recv := receivertest.NewHanging(t)
	const n, perReceiver = 2000, 4
	before := runtime.NumGoroutine()
	d := New(Config{Client: &http.Client{}, MaxAttempts: 5, RetryWait: time.Millisecond, LogSize: n, Now: clock, Workers: 32, PerReceiver: perReceiver})
	defer d.Close()
	mk := func(i int) Outgoing {
		return Outgoing{URL: recv.URL + "/hook", Body: []byte(`{}`),
			Rec: &Delivery{ID: fmt.Sprintf("dlv_%d", i), State: Pending}}
	}
	var restored []Stored
	for i := range n / 2 {
		restored = append(restored, Stored{Key: fmt.Sprintf("payment:%d", i), Out: mk(i)})
	}
	d.Restore(restored)
	for i := n / 2; i < n; i++ {
		d.Queue(fmt.Sprintf("payment:%d", i), mk(i))
	}
	for range perReceiver {
		<-recv.Arrived
	}
	// Workers and connections of the four attempts in flight, and margin:
	// one goroutine per queued delivery would be 2,000 more.
	if got := waitGoroutines(before + 40); got > before+40 {
		t.Fatalf("%d goroutines for %d queued deliveries (%d before)", got, n, before)
	}
	eq(t, d.Backlog(), n)
	recv.Answer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, recv.Served.Load(), int64(n))
	eq(t, d.Backlog(), 0)
	ds := d.Deliveries()
	eq(t, len(ds), n)
	for _, dl := range ds {
		if dl.State != Delivered || len(dl.Attempts) != 1 {
			t.Fatalf("%s: %s after %d attempts", dl.ID, dl.State, len(dl.Attempts))
		}
	}
}

// A delivery waiting out its retry delay holds a timer, not a goroutine.
func TestWebhookRetryWaitHoldsNoGoroutine(t *testing.T) {
	var calls atomic.Int64
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	before := runtime.NumGoroutine()
	d := New(Config{Client: &http.Client{}, MaxAttempts: 3, RetryWait: time.Hour, LogSize: 500, Now: clock, Workers: 8, PerReceiver: 4})
	defer d.Close()
	const n = 500
	for i := range n {
		d.Queue(fmt.Sprintf("payout:%d", i), Outgoing{URL: failing.URL, Body: []byte(`{}`),
			Rec: &Delivery{ID: fmt.Sprintf("dlv_%d", i), State: Pending}})
	}
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling with a deadline until every first attempt failed
	}
	eq(t, calls.Load(), int64(n))
	if got := waitGoroutines(before + 20); got > before+20 {
		t.Fatalf("%d goroutines for %d deliveries waiting to retry (%d before)", got, n, before)
	}
	eq(t, d.Backlog(), n)
}

// The retry waits double from WebhookRetryWait and stop doubling before
// they would overflow, however many attempts are allowed.
func TestWebhookBackoff(t *testing.T) {
	d := &Dispatcher{wait: time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second} {
		eq(t, d.backoff(n), want)
	}
	for _, n := range []int{63, 64, 100, 1 << 20} {
		if w := d.backoff(n); w < time.Duration(math.MaxInt64/4) {
			t.Fatalf("backoff(%d) = %v: overflowed", n, w)
		}
	}
}

// waitGoroutines polls until at most n goroutines run, or a deadline; it
// returns the last count.
func waitGoroutines(n int) int {
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling with a deadline: ended goroutines leave on their own time
	}
	return runtime.NumGoroutine()
}
