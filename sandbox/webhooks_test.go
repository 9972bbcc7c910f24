package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
)

func TestWebhooksOrderRetriesAndToken(t *testing.T) {
	sink := newHookSink(t, 1) // the first attempt fails
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"w","amount":150,"notify_url":"` + sink.srv.URL + `","notification_token":"tok-1"}`).str("id")
	e.confirm("/v1/payments/" + id)
	if err := e.sb.VerifyPayment(id, "cancelled"); err != nil {
		t.Fatal(err)
	}
	e.do("POST", "/v1/payments/"+id+"/dispute", `{}`)
	e.do("POST", "/v1/payments/"+id+"/dispute/cancel", "")
	e.do("POST", "/v1/payments/"+id+"/dispute", `{}`)
	e.sb.ReviewDispute(id, "approved")
	e.flush()

	eq(t, strings.Join(sink.statuses(), ","), "PROCESSING,CANCELLED,DISPUTE,CANCELLED_APPEAL,DISPUTE,COMPLETED")
	sink.mu.Lock()
	defer sink.mu.Unlock()
	eq(t, sink.attempts, 7)
	for _, tok := range sink.tokens {
		eq(t, tok, "tok-1")
	}
	// The payload is the GET shape.
	p := sink.bodies[0]
	if p["id"] != id || p["usdt_rate"] == nil || p["requisites"] == nil || p["message"] != nil {
		t.Fatalf("payload: %v", p)
	}
	eq(t, fmt.Sprint(p["amount"]), "150")
}

func TestWebhooksPayoutGiveUpAndClose(t *testing.T) {
	sink := newHookSink(t, 1000) // always fails
	e := newEnv(t, Config{WebhookMaxAttempts: 3})
	id := e.do("POST", "/v1/payouts", `{"ext_id":"x","amount":1,"method":"card","requisites":"1","holder_name":"A","notify_url":"`+sink.srv.URL+`"}`).str("id")
	if err := e.sb.SetPayoutStatus(id, "processing"); err != nil {
		t.Fatal(err)
	}
	e.flush()
	sink.mu.Lock()
	eq(t, sink.attempts, 3)
	sink.mu.Unlock()

	ok := newHookSink(t, 0)
	id2 := e.do("POST", "/v1/payouts", `{"ext_id":"y","amount":1,"method":"card","requisites":"1","holder_name":"A","notify_url":"`+ok.srv.URL+`"}`).str("id")
	e.sb.SetPayoutStatus(id2, "completed")
	e.flush()
	ok.mu.Lock()
	eq(t, ok.tokens[0], "")
	eq(t, ok.bodies[0]["status"].(string), "completed")
	if ok.bodies[0]["completed_at"] == nil || ok.bodies[0]["provider_order_id"] == nil {
		t.Fatalf("payout payload: %v", ok.bodies[0])
	}
	ok.mu.Unlock()

	// A receiver that is down, a slow backoff, and Close: Close returns
	// promptly and flushing completes.
	slow := New(Config{WebhookRetryWait: time.Hour, Now: func() time.Time { return base }})
	srv := httptest.NewServer(slow)
	defer srv.Close()
	es := &env{t: t, sb: slow, ts: srv, key: DefaultAPIKey, sec: DefaultSecret}
	pid := es.createPayment(`{"ext_id":"s","amount":150,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	es.do("POST", "/v1/payments/"+pid+"/cancel", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := slow.FlushWebhooks(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("flush with a cancelled context: %v", err)
	}
	slow.Close()
	slow.Close()
	es.flush()
	if _, onFile := slow.svc.Probe().Store().(*storage.SQL); onFile {
		// A closed Server's file is released: nothing it changed could be
		// kept, so it answers 503 rather than acknowledge.
		wantStatus(t, es.do("POST", "/v1/payments", `{"ext_id":"t","amount":150}`), 503, "SANDBOX_STORE")
		return
	}
	es.do("POST", "/v1/payments/"+es.createPayment(`{"ext_id":"t","amount":150,"notify_url":"`+sink.srv.URL+`"}`).str("id")+"/cancel", "")
	es.flush() // nothing is queued after Close
}

func TestWebhookUnreachable(t *testing.T) {
	e := newEnv(t, Config{WebhookMaxAttempts: 2})
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	id := e.createPayment(`{"ext_id":"u","amount":150,"notify_url":"` + url + `"}`).str("id")
	e.do("POST", "/v1/payments/"+id+"/cancel", "")
	e.flush()
}

// Deliveries to one slow receiver go through a bounded pool: never more
// sockets than the per-receiver cap, none dropped, and the API answers
// while the receiver hangs.
func TestWebhookDeliveryIsBounded(t *testing.T) {
	release := make(chan struct{})
	var inFlight, peak, done atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		inFlight.Add(-1)
		done.Add(1)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	e := newEnv(t, Config{WebhookPerReceiver: 2, WebhookConcurrency: 3})
	const n = 30
	for i := range n {
		p := e.createPayment(fmt.Sprintf(`{"ext_id":"o-%d","amount":%d,"notify_url":%q}`, i, 1000+i, slow.URL))
		// The API answers while every delivery so far is stuck.
		wantStatus(t, e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", ""), 200, "")
	}
	deadline := time.Now().Add(10 * time.Second)
	for inFlight.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling with a deadline until the pool is full
	}
	eq(t, inFlight.Load(), int32(2))
	close(release)
	e.flush()
	eq(t, done.Load(), int32(n))
	eq(t, peak.Load(), int32(2))
	for _, d := range e.sb.Deliveries() {
		eq(t, d.State, DeliveryDelivered)
	}
}
