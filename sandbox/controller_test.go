package sandbox

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// One test body drives the in-process Controller and a Remote alike: the
// same controls, the same answers, the same refusals (errors.Is on the
// Go controls' errors), the same State.
func TestControllerInProcessAndRemote(t *testing.T) {
	for _, mode := range []string{"in-process", "remote"} {
		t.Run(mode, func(t *testing.T) {
			sink := newHookSink(t, 0)
			e := newEnv(t, Config{})
			c := e.sb.Controller()
			if mode == "remote" {
				r, err := NewRemote(e.ts.URL)
				if err != nil {
					t.Fatal(err)
				}
				c = r
			}
			controllerBody(t, e, c, sink)
		})
	}
}

func controllerBody(t *testing.T, e *env, c Controller, sink *hookSink) {
	ctx := context.Background()
	id := e.createPayment(`{"ext_id":"c-1","amount":1500,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	e.confirm("/v1/payments/" + id)
	if err := c.VerifyPayment(ctx, id, "maybe"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("unknown outcome: %v", err)
	}
	if err := c.VerifyPayment(ctx, id, OutcomeCompleted); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "COMPLETED")
	if err := c.VerifyPayment(ctx, id, OutcomeCompleted); !errors.Is(err, ErrWrongState) {
		t.Fatalf("verify twice: %v", err)
	}
	if err := c.VerifyPayment(ctx, "no-such-id", OutcomeCompleted); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := c.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, strings.Join(sink.statuses(), ","), "PROCESSING,COMPLETED")

	d := e.createPayment(`{"ext_id":"c-2","amount":1600}`).str("id")
	e.do("POST", "/v1/payments/"+d+"/cancel", "")
	e.do("POST", "/v1/payments/"+d+"/dispute", `{"comment":"paid"}`)
	if err := c.ReviewDispute(ctx, d, OutcomeRejected); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+d, "").str("status"), "CANCELLED")

	po := e.do("POST", "/v1/payouts", `{"ext_id":"po","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"A"}`).str("id")
	if err := c.SetPayoutStatus(ctx, po, "processing"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPayoutStatus(ctx, po, "pending"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("payout back to pending: %v", err)
	}
	if err := c.SetPayoutStatus(ctx, po, "completed"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPayoutStatus(ctx, po, "failed"); !errors.Is(err, ErrWrongState) {
		t.Fatalf("completed payout to failed: %v", err)
	}
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`).str("id")
	if err := c.SetWithdrawalStatus(ctx, w, "bogus", ""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad status: %v", err)
	}
	if err := c.SetWithdrawalStatus(ctx, w, "completed", "0xabc"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/withdrawals/"+w, "").str("tx_hash"), "0xabc")

	for _, bad := range []time.Duration{-time.Second, 1500 * time.Millisecond} {
		if _, err := c.Advance(ctx, bad); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Advance(%v): %v", bad, err)
		}
	}
	now, err := c.Advance(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, now, base.Add(time.Hour))

	if err := c.InjectFault(ctx, Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore, Status: 503}); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/balance", "").status, http.StatusServiceUnavailable)
	if err := c.InjectFault(ctx, Fault{Method: "GET", Path: "/v1/balance", Mode: "no-such-mode"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad fault: %v", err)
	}

	st, err := c.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, st.Now, base.Add(time.Hour))
	m := st.Merchants[0]
	eq(t, m.Payments["COMPLETED"], 1)
	eq(t, m.Payments["CANCELLED"], 1)
	eq(t, m.Payouts["completed"], 1)
	eq(t, m.Withdrawals["completed"], 1)
	wantDec(t, m.Terminals[0].BalanceFrozen, "0")
	// The completed payment credited, the withdrawal and its fee debited,
	// as GET /v1/terminals says.
	wantDec(t, m.Terminals[0].Balance, e.balance("term_sandbox_main").String())

	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").status, http.StatusNotFound)
	st, err = c.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, len(st.Merchants[0].Payments), 0)
	wantDec(t, st.Merchants[0].Terminals[0].Balance, "1000")

	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Reset(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reset with a cancelled context: %v", err)
	}
	if _, err := c.State(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("State with a cancelled context: %v", err)
	}
}
