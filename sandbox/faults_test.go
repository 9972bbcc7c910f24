package sandbox

import (
	"testing"
)

// A fault that names no code answers with the spec's internal error of the
// route it hits: PAY_001 (500) for create and confirm payment, SYS_001 for
// create payout and cancel dispute, and DefaultFaultCode on routes whose
// internal error the spec does not name. A code given is kept.
func TestFaultDefaultCodeIsTheRoutesInternalError(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"o-1","amount":1500}`).str("id")
	payout := `{"ext_id":"po-1","amount":500,"method":"card","requisites":"4111111111111111","holder_name":"IVAN"}`
	for _, c := range []struct {
		fault      Fault
		method     string
		path, body string
		status     int
		want       string
	}{
		{Fault{Method: "POST", Path: "/v1/payments", Mode: FaultErrorBefore}, "POST", "/v1/payments", `{"ext_id":"o-2","amount":1500}`, 500, "PAY_001"},
		{Fault{Method: "POST", Path: "/v1/payments/{id}/confirm", Mode: FaultErrorBefore}, "POST", "/v1/payments/" + id + "/confirm", "", 500, "PAY_001"},
		{Fault{Method: "POST", Path: "/v1/payouts", Mode: FaultErrorBefore}, "POST", "/v1/payouts", payout, 500, "SYS_001"},
		{Fault{Path: "/v1/payments/{id}/dispute/cancel", Mode: FaultErrorBefore}, "POST", "/v1/payments/" + id + "/dispute/cancel", "", 500, "SYS_001"},
		{Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore}, "GET", "/v1/balance", "", 500, DefaultFaultCode},
		{Fault{Path: "/v1/payments", Mode: FaultRetryAfter}, "POST", "/v1/payments", `{"ext_id":"o-3","amount":1500}`, 503, "PAY_001"},
		{Fault{Method: "POST", Path: "/v1/payouts", Mode: FaultRetryAfter}, "POST", "/v1/payouts", payout, 503, "SYS_001"},
		{Fault{Method: "POST", Path: "/v1/payments", Mode: FaultErrorBefore, Status: 502, Code: "GATEWAY"}, "POST", "/v1/payments", `{"ext_id":"o-4","amount":1500}`, 502, "GATEWAY"},
	} {
		if err := e.sb.InjectFault(c.fault); err != nil {
			t.Fatal(err)
		}
		var r resp
		if c.body == "" && c.method == "POST" && c.path == "/v1/payments/"+id+"/confirm" {
			r = e.confirm("/v1/payments/" + id)
		} else {
			r = e.do(c.method, c.path, c.body)
		}
		wantStatus(t, r, c.status, c.want)
	}
	// Every fault was used up: nothing else was answered with one.
	wantStatus(t, e.do("GET", "/v1/balance", ""), 200, "")
}
