package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPayouts(t *testing.T) {
	e := newEnv(t, Config{})
	for _, body := range []string{
		`{"amount":10,"method":"card","requisites":"2200000000000004","holder_name":"I I"}`,
		`{"ext_id":"p","amount":0,"method":"card","requisites":"2200000000000004","holder_name":"I I"}`,
		`{"ext_id":"p","amount":10,"method":"wire","requisites":"2200000000000004","holder_name":"I I"}`,
		`{"ext_id":"p","amount":10,"method":"CARD","requisites":"2200000000000004","holder_name":"I I"}`,
		`{"ext_id":"p","amount":10,"method":"Sbp","requisites":"+79990000000","holder_name":"I I"}`,
		`{"ext_id":"p","amount":10,"method":"card","requisites":" ","holder_name":"I I"}`,
		`{"ext_id":"p","amount":10,"method":"card","requisites":"2200000000000004"}`,
		`{"ext_id":"p","amount":10,"method":"card","requisites":"x","holder_name":"I I","notify_url":"ftp://x"}`,
		`[`,
	} {
		wantStatus(t, e.do("POST", "/v1/payouts", body), http.StatusBadRequest, "PAY_002")
	}
	r := e.do("POST", "/v1/payouts", `{"ext_id":"p1","amount":2500.00,"method":"card","requisites":"2200000000000004","holder_name":"Ivan Ivanov"}`)
	wantStatus(t, r, 200, "")
	for k, want := range map[string]string{"ext_id": "p1", "currency": "RUB", "method": "card", "status": "pending",
		"bank": "", "holder_name": "Ivan Ivanov", "requisites": "2200000000000004", "created_at": "2025-03-01T12:00:00Z"} {
		eq(t, r.str(k), want)
	}
	if !strings.Contains(r.raw, `"amount":2500.00,`) || r.has("completed_at") || r.has("provider_order_id") {
		t.Fatalf("payout shape: %s", r.raw)
	}
	id := r.str("id")
	dup := e.do("POST", "/v1/payouts", `{"ext_id":"p1","amount":1,"method":"sbp","requisites":"+79990000000","holder_name":"A"}`)
	wantStatus(t, dup, http.StatusConflict, "PAY_003")
	eq(t, dup.str("data", "ext_id"), "p1")

	eq(t, e.do("GET", "/v1/payouts/"+id, "").str("ext_id"), "p1")
	eq(t, e.do("GET", "/v1/payouts/by-ext-id/p1", "").str("id"), id)
	wantStatus(t, e.do("GET", "/v1/payouts/nope", ""), 404, "PAY_001")
	wantStatus(t, e.do("GET", "/v1/payouts/by-ext-id/nope", ""), 404, "PAY_001")

	if err := e.sb.SetPayoutStatus(id, "processing"); err != nil {
		t.Fatal(err)
	}
	g := e.do("GET", "/v1/payouts/"+id, "")
	if g.str("status") != "processing" || g.str("provider_order_id") == "<nil>" || g.has("completed_at") {
		t.Fatalf("processing: %s", g.raw)
	}
	e.sb.Advance(time.Hour)
	if err := e.sb.SetPayoutStatus(id, "completed"); err != nil {
		t.Fatal(err)
	}
	g = e.do("GET", "/v1/payouts/"+id, "")
	eq(t, g.str("completed_at"), "2025-03-01T13:00:00Z")
	for _, tc := range []struct {
		id, status string
		want       error
	}{
		{id, "failed", ErrWrongState},
		{id, "pending", ErrInvalidArgument},
		{"nope", "failed", ErrNotFound},
	} {
		if err := e.sb.SetPayoutStatus(tc.id, tc.status); !errors.Is(err, tc.want) {
			t.Fatalf("%v: %v", tc, err)
		}
	}
}

func TestPayoutList(t *testing.T) {
	e := newEnv(t, Config{})
	var ids []string
	for i := range 5 {
		r := e.do("POST", "/v1/payouts", fmt.Sprintf(`{"ext_id":"l%d","amount":%d,"method":"sbp","requisites":"+7999","holder_name":"A","bank":"sber"}`, i, 100+i))
		wantStatus(t, r, 200, "")
		eq(t, r.str("method"), "sbp")
		eq(t, r.str("bank"), "sber")
		ids = append(ids, r.str("id"))
		e.sb.Advance(time.Hour)
	}
	e.sb.SetPayoutStatus(ids[1], "failed")
	e.sb.SetPayoutStatus(ids[3], "failed")

	list := func(q string) (string, resp) {
		r := e.do("GET", "/v1/payouts"+q, "")
		wantStatus(t, r, 200, "")
		var got []string
		for _, p := range r.m["payouts"].([]any) {
			got = append(got, p.(map[string]any)["ext_id"].(string))
		}
		return strings.Join(got, ","), r
	}
	got, r := list("")
	eq(t, got, "l0,l1,l2,l3,l4")
	eq(t, r.str("total"), "5")
	eq(t, r.str("limit"), "100")
	eq(t, r.str("offset"), "0")
	got, r = list("?limit=2&offset=1")
	eq(t, got, "l1,l2")
	eq(t, r.str("total"), "5")
	// The status filter takes the spec's lower-case values only.
	for _, bad := range []string{"PENDING", "Failed", "done"} {
		r := e.do("GET", "/v1/payouts?status="+bad, "")
		wantStatus(t, r, 400, "PAY_002")
		eq(t, r.str("data", "field"), "status")
	}
	got, _ = list("?status=failed")
	eq(t, got, "l1,l3")
	// from and to are inclusive.
	got, _ = list("?from=2025-03-01T13:00:00Z&to=2025-03-01T15:00:00Z")
	eq(t, got, "l1,l2,l3")
	got, _ = list("?from=2025-03-01T16:00:00%2B03:00")
	eq(t, got, "l1,l2,l3,l4")
	got, r = list("?to=2025-03-01&limit=5000&offset=4")
	eq(t, got, "l4")
	eq(t, r.str("limit"), "1000")
	got, r = list("?offset=10")
	if got != "" || r.str("payouts") != "[]" {
		t.Fatalf("past the end: %s", r.raw)
	}
	got, _ = list("?to=2025-02-28")
	eq(t, got, "")
	for _, q := range []string{"?limit=x", "?limit=-1", "?offset=-1", "?from=yesterday", "?to=x"} {
		wantStatus(t, e.do("GET", "/v1/payouts"+q, ""), 400, "PAY_002")
	}
}

func TestTerminalsBalanceTransfers(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.do("GET", "/v1/terminals", "")
	wantStatus(t, r, 200, "")
	want := `{"terminals":[{"id":"term_sandbox_main","name":"Main terminal","balance":1000.00,"balance_frozen":0.00,"withdrawal_fee":1.50,"currency":"USDT","is_active":true},` +
		`{"id":"term_sandbox_reserve","name":"Reserve terminal","balance":0.00,"balance_frozen":0.00,"withdrawal_fee":1.50,"currency":"USDT","is_active":true}]}`
	eq(t, strings.TrimSpace(r.raw), want)

	for _, body := range []string{
		`{"to_terminal_id":"term_sandbox_reserve","amount":1}`,
		`{"from_terminal_id":"term_sandbox_main","amount":1}`,
		`{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_main","amount":1}`,
		`{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":0}`,
		`{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve"}`,
		`nope`,
	} {
		wantStatus(t, e.do("POST", "/v1/transfers", body), 400, "TRF_001")
	}
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"x","to_terminal_id":"term_sandbox_reserve","amount":1}`), 404, "TRF_002")
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"x","amount":1}`), 404, "TRF_002")
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":1000.01}`), 400, "TRF_003")

	r = e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":250.125}`)
	wantStatus(t, r, 200, "")
	eq(t, strings.TrimSpace(r.raw), `{"success":true,"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":250.125,"currency":"USDT"}`)
	wantDec(t, e.balance(DefaultMainTerminalID), "749.875")
	wantDec(t, e.balance(DefaultReserveTerminalID), "250.125")
	eq(t, e.sb.Stats(e.key).Transfers, 1)

	e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_reserve","amount":100,"address":"TXyz"}`)
	b := e.do("GET", "/v1/balance", "")
	eq(t, strings.TrimSpace(b.raw), `{"balance":898.500,"balance_frozen":101.50,"currency":"USDT"}`)
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestWithdrawals(t *testing.T) {
	e := newEnv(t, Config{})
	for _, body := range []string{
		`{"amount":10,"address":"T1"}`,
		`{"terminal_id":"term_sandbox_main","amount":-1,"address":"T1"}`,
		`{"terminal_id":"term_sandbox_main","amount":10,"address":" "}`,
		`{"terminal_id":"nope","amount":10,"address":"T1"}`,
		`{"terminal_id":"term_sandbox_main","amount":1.50,"address":"T1","subtract_fee_from_amount":true}`,
		`{`,
	} {
		wantStatus(t, e.do("POST", "/v1/withdrawals", body), 400, "WDR_001")
	}
	wantStatus(t, e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":998.51,"address":"T1"}`), 400, "WDR_002")
	wantStatus(t, e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_reserve","amount":10,"address":"T1","subtract_fee_from_amount":true}`), 400, "WDR_002")

	r := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":100,"address":"TQ1"}`)
	wantStatus(t, r, 200, "")
	id := r.str("id")
	for _, frag := range []string{`"amount":100.00,`, `"fee":1.50,`, `"currency":"USDT"`, `"address":"TQ1"`, `"tx_hash":null`, `"status":"pending"`,
		`"created_at":"2025-03-01T12:00:00Z"`, `"updated_at":"2025-03-01T12:00:00Z"`} {
		if !strings.Contains(r.raw, frag) {
			t.Fatalf("%s not in %s", frag, r.raw)
		}
	}
	ts := e.sb.Terminals(e.key)
	wantDec(t, ts[0].Balance, "898.50")
	wantDec(t, ts[0].BalanceFrozen, "101.50")

	r2 := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":100,"address":"TQ2","subtract_fee_from_amount":true}`)
	wantStatus(t, r2, 200, "")
	wantDec(t, e.sb.Terminals(e.key)[0].BalanceFrozen, "201.50")

	eq(t, e.do("GET", "/v1/withdrawals/"+id, "").str("id"), id)
	wantStatus(t, e.do("GET", "/v1/withdrawals/nope", ""), 404, "WDR_003")
	eq(t, strings.TrimSpace(e.do("GET", "/v1/withdrawals/fee", "").raw), `{"fee":1.50,"currency":"USDT"}`)

	// processing, then completed with a hash: the frozen sum leaves.
	if err := e.sb.SetWithdrawalStatus(id, "processing", ""); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/withdrawals/"+id, "").str("tx_hash"), "<nil>")
	e.sb.Advance(time.Minute)
	if err := e.sb.SetWithdrawalStatus(id, "completed", "abc123"); err != nil {
		t.Fatal(err)
	}
	g := e.do("GET", "/v1/withdrawals/"+id, "")
	eq(t, g.str("tx_hash"), "abc123")
	eq(t, g.str("status"), "completed")
	eq(t, g.str("updated_at"), "2025-03-01T12:01:00Z")
	ts = e.sb.Terminals(e.key)
	wantDec(t, ts[0].Balance, "798.50")
	wantDec(t, ts[0].BalanceFrozen, "100")

	// failed releases the frozen sum.
	if err := e.sb.SetWithdrawalStatus(r2.str("id"), "failed", ""); err != nil {
		t.Fatal(err)
	}
	ts = e.sb.Terminals(e.key)
	wantDec(t, ts[0].Balance, "898.50")
	wantDec(t, ts[0].BalanceFrozen, "0")

	for _, tc := range []struct {
		id, status string
		want       error
	}{
		{id, "failed", ErrWrongState},
		{id, "pending", ErrInvalidArgument},
		{"nope", "failed", ErrNotFound},
	} {
		if err := e.sb.SetWithdrawalStatus(tc.id, tc.status, ""); !errors.Is(err, tc.want) {
			t.Fatalf("%v: %v", tc, err)
		}
	}
	// Completing without a hash records a random one.
	r3 := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":1,"address":"TQ3"}`)
	if err := e.sb.SetWithdrawalStatus(r3.str("id"), "completed", ""); err != nil {
		t.Fatal(err)
	}
	eq(t, len(e.do("GET", "/v1/withdrawals/"+r3.str("id"), "").str("tx_hash")), 64)
	eq(t, e.sb.Stats(e.key).Withdrawals, 3)
}

func TestBanks(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.do("GET", "/v1/banks", "")
	wantStatus(t, r, 200, "")
	count := map[string]int{}
	inactive := []string{}
	for _, b := range r.m["banks"].([]any) {
		m := b.(map[string]any)
		count[m["country"].(string)]++
		if m["code"].(string) != strings.ToLower(m["code"].(string)) {
			t.Fatalf("code not lower case: %v", m)
		}
		if m["is_active"] == false {
			inactive = append(inactive, m["code"].(string))
		}
	}
	eq(t, fmt.Sprint(count), "map[KG:3 KZ:3 RU:6 TJ:3 UZ:3]")
	eq(t, strings.Join(inactive, ","), "gazprom")
}

// USDT moves at TRC-20 precision: a seventh decimal place is refused with
// the operation's invalid-parameters code and no dust enters a balance.
func TestUSDTPrecision(t *testing.T) {
	e := newEnv(t, Config{})
	tr := func(amount string) resp {
		return e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":`+amount+`}`)
	}
	for _, a := range []string{"0.0000001", "1.1234567", "10.00000001"} {
		r := tr(a)
		wantStatus(t, r, 400, "TRF_001")
		eq(t, r.str("data", "field"), "amount")
		r = e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":`+a+`,"address":"TXyz"}`)
		wantStatus(t, r, 400, "WDR_001")
		eq(t, r.str("data", "field"), "amount")
	}
	wantDec(t, e.balance(DefaultMainTerminalID), "1000")
	wantDec(t, e.balance(DefaultReserveTerminalID), "0")
	eq(t, e.sb.Stats(e.key).Withdrawals, 0)

	// Six places, and trailing zeros beyond them, are fine.
	wantStatus(t, tr("0.000001"), 200, "")
	wantStatus(t, tr("1.5000000000"), 200, "")
	wantStatus(t, e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":2.123456,"address":"TXyz"}`), 200, "")
	wantDec(t, e.balance(DefaultReserveTerminalID), "1.500001")
	wantDec(t, e.balance(DefaultMainTerminalID), "994.876543") // 1000 - 1.500001 - (2.123456 + 1.50 fee)
}
