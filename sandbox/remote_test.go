package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Remote drives a running sandbox over HTTP as the Go controls drive it in
// process: every control, the inspection views, and the control token of
// remote mode.
func TestRemoteControlsARunningSandbox(t *testing.T) {
	sink := newHookSink(t, 0)
	e := newEnv(t, Config{AllowRemote: true, ControlToken: "ctl-77"})
	ctx := context.Background()

	anon, err := NewRemote(e.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	var ce *ControlError
	if err := anon.Reset(ctx); !errors.As(err, &ce) || ce.StatusCode != 401 || ce.Code != CodeControlUnauthorized {
		t.Fatalf("without the token: %v", err)
	}
	r, err := NewRemote(e.ts.URL+"/", WithControlToken("ctl-77"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v", r, r), "ctl-77") {
		t.Fatal("the token shows in fmt")
	}

	p := e.createPayment(`{"ext_id":"r-1","amount":1500,"notify_url":"` + sink.srv.URL + `"}`)
	id := p.str("id")
	e.confirm("/v1/payments/" + id)
	if err := r.VerifyPayment(ctx, id, OutcomeCompleted); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "COMPLETED")
	if err := r.VerifyPayment(ctx, id, OutcomeCompleted); !errors.Is(err, ErrWrongState) {
		t.Fatalf("verify twice: %v", err)
	}
	if err := r.VerifyPayment(ctx, "no-such-id", OutcomeCompleted); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := r.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, strings.Join(sink.statuses(), ","), "PROCESSING,COMPLETED")

	c := e.createPayment(`{"ext_id":"r-2","amount":1600}`)
	e.do("POST", "/v1/payments/"+c.str("id")+"/cancel", "")
	e.do("POST", "/v1/payments/"+c.str("id")+"/dispute", `{"comment":"paid"}`)
	if err := r.ReviewDispute(ctx, c.str("id"), OutcomeRejected); err != nil {
		t.Fatal(err)
	}
	po := e.do("POST", "/v1/payouts", `{"ext_id":"po","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"A"}`)
	if err := r.SetPayoutStatus(ctx, po.str("id"), "processing"); err != nil {
		t.Fatal(err)
	}
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`)
	if err := r.SetWithdrawalStatus(ctx, w.str("id"), "completed", "0xabc"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/withdrawals/"+w.str("id"), "").str("tx_hash"), "0xabc")
	if err := r.SetWithdrawalStatus(ctx, w.str("id"), "bogus", ""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad status: %v", err)
	}
	now, err := r.Advance(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, now, base.Add(time.Hour))
	if err := r.InjectFault(ctx, Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore, Status: 500}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("GET", "/v1/balance", ""), 500, "SYS_001")

	st, err := r.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, st.Merchants[0].Payments["COMPLETED"], 1)
	eq(t, st.Merchants[0].Payouts["processing"], 1)
	wantDec(t, st.Merchants[0].Terminals[0].BalanceFrozen, "0")
	reqs, err := r.Requests(ctx)
	if err != nil || len(reqs) < 2 || reqs[1].Route != "/v1/balance" || reqs[1].Status != 500 || reqs[1].Code != "SYS_001" {
		t.Fatalf("requests: %v %+v", err, reqs)
	}
	ds, err := r.Deliveries(ctx)
	if err != nil || len(ds) != 2 || ds[0].State != DeliveryDelivered {
		t.Fatalf("deliveries: %v %+v", err, ds)
	}
	again, err := r.ResendWebhook(ctx, ds[0].ID)
	if err != nil || again.ResendOf != ds[0].ID {
		t.Fatalf("resend: %v %+v", err, again)
	}
	if _, err := r.ResendWebhook(ctx, "dlv_nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("resend of an unknown delivery: %v", err)
	}
	if err := r.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").status, http.StatusNotFound)

	if _, err := NewRemote("ftp://x"); err == nil {
		t.Fatal("ftp base URL accepted")
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	rd, _ := NewRemote(down.URL)
	if err := rd.Reset(ctx); err == nil {
		t.Fatal("no error from a sandbox that is not there")
	}
}
