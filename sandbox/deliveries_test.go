package sandbox

import (
	"net/http"
	"net/http/httptest"
	"strings"
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
		d.record(&Delivery{ID: string(rune('a' + i))})
	}
	got := d.deliveries()
	eq(t, len(got), 3)
	eq(t, got[0].ID+got[1].ID+got[2].ID, "edc")
}
