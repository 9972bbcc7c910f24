package main

import (
	"context"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestUnknownOutcomeBalances: a transfer or a withdrawal whose answer is
// lost prints, before it is sent, the balances it starts from, and then
// which BALANCE values of paykit terminals mean made and which not made.
// Over loopback with the sandbox: an answer lost after the move was
// applied (drop_after) and one lost before (a 5xx without processing,
// error_before); each time the balances the service then holds are the
// ones the message calls made, or not made, as the case is. The old
// command printed no balances, so paykit terminals could not tell.
func TestUnknownOutcomeBalances(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const main, reserve = sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID
	balances := func() map[string]string {
		t.Helper()
		ts, err := e.sdk.ListTerminals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, x := range ts {
			m[x.ID] = money(x.Balance)
			m[x.ID+" frozen"] = money(x.BalanceFrozen)
		}
		return m
	}
	// The first line of stderr: the balances read before the move.
	beforeTransfer := func(b map[string]string) string {
		return "paykit: balances before the transfer: " + main + " " + b[main] + " USDT (frozen " + b[main+" frozen"] + "), " +
			reserve + " " + b[reserve] + " USDT (frozen " + b[reserve+" frozen"] + ")\n"
	}
	beforeWithdrawal := func(b map[string]string) string {
		return "paykit: balances before the withdrawal: " + main + " " + b[main] + " USDT (frozen " + b[main+" frozen"] + ")\n"
	}
	transfer := []string{"transfers", "create", "--from", main, "--to", reserve, "--amount", "1.5", "--yes"}
	withdraw := []string{"withdrawals", "create", "--terminal", main, "--amount", "5", "--address", "TXYZabcdefghijklmnopqrstuvwxyz1234", "--yes"}
	for _, c := range []struct {
		name    string
		args    []string
		route   string
		mode    string
		applied bool
		// verdict is the line the balances afterwards must match, from
		// the balances before (b) and after (n).
		before  func(b map[string]string) string
		verdict func(n map[string]string) string
	}{
		{"transfer applied", transfer, "/v1/transfers", sandbox.FaultDropAfter, true,
			beforeTransfer,
			func(n map[string]string) string {
				return "\n  " + main + " " + n[main] + " and " + reserve + " " + n[reserve] + " (1.50 moved): the transfer was made; do not send it again\n"
			}},
		{"transfer not applied", transfer, "/v1/transfers", sandbox.FaultErrorBefore, false,
			beforeTransfer,
			func(n map[string]string) string {
				return "\n  " + main + " " + n[main] + " and " + reserve + " " + n[reserve] + " (as before): it was not made; read once more"
			}},
		{"withdrawal applied", withdraw, "/v1/withdrawals", sandbox.FaultDropAfter, true,
			beforeWithdrawal,
			func(n map[string]string) string {
				return "\n  " + n[main] + " (6.50 less: 5.00 and the fee of 1.50): the withdrawal was made"
			}},
		{"withdrawal, fee subtracted, applied", append(withdraw, "--subtract-fee"), "/v1/withdrawals", sandbox.FaultDropAfter, true,
			beforeWithdrawal,
			func(n map[string]string) string {
				return "\n  " + n[main] + " (5.00 less, the fee taken out of it): the withdrawal was made"
			}},
		{"withdrawal not applied", withdraw, "/v1/withdrawals", sandbox.FaultErrorBefore, false,
			beforeWithdrawal,
			func(n map[string]string) string {
				return "\n  " + n[main] + " (as before): it was not made, or it failed and the money came back; read once more"
			}},
	} {
		b := balances()
		posts := e.sb.RequestCount("POST", c.route)
		if err := e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: c.route, Mode: c.mode}); err != nil {
			t.Fatal(err)
		}
		r := e.run("", c.args...)
		n := balances()
		if c.applied == (n[main] == b[main]) {
			t.Fatalf("%s: the fault did not do what the case says: %s before, %s after", c.name, b[main], n[main])
		}
		if r.code != 3 || r.stdout != "" || !strings.HasPrefix(r.stderr, c.before(b)) || !strings.Contains(r.stderr, "Settle it with:\n  paykit terminals\n") ||
			!strings.Contains(r.stderr, c.verdict(n)) || !strings.Contains(r.stderr, "\n  anything else: other activity on ") {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 3, stderr starting %q and holding %q", c.name, r.code, r.stdout, r.stderr, c.before(b), c.verdict(n))
		}
		if got := e.sb.RequestCount("POST", c.route) - posts; got != 1 {
			t.Errorf("%s: %d requests sent, want 1", c.name, got)
		}
	}

	// The balances cannot be read: nothing is sent.
	if err := e.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/terminals", Mode: sandbox.FaultErrorBefore, Count: 100}); err != nil {
		t.Fatal(err)
	}
	posts := e.sb.RequestCount("POST", "/v1/transfers")
	r := e.run("", transfer...)
	if r.code != 1 || !strings.Contains(r.stderr, "paykit: nothing was sent: the balances the transfer starts from could not be read (paykit terminals)") {
		t.Errorf("terminals unreadable: exit %d, stderr %q; want 1, nothing sent", r.code, r.stderr)
	}
	if got := e.sb.RequestCount("POST", "/v1/transfers") - posts; got != 0 {
		t.Errorf("terminals unreadable: %d transfers sent", got)
	}
}
