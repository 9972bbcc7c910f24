package main

import (
	"context"
	"strings"
	"testing"
)

// TestMistypedSubcommand: a word that is none of a group's commands is a
// usage error (exit 2) naming it, with nothing on stdout: a cron job with
// a typo must not report success. A group alone is one too; its --help is
// not.
func TestMistypedSubcommand(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"payouts", "lst"}, `unknown command "lst" for "paykit payouts"; did you mean get or list?`},
		{[]string{"withdrawals", "list"}, `unknown command "list" for "paykit withdrawals"`},
		{[]string{"disputes", "opne", "x"}, `unknown command "opne" for "paykit disputes"; did you mean open?`},
		{[]string{"payments"}, `"paykit payments" needs a command: cancel, confirm, create, get`},
		{[]string{"refunds"}, `unknown command "refunds" for "paykit"`},
	} {
		r := e.run("", c.args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
			t.Errorf("paykit %v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	if r := e.run("", "payouts", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Available Commands") {
		t.Errorf("payouts --help: exit %d, %q", r.code, r.stdout)
	}
	if n := len(e.sb.Requests()); n != 0 {
		t.Errorf("%d requests sent by mistyped commands", n)
	}
}

// TestAmountScale: an amount finer than its currency moves is a usage
// error (exit 2) before anything is sent: RUB has kopecks (two decimals),
// USDT six. Trailing zeros are no finer: 100.500 RUB is 100.50.
func TestAmountScale(t *testing.T) {
	e := newEnv(t)
	p := e.pendingPayment("scale-1")
	if _, err := e.sdk.CancelPayment(context.Background(), p.ID); err != nil {
		t.Fatal(err)
	}
	before := len(e.sb.Requests())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"payments", "create", "--ext-id", "o-1", "--amount", "100.005"}, "100.005 RUB is finer than RUB moves (kopecks: two decimals at most)"},
		{[]string{"payouts", "create", "--ext-id", "p-1", "--amount", "2000.125", "--method", "card", "--requisites", testCard, "--holder-name", "I P", "--yes"}, "2000.125 RUB"},
		{[]string{"disputes", "open", p.ID, "--amount", "300.001"}, "300.001 RUB"},
		{[]string{"transfers", "create", "--from", "a", "--to", "b", "--amount", "1.1234567", "--yes"}, "1.1234567 USDT is finer than USDT moves (six decimals at most)"},
		{[]string{"withdrawals", "create", "--terminal", "a", "--address", "T1", "--amount", "5.0000001", "--yes"}, "5.0000001 USDT"},
	} {
		r := e.run("", c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "nothing was sent") {
			t.Errorf("paykit %v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if n := len(e.sb.Requests()) - before; n != 0 {
		t.Fatalf("%d requests sent for amounts finer than their currency", n)
	}
	r := e.run("", "payments", "create", "--ext-id", "o-2", "--amount", "100.500", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"amount":100.5`) {
		t.Fatalf("100.500 RUB: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "transfers", "create", "--from", "term_sandbox_main", "--to", "term_sandbox_reserve", "--amount", "1.1234560", "--yes")
	if r.code != 0 {
		t.Fatalf("1.1234560 USDT: exit %d, %q", r.code, r.stderr)
	}
}

// TestReceiptDirectory: --receipt naming a directory is a usage error
// (exit 2) before the confirm is sent.
func TestReceiptDirectory(t *testing.T) {
	e := newEnv(t)
	p := e.pendingPayment("rcpt-1")
	r := e.run("", "payments", "confirm", p.ID, "--receipt", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "is a directory") {
		t.Fatalf("--receipt DIR: exit %d, stderr %q; want 2", r.code, r.stderr)
	}
	if n := e.sb.RequestCount("POST", "/v1/payments/{id}/confirm"); n != 0 {
		t.Fatalf("%d confirm requests sent with a directory as the receipt", n)
	}
}
