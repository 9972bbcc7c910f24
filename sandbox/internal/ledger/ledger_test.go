package ledger

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func wantBalance(t *testing.T, what string, b Balance, available, frozen string) {
	t.Helper()
	if !b.Available.Equal(d(available)) || !b.Frozen.Equal(d(frozen)) {
		t.Fatalf("%s: balance %s frozen %s, want %s frozen %s", what, b.Available, b.Frozen, available, frozen)
	}
}

func wantErr(t *testing.T, what string, err *Error, kind Kind, code, field string) {
	t.Helper()
	if err == nil || err.Kind != kind || err.Code != code || err.Field != field || err.Message == "" || err.Error() != err.Message {
		t.Fatalf("%s: error %+v, want kind %d code %q field %q and a message", what, err, kind, code, field)
	}
}

// Every pair of statuses: the table's rows move and settle the money as
// they say, every other pair is refused and touches nothing.
func TestMoveWithdrawal(t *testing.T) {
	statuses := []string{WithdrawalPending, WithdrawalProcessing, WithdrawalCompleted, WithdrawalFailed, "cancelled", ""}
	// After holding 11.50 of 100: 88.50 available, 11.50 frozen.
	want := map[[2]string][2]string{
		{WithdrawalPending, WithdrawalProcessing}:   {"88.50", "11.50"},
		{WithdrawalPending, WithdrawalCompleted}:    {"88.50", "0"},
		{WithdrawalPending, WithdrawalFailed}:       {"100", "0"},
		{WithdrawalProcessing, WithdrawalCompleted}: {"88.50", "0"},
		{WithdrawalProcessing, WithdrawalFailed}:    {"100", "0"},
	}
	for _, from := range statuses {
		for _, to := range statuses {
			b := Balance{Available: d("88.50"), Frozen: d("11.50")}
			w := Withdrawal{ID: "w1", Status: from, Held: d("11.50")}
			err := MoveWithdrawal(&w, &b, to)
			what := from + "->" + to
			if m, ok := want[[2]string{from, to}]; ok {
				if err != nil || w.Status != to {
					t.Fatalf("%s: %v, status %s", what, err, w.Status)
				}
				wantBalance(t, what, b, m[0], m[1])
				continue
			}
			switch to {
			case WithdrawalProcessing, WithdrawalCompleted, WithdrawalFailed:
				wantErr(t, what, err, WrongState, "", "")
				if !strings.Contains(err.Message, "w1 is "+from+", cannot become "+to) {
					t.Fatalf("%s: message %q", what, err.Message)
				}
			default:
				wantErr(t, what, err, Invalid, "", "status")
			}
			if w.Status != from {
				t.Fatalf("%s: refused, yet status %s", what, w.Status)
			}
			wantBalance(t, what+" (refused)", b, "88.50", "11.50")
		}
	}
	got := strings.Join(WithdrawalMoves(WithdrawalPending), ",") + ";" + strings.Join(WithdrawalMoves(WithdrawalProcessing), ",") +
		";" + strings.Join(WithdrawalMoves(WithdrawalCompleted), ",")
	if got != "processing,completed,failed;completed,failed;" {
		t.Fatalf("WithdrawalMoves: %s", got)
	}
}

func TestHoldWithdrawal(t *testing.T) {
	for _, c := range []struct {
		name, amount string
		active, sub  bool
		held         string // empty: refused
		kind         Kind
		code, field  string
	}{
		{name: "amount and fee", amount: "10", active: true, held: "11.50"},
		{name: "fee subtracted", amount: "10", active: true, sub: true, held: "10"},
		{name: "all of it", amount: "98.50", active: true, held: "100"},
		{name: "a cent short", amount: "98.51", active: true, kind: Refused, code: "WDR_002"},
		{name: "fee not covered", amount: "1.50", active: true, sub: true, kind: Invalid, code: "WDR_001", field: "amount"},
		{name: "inactive", amount: "1", active: false, kind: Invalid, code: "WDR_001", field: "terminal_id"},
	} {
		b := Balance{Available: d("100.00"), Frozen: d("0")}
		held, err := HoldWithdrawal(&b, c.active, d("1.50"), d(c.amount), c.sub)
		if c.held == "" {
			wantErr(t, c.name, err, c.kind, c.code, c.field)
			wantBalance(t, c.name, b, "100", "0")
			continue
		}
		if err != nil || !held.Equal(d(c.held)) {
			t.Fatalf("%s: held %s, %v", c.name, held, err)
		}
		wantBalance(t, c.name, b, d("100").Sub(d(c.held)).String(), c.held)
	}
}

func TestTransfer(t *testing.T) {
	from, to := Balance{Available: d("10"), Frozen: d("1")}, Balance{Available: d("5"), Frozen: d("0")}
	if err := Transfer(&from, &to, d("10")); err != nil {
		t.Fatal(err)
	}
	wantBalance(t, "from", from, "0", "1")
	wantBalance(t, "to", to, "15", "0")
	err := Transfer(&from, &to, d("0.000001"))
	wantErr(t, "overdraft", err, Refused, "TRF_003", "")
	wantBalance(t, "from after the refusal", from, "0", "1")
	wantBalance(t, "to after the refusal", to, "15", "0")
}

func TestUSDTPrecise(t *testing.T) {
	for s, want := range map[string]bool{"1.123456": true, "1.1234560": true, "1.1234567": false, "100": true} {
		if USDTPrecise(d(s)) != want {
			t.Errorf("USDTPrecise(%s) = %v", s, !want)
		}
	}
}

// The rules speak the domain: no HTTP, and nothing of the sandbox's other
// rooms (the API, the web pages, the public package) below them.
func TestLedgerImportsNoHTTPNorSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net/http" || strings.HasPrefix(p, "github.com/paykit-dev/paykit-go/sandbox") && p != "github.com/paykit-dev/paykit-go/sandbox/internal/ledger" {
			t.Errorf("the ledger imports %s", p)
		}
	}
}
