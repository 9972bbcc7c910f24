package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The log records each notification with every attempt and the receiver's
// answer, newest first, and never the notification token.
func TestDeliveriesLog(t *testing.T) {
	sink := newHookSink(t, 2) // the first two attempts answer 500
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"d1","amount":150,"notify_url":"` + sink.srv.URL + `/hook","notification_token":"tok-secret-1"}`).str("id")
	e.do("POST", "/v1/payments/"+id+"/cancel", "")
	e.flush()

	po := e.do("POST", "/v1/payouts", `{"ext_id":"p1","amount":1,"method":"card","requisites":"1","holder_name":"A","notify_url":"`+sink.srv.URL+`"}`).str("id")
	must(t, e.sb.SetPayoutStatus(po, "processing"))
	e.flush()

	ds := e.sb.Deliveries()
	if len(ds) != 2 {
		t.Fatalf("%d deliveries, want 2: %+v", len(ds), ds)
	}
	// Newest first: the payout.
	eq(t, ds[0].Resource, "payout")
	eq(t, ds[0].ResourceID, po)
	eq(t, ds[0].ResourceStatus, "processing")
	eq(t, ds[0].State, DeliveryDelivered)
	eq(t, len(ds[0].Attempts), 1)
	eq(t, ds[0].Attempts[0].StatusCode, 200)

	d := ds[1]
	eq(t, d.Resource, "payment")
	eq(t, d.ResourceID, id)
	eq(t, d.ResourceStatus, "CANCELLED")
	eq(t, d.URL, sink.srv.URL+"/hook")
	eq(t, d.State, DeliveryDelivered)
	eq(t, d.CreatedAt, base)
	if !strings.HasPrefix(d.ID, "dlv_") || d.ID == ds[0].ID {
		t.Fatalf("ids %q %q", d.ID, ds[0].ID)
	}
	var codes []int
	for _, a := range d.Attempts {
		codes = append(codes, a.StatusCode)
		eq(t, a.At, base)
		eq(t, a.Error, "")
		if a.Duration <= 0 {
			t.Fatalf("attempt duration %v", a.Duration)
		}
	}
	eq(t, len(codes), 3)
	eq(t, codes[0], 500)
	eq(t, codes[1], 500)
	eq(t, codes[2], 200)
	if strings.Contains(strings.ToLower(strings.Join(fmtAll(ds), "")), "tok-secret") {
		t.Fatal("the log shows the notification token")
	}

	// Deep copies: changing what Deliveries returned changes nothing.
	ds[1].Attempts[0].StatusCode = 999
	ds[1].State = "x"
	again := e.sb.Deliveries()
	eq(t, again[1].Attempts[0].StatusCode, 500)
	eq(t, again[1].State, DeliveryDelivered)
}

func fmtAll(ds []Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, strings.Join([]string{d.ID, d.URL, d.Resource, d.ResourceID}, " "))
		for _, a := range d.Attempts {
			out = append(out, a.Error)
		}
	}
	return out
}

// A receiver that never answers 2xx ends as failed after every attempt; a
// dead one records the transport error; a password in the URL is masked.
func TestDeliveriesFailedAndUnreachable(t *testing.T) {
	sink := newHookSink(t, 1000)
	e := newEnv(t, Config{WebhookMaxAttempts: 3})
	id := e.createPayment(`{"ext_id":"f","amount":150,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	e.do("POST", "/v1/payments/"+id+"/cancel", "")

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := strings.Replace(dead.URL, "http://", "http://user:hunter2@", 1)
	dead.Close()
	id2 := e.createPayment(`{"ext_id":"g","amount":150,"notify_url":"` + deadURL + `"}`).str("id")
	e.do("POST", "/v1/payments/"+id2+"/cancel", "")
	e.flush()

	ds := e.sb.Deliveries()
	eq(t, len(ds), 2)
	byID := map[string]Delivery{ds[0].ResourceID: ds[0], ds[1].ResourceID: ds[1]}
	f := byID[id]
	eq(t, f.State, DeliveryFailed)
	eq(t, len(f.Attempts), 3)
	for _, a := range f.Attempts {
		eq(t, a.StatusCode, 500)
	}
	u := byID[id2]
	eq(t, u.State, DeliveryFailed)
	eq(t, len(u.Attempts), 3)
	if u.Attempts[0].StatusCode != 0 || u.Attempts[0].Error == "" {
		t.Fatalf("unreachable attempt: %+v", u.Attempts[0])
	}
	if strings.Contains(u.URL+u.Attempts[0].Error, "hunter2") {
		t.Fatalf("password shown: %s / %s", u.URL, u.Attempts[0].Error)
	}
}

// The ring keeps the newest entries only.
func TestDeliveriesRingBounded(t *testing.T) {
	d := newDispatcher(http.DefaultClient, 1, time.Millisecond, 3, func() time.Time { return base }, nil, 4, 4)
	defer d.close()
	for i := range 5 {
		d.record("k", delivery{rec: &Delivery{ID: string(rune('a' + i))}})
	}
	got := d.deliveries()
	eq(t, len(got), 3)
	eq(t, got[0].ID+got[1].ID+got[2].ID, "edc")
}

// hangingReceiver answers nothing until release is closed; arrived gets a
// value as each request comes in, served counts the answered ones.
type hangingReceiver struct {
	*httptest.Server
	release chan struct{}
	arrived chan struct{}
	served  atomic.Int64
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	h := &hangingReceiver{release: make(chan struct{}), arrived: make(chan struct{}, 10000)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.arrived <- struct{}{}
		<-h.release
		h.served.Add(1)
	}))
	t.Cleanup(h.Close)
	t.Cleanup(h.answer)
	return h
}

// answer lets the receiver answer, once.
func (h *hangingReceiver) answer() {
	select {
	case <-h.release:
	default:
		close(h.release)
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

// 2,000 deliveries to a receiver that never answers, half queued by status
// changes and half restored by a restart, hold a few goroutines (the
// per-receiver slots), not one each; none is dropped, and all arrive once
// the receiver answers.
func TestWebhookBacklogHoldsFewGoroutines(t *testing.T) {
	recv := newHangingReceiver(t)
	const n, perReceiver = 2000, 4
	before := runtime.NumGoroutine()
	d := newDispatcher(&http.Client{}, 5, time.Millisecond, n, func() time.Time { return base }, nil, 32, perReceiver)
	defer d.close()
	mk := func(i int) delivery {
		return delivery{url: recv.URL + "/hook", body: []byte(`{}`),
			rec: &Delivery{ID: fmt.Sprintf("dlv_%d", i), State: DeliveryPending}}
	}
	var restored []storedDelivery
	for i := range n / 2 {
		restored = append(restored, storedDelivery{key: fmt.Sprintf("payment:%d", i), dl: mk(i)})
	}
	d.restore(restored)
	for i := n / 2; i < n; i++ {
		d.queue(fmt.Sprintf("payment:%d", i), mk(i))
	}
	for range perReceiver {
		<-recv.arrived
	}
	// Workers and connections of the four attempts in flight, and margin:
	// one goroutine per queued delivery would be 2,000 more.
	if got := waitGoroutines(before + 40); got > before+40 {
		t.Fatalf("%d goroutines for %d queued deliveries (%d before)", got, n, before)
	}
	eq(t, d.backlog(), n)
	recv.answer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.flush(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, recv.served.Load(), int64(n))
	eq(t, d.backlog(), 0)
	ds := d.deliveries()
	eq(t, len(ds), n)
	for _, dl := range ds {
		if dl.State != DeliveryDelivered || len(dl.Attempts) != 1 {
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
	d := newDispatcher(&http.Client{}, 3, time.Hour, 500, func() time.Time { return base }, nil, 8, 4)
	defer d.close()
	const n = 500
	for i := range n {
		d.queue(fmt.Sprintf("payout:%d", i), delivery{url: failing.URL, body: []byte(`{}`),
			rec: &Delivery{ID: fmt.Sprintf("dlv_%d", i), State: DeliveryPending}})
	}
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling with a deadline until every first attempt failed
	}
	eq(t, calls.Load(), int64(n))
	if got := waitGoroutines(before + 20); got > before+20 {
		t.Fatalf("%d goroutines for %d deliveries waiting to retry (%d before)", got, n, before)
	}
	eq(t, d.backlog(), n)
}

// The backlog shows in GET /sandbox/state and on every dashboard page
// while a receiver hangs, and drops to 0 once it answers.
func TestWebhookBacklogShown(t *testing.T) {
	recv := newHangingReceiver(t)
	e := newEnv(t, Config{WebhookPerReceiver: 1})
	for i := range 3 {
		p := e.createPayment(fmt.Sprintf(`{"ext_id":"o-%d","amount":%d,"notify_url":%q}`, i, 1000+i, recv.URL))
		wantStatus(t, e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", ""), 200, "")
	}
	<-recv.arrived
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/state", nil)
	eq(t, e.send(req).str("webhooks", "backlog"), "3")
	eq(t, e.sb.State().Webhooks.Backlog, 3)
	for _, page := range []string{"payments", "webhooks"} {
		_, _, html := e.uiGet("/sandbox/ui/" + page + "?refresh=0")
		if !strings.Contains(html, `<p class="backlog" id="webhook-backlog">Webhooks waiting: <strong>3</strong></p>`) {
			t.Fatalf("the %s page does not show the backlog:\n%s", page, html)
		}
	}
	recv.answer()
	e.flush()
	eq(t, e.sb.State().Webhooks.Backlog, 0)
	_, _, html := e.uiGet("/sandbox/ui/webhooks?refresh=0")
	if !strings.Contains(html, "Webhooks waiting: <strong>0</strong>") {
		t.Fatalf("the backlog does not drop to 0:\n%s", html)
	}
}

// A notify_url credential given as the user part alone
// (http://SECRET@host/h), or as a name and password, is masked in the
// delivery log, the inspection view, the dashboard and the log lines.
func TestNotifyURLUserInfoIsMasked(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, Config{WebhookMaxAttempts: 1, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	for i, target := range []string{"http://SECRET1@127.0.0.1:1/h", "http://SECRET2:SECRET3@127.0.0.1:1/h",
		"http://SECRET4:@127.0.0.1:1/h"} {
		p := e.createPayment(fmt.Sprintf(`{"ext_id":"o-%d","amount":%d,"notify_url":%q}`, i, 1000+i, target))
		e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", "")
	}
	e.flush()
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/webhooks", nil)
	inspect := e.send(req).raw
	_, _, dash := e.uiGet("/sandbox/ui/webhooks?refresh=0")
	var urls []string
	for _, d := range e.sb.Deliveries() {
		urls = append(urls, d.URL)
	}
	for where, text := range map[string]string{"inspection": inspect, "dashboard": dash, "log": logs.String(),
		"Deliveries": strings.Join(urls, " ")} {
		for _, secret := range []string{"SECRET1", "SECRET2", "SECRET3", "SECRET4"} {
			if strings.Contains(text, secret) {
				t.Fatalf("%s shows %s:\n%s", where, secret, text)
			}
		}
	}
	eq(t, strings.Join(urls, " "), "http://xxxxx:xxxxx@127.0.0.1:1/h http://xxxxx:xxxxx@127.0.0.1:1/h http://xxxxx@127.0.0.1:1/h")
}

// The retry waits double from WebhookRetryWait and stop doubling before
// they would overflow, however many attempts are allowed.
func TestWebhookBackoff(t *testing.T) {
	d := &dispatcher{wait: time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second} {
		eq(t, d.backoff(n), want)
	}
	for _, n := range []int{63, 64, 100, 1 << 20} {
		if w := d.backoff(n); w < time.Duration(math.MaxInt64/4) {
			t.Fatalf("backoff(%d) = %v: overflowed", n, w)
		}
	}
}
