package sandbox

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the log writes of concurrent
// handlers and webhook workers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// One line per request and one per webhook attempt, with the fields the
// issue names, and none of the secrets.
func TestLogLines(t *testing.T) {
	var buf syncBuffer
	sink := newHookSink(t, 1)
	e := newEnv(t, Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	card := "2200123456789010"
	p := e.createPayment(`{"ext_id":"log-1","amount":150,"notify_url":"` + sink.srv.URL + `/h?key=qsecret","notification_token":"tok-zzz"}`)
	e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", "")
	e.do("POST", "/v1/payouts", `{"ext_id":"po","amount":1,"method":"card","requisites":"`+card+`","holder_name":"A"}`)
	e.do("GET", "/v1/payments/by-ext-id/79123456789", "")
	e.flush()

	lines := buf.lines(t)
	var reqs, hooks []map[string]any
	for _, l := range lines {
		switch l["msg"] {
		case "request":
			reqs = append(reqs, l)
		case "webhook attempt":
			hooks = append(hooks, l)
		default:
			t.Fatalf("unexpected line %v", l)
		}
	}
	eq(t, len(reqs), 4)
	eq(t, reqs[0]["method"], any("POST"))
	eq(t, reqs[0]["route"], any("/v1/payments"))
	eq(t, reqs[0]["status"], any(float64(200)))
	if _, ok := reqs[0]["duration"]; !ok {
		t.Fatalf("no duration: %v", reqs[0])
	}
	eq(t, reqs[3]["route"], any("/v1/payments/by-ext-id/{extId}"))
	eq(t, reqs[3]["status"], any(float64(404)))
	eq(t, reqs[3]["code"], any("PAY_006"))

	eq(t, len(hooks), 2) // a 500, then delivered
	eq(t, hooks[0]["resource"], any("payment"))
	eq(t, hooks[0]["status"], any("CANCELLED"))
	eq(t, hooks[0]["attempt"], any(float64(1)))
	eq(t, hooks[0]["response_status"], any(float64(500)))
	eq(t, hooks[1]["attempt"], any(float64(2)))
	eq(t, hooks[1]["response_status"], any(float64(200)))
	// A failed attempt is a warning; durations carry their unit.
	eq(t, hooks[0]["level"], any("WARN"))
	eq(t, hooks[1]["level"], any("INFO"))
	if d, _ := hooks[0]["duration"].(string); !strings.HasSuffix(d, "s") {
		t.Fatalf("webhook duration %v has no unit", hooks[0]["duration"])
	}
	if d, _ := reqs[0]["duration"].(string); !strings.HasSuffix(d, "s") {
		t.Fatalf("request duration %v has no unit", reqs[0]["duration"])
	}
	eq(t, hooks[0]["target_host"], any(strings.TrimPrefix(sink.srv.URL, "http://")))

	buf.mu.Lock()
	all := buf.b.String()
	buf.mu.Unlock()
	for _, secret := range []string{DefaultAPIKey, DefaultSecret, "tok-zzz", "qsecret", card, "79123456789", p.str("requisites", "value")} {
		if strings.Contains(all, secret) {
			t.Errorf("log shows %q:\n%s", secret, all)
		}
	}
}

// A delivery the sandbox stops trying is one ERROR line after its WARN
// attempts, naming the delivery so it can be resent.
func TestLogWebhookGivenUpAtError(t *testing.T) {
	var buf syncBuffer
	sink := newHookSink(t, 1000)
	e := newEnv(t, Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), WebhookMaxAttempts: 2})
	p := e.createPayment(`{"ext_id":"gone-1","amount":150,"notify_url":"` + sink.srv.URL + `/h","notification_token":"tok-gone"}`)
	e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", "")
	e.flush()
	var levels []string
	var gaveUp map[string]any
	for _, l := range buf.lines(t) {
		switch l["msg"] {
		case "webhook attempt":
			levels = append(levels, l["level"].(string))
		case "webhook given up":
			gaveUp = l
		}
	}
	eq(t, strings.Join(levels, ","), "WARN,WARN")
	if gaveUp == nil {
		t.Fatalf("no line for the delivery given up:\n%s", buf.String())
	}
	ds := e.sb.Deliveries()
	if len(ds) != 1 || ds[0].State != DeliveryFailed {
		t.Fatalf("deliveries: %+v", ds)
	}
	eq(t, gaveUp["level"], any("ERROR"))
	eq(t, gaveUp["attempts"], any(float64(2)))
	eq(t, gaveUp["delivery_id"], any(ds[0].ID))
	eq(t, gaveUp["resource_id"], any(p.str("id")))
	eq(t, gaveUp["status"], any("CANCELLED"))
	eq(t, gaveUp["target_host"], any(strings.TrimPrefix(sink.srv.URL, "http://")))
	if strings.Contains(buf.String(), "tok-gone") {
		t.Fatal("the log shows the notification token")
	}
}

// A 5xx answer is logged at ERROR, a refusal (4xx) at INFO.
func TestLogLevelOf5xx(t *testing.T) {
	var buf syncBuffer
	e := newEnv(t, Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err := e.sb.InjectFault(Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore, Status: 500, Code: "SYS_001"}); err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/v1/balance", "")
	e.do("GET", "/v1/payments/by-ext-id/nope", "")
	lines := buf.lines(t)
	eq(t, len(lines), 2)
	eq(t, lines[0]["level"], any("ERROR"))
	eq(t, lines[1]["level"], any("INFO"))
}

// Inspection endpoints answer JSON on loopback and are guarded like the
// controls.
func TestInspectionEndpoints(t *testing.T) {
	sink := newHookSink(t, 0)
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"i1","amount":150,"notify_url":"` + sink.srv.URL + `","notification_token":"tok-i"}`).str("id")
	e.createPayment(`{"ext_id":"i2","amount":151}`)
	e.do("POST", "/v1/payments/"+id+"/cancel", "")
	e.do("POST", "/v1/payouts", `{"ext_id":"po","amount":1,"method":"card","requisites":"2200123456789010","holder_name":"A"}`)
	e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TXyz"}`)
	e.do("GET", "/v1/payments/by-ext-id/2200123456789010", "")
	e.flush()

	get := func(path string) resp {
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		return e.send(req)
	}
	st := get("/sandbox/state")
	wantStatus(t, st, 200, "")
	want := `{"now":"2025-03-01T12:00:00Z","merchants":[{"index":0,"terminals":[` +
		`{"id":"term_sandbox_main","name":"Main terminal","balance":988.50,"balance_frozen":11.50,"withdrawal_fee":1.50,"currency":"USDT","is_active":true},` +
		`{"id":"term_sandbox_reserve","name":"Reserve terminal","balance":0.00,"balance_frozen":0.00,"withdrawal_fee":1.50,"currency":"USDT","is_active":true}],` +
		`"payments":{"CANCELLED":1,"PENDING":1},"payouts":{"pending":1},"withdrawals":{"pending":1},"transfers":0}],` +
		`"autopilot":{"enabled":false,"pending_steps":0},"webhooks":{"backlog":0}}`
	eq(t, strings.TrimSpace(st.raw), want)

	wh := get("/sandbox/webhooks")
	wantStatus(t, wh, 200, "")
	var whBody struct{ Deliveries []Delivery }
	must(t, json.Unmarshal([]byte(wh.raw), &whBody))
	eq(t, len(whBody.Deliveries), 1)
	eq(t, whBody.Deliveries[0].ResourceID, id)
	eq(t, whBody.Deliveries[0].State, DeliveryDelivered)
	eq(t, whBody.Deliveries[0].Attempts[0].StatusCode, 200)
	if strings.Contains(wh.raw, "tok-i") {
		t.Fatalf("token in /sandbox/webhooks: %s", wh.raw)
	}

	rq := get("/sandbox/requests")
	wantStatus(t, rq, 200, "")
	var rqBody struct{ Requests []RequestRecord }
	must(t, json.Unmarshal([]byte(rq.raw), &rqBody))
	// Newest first; the state and webhooks views are requests too.
	eq(t, rqBody.Requests[0].Route, "/sandbox/webhooks")
	eq(t, rqBody.Requests[2].Route, "/v1/payments/by-ext-id/{extId}")
	eq(t, rqBody.Requests[2].Path, "/v1/payments/by-ext-id/************9010")
	eq(t, rqBody.Requests[2].Code, "PAY_006")
	eq(t, rqBody.Requests[2].Status, 404)
	eq(t, rqBody.Requests[len(rqBody.Requests)-1].Route, "/v1/payments")
	for _, secret := range []string{DefaultAPIKey, "2200123456789010", "X-Signature"} {
		if strings.Contains(rq.raw, secret) {
			t.Fatalf("/sandbox/requests shows %q: %s", secret, rq.raw)
		}
	}
	// A payment id stays readable.
	if !strings.Contains(rq.raw, "/v1/payments/"+id+"/cancel") {
		t.Fatalf("id masked: %s", rq.raw)
	}

	for _, path := range []string{"/sandbox/state", "/sandbox/webhooks", "/sandbox/requests"} {
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		req.Host = "rebound.example"
		wantStatus(t, e.send(req), 403, CodeControlForbidden)
	}
}

// The request log masks a path as every log of the module does
// (internal/mask): a card number sent with escaped spaces is masked, and
// a path is cut after masking, so that a number across the cut is not
// left as a short run of clear digits.
func TestRequestLogMasksPathsLikeTheModule(t *testing.T) {
	e := newEnv(t, Config{})
	e.do("GET", "/v1/payments/by-ext-id/4111%201111%201111%201111", "")
	long := "/v1/payments/by-ext-id/" + strings.Repeat("a", 226) + "-4111111111111111"
	e.do("GET", long, "")
	reqs := e.sb.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests logged, want 2", len(reqs))
	}
	eq(t, reqs[1].Path, "/v1/payments/by-ext-id/****%20****%20****%201111")
	eq(t, reqs[0].Path, "/v1/payments/by-ext-id/"+strings.Repeat("a", 226)+"-******...")
}
