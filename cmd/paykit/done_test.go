package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// payoutArgs are a card payout of 10 RUB with ext_id ext, confirmed.
func payoutArgs(ext string, more ...string) []string {
	return append([]string{"payouts", "create", "--ext-id", ext, "--amount", "10", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes"}, more...)
}

// TestDoneOutputFailed: the cases. What can be checked before
// sending is, with exit 2 and nothing sent; an output that fails after the
// payout was made exits 7 with its id and state on stderr, never 1 or 2.
func TestDoneOutputFailed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	payout := func(t *testing.T, ext string) string {
		t.Helper()
		p, err := e.sdk.GetPayoutByExtID(ctx, ext)
		if err != nil {
			t.Fatalf("payout %s was not made: %v", ext, err)
		}
		return p.ID
	}
	t.Run("json field not on the type: exit 2, nothing sent", func(t *testing.T) {
		before := e.sb.RequestCount("POST", "/v1/payouts")
		r := e.run("", payoutArgs("out-1", "--json", "payout_id")...)
		if r.code != 2 || !strings.Contains(r.stderr, `a payout has no field "payout_id"`) || !strings.Contains(r.stderr, "nothing was sent") {
			t.Errorf("--json payout_id: exit %d, %q", r.code, r.stderr)
		}
		if n := e.sb.RequestCount("POST", "/v1/payouts") - before; n != 0 {
			t.Errorf("--json payout_id: %d payout requests sent, want 0", n)
		}
		// api checks --json against the type its path answers with.
		data := `{"ext_id":"out-1b","amount":10,"method":"card","requisites":"` + testCard + `","holder_name":"I P"}`
		r = e.run("", "api", "POST", "/v1/payouts", "--data", data, "--yes", "--json", "payout_id")
		if n := e.sb.RequestCount("POST", "/v1/payouts") - before; r.code != 2 || n != 0 {
			t.Errorf("api --json payout_id: exit %d, %q, %d payout requests", r.code, r.stderr, n)
		}
	})
	t.Run("json field the answer lacks: null", func(t *testing.T) {
		r := e.run("", payoutArgs("out-2", "--json", "ext_id,completed_at")...)
		if r.code != 0 || r.stdout != `{"completed_at":null,"ext_id":"out-2"}`+"\n" {
			t.Errorf("--json ext_id,completed_at: exit %d, %q %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("jq fails at run time: exit 7", func(t *testing.T) {
		// A program that compiles and fails on the payout it was given.
		r := e.run("", payoutArgs("out-3", "--jq", ".id[]")...)
		id := payout(t, "out-3")
		want := "paykit: done: payout " + id + " (ext_id out-3) is pending; the output failed: --jq: "
		if r.code != 7 || !strings.HasPrefix(r.stderr, want) || !strings.HasSuffix(r.stderr, "do not repeat it. Show it with:\n  paykit payouts get "+id+"\n") {
			t.Errorf("--jq '.id[]': exit %d, %q; want 7 and %q", r.code, r.stderr, want)
		}
	})
	t.Run("api jq fails at run time: exit 7", func(t *testing.T) {
		data := `{"ext_id":"out-4","amount":10,"method":"card","requisites":"` + testCard + `","holder_name":"I P"}`
		r := e.run("", "api", "POST", "/v1/payouts", "--data", data, "--yes", "--jq", ".id[]")
		if id := payout(t, "out-4"); r.code != 7 || !strings.HasPrefix(r.stderr, "paykit: done: payout "+id+" (ext_id out-4) is pending; the output failed: --jq: ") {
			t.Errorf("api --jq '.id[]': exit %d, %q", r.code, r.stderr)
		}
	})
	t.Run("stdout fails: exit 7", func(t *testing.T) {
		for i, w := range []io.Writer{failWriter{syscall.ENOSPC}, failWriter{os.ErrClosed}, failWriter{syscall.EPIPE}} {
			ext := "out-w" + string(rune('0'+i))
			var errb bytes.Buffer
			code := run(ctx, payoutArgs(ext, "-o", "json"), &env{stdin: strings.NewReader(""), stdout: w, stderr: &errb,
				getenv: e.vars(), isTerminal: func(any) bool { return false }})
			if id := payout(t, ext); code != 7 || !strings.HasPrefix(errb.String(), "paykit: done: payout "+id+" (ext_id "+ext+") is pending; the output failed: ") {
				t.Errorf("stdout failing with %v: exit %d, %q", w, code, errb.String())
			}
		}
	})
	t.Run("stdout is /dev/full: exit 7", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("/dev/full is Linux's")
		}
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skip(err)
		}
		defer full.Close()
		code, stderr := e.runTo(full, payoutArgs("out-full", "-o", "json")...)
		if id := payout(t, "out-full"); code != 7 || !strings.HasPrefix(stderr, "paykit: done: payout "+id+" (ext_id out-full) is pending; the output failed: ") ||
			!strings.Contains(stderr, "no space left on device") {
			t.Errorf("-o json > /dev/full: exit %d, %q", code, stderr)
		}
		// A read that cannot write is exit 1, as before: nothing moved.
		if code, stderr = e.runTo(full, "balance"); code != 1 {
			t.Errorf("balance > /dev/full: exit %d, %q", code, stderr)
		}
	})
}

// TestBrokenPipe: a payout whose stdout is a pipe nobody reads any more
// exits 7 (paykit asks for SIGPIPE, which would otherwise kill it
// silently); a read in the same place exits 141, as a shell shows SIGPIPE.
func TestBrokenPipe(t *testing.T) {
	e := newEnv(t)
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rd.Close() // nobody will read
	defer wr.Close()
	code, stderr := e.runTo(wr, payoutArgs("pipe-1", "-o", "json")...)
	if code != 7 || !strings.Contains(stderr, "paykit: done: payout ") || !strings.Contains(stderr, "broken pipe") {
		t.Fatalf("payout into a closed pipe: exit %d, %q", code, stderr)
	}
	if code, stderr = e.runTo(wr, "balance"); code != 141 || stderr != "" {
		t.Fatalf("balance into a closed pipe: exit %d, %q", code, stderr)
	}
}

// TestJQStreams: --jq writes each result as it is produced, so a program
// that never ends feeds a reader that stops early, and the first write
// that fails ends it. The reader takes three lines, then fails its
// writes, as a closed pipe does.
func TestJQStreams(t *testing.T) {
	e := newEnv(t)
	e.createPayouts("10", "jq-1")
	// Each write holds one result: nothing is gathered first (this part
	// first: on code that gathers, the endless program below would grow
	// without bound until the deadline).
	var errb bytes.Buffer
	var sizes []int
	w2 := writerFunc(func(b []byte) (int, error) { sizes = append(sizes, len(b)); return len(b), nil })
	code := run(context.Background(), []string{"payouts", "list", "--jq", ".payouts[0].ext_id as $x | range(1000) | $x"}, &env{
		stdin: strings.NewReader(""), stdout: w2, stderr: &errb, getenv: e.vars(), isTerminal: func(any) bool { return false },
	})
	if code != 0 || len(sizes) != 1000 || sizes[0] != len("jq-1\n") {
		t.Fatalf("range(1000): exit %d, %d writes (first %v)", code, len(sizes), sizes[:min(1, len(sizes))])
	}
	errb.Reset()
	w := &linesThenFail{lines: 3}
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"payouts", "list", "--jq", "repeat(.payouts[0].ext_id)"}, &env{
			stdin: strings.NewReader(""), stdout: w, stderr: &errb, getenv: e.vars(), isTerminal: func(any) bool { return false },
		})
	}()
	// A deadline, not a pause: held output never reaches the reader.
	select {
	case code := <-done:
		if code != 141 || w.got.String() != "jq-1\njq-1\njq-1\n" {
			t.Fatalf("exit %d, read %q, stderr %q", code, w.got.String(), errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("--jq 'repeat(…)' did not end when its reader stopped (read %q)", w.got.String())
	}
}

// TestJQStreamsToHead: the case with the binary and a real pipe:
// paykit … --jq 'repeat(…)' | head -3 ends once head has its lines (exit
// 141, as for any read whose reader went away).
func TestJQStreamsToHead(t *testing.T) {
	e := newEnv(t)
	e.createPayouts("10", "head-1")
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "payouts", "list", "--jq", "repeat(.payouts[0].ext_id)")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "PAYKIT_CONFIG=/nonexistent/x",
		"PAYKIT_BASE_URL=" + e.srv.URL, "PAYKIT_API_KEY=" + testKey, "PAYKIT_SECRET=" + testSecret}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = wr, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close() // the child holds its own copy
	sc := bufio.NewScanner(rd)
	for i := 0; i < 3; i++ {
		if !sc.Scan() || sc.Text() != "head-1" {
			t.Fatalf("line %d: %q, %v (held output never comes)", i, sc.Text(), sc.Err())
		}
	}
	rd.Close() // head exits
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("paykit did not end when its reader went away")
	}
	if code := cmd.ProcessState.ExitCode(); code != 141 || errb.Len() != 0 {
		t.Fatalf("exit %d (%v), stderr %q", code, err, errb.String())
	}
}

// linesThenFail takes lines whole lines, then fails every write with EPIPE.
type linesThenFail struct {
	lines int
	got   bytes.Buffer
}

func (w *linesThenFail) Write(b []byte) (int, error) {
	if strings.Count(w.got.String(), "\n") >= w.lines {
		return 0, syscall.EPIPE
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() && strings.Count(w.got.String(), "\n") < w.lines {
		w.got.WriteString(sc.Text() + "\n")
	}
	return len(b), nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// failWriter fails every write with err.
type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// vars is the test merchant's environment, for run in this process.
func (e *testEnv) vars() func(string) string {
	m := map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, "PAYKIT_CONFIG": "/nonexistent/x"}
	return func(k string) string { return m[k] }
}

// runTo runs the binary with stdout the given file; it returns the exit
// code and stderr.
func (e *testEnv) runTo(stdout *os.File, args ...string) (int, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = []string{"HOME=" + e.t.TempDir(), "PATH=" + os.Getenv("PATH"), "TZ=UTC", "PAYKIT_CONFIG=/nonexistent/x",
		"PAYKIT_BASE_URL=" + e.srv.URL, "PAYKIT_API_KEY=" + testKey, "PAYKIT_SECRET=" + testSecret}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errb.String()
}
