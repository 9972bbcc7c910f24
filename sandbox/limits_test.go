package sandbox

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Inputs are bounded: a dispute amount obeys the payment bounds, free text
// has caps whose refusals name them.
func TestBoundedInputs(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.createPayment(`{"ext_id":"o-1","amount":1500}`)
	path := "/v1/payments/" + p.str("id")
	e.do("POST", path+"/cancel", "")
	r := e.do("POST", path+"/dispute", `{"amount":1000000000000000000000000000000}`)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("data", "field"), "amount")
	wantStatus(t, e.do("POST", path+"/dispute", `{"amount":50}`), 400, "PAY_002")
	r = e.do("POST", path+"/dispute", `{"comment":"`+strings.Repeat("x", MaxCommentLength+1)+`"}`)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("message"), "comment must be at most 1000 characters")

	r = e.do("POST", "/v1/payouts", `{"ext_id":"`+strings.Repeat("p", 600)+`","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"A"}`)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("message"), "ext_id must be at most 255 characters")
	r = e.do("POST", "/v1/payouts", `{"ext_id":"po","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"`+strings.Repeat("a", 256)+`"}`)
	eq(t, r.str("message"), "holder_name must be at most 255 characters")
	r = e.do("POST", "/v1/payments", `{"ext_id":"o-2","amount":1500,"client_id":"`+strings.Repeat("c", 256)+`"}`)
	eq(t, r.str("message"), "client_id must be at most 255 characters")
	r = e.do("POST", "/v1/payments", `{"ext_id":"o-2","amount":1500,"notification_token":"`+strings.Repeat("t", 256)+`"}`)
	eq(t, r.str("message"), "notification_token must be at most 255 characters")
	r = e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"`+strings.Repeat("T", 129)+`"}`)
	wantStatus(t, r, 400, "WDR_001")
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`)
	wantStatus(t, e.control("/sandbox/withdrawals/"+w.str("id")+"/status",
		`{"status":"completed","tx_hash":"`+strings.Repeat("a", 129)+`"}`), 400, CodeControlInvalid)
}

// The package documentation states each cap by its number: a cap changed
// in code and not in the documentation fails here.
func TestCapsDocumented(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\n//", "")), " ")
	want := fmt.Sprintf("payout ext_id %d characters (MaxPayoutExtIDLength), holder_name, a payout's bank and client_id %d, "+
		"notification_token %d, requisites %d, a dispute's comment %d, notify_url and receipt_url %d, "+
		"a withdrawal's address %d, and a tx_hash given through a control %d.",
		MaxPayoutExtIDLength, MaxNameLength, MaxTokenLength, MaxRequisitesLength, MaxCommentLength, MaxURLLength,
		MaxAddressLength, MaxTxHashLength)
	if !strings.Contains(doc, want) {
		t.Errorf("doc.go does not state the caps as the code has them; it should read: %s", want)
	}
}
