package sandboxcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// dbRun is one run of the command on a -db file: its base URL, its banner
// up to the controls line, its stderr, and a stop that waits for the exit.
type dbRun struct {
	base   string
	banner string
	stderr *lockedBuffer
	stop   func() error
}

func startDBRun(t *testing.T, args []string, env map[string]string) *dbRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		err := runEnv(ctx, args, envOf(env), pw, stderr)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		cancel()
		t.Fatalf("no output; run: %v; stderr: %s", <-done, stderr.String())
	}
	r := &dbRun{base: strings.TrimPrefix(lines.Text(), "paykit sandbox listening on "), stderr: stderr}
	var b strings.Builder
	for lines.Scan() {
		b.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "controls:") {
			break
		}
	}
	r.banner = b.String()
	go io.Copy(io.Discard, pr)
	stopped := false
	r.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *dbRun) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, r.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	sig, _ := paykit.HMACSigner(sandbox.DefaultSecret).Sign(req, []byte(body))
	req.Header.Set("X-Identity", sandbox.DefaultAPIKey)
	req.Header.Set("X-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// -db keeps the state across a stop and a start; the second banner prints
// the stored balances, and the different -start-balance of the second run
// is reported on stderr as ignored.
func TestRunDBKeepsStateAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	first := startDBRun(t, []string{"-addr", "127.0.0.1:0", "-db", path, "-start-balance", "250.00"}, nil)
	if !strings.Contains(first.banner, "database:  "+path) ||
		!strings.Contains(first.banner, sandbox.DefaultMainTerminalID+" (Main terminal, 250.00 USDT)") {
		t.Fatalf("first banner:\n%s", first.banner)
	}
	code, body := first.call(t, "POST", "/v1/payments", `{"ext_id":"cli-1","amount":1500.50}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	var p struct{ ID string }
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	code, body = first.call(t, "POST", "/v1/transfers",
		`{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":50.25}`)
	if code != 200 {
		t.Fatalf("transfer: %d %s", code, body)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("first run: %v", err)
	}

	second := startDBRun(t, []string{"-addr", "127.0.0.1:0", "-db", path, "-start-balance", "999.00", "-log-format", "json"}, nil)
	for _, want := range []string{sandbox.DefaultMainTerminalID + " (Main terminal, 199.75 USDT)",
		sandbox.DefaultReserveTerminalID + " (Reserve terminal, 50.25 USDT)"} {
		if !strings.Contains(second.banner, want) {
			t.Fatalf("%q not in the second banner:\n%s", want, second.banner)
		}
	}
	if strings.Contains(second.banner, "999.00") {
		t.Fatalf("the banner shows the ignored start balance:\n%s", second.banner)
	}
	if s := second.stderr.String(); !strings.Contains(s, "IGNORED") || !strings.Contains(s, "balance 999.00") {
		t.Fatalf("stderr does not report the ignored -start-balance:\n%s", s)
	}
	code, body = second.call(t, "GET", "/v1/payments/"+p.ID, "")
	if code != 200 || !strings.Contains(body, `"ext_id":"cli-1"`) || !strings.Contains(body, `"amount":1500.50`) {
		t.Fatalf("payment after restart: %d %s", code, body)
	}
}

// -db, PAYKIT_SANDBOX_DB and the file's "db" key: the flag wins over the
// variable, which wins over the file, as for every flag.
func TestDBSettingSources(t *testing.T) {
	printed := func(args []string, env map[string]string) string {
		t.Helper()
		var out bytes.Buffer
		if err := runEnv(context.Background(), append(args, "-print-config"), envOf(env), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var fc FileConfig
		if err := json.Unmarshal(out.Bytes(), &fc); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		return fc.DB
	}
	file := writeFile(t, `{"db": "/data/from-file.db"}`)
	eq(t, printed(nil, nil), "")
	eq(t, printed([]string{"-config", file}, nil), "/data/from-file.db")
	eq(t, printed([]string{"-config", file}, map[string]string{"PAYKIT_SANDBOX_DB": "/data/from-env.db"}), "/data/from-env.db")
	eq(t, printed([]string{"-config", file, "-db", "/data/from-flag.db"}, map[string]string{"PAYKIT_SANDBOX_DB": "/data/from-env.db"}),
		"/data/from-flag.db")
	cfg, err := effectiveFor([]string{"-db", "x.db"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, cfg.sandbox.DBPath, "x.db")
}

func effectiveFor(args []string) (*config, error) {
	f := newFlags("paykit-sandbox", io.Discard)
	if err := f.fs.Parse(args); err != nil {
		return nil, err
	}
	return effective(f, envOf(nil))
}

// A file that must not be used stops the command with an error naming it
// (not a usage error: the binary exits 1), and a second run on a file the
// first holds is refused.
func TestRunDBRefusals(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("this is no database\n"), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	err := runEnv(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", junk}, nil, io.Discard, io.Discard)
	var usageErr *UsageError
	if err == nil || errors.As(err, &usageErr) || !strings.Contains(err.Error(), junk) ||
		!strings.Contains(err.Error(), "not a usable SQLite database") {
		t.Fatalf("junk file: %v", err)
	}

	held := filepath.Join(dir, "held.db")
	startDBRun(t, []string{"-addr", "127.0.0.1:0", "-db", held}, nil)
	err = runEnv(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", held}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "held by another process") {
		t.Fatalf("second run on a held file: %v", err)
	}
}

// The binary itself: exit status 1 and a message naming the file for a
// damaged file, and for a file another paykit-sandbox process holds (two
// processes, not two Servers in one).
func TestBinaryDBRefusalsExitNonZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildSandbox(t)                       // built once for every test of the binary (process_test.go)
	env := []string{"PATH=" + os.Getenv("PATH")} // no PAYKIT_SANDBOX_* of the test's own environment

	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("this is no database\n"), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", junk)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), junk) {
		t.Fatalf("junk file: %v\n%s", err, out)
	}

	held := filepath.Join(dir, "held.db")
	first := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", held)
	first.Env = env
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		first.Process.Signal(os.Interrupt)
		first.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "paykit sandbox listening on ") {
		t.Fatalf("first binary did not start: %q", lines.Text())
	}
	go io.Copy(io.Discard, stdout)
	second := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", held)
	second.Env = env
	done := make(chan struct{})
	var out2 []byte
	go func() { out2, err = second.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		second.Process.Kill()
		t.Fatal("the second binary did not exit")
	}
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out2), "held by another process") {
		t.Fatalf("second binary on a held file: %v\n%s", err, out2)
	}
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}
