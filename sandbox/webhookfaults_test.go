package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultRun drives one sandbox through a fixed sequence of notifications
// (four payments: two cancelled, two confirmed and verified) with the
// delivery faults f, one delivery at a time, lets the sandbox clock pass
// every delay and hold, and returns what the receiver got, in order, as
// "ext_id status" lines, and the sandbox.
func faultRun(t *testing.T, f WebhookFaults) ([]string, *env) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			ExtID  string `json:"ext_id"`
			Status string `json:"status"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &b); err != nil {
			t.Errorf("delivery body %q: %v", body, err)
		}
		mu.Lock()
		got = append(got, b.ExtID+" "+b.Status)
		mu.Unlock()
	}))
	t.Cleanup(recv.Close)
	e := newEnv(t, Config{WebhookFaults: f, WebhookConcurrency: 1, WebhookPerReceiver: 1})
	for i := range 4 {
		ext := "f" + strconv.Itoa(i)
		id := e.createPayment(`{"ext_id":"` + ext + `","amount":15` + strconv.Itoa(i) + `,"notify_url":"` + recv.URL + `"}`).str("id")
		if i%2 == 0 {
			wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
			continue
		}
		wantStatus(t, e.confirm("/v1/payments/"+id), 200, "")
		must(t, e.sb.VerifyPayment(id, OutcomeCompleted))
	}
	e.sb.Advance(f.Delay + time.Second + max(f.Delay, time.Second))
	e.flush()
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), got...), e
}

// TestWebhookFaultsReplayBySeed: deliveries arrive twice and out of order
// at the rates given, late on the sandbox clock, and the same seed with the
// same notifications gives the same deliveries in the same order, twice;
// memory and -db alike (PAYKIT_SANDBOX_TEST_DB=file).
func TestWebhookFaultsReplayBySeed(t *testing.T) {
	f := WebhookFaults{Duplicate: 0.3, Reorder: 0.4, Delay: 2 * time.Second, Seed: 2}
	first, e := faultRun(t, f)
	second, _ := faultRun(t, f)
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("seed 2 twice:\n%q\n%q", first, second)
	}
	clean, _ := faultRun(t, WebhookFaults{})
	want := []string{"f0 CANCELLED", "f1 PROCESSING", "f1 COMPLETED", "f2 CANCELLED", "f3 PROCESSING", "f3 COMPLETED"}
	// Without faults each resource's notifications arrive once, in order
	// (resources among themselves in any order).
	perResource := func(list []string) map[string][]string {
		m := map[string][]string{}
		for _, g := range list {
			ext, status, _ := strings.Cut(g, " ")
			m[ext] = append(m[ext], status)
		}
		return m
	}
	if !reflect.DeepEqual(perResource(clean), perResource(want)) {
		t.Fatalf("without faults: %q, want each resource's %q", clean, want)
	}
	if len(first) <= len(want) {
		t.Fatalf("no duplicate: %q", first)
	}
	pos := map[string]int{}
	for i, g := range first {
		if _, ok := pos[g]; !ok {
			pos[g] = i
		}
	}
	if pos["f1 COMPLETED"] > pos["f1 PROCESSING"] && pos["f3 COMPLETED"] > pos["f3 PROCESSING"] {
		t.Fatalf("no notification overtaken by its successor: %q", first)
	}
	// What the log says, and what /sandbox/state shows.
	var faults []string
	for _, d := range e.sb.Deliveries() {
		faults = append(faults, d.Faults...)
	}
	for _, name := range []string{"duplicate", "reorder", "delay"} {
		if !strings.Contains(strings.Join(faults, " "), name) {
			t.Errorf("no delivery in the log has the %s fault: %v", name, faults)
		}
	}
	st := e.do("GET", "/sandbox/state", "")
	if got := st.raw; !strings.Contains(got, `"faults":{"duplicate":0.3,"reorder":0.4,"delay_ns":2000000000,"seed":2}`) {
		t.Errorf("/sandbox/state: %s", got)
	}
	if sf := e.sb.State().Webhooks.Faults; sf == nil || *sf != f {
		t.Errorf("State().Webhooks.Faults = %+v, want %+v", sf, f)
	}
	page := e.do("GET", "/sandbox/ui/webhooks", "").raw
	for _, frag := range []string{`<p class="mode" id="webhook-faults"><strong>Webhook faults on:</strong> deliveries sent twice at a rate of 30%, held back behind the next of its resource at 40%, late by up to 2s; seed 2 replays this run.</p>`,
		`<small class="fault">duplicate</small>`, `held back`} {
		if !strings.Contains(page, frag) {
			t.Errorf("dashboard lacks %s", frag)
		}
	}
}

// TestWebhookFaultsSeedPicked: without a seed one is picked and shown,
// so the run can be replayed; without faults nothing is shown.
func TestWebhookFaultsSeedPicked(t *testing.T) {
	e := newEnv(t, Config{WebhookFaults: WebhookFaults{Duplicate: 0.5}})
	if f := e.sb.State().Webhooks.Faults; f == nil || f.Seed == 0 || f.Duplicate != 0.5 {
		t.Fatalf("faults shown: %+v, want the rate and a seed picked", f)
	}
	plain := newEnv(t, Config{})
	if f := plain.sb.State().Webhooks.Faults; f != nil {
		t.Fatalf("faults shown without any: %+v", f)
	}
	if st := plain.do("GET", "/sandbox/state", "").raw; strings.Contains(st, `"faults"`) {
		t.Fatalf("/sandbox/state shows faults without any: %s", st)
	}
	if page := plain.do("GET", "/sandbox/ui/webhooks", "").raw; strings.Contains(page, "webhook-faults") {
		t.Fatal("the dashboard shows faults without any")
	}
}

func TestWebhookFaultsRefused(t *testing.T) {
	for _, f := range []WebhookFaults{{Duplicate: 2}, {Reorder: -0.5}, {Delay: -time.Second}} {
		if _, err := Open(Config{WebhookFaults: f}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Open with %+v: %v, want ErrInvalidArgument", f, err)
		}
	}
	if _, err := ParseWebhookFaults("duplicate=0.1,delay=2s,seed=42,reorder=0.2"); err != nil {
		t.Fatal(err)
	}
}
