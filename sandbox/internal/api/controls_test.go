package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// fakeControls records what the routes ask of it, so the tests see that
// api decodes the bodies, guards the requests and maps the refusals
// itself.
type fakeControls struct {
	calls    []string
	err      error         // returned by every control
	storeErr error         // StoreFailed's answer
	failing  error         // StoreFailed's answer once a control ran
	advanced time.Duration // Advance's argument
	fault    Fault
	deadline time.Duration // how far off FlushWebhooks's ctx ends
	now      time.Time
}

type fakeView struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

func (f *fakeControls) ran(call string) {
	f.calls = append(f.calls, call)
	if f.failing != nil {
		f.storeErr = f.failing
	}
}

func (f *fakeControls) VerifyPayment(id, outcome string) (any, error) {
	f.ran("verify " + id + " " + outcome)
	return fakeView{ID: id, Status: "COMPLETED"}, f.err
}
func (f *fakeControls) ReviewDispute(id, outcome string) (any, error) {
	f.ran("review " + id + " " + outcome)
	return fakeView{ID: id}, f.err
}
func (f *fakeControls) SetPayoutStatus(id, status string) (any, error) {
	f.ran("payout " + id + " " + status)
	return fakeView{ID: id, Status: status}, f.err
}
func (f *fakeControls) SetWithdrawalStatus(id, status, txHash string) (any, error) {
	f.ran("withdrawal " + id + " " + status + " " + txHash)
	return fakeView{ID: id, Status: status}, f.err
}
func (f *fakeControls) Advance(d time.Duration) (time.Time, error) {
	f.ran("advance")
	f.advanced = d
	return f.now.Add(d), f.err
}
func (f *fakeControls) InjectFault(fl Fault) error {
	f.ran("fault")
	f.fault = fl
	return f.err
}
func (f *fakeControls) FlushWebhooks(ctx context.Context) error {
	f.ran("flush")
	if d, ok := ctx.Deadline(); ok {
		f.deadline = time.Until(d)
	}
	return f.err
}
func (f *fakeControls) ResendWebhook(id string) (any, error) {
	f.ran("resend " + id)
	return fakeView{ID: "dlv_new"}, f.err
}
func (f *fakeControls) Reset() error       { f.ran("reset"); return f.err }
func (f *fakeControls) StoreFailed() error { return f.storeErr }
func (f *fakeControls) State() any         { return map[string]int{"backlog": 3} }
func (f *fakeControls) Requests() any      { return []fakeView{{ID: "r1"}} }
func (f *fakeControls) Deliveries() any    { return []fakeView{} }

// controlMux serves c's routes (controls, login, inspection) as the
// sandbox registers them.
func controlMux(c *ControlServer) *http.ServeMux {
	mux := http.NewServeMux()
	c.ControlRoutes(mux)
	c.Guard().LoginRoutes(mux)
	c.InspectionRoutes(mux)
	return mux
}

// ctlDo sends one request to mux; hdr are header name and value pairs.
// The Host is loopback unless the url names another.
func ctlDo(mux http.Handler, method, url, body string, hdr ...string) *httptest.ResponseRecorder {
	if strings.HasPrefix(url, "/") {
		url = "http://127.0.0.1:8080" + url
	}
	r := httptest.NewRequest(method, url, strings.NewReader(body))
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

// wantAnswer fails unless w is status with exactly body (the newline
// WriteJSON ends with included) as application/json.
func wantAnswer(t *testing.T, w *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if w.Code != status || w.Body.String() != body+"\n" || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q %s, want %d %s", w.Code, w.Header().Get("Content-Type"), w.Body, status, body)
	}
}

// TestControlAnswersExactly protects the wire of the controls: each route
// decodes its body into the control's arguments and answers the control's
// value, bytes as they were when the routes lived in package sandbox.
func TestControlAnswersExactly(t *testing.T) {
	f := &fakeControls{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	mux := controlMux(NewControlServer(ControlConfig{}, f))
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/payments/p-1/verify", `{"outcome":"completed"}`),
		200, `{"id":"p-1","status":"COMPLETED"}`)
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/payments/p-2/dispute/review", `{"outcome":"approved"}`),
		200, `{"id":"p-2","status":""}`)
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/payouts/po-1/status", `{"status":"failed"}`),
		200, `{"id":"po-1","status":"failed"}`)
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/withdrawals/w-1/status", `{"status":"completed","tx_hash":"0xab"}`),
		200, `{"id":"w-1","status":"completed"}`)
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/webhooks/dlv_1/resend", ``), 200, `{"id":"dlv_new","status":""}`)
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/reset", `{}`), 200, `{}`)
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/webhooks/flush", ` `), 200, `{}`)
	if f.deadline <= 0 || f.deadline > time.Minute {
		t.Errorf("flush waits %v, want a minute at most", f.deadline)
	}
	want := []string{"verify p-1 completed", "review p-2 approved", "payout po-1 failed",
		"withdrawal w-1 completed 0xab", "resend dlv_1", "reset", "flush"}
	if strings.Join(f.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls %q, want %q", f.calls, want)
	}

	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/clock/advance", `{"seconds":90}`), 200, `{"now":"2025-03-01T12:01:30Z"}`)
	if f.advanced != 90*time.Second {
		t.Fatalf("advanced %v", f.advanced)
	}
	// A count whose nanoseconds overflow is the longest duration, which
	// the sandbox clamps, never a wrapped negative one.
	ctlDo(mux, "POST", "/sandbox/clock/advance", `{"seconds":9223372036854775807}`)
	if f.advanced != math.MaxInt64 {
		t.Fatalf("huge advance %v", f.advanced)
	}
	f.calls = nil
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/clock/advance", `{"seconds":-1}`),
		400, `{"error":"SANDBOX_INVALID","message":"seconds must not be negative","data":{}}`)
	if len(f.calls) != 0 {
		t.Fatalf("a negative advance reached the sandbox: %q", f.calls)
	}

	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/faults",
		`{"method":"get","path":"/v1/banks","mode":"error_before","count":2,"status":503,"code":"X","delay_ms":7,"retry_after_s":3}`), 200, `{}`)
	wantFault := Fault{Method: "get", Path: "/v1/banks", Mode: "error_before", Count: 2, Status: 503, Code: "X", DelayMS: 7, RetryAfterS: 3}
	if f.fault != wantFault {
		t.Fatalf("fault %+v, want %+v", f.fault, wantFault)
	}
}

// TestControlBodiesAreStrict protects the decoding: a body that is not one
// JSON object of the control's fields (a webhook payload posted at a
// control, a typo, trailing data, a body over the cap) is 400 before the
// sandbox is asked anything.
func TestControlBodiesAreStrict(t *testing.T) {
	f := &fakeControls{}
	mux := controlMux(NewControlServer(ControlConfig{}, f))
	for body, msg := range map[string]string{
		`{`:                               `body is not valid JSON: unexpected EOF`,
		`{"id":"x","status":"CANCELLED"}`: `body is not valid JSON: json: unknown field \"id\"`,
		`{} {}`:                           `body is not valid JSON: trailing data after the JSON value`,
		`{"outcome":1}`:                   `body is not valid JSON: json: cannot unmarshal number into Go struct field .outcome of type string`,
		`{"outcome":"completed"}` + strings.Repeat(" ", controlBodyCap): `body too large or unreadable`,
	} {
		wantAnswer(t, ctlDo(mux, "POST", "/sandbox/payments/p-1/verify", body),
			400, `{"error":"SANDBOX_INVALID","message":"`+msg+`","data":{}}`)
	}
	if len(f.calls) != 0 {
		t.Fatalf("the sandbox was asked: %q", f.calls)
	}
}

// TestControlRefusalsByKind protects the mapping of a control's error to
// its answer: the rule's kind to the status, its text to the message, a
// store that failed before or during the control to 503.
func TestControlRefusalsByKind(t *testing.T) {
	for _, c := range []struct {
		err        error
		status     int
		code, text string
	}{
		{&ledger.Error{Kind: ledger.NotFound, Message: `sandbox: not found: payment "p-1"`}, 404, CodeControlNotFound, `sandbox: not found: payment \"p-1\"`},
		{&ledger.Error{Kind: ledger.WrongState, Message: "not from PENDING"}, 409, CodeControlConflict, "not from PENDING"},
		{&ledger.Error{Kind: ledger.Conflict, Message: "already"}, 409, CodeControlConflict, "already"},
		{&ledger.Error{Kind: ledger.Invalid, Message: "bad outcome"}, 400, CodeControlInvalid, "bad outcome"},
		{&ledger.Error{Kind: ledger.Refused, Message: "no money"}, 400, CodeControlInvalid, "no money"},
		{errors.New("anything else"), 400, CodeControlInvalid, "anything else"},
	} {
		f := &fakeControls{err: c.err}
		mux := controlMux(NewControlServer(ControlConfig{}, f))
		wantAnswer(t, ctlDo(mux, "POST", "/sandbox/payments/p-1/verify", `{"outcome":"completed"}`),
			c.status, `{"error":"`+c.code+`","message":"`+c.text+`","data":{}}`)
	}
	store := `{"error":"SANDBOX_STORE","message":"the sandbox's database cannot be used; see its log, fix the cause and restart it","data":{}}`
	// Failed during the control: the control's own outcome is answered,
	// not the store's state when it ends (a later section may have failed
	// it): not kept 503, may be kept 500, kept 200.
	f := &fakeControls{failing: errors.New("disk full"), err: &ledger.Error{Kind: ledger.NotKept, Message: "x"}}
	mux := controlMux(NewControlServer(ControlConfig{}, f))
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/payouts/po-1/status", `{"status":"failed"}`), 503, store)
	f = &fakeControls{failing: errors.New("disk full"), err: &ledger.Error{Kind: ledger.MaybeKept, Message: "x"}}
	mux = controlMux(NewControlServer(ControlConfig{}, f))
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/clock/advance", `{"seconds":60}`), 500,
		`{"error":"SANDBOX_STORE","message":"the sandbox's database failed while making this change durable: it may or may not be kept; restart the sandbox and read it back before asking it again","data":{}}`)
	f = &fakeControls{failing: errors.New("disk full")}
	mux = controlMux(NewControlServer(ControlConfig{}, f))
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/payouts/po-1/status", `{"status":"failed"}`), 200, `{"id":"po-1","status":"failed"}`)
	// Failed before: the control is not run at all.
	f.calls = nil
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/reset", `{}`), 503, store)
	if len(f.calls) != 0 {
		t.Fatalf("a control ran on a failed store: %q", f.calls)
	}
	// An unknown control is 404 without asking anything.
	wantAnswer(t, ctlDo(mux, "GET", "/sandbox/nope", ``),
		404, `{"error":"SANDBOX_NOT_FOUND","message":"no such control: GET /sandbox/nope","data":{}}`)
}

// TestInspectionViews protects the read-only views: the sandbox's values
// encoded as they are, under the key each view has always had.
func TestInspectionViews(t *testing.T) {
	mux := controlMux(NewControlServer(ControlConfig{}, &fakeControls{}))
	wantAnswer(t, ctlDo(mux, "GET", "/sandbox/state", ``), 200, `{"backlog":3}`)
	wantAnswer(t, ctlDo(mux, "GET", "/sandbox/requests", ``), 200, `{"requests":[{"id":"r1","status":""}]}`)
	wantAnswer(t, ctlDo(mux, "GET", "/sandbox/webhooks", ``), 200, `{"deliveries":[]}`)
	wantAnswer(t, ctlDo(mux, "GET", "http://evil.example/sandbox/state", ``), 403,
		`{"error":"SANDBOX_FORBIDDEN","message":"the sandbox controls answer only a loopback Host (localhost, 127.0.0.1, [::1]); start it with remote control allowed to change this","data":{}}`)
}

// TestOpenAPIRoute protects GET /openapi.yaml: the document's bytes,
// unguarded, with its media type.
func TestOpenAPIRoute(t *testing.T) {
	mux := http.NewServeMux()
	OpenAPIRoutes(mux, []byte("openapi: 3.1.0\n"))
	w := ctlDo(mux, "GET", "http://sandbox.example/openapi.yaml", ``)
	if w.Code != 200 || w.Body.String() != "openapi: 3.1.0\n" || w.Header().Get("Content-Type") != "application/yaml" ||
		w.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("%d %v %q", w.Code, w.Header(), w.Body)
	}
}

// A flush that did not finish is decided here, where its context is: the
// backend's bare context error is answered 409 with ErrWrongState's text,
// as the Go error it stands for says.
func TestControlFlushNotFinishedIsWrongState(t *testing.T) {
	f := &fakeControls{err: context.DeadlineExceeded}
	mux := controlMux(NewControlServer(ControlConfig{}, f))
	wantAnswer(t, ctlDo(mux, "POST", "/sandbox/webhooks/flush", `{}`), 409,
		`{"error":"SANDBOX_CONFLICT","message":"sandbox: transition not allowed from the current status: `+
			`webhooks still pending: context deadline exceeded","data":{}}`)
}
