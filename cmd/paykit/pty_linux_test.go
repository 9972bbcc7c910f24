package main

// The confirmation prompt and the progress line depend on a real
// terminal: these tests give the built binary a pseudo-terminal (Linux's
// /dev/ptmx) as stdin and/or stderr, and read what a person would see.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tty is a pseudo-terminal: the binary gets slave, the test reads and
// types on master.
type tty struct {
	t             *testing.T
	master, slave *os.File
	mu            sync.Mutex
	seen          bytes.Buffer
	more          chan struct{}
	done          chan struct{}
}

func openTTY(t *testing.T) *tty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open pts: %v", err)
	}
	p := &tty{t: t, master: m, slave: s, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.seen.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
			if err != nil {
				return // EIO once no process holds the slave
			}
		}
	}()
	t.Cleanup(func() {
		s.Close()
		m.Close()
		<-p.done
	})
	return p
}

// waitFor polls what the terminal showed until it holds s, or fails
// after a deadline.
func (p *tty) waitFor(s string) {
	p.t.Helper()
	p.waitUntil(fmt.Sprintf("%q", s), func(shown string) bool { return strings.Contains(shown, s) })
}

// waitUntil polls what the terminal showed until ok holds of it, or
// fails after a deadline, saying it waited for what.
func (p *tty) waitUntil(what string, ok func(shown string) bool) {
	p.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		if ok(p.shown()) {
			return
		}
		select {
		case <-p.more:
		case <-deadline.C:
			p.t.Fatalf("the terminal never showed %s; it showed %q", what, p.shown())
		}
	}
}

func (p *tty) shown() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen.String()
}

// start runs the binary with the test merchant's credentials; the caller
// wires stdin and stderr.
func (e *testEnv) start(stdin, stderr *os.File, args ...string) (*exec.Cmd, *bytes.Buffer, context.CancelFunc) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = []string{"HOME=" + e.t.TempDir(), "PATH=" + os.Getenv("PATH"), "TZ=UTC", "PAYKIT_CONFIG=/nonexistent/x",
		"PAYKIT_BASE_URL=" + e.srv.URL, "PAYKIT_API_KEY=" + testKey, "PAYKIT_SECRET=" + testSecret}
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, stderr
	if err := cmd.Start(); err != nil {
		cancel()
		e.t.Fatal(err)
	}
	return cmd, &out, cancel
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestTerminalConfirm: on a terminal, a payout asks on stderr and waits
// for the answer typed on stdin; "y" sends it, "n" sends nothing. With
// stdin a terminal but stderr not one (the question would go unseen) it
// refuses at once, as off a terminal.
func TestTerminalConfirm(t *testing.T) {
	e := newEnv(t)
	args := func(ext string) []string {
		return []string{"payouts", "create", "--ext-id", ext, "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "Ivan Petrov"}
	}

	on := " on " + strings.TrimPrefix(e.srv.URL, "http://") + " (credentials from the environment)"
	p := openTTY(t)
	cmd, out, cancel := e.start(p.slave, p.slave, args("tty-1")...)
	defer cancel()
	p.waitFor("Pay out 10.00 RUB by card to ************1111 (ext_id tty-1)" + on + "? [y/N] ")
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 0 {
		t.Fatalf("the payout was sent before the answer (%d requests)", n)
	}
	if _, err := p.master.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 0 || !strings.Contains(out.String(), "ext_id:      tty-1\n") {
		t.Fatalf("answer y: exit %d, stdout %q, terminal %q", code, out.String(), p.shown())
	}
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 1 {
		t.Fatalf("answer y: %d payout requests, want 1", n)
	}

	p = openTTY(t)
	cmd, out, cancel = e.start(p.slave, p.slave, args("tty-2")...)
	defer cancel()
	p.waitFor("(ext_id tty-2)" + on + "? [y/N] ")
	if _, err := p.master.Write([]byte("n\n")); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(cmd.Wait()); code != 2 || out.Len() != 0 {
		t.Fatalf("answer n: exit %d, stdout %q", code, out.String())
	}
	p.waitFor("not confirmed; nothing was sent")
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 1 {
		t.Fatalf("answer n: %d payout requests in all, want 1", n)
	}

	// Transfers and withdrawals ask the same way; "n" sends nothing.
	for _, m := range []struct {
		args   []string
		prompt string
		route  string
	}{
		{[]string{"transfers", "create", "--from", "term_sandbox_main", "--to", "term_sandbox_reserve", "--amount", "5"},
			"Transfer 5.00 USDT from term_sandbox_main to term_sandbox_reserve" + on + "? [y/N] ", "/v1/transfers"},
		{[]string{"withdrawals", "create", "--terminal", "term_sandbox_main", "--amount", "5", "--address", "TXYZ", "--subtract-fee"},
			"Withdraw 5.00 USDT (fee subtracted) from term_sandbox_main to TXYZ" + on + "? [y/N] ", "/v1/withdrawals"},
	} {
		p = openTTY(t)
		cmd, out, cancel := e.start(p.slave, p.slave, m.args...)
		defer cancel()
		p.waitFor(m.prompt)
		if _, err := p.master.Write([]byte("n\n")); err != nil {
			t.Fatal(err)
		}
		if code := exitCode(cmd.Wait()); code != 2 || out.Len() != 0 || e.sb.RequestCount("POST", m.route) != 0 {
			t.Fatalf("%s, answer n: exit %d, stdout %q, %d requests", m.route, code, out.String(), e.sb.RequestCount("POST", m.route))
		}
	}

	// stdin a terminal, stderr a pipe.
	p = openTTY(t)
	var errb bytes.Buffer
	ctx, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	c := exec.CommandContext(ctx, binary, args("tty-3")...)
	c.Env = []string{"HOME=" + t.TempDir(), "PAYKIT_CONFIG=/nonexistent/x", "PAYKIT_BASE_URL=" + e.srv.URL, "PAYKIT_API_KEY=" + testKey, "PAYKIT_SECRET=" + testSecret}
	c.Stdin, c.Stderr = p.slave, &errb
	if code := exitCode(c.Run()); code != 2 || !strings.Contains(errb.String(), "pass --yes to confirm") {
		t.Fatalf("stdin a terminal, stderr not: exit %d, stderr %q", code, errb.String())
	}
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 1 {
		t.Fatalf("stderr not a terminal: %d payout requests in all, want 1", n)
	}
}

// TestTerminalProgress: payouts list --all writes its progress line to
// stderr when stderr is a terminal, and nothing of it to stdout, which
// holds the csv alone.
func TestTerminalProgress(t *testing.T) {
	e := newEnv(t)
	e.createPayouts("10", "p-1", "p-2", "p-3")
	p := openTTY(t)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	cmd, out, cancel := e.start(devnull, p.slave, "payouts", "list", "--all", "--limit", "2", "-o", "csv")
	defer cancel()
	if code := exitCode(cmd.Wait()); code != 0 {
		t.Fatalf("exit %d, terminal %q", code, p.shown())
	}
	p.waitFor("\rfetched 2 of 3 payouts\rfetched 3 of 3 payouts\r\n")
	if strings.Count(out.String(), "\r\n") != 4 || strings.Contains(out.String(), "fetched") {
		t.Fatalf("stdout %q", out.String())
	}
}

// startSession runs the binary with args and env (besides HOME and
// PATH) in a session of its own, the terminal its stdin, stderr and
// controlling terminal, so that ^C typed is a SIGINT as in a shell. done
// gets Wait's error; the process is killed after a minute.
func (p *tty) startSession(env []string, args ...string) (*exec.Cmd, *bytes.Buffer, chan error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	p.t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append([]string{"HOME=" + p.t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.slave, &out, p.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, &out, done
}

// TestTerminalInterruptAtPrompt: Ctrl-C typed at the [y/N] question ends
// the command at once, before any Enter, with exit 130 and nothing sent.
// The binary runs in its own session with the pseudo-terminal as its
// controlling terminal, so the terminal turns ^C into SIGINT as a shell's
// would.
func TestTerminalInterruptAtPrompt(t *testing.T) {
	e := newEnv(t)
	p := openTTY(t)
	cmd, out, done := p.startSession([]string{"TZ=UTC", "PAYKIT_CONFIG=/nonexistent/x",
		"PAYKIT_BASE_URL=" + e.srv.URL, "PAYKIT_API_KEY=" + testKey, "PAYKIT_SECRET=" + testSecret},
		"payouts", "create", "--ext-id", "tty-int", "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "Ivan Petrov")
	p.waitFor("? [y/N] ")
	if _, err := p.master.Write([]byte{0x03}); err != nil { // Ctrl-C, no Enter
		t.Fatal(err)
	}
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	select {
	case err := <-done:
		if code := exitCode(err); code != 130 || out.Len() != 0 {
			t.Fatalf("Ctrl-C at the prompt: exit %d, stdout %q, terminal %q", code, out.String(), p.shown())
		}
	case <-deadline.C:
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("Ctrl-C at the prompt did not end the command; the terminal showed %q", p.shown())
	}
	p.waitFor("interrupted; nothing was sent")
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 0 {
		t.Fatalf("an interrupted payout was sent (%d requests)", n)
	}
}

// TestTerminalWaitStatusLine: on a terminal's stderr, wait keeps one
// status line, rewritten at each read, and clears it before its verdict.
func TestTerminalWaitStatusLine(t *testing.T) {
	e := newEnv(t)
	p := e.pendingPayment("pty-wait")
	tty := openTTY(t)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	cmd, out, cancel := e.start(devnull, tty.slave, "wait", "payment", p.ID, "--interval", "10ms", "--timeout", "500ms", "--exit-status")
	defer cancel()
	if code := exitCode(cmd.Wait()); code != 6 || !strings.Contains(out.String(), "status:       PENDING\n") {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
	tty.waitFor("\r\x1b[Kpayment " + p.ID + ": PENDING (read 2, ")
	tty.waitFor("\r\x1b[Kpaykit: payment " + p.ID + " not settled within --timeout")
}
