package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// inProcess runs the command in this process with a stdin and stderr that
// claim to be a terminal: the confirmation prompt and the progress line,
// which a subprocess with pipes never shows.
func (e *testEnv) inProcess(stdin string, args ...string) result {
	e.t.Helper()
	return e.inProcessEnv(map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret,
		"PAYKIT_CONFIG": "/nonexistent/x"}, stdin, args...)
}

// inProcessEnv is inProcess with the given environment alone.
func (e *testEnv) inProcessEnv(vars map[string]string, stdin string, args ...string) result {
	e.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &env{
		stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return vars[k] }, isTerminal: func(any) bool { return true },
	})
	return result{out.String(), errb.String(), code}
}

// TestConfirmOnTerminal: on a terminal a money move asks; anything but y
// or yes sends nothing.
func TestConfirmOnTerminal(t *testing.T) {
	e := newEnv(t)
	args := []string{"payouts", "create", "--ext-id", "p-1", "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "Ivan Petrov"}
	host := strings.TrimPrefix(e.srv.URL, "http://")
	r := e.inProcess("n\n", args...)
	if r.code != 2 || !strings.Contains(r.stderr, "Pay out 10.00 RUB by card to ************1111 (ext_id p-1) on "+host+" (credentials from the environment)? [y/N] ") {
		t.Fatalf("answer n: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 0 {
		t.Fatalf("a refused payout was sent (%d requests)", n)
	}
	r = e.inProcess("yes\n", args...)
	if r.code != 0 || !strings.Contains(r.stdout, "ext_id:      p-1") {
		t.Fatalf("answer yes: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = e.inProcess("", "transfers", "create", "--from", "a", "--to", "b", "--amount", "1")
	if r.code != 2 || !strings.Contains(r.stderr, "Transfer 1.00 USDT from a to b on "+host+" (credentials from the environment)? [y/N]") {
		t.Fatalf("transfer, no answer: exit %d, stderr %q", r.code, r.stderr)
	}
	r = e.inProcess("", "withdrawals", "create", "--terminal", "a", "--amount", "1", "--address", "T1")
	if r.code != 2 || !strings.Contains(r.stderr, "Withdraw 1.00 USDT (fee on top) from a to T1 on "+host+" (credentials from the environment)? [y/N]") {
		t.Fatalf("withdrawal, no answer: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestProgressOnTerminal: payouts list --all shows its progress on a
// terminal's stderr, and only there.
func TestProgressOnTerminal(t *testing.T) {
	e := newEnv(t)
	e.createPayouts("10", "p-1", "p-2", "p-3")
	r := e.inProcess("", "payouts", "list", "--all", "--limit", "2", "-o", "csv")
	if r.code != 0 || r.stderr != "\rfetched 2 of 3 payouts\rfetched 3 of 3 payouts\n" || strings.Count(r.stdout, "\r\n") != 4 {
		t.Fatalf("exit %d, stderr %q, stdout %q", r.code, r.stderr, r.stdout)
	}
	r = e.run("", "payouts", "list", "--all", "--limit", "2", "-o", "csv")
	if r.stderr != "" {
		t.Fatalf("progress on a stderr that is not a terminal: %q", r.stderr)
	}
}
