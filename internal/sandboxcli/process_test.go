package sandboxcli

// Helpers that run the real paykit-sandbox binary as a child process, for
// the tests that kill it (kill_test.go) and the figures that measure it
// (figures_test.go): a signal only means something to a process of its own.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// buildSandbox builds cmd/paykit-sandbox into a temporary directory once per
// test binary and returns its path. The binary is built without -race even
// when the tests run with it: what is under test is the product as shipped,
// and the race detector's slowdown would change the timing of the kills.
var buildSandbox = sandboxBuilder()

// buildFaultSandbox builds it with the paykit_faultinject tag, for the
// fault oracle: the binary then reads PAYKIT_FAULT_SYNC_FAIL (see
// sandbox/internal/store/faultinject.go); the shipped binary has no such
// hook.
var buildFaultSandbox = sandboxBuilder("paykit_faultinject")

// sandboxBuilder returns a builder of cmd/paykit-sandbox with tags, which
// links it once per test binary.
func sandboxBuilder(tags ...string) func(t *testing.T) string {
	var (
		once sync.Once
		exe  string
		err  error
		out  []byte
	)
	return func(t *testing.T) string {
		t.Helper()
		once.Do(func() {
			var dir string
			dir, err = os.MkdirTemp("", "paykit-sandbox-bin-")
			if err != nil {
				return
			}
			binDirsMu.Lock()
			binDirs = append(binDirs, dir)
			binDirsMu.Unlock()
			exe = filepath.Join(dir, "paykit-sandbox")
			args := []string{"build", "-o", exe}
			if len(tags) > 0 {
				args = append(args, "-tags", strings.Join(tags, ","))
			}
			cmd := exec.Command("go", append(args, "github.com/paykit-dev/paykit-go/cmd/paykit-sandbox")...)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as released
			out, err = cmd.CombinedOutput()
		})
		if err != nil {
			t.Fatalf("go build cmd/paykit-sandbox %v: %v\n%s", tags, err, out)
		}
		return exe
	}
}

// binDirs are the directories sandboxBuilder made, removed by TestMain.
var (
	binDirsMu sync.Mutex
	binDirs   []string
)

// TestMain removes the binaries sandboxBuilder made: t.TempDir would remove
// them after the first test that built them, and each test building its
// own copy would link the binary several times.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range binDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// proc is one run of the binary.
type proc struct {
	cmd     *exec.Cmd
	base    string
	logPath string
	done    chan struct{} // closed when the process has exited
	state   *os.ProcessState
	waitErr error
}

// startProc starts the binary with args (an -addr of 127.0.0.1:0 is added)
// and waits for its banner. Its stderr, one line per request, goes to a file
// in dir whose tail a failing test prints. The process is killed at the end
// of the test if it still runs.
func startProc(t *testing.T, exe, dir string, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, exe, dir, nil, args...)
}

// startProcEnv is startProc with env added to the process's environment.
func startProcEnv(t *testing.T, exe, dir string, env []string, args ...string) *proc {
	t.Helper()
	logf, err := os.CreateTemp(dir, "stderr-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	// Only the flags configure it: a PAYKIT_SANDBOX_* variable of the
	// test's own environment (CI sets some) would change the sandbox.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PAYKIT_SANDBOX_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, logPath: logf.Name(), done: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		if first {
			close(lines)
		}
	}()
	go func() {
		p.waitErr = cmd.Wait()
		p.state = cmd.ProcessState
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case line, ok := <-lines:
		base, found := strings.CutPrefix(line, "paykit sandbox listening on ")
		if !ok || !found {
			<-p.done
			t.Fatalf("the sandbox did not start (%v): %q\n%s", p.waitErr, line, p.logTail())
		}
		p.base = base
	case <-time.After(30 * time.Second):
		t.Fatalf("no banner from the sandbox within 30 s\n%s", p.logTail())
	}
	return p
}

// kill sends SIGKILL and waits for the process to be gone, so that its
// file is free for the next start.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	<-p.done
}

// term sends SIGTERM and returns the exit code once the process is gone,
// or fails the test if it does not end within limit.
func (p *proc) term(t *testing.T, limit time.Duration) int {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(limit):
		t.Fatalf("the sandbox did not exit within %v of SIGTERM\n%s", limit, p.logTail())
	}
	return p.state.ExitCode()
}

// logTail is the end of the process's stderr, for a failure message. The
// log lines carry no API key, secret or signature (sandbox.Config.Logger).
func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// clients returns an SDK client and a control client of the process. The
// SDK makes one attempt per call: a retry into a killed process proves
// nothing, and the tests settle every lost answer themselves.
func (p *proc) clients(t *testing.T, conns int) (*paykit.Client, *sandbox.Remote) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: 0,
		IdleConnTimeout: 30 * time.Second}, Timeout: 20 * time.Second}
	c, err := paykit.NewClient(p.base, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret),
		paykit.WithMaxRetries(0), paykit.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.NewRemote(p.base, sandbox.WithRemoteHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c, r
}

// receiptPNG is a real 2x2 PNG, the receipt of confirms.
func receiptPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hookReceiver is the merchant's webhook endpoint: it answers 503 while
// down (so deliveries stay pending in the sandbox's outbox) and records
// every notification it takes as "id/status".
type hookReceiver struct {
	url   string
	token string
	mu    sync.Mutex
	down  bool
	got   map[string]int
	bad   []string
}

func newHookReceiver(t *testing.T, token string) *hookReceiver {
	h := &hookReceiver{token: token, got: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hooks"
	return h
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var v struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err != nil || json.Unmarshal(body, &v) != nil || v.ID == "" || v.Status == "" {
		h.bad = append(h.bad, "undecodable notification: "+string(body))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	// Payments carry the notification token, payouts none.
	if tok := r.Header.Get("X-Notification-Token"); tok != "" && tok != h.token {
		h.bad = append(h.bad, "notification "+v.ID+" with a wrong X-Notification-Token")
	}
	h.got[v.ID+"/"+v.Status]++
	w.WriteHeader(http.StatusOK)
}

func (h *hookReceiver) setDown(down bool) {
	h.mu.Lock()
	h.down = down
	h.mu.Unlock()
}

// waitFor polls until every key in want was received at least as many
// times as want says, or the deadline; it returns the keys still short.
func (h *hookReceiver) waitFor(ctx context.Context, want map[string]int) []string {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var missing []string
		h.mu.Lock()
		for k, n := range want {
			if h.got[k] < n {
				missing = append(missing, k)
			}
		}
		h.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return missing
		case <-tick.C:
		}
	}
}
