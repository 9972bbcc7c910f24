package sandbox

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox/internal/receivertest"
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

// The backlog shows in GET /sandbox/state and on every dashboard page
// while a receiver hangs, and drops to 0 once it answers.
func TestWebhookBacklogShown(t *testing.T) {
	recv := receivertest.NewHanging(t)
	e := newEnv(t, Config{WebhookPerReceiver: 1})
	for i := range 3 {
		p := e.createPayment(fmt.Sprintf(`{"ext_id":"o-%d","amount":%d,"notify_url":%q}`, i, 1000+i, recv.URL))
		wantStatus(t, e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", ""), 200, "")
	}
	<-recv.Arrived
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/state", nil)
	eq(t, e.send(req).str("webhooks", "backlog"), "3")
	eq(t, e.sb.State().Webhooks.Backlog, 3)
	for _, page := range []string{"payments", "webhooks"} {
		_, _, html := e.uiGet("/sandbox/ui/" + page + "?refresh=0")
		if !strings.Contains(html, `<p class="backlog" id="webhook-backlog">Webhooks waiting: <strong>3</strong></p>`) {
			t.Fatalf("the %s page does not show the backlog:\n%s", page, html)
		}
	}
	recv.Answer()
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

// A notify_url's query (?api_key=...) is masked like its password in the
// delivery log, the dashboard and the log lines.
func TestNotifyURLQueryIsMasked(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, Config{WebhookMaxAttempts: 1, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	p := e.createPayment(`{"ext_id":"o-1","amount":1500,"notify_url":"http://user:pw-SECRET1@127.0.0.1:1/hook?api_key=SECRET2&x=SECRET3"}`)
	e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", "")
	e.flush()
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/webhooks", nil)
	inspect := e.send(req).raw
	_, _, dash := e.uiGet("/sandbox/ui/webhooks?refresh=0")
	for where, text := range map[string]string{"inspection": string(inspect), "dashboard": dash, "log": logs.String()} {
		for _, secret := range []string{"SECRET1", "SECRET2", "SECRET3"} {
			if strings.Contains(text, secret) {
				t.Fatalf("%s shows %s:\n%s", where, secret, text)
			}
		}
	}
	if !strings.Contains(string(inspect), "api_key=xxxxx") {
		t.Fatalf("the masked query is not shown:\n%s", inspect)
	}
}
