package sandboxcli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// figuresConcurrency is how many goroutines drive the binary in
// TestSandboxFigures, each with its own keep-alive connection.
const figuresConcurrency = 8

// TestSandboxFigures measures the binary for BENCHMARKS.md ("Sandbox
// store"); it runs only with PAYKIT_SANDBOX_FIGURES=1, since it takes
// minutes and its figures mean something only on a quiet machine. For each
// mode (PAYKIT_SANDBOX_FIGURES_MODES, default "memory,db") it starts the
// binary (PAYKIT_SANDBOX_BIN, default a fresh build of this tree), runs
// 10,000 create+get pairs through the SDK over loopback with
// figuresConcurrency goroutines and reports pairs per second, then VmRSS
// and VmHWM of the process after 10,000 payments, then creates payments up
// to PAYKIT_SANDBOX_FIGURES_N (default 200,000), reports the memory again
// and runs another 10,000 pairs on the full store.
func TestSandboxFigures(t *testing.T) {
	if os.Getenv("PAYKIT_SANDBOX_FIGURES") == "" {
		t.Skip("set PAYKIT_SANDBOX_FIGURES=1 to measure the binary (minutes)")
	}
	exe := os.Getenv("PAYKIT_SANDBOX_BIN")
	if exe == "" {
		exe = buildSandbox(t)
	}
	total := 200_000
	if s := os.Getenv("PAYKIT_SANDBOX_FIGURES_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 20_000 {
			t.Fatalf("PAYKIT_SANDBOX_FIGURES_N=%q: want a count of at least 20000", s)
		}
		total = n
	}
	modes := "memory,db"
	if s := os.Getenv("PAYKIT_SANDBOX_FIGURES_MODES"); s != "" {
		modes = s
	}
	for _, mode := range strings.Split(modes, ",") {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			var args []string
			if mode == "db" {
				args = []string{"-db", filepath.Join(dir, "sandbox.db")}
			}
			p := startProc(t, exe, dir, args...)
			c, _ := p.clients(t, figuresConcurrency)
			ctx := context.Background()
			var seq atomic.Int64
			t.Logf("%s: load average before: %s", mode, loadAvg())
			rate := figuresRun(t, ctx, c, &seq, 10_000, true)
			t.Logf("%s: %.0f create+get pairs/s (10,000 pairs, %d goroutines, empty store)", mode, rate, figuresConcurrency)
			t.Logf("%s: after %d payments: %s", mode, seq.Load(), memOf(t, p))
			start := time.Now()
			rate = figuresRun(t, ctx, c, &seq, total-int(seq.Load())-10_000, false)
			t.Logf("%s: creates up to %d: %.0f creates/s (%s)", mode, seq.Load(), rate, time.Since(start).Round(time.Second))
			rate = figuresRun(t, ctx, c, &seq, 10_000, true)
			t.Logf("%s: %.0f create+get pairs/s (10,000 pairs, %d goroutines, store of %d)", mode, rate, figuresConcurrency, seq.Load()-10_000)
			t.Logf("%s: after %d payments: %s", mode, seq.Load(), memOf(t, p))
			if mode == "db" {
				if fi, err := os.Stat(filepath.Join(dir, "sandbox.db")); err == nil {
					t.Logf("%s: database file %d bytes", mode, fi.Size())
				}
			}
			t.Logf("%s: load average after: %s", mode, loadAvg())
			if code := p.term(t, 30*time.Second); code != 0 {
				t.Errorf("exit code %d", code)
			}
		})
	}
}

// figuresRun makes n creates (each followed by a get when pairs) with
// figuresConcurrency goroutines and returns the operations (pairs or
// creates) per second. Every amount is distinct, so no create meets
// PAY_005.
func figuresRun(t *testing.T, ctx context.Context, c *paykit.Client, seq *atomic.Int64, n int, pairs bool) float64 {
	t.Helper()
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	start := time.Now()
	for range figuresConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				i := seq.Add(1)
				p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "fig-" + strconv.FormatInt(i, 10),
					Amount: decimal.New(10_000+i, -2), Method: paykit.MethodCard})
				if err == nil && pairs {
					_, err = c.GetPayment(ctx, p.ID)
				}
				if err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					left.Store(0)
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return float64(n) / time.Since(start).Seconds()
}

// memOf reads the process's resident memory now (VmRSS) and at its peak
// (VmHWM) from /proc.
func memOf(t *testing.T, p *proc) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") || strings.HasPrefix(l, "VmHWM:") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
