package sandboxcli

// The fault oracle (issue 37, section 3): a property-based harness that,
// for seeded runs, drives concurrent writers and readers against the
// sandbox binary on a file (-db) while it injects faults, restarts it and
// holds every answer to the reopened state:
//
//   - every 2xx is kept; every 503 is not kept (a 500 SANDBOX_STORE or a
//     lost answer may be either: it is settled by reading);
//   - a read never shows what a 503 refused, and never misses what a 2xx
//     acknowledged before the read was sent; what a read showed is kept;
//   - money is conserved: every read of the terminals and every restart
//     finds the sum of the balances the start balance, and the reserve
//     terminal holds the acknowledged transfers plus some of the uncertain
//     ones, none answered 503;
//   - every webhook received is for a kept change, and every kept change
//     that notifies is received (at least once) by the end;
//   - the request log after a restart holds every request answered more
//     than its documented window (sandbox/README.md: 200 ms before the last
//     change) before a kill, and every one after a graceful stop; the
//     delivery log holds only deliveries of kept changes.
//
// The faults, one per cycle, chosen by the seed: SIGKILL at a random
// moment; SIGTERM; a full disk (the file on a small tmpfs, filled at a
// random moment); a failed fsync (the Nth sync of the -wal file fails: the
// binary is built with the paykit_faultinject tag, see
// sandbox/internal/store/faultinject.go); the -wal file removed; the
// database file moved away or replaced by another file, and put back
// before the restart (as an operator would). Each fault but SIGTERM ends
// with a SIGKILL.
//
// In CI it runs a few fixed seeds briefly (seeds 1, 2 and 3 meet every
// fault; about 20 s). -faultoracle.runs=N runs N seeds taken from the
// clock, -faultoracle.seed=S replays one; a failure names its seed and the
// command that replays it, and prints the log of the first sandbox whose
// cycle broke a property. A seed fixes every choice (the faults, their
// moments, the writers' and readers' calls); how far the load got by the
// moment of a fault is the machine's, so a failure may take a few replays
// (-count=5) to come back.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

var (
	oracleRuns = flag.Int("faultoracle.runs", 0,
		"seeds TestFaultOracle runs, taken from the clock (0: the CI default, a few fixed seeds)")
	oracleSeed = flag.Uint64("faultoracle.seed", 0, "the one seed TestFaultOracle replays")
)

// oracleCISeeds are the seeds CI runs: together they meet every fault.
var oracleCISeeds = []uint64{1, 2, 3}

// Shape of one run: cycles of load, a fault and a restart; the load of a
// cycle stays under the request log's 500 lines (so the log check sees
// all of it) and under a second or so.
const (
	oracleCycles    = 6
	oracleWriters   = 4
	oracleReaders   = 2
	oracleMaxCalls  = 160 // writer calls per cycle, all writers together, and as many reads
	oracleHookToken = "fault-oracle-token"
	oracleTotal     = "1000" // the start balance of the main terminal; the reserve starts at 0
)

// The faults a cycle may end with.
const (
	faultKill      = "kill"
	faultTerm      = "term"
	faultFullDisk  = "full disk"
	faultSync      = "failed fsync"
	faultWALRemove = "-wal removed"
	faultDBMove    = "database moved away"
	faultDBReplace = "database replaced"
)

var oracleFaults = []string{faultKill, faultTerm, faultFullDisk, faultSync, faultWALRemove, faultDBMove, faultDBReplace}

func TestFaultOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault oracle runs the binary through faults and restarts: not in -short")
	}
	seeds := oracleCISeeds
	switch {
	case *oracleSeed != 0:
		seeds = []uint64{*oracleSeed}
	case *oracleRuns > 0:
		seeds = nil
		now := uint64(time.Now().UnixNano())
		for i := range *oracleRuns {
			seeds = append(seeds, now+uint64(i)*7919)
		}
	}
	exe := buildFaultSandbox(t)
	disk := newOracleDisk(t)
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			o := newOracle(t, exe, disk, seed)
			o.run()
			if len(o.violations) > 0 {
				t.Errorf("fault oracle, seed %d: %d violations:\n  %s\nreplay: go test ./internal/sandboxcli -run 'TestFaultOracle' -faultoracle.seed=%d -count=5 -v",
					seed, len(o.violations), strings.Join(o.violations, "\n  "), seed)
			}
			if o.log != "" {
				t.Log(o.log)
			}
			t.Logf("seed %d: %s", seed, o.summary())
		})
	}
}

// oracleDisk is where the runs keep their files: a small tmpfs when this
// process may mount one (CI runs as root), so that the full-disk fault can
// fill it; else a temporary directory, and the full-disk fault is skipped
// (said once).
type oracleDisk struct {
	dir   string
	tmpfs bool
}

// oracleDiskSize is the tmpfs's size: room for a run's file and its WAL,
// small enough to fill at once.
const oracleDiskSize = 8 << 20

func newOracleDisk(t *testing.T) *oracleDisk {
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(oracleDiskSize)+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Logf("the full-disk fault is skipped: mounting a tmpfs is not permitted here (%v: %s); "+
			"run as root (as CI does) to include it", err, bytes.TrimSpace(out))
		return &oracleDisk{dir: dir}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return &oracleDisk{dir: dir, tmpfs: true}
}

// fill takes every free byte of the tmpfs with a file of its own and
// returns the function that frees them.
func (d *oracleDisk) fill(t *testing.T) (free func()) {
	path := filepath.Join(d.dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// The last bytes a 64 KiB write could not take.
	for {
		if _, err := f.Write(buf[:512]); err != nil {
			break
		}
	}
	f.Close()
	return func() { os.Remove(path) }
}

// verdict is what one answer says of the change asked.
type verdict int

const (
	kept     verdict = iota + 1 // a 2xx
	refusedV                    // a 4xx, or a 503 that is not the store's (PAY_004): the rule said no
	notKept                     // 503 SANDBOX_STORE: the store says it kept nothing
	maybe                       // 500 SANDBOX_STORE or no answer: either
)

func (v verdict) String() string {
	return map[verdict]string{kept: "2xx", refusedV: "refused", notKept: "503 not kept", maybe: "uncertain"}[v]
}

// opay is a payment the oracle asked for.
type opay struct {
	ext       string
	amount    decimal.Decimal
	create    verdict
	id        string
	seen      bool // a read (or an answer) showed it: it must be kept
	cancel    []verdict
	cancelled bool   // a cancel was acknowledged
	state     string // settled at the last restart: "", "absent", or its status
	busy      bool   // a writer acts on it now
}

// otransfer is a transfer the oracle asked for: cents, positive into the
// reserve terminal.
type otransfer struct {
	cents int64
	v     verdict
}

// oreq is one request of a cycle, for the request log check.
type oreq struct {
	method, path string
	status       int
	answered     time.Time
}

// oracle is one seeded run.
type oracle struct {
	t    *testing.T
	exe  string
	disk *oracleDisk
	seed uint64
	rng  *rand.Rand
	db   string
	hook *oracleHooks

	mu         sync.Mutex
	pays       map[string]*opay
	order      []string // ext_ids in creation order
	transfers  []otransfer
	reserve    int64 // cents on the reserve terminal at the last restart
	lastChange time.Time
	reqs       []oreq
	violations []string
	faultsRun  []string
	answers    map[string]int // verdicts seen, for the summary
	n          int            // payments asked for
	nTransfers int            // transfers asked for
	log        string         // the stderr of the first cycle that broke a property
}

func newOracle(t *testing.T, exe string, disk *oracleDisk, seed uint64) *oracle {
	dir, err := os.MkdirTemp(disk.dir, "run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return &oracle{t: t, exe: exe, disk: disk, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		db: filepath.Join(dir, "sandbox.db"), hook: newOracleHooks(t), pays: map[string]*opay{}, answers: map[string]int{}}
}

func (o *oracle) violate(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.violations = append(o.violations, fmt.Sprintf(format, a...))
}

func (o *oracle) summary() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var kinds []string
	for k, n := range o.answers {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("faults %s; %d payments, %d transfers; answers: %s", strings.Join(o.faultsRun, ", "),
		len(o.pays), o.nTransfers, strings.Join(kinds, ", "))
}

// start runs the binary on the run's file, with env added.
func (o *oracle) start(env ...string) *proc {
	return startProcEnv(o.t, o.exe, filepath.Dir(o.db), env, "-db", o.db, "-start-balance", oracleTotal)
}

// run is the seeded run: cycles of load and a fault, each followed by a
// restart that checks every answer, then a graceful end that checks the
// webhooks.
func (o *oracle) run() {
	o.settle(o.start(), "the first start", false)
	for c := range oracleCycles {
		fault := oracleFaults[o.rng.IntN(len(oracleFaults))]
		if fault == faultFullDisk && !o.disk.tmpfs {
			fault = faultKill
		}
		o.faultsRun = append(o.faultsRun, fault)
		var env []string
		if fault == faultSync {
			// The sync at start is the first; the Nth fails, within the load.
			env = append(env, "PAYKIT_FAULT_SYNC_FAIL="+strconv.Itoa(2+o.rng.IntN(40)))
		}
		o.reqs = o.reqs[:0]
		p := o.start(env...)
		o.cycle(p, c, fault)
		before := len(o.violations)
		o.settle(o.start(), fmt.Sprintf("cycle %d (%s)", c, fault), fault == faultTerm)
		if len(o.violations) > before && o.log == "" {
			o.log = fmt.Sprintf("the log of cycle %d's sandbox, first cycle with a violation:\n%s", c, p.logTail())
		}
	}
	o.finish()
}

// cycle runs writers and readers against p and injects fault at a random
// moment; it returns once p is gone.
func (o *oracle) cycle(p *proc, c int, fault string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl := newOracleClient(p.base)
	var wg sync.WaitGroup
	calls := make(chan struct{}, oracleMaxCalls)
	for range oracleMaxCalls {
		calls <- struct{}{}
	}
	close(calls)
	seeds := make([]uint64, oracleWriters+oracleReaders)
	for i := range seeds {
		seeds[i] = o.rng.Uint64()
	}
	for w := range oracleWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seeds[w], uint64(c)))
			for range calls {
				if ctx.Err() != nil {
					return
				}
				o.write(ctx, cl, rng, c)
			}
		}()
	}
	for r := range oracleReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seeds[oracleWriters+r], uint64(c)))
			for range oracleMaxCalls / oracleReaders {
				if ctx.Err() != nil {
					return
				}
				o.read(ctx, cl, rng)
			}
		}()
	}
	// The fault, at a moment of the load chosen by the seed.
	at := time.Duration(20+o.rng.IntN(400)) * time.Millisecond
	settleFor := time.Duration(50+o.rng.IntN(300)) * time.Millisecond
	time.Sleep(at) // the moment of a fault is what the seed chooses, not a synchronisation
	switch fault {
	case faultKill, faultSync:
		if fault == faultSync {
			time.Sleep(settleFor)
		}
		p.kill(o.t)
	case faultTerm:
		if code := p.term(o.t, 30*time.Second); code != 0 {
			o.violate("cycle %d: SIGTERM exit code %d\n%s", c, code, p.logTail())
		}
	case faultFullDisk:
		free := o.disk.fill(o.t)
		time.Sleep(settleFor)
		p.kill(o.t)
		free()
	case faultWALRemove:
		if err := os.Remove(o.db + "-wal"); err != nil {
			o.t.Fatal(err)
		}
		o.untilNotReady(p, c, fault)
		p.kill(o.t)
	case faultDBMove, faultDBReplace:
		if err := os.Rename(o.db, o.db+".away"); err != nil {
			o.t.Fatal(err)
		}
		if fault == faultDBReplace {
			if err := os.WriteFile(o.db, []byte("not the sandbox's database"), 0o600); err != nil {
				o.t.Fatal(err)
			}
		}
		o.untilNotReady(p, c, fault)
		p.kill(o.t)
		if err := os.Rename(o.db+".away", o.db); err != nil { // the operator puts it back
			o.t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
}

// untilNotReady polls /readyz until it answers 503: the sandbox has seen
// the file's removal (and, for the -wal file, copied its commits into the
// database), which the documented guarantee waits for.
func (o *oracle) untilNotReady(p *proc, c int, fault string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get(p.base + sandbox.ReadyzPath)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusServiceUnavailable {
				return
			}
		}
		if time.Now().After(deadline) {
			o.violate("cycle %d: /readyz still ready 10 s after the %s", c, fault)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// write makes one change, chosen by rng: a payment, a cancel, a transfer.
func (o *oracle) write(ctx context.Context, cl *oracleClient, rng *rand.Rand, c int) {
	switch k := rng.IntN(10); {
	case k < 4:
		o.mu.Lock()
		o.n++
		ext := fmt.Sprintf("fo-%d-%d-%d", o.seed%1000, c, o.n)
		// Distinct amounts: PAY_005 (five pending of one amount) never
		// refuses one.
		amt := decimal.New(int64(10_000+o.n), -2)
		op := &opay{ext: ext, amount: amt}
		o.pays[ext] = op
		o.order = append(o.order, ext)
		op.busy = true
		o.mu.Unlock()
		body := fmt.Sprintf(`{"ext_id":%q,"amount":%s,"method":"CARD","notify_url":%q,"notification_token":%q}`,
			ext, amt, o.hook.url, oracleHookToken)
		a := cl.do(ctx, "POST", "/v1/payments", body)
		o.note(a)
		o.mu.Lock()
		defer o.mu.Unlock()
		op.busy = false
		op.create = a.v
		if a.v == kept {
			op.id, op.seen = a.str("id"), true
			o.lastChange = a.sent
		}
		if a.v == refusedV {
			o.violations = append(o.violations, fmt.Sprintf("create %s refused: %d %s", ext, a.status, a.body))
		}
	case k < 6:
		o.mu.Lock()
		var cands []*opay
		for _, ext := range o.order {
			if op := o.pays[ext]; !op.busy && op.id != "" && op.state != "CANCELLED" && !op.cancelled &&
				(op.create == kept || op.state == "PENDING") {
				cands = append(cands, op)
			}
		}
		if len(cands) == 0 {
			o.mu.Unlock()
			return
		}
		op := cands[rng.IntN(len(cands))]
		op.busy = true
		o.mu.Unlock()
		a := cl.do(ctx, "POST", "/v1/payments/"+op.id+"/cancel", "")
		o.note(a)
		o.mu.Lock()
		defer o.mu.Unlock()
		op.busy = false
		op.cancel = append(op.cancel, a.v)
		if a.v == kept {
			op.cancelled = true
			o.lastChange = a.sent
		}
	default:
		cents := int64(100 * (1 + rng.IntN(60)))
		from, to := sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID
		if rng.IntN(2) == 0 {
			from, to, cents = to, from, -cents
		}
		body := fmt.Sprintf(`{"from_terminal_id":%q,"to_terminal_id":%q,"amount":%d}`, from, to, abs(cents)/100)
		o.mu.Lock()
		o.nTransfers++
		o.mu.Unlock()
		a := cl.do(ctx, "POST", "/v1/transfers", body)
		o.note(a)
		o.mu.Lock()
		defer o.mu.Unlock()
		if a.v == refusedV && a.code != "TRF_003" { // insufficient funds is the only refusal expected
			o.violations = append(o.violations, fmt.Sprintf("transfer refused: %d %s", a.status, a.body))
		}
		if a.v != refusedV {
			o.transfers = append(o.transfers, otransfer{cents: cents, v: a.v})
		}
		if a.v == kept {
			o.lastChange = a.sent
		}
	}
}

// read reads a payment by ext_id or the terminals, and holds the answer
// to what the writers were told.
func (o *oracle) read(ctx context.Context, cl *oracleClient, rng *rand.Rand) {
	if rng.IntN(4) == 0 {
		a := cl.do(ctx, "GET", "/v1/terminals", "")
		o.note(a)
		if a.status == http.StatusOK {
			if sum, ok := terminalsSum(a.raw); !ok || !sum.Equal(decimal.RequireFromString(oracleTotal)) {
				o.violate("GET /v1/terminals: the balances sum to %v, want %s (money not conserved): %s", sum, oracleTotal, a.body)
			}
		}
		return
	}
	o.mu.Lock()
	if len(o.order) == 0 {
		o.mu.Unlock()
		return
	}
	op := o.pays[o.order[rng.IntN(len(o.order))]]
	ext, before := op.ext, op.create == kept // acknowledged before this read was sent
	o.mu.Unlock()
	a := cl.do(ctx, "GET", "/v1/payments/by-ext-id/"+ext, "")
	o.note(a)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case a.status == http.StatusOK:
		if op.create == notKept {
			o.violations = append(o.violations, fmt.Sprintf("payment %s answered 503 to its create, then shown by a read", ext))
		}
		op.seen = true
		if op.id == "" {
			op.id = a.str("id")
		}
	case a.status == http.StatusNotFound && before:
		o.violations = append(o.violations, fmt.Sprintf("payment %s acknowledged (2xx), then not found by a read", ext))
	}
}

// note keeps an answer for the request log check and the summary.
func (o *oracle) note(a oracleAnswer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.answers[a.v.String()]++
	if a.status != 0 {
		o.reqs = append(o.reqs, oreq{method: a.method, path: a.path, status: a.status, answered: a.at})
	}
}

// settle reads the restarted sandbox's state and holds every answer of the
// cycle to it; what was uncertain becomes known.
func (o *oracle) settle(p *proc, when string, graceful bool) {
	cl := newOracleClient(p.base)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, remote := p.clients(o.t, 2)
	o.checkRequestLog(ctx, remote, when, graceful)

	for _, ext := range o.order {
		op := o.pays[ext]
		a := cl.do(ctx, "GET", "/v1/payments/by-ext-id/"+ext, "")
		switch a.status {
		case http.StatusOK:
			status := a.str("status")
			if op.create == notKept {
				o.violate("%s: payment %s answered 503 to its create is in the file (%s)", when, ext, status)
			}
			if op.cancelled && status != "CANCELLED" {
				o.violate("%s: payment %s: its cancel was acknowledged, the file says %s", when, ext, status)
			}
			if op.state == "CANCELLED" && status != "CANCELLED" {
				o.violate("%s: payment %s, CANCELLED in the file before, is %s", when, ext, status)
			}
			if status == "CANCELLED" && !op.cancelled && !slices.Contains(op.cancel, maybe) && op.state != "CANCELLED" {
				o.violate("%s: payment %s is CANCELLED, though every cancel of it answered 503 or none was asked (%v)",
					when, ext, op.cancel)
			}
			op.state, op.id = status, a.str("id")
			op.cancelled = status == "CANCELLED"
		case http.StatusNotFound:
			if op.create == kept || op.seen {
				o.violate("%s: payment %s, acknowledged or shown by a read, is not in the file", when, ext)
			}
			op.state = "absent"
		default:
			o.violate("%s: reading payment %s after the restart: %d %s", when, ext, a.status, a.body)
			return
		}
		op.create = map[bool]verdict{true: kept, false: notKept}[op.state != "absent"] // settled
		op.cancel = nil
	}

	a := cl.do(ctx, "GET", "/v1/terminals", "")
	sum, ok := terminalsSum(a.raw)
	if a.status != http.StatusOK || !ok || !sum.Equal(decimal.RequireFromString(oracleTotal)) {
		o.violate("%s: terminals after the restart sum to %v, want %s (money not conserved): %d %s", when, sum, oracleTotal, a.status, a.body)
	} else {
		reserve := terminalBalance(a.raw, sandbox.DefaultReserveTerminalID)
		o.checkTransfers(when, reserve)
		o.reserve = reserve
	}
	o.transfers = o.transfers[:0]
	o.checkHooks(when, false)
	o.checkDeliveryLog(ctx, remote, when)
	p.kill(o.t) // the next cycle starts its own process (a failed-sync cycle with its fault)
}

// checkTransfers holds the reserve's balance to the transfers of the
// cycle: the acknowledged ones moved, those answered 503 did not, and the
// uncertain ones moved or not, one by one.
func (o *oracle) checkTransfers(when string, reserve int64) {
	need := reserve - o.reserve
	var sure int64
	var unsure []int64
	for _, tr := range o.transfers {
		switch tr.v {
		case kept:
			sure += tr.cents
		case maybe:
			unsure = append(unsure, tr.cents)
		}
	}
	sums := map[int64]bool{0: true}
	for _, c := range unsure {
		next := maps.Clone(sums)
		for s := range sums {
			next[s+c] = true
		}
		sums = next
	}
	if !sums[need-sure] {
		var kinds []string
		for _, tr := range o.transfers {
			kinds = append(kinds, fmt.Sprintf("%+d %s", tr.cents/100, tr.v))
		}
		o.violate("%s: the reserve moved by %d.%02d USDT, which no choice of the uncertain transfers explains "+
			"(acknowledged %+d.%02d; the transfers: %s)", when, need/100, abs(need%100), sure/100, abs(sure%100), strings.Join(kinds, ", "))
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// checkHooks holds the notifications received to the settled state: each
// is of a kept change (a CANCELLED payment); at the end (all) every
// cancelled payment was notified.
func (o *oracle) checkHooks(when string, all bool) {
	got := o.hook.snapshot()
	byID := map[string]*opay{}
	for _, op := range o.pays {
		if op.id != "" {
			byID[op.id] = op
		}
	}
	for key := range got {
		id, status, _ := strings.Cut(key, "/")
		op := byID[id]
		if op == nil || status != "CANCELLED" || op.state != "CANCELLED" {
			state := "unknown"
			if op != nil {
				state = op.state
			}
			o.violate("%s: webhook %s received, but the file has that payment %s", when, key, state)
		}
	}
	if all {
		for _, op := range o.pays {
			if op.state == "CANCELLED" && got[op.id+"/CANCELLED"] == 0 {
				o.violate("%s: payment %s is CANCELLED in the file, and its webhook never came", when, op.ext)
			}
		}
	}
	for _, b := range o.hook.bad() {
		o.violate("%s: %s", when, b)
	}
}

// checkDeliveryLog holds the delivery log to the settled state: each
// delivery is of a kept change.
func (o *oracle) checkDeliveryLog(ctx context.Context, remote *sandbox.Remote, when string) {
	ds, err := remote.Deliveries(ctx)
	if err != nil {
		o.violate("%s: the delivery log: %v", when, err)
		return
	}
	byID := map[string]*opay{}
	for _, op := range o.pays {
		byID[op.id] = op
	}
	for _, d := range ds {
		if op := byID[d.ResourceID]; op == nil || d.ResourceStatus != "CANCELLED" || op.state != "CANCELLED" {
			o.violate("%s: the delivery log has %s %s %s, not a kept change", when, d.Resource, d.ResourceID, d.ResourceStatus)
		}
	}
}

// checkRequestLog holds the request log to the cycle's requests: after a
// graceful stop it has every request answered; after a kill every one
// answered more than the documented window before the last acknowledged
// change (sandbox/README.md, -db: lines ride along with the first commit 200 ms
// after the last write), with slack for a loaded machine. It is read
// before any other request of the restart.
func (o *oracle) checkRequestLog(ctx context.Context, remote *sandbox.Remote, when string, graceful bool) {
	if len(o.reqs) == 0 {
		return
	}
	recs, err := remote.Requests(ctx)
	if err != nil {
		o.violate("%s: the request log: %v", when, err)
		return
	}
	have := map[string]int{}
	for _, r := range recs {
		have[r.Method+" "+r.Path+" "+strconv.Itoa(r.Status)]++
	}
	// The documented window, and slack for a request logged a while after
	// its answer reached the oracle, on a loaded machine.
	const window = 200*time.Millisecond + 800*time.Millisecond
	bound := o.lastChange.Add(-window)
	var missing []string
	for _, r := range o.reqs {
		if !graceful && !r.answered.Before(bound) {
			continue
		}
		k := r.method + " " + r.path + " " + strconv.Itoa(r.status)
		if have[k] > 0 {
			have[k]--
			continue
		}
		missing = append(missing, k)
	}
	if len(missing) > 0 {
		o.violate("%s: %d requests missing from the request log, e.g. %s", when, len(missing), missing[0])
	}
}

// finish ends the run gracefully: every kept change's webhook must have
// come, and the delivery log holds only kept changes.
func (o *oracle) finish() {
	p := o.start()
	_, remote := p.clients(o.t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := remote.FlushWebhooks(ctx); err != nil {
		o.violate("the last start: flushing webhooks: %v", err)
	}
	o.checkHooks("the end", true)
	if code := p.term(o.t, 30*time.Second); code != 0 {
		o.violate("the end: SIGTERM exit code %d", code)
	}
}

// terminalsSum is the sum of every balance and frozen balance of a
// GET /v1/terminals answer.
func terminalsSum(raw []byte) (decimal.Decimal, bool) {
	ts, ok := decodeTerminals(raw)
	sum := decimal.Zero
	for _, t := range ts {
		sum = sum.Add(t.Balance).Add(t.Frozen)
	}
	return sum, ok
}

// terminalBalance is the balance of terminal id in cents.
func terminalBalance(raw []byte, id string) int64 {
	ts, _ := decodeTerminals(raw)
	for _, t := range ts {
		if t.ID == id {
			return t.Balance.Shift(2).IntPart()
		}
	}
	return 0
}

type oterminal struct {
	ID      string          `json:"id"`
	Balance decimal.Decimal `json:"balance"`
	Frozen  decimal.Decimal `json:"balance_frozen"`
}

func decodeTerminals(raw []byte) ([]oterminal, bool) {
	var list []oterminal
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		return list, true
	}
	var wrapped struct {
		Terminals []oterminal `json:"terminals"`
		Data      []oterminal `json:"data"`
	}
	if json.Unmarshal(raw, &wrapped) != nil {
		return nil, false
	}
	list = append(wrapped.Terminals, wrapped.Data...)
	return list, len(list) > 0
}

// oracleClient sends signed requests over HTTP and classifies the answers
// itself: the SDK would turn a 503 and a 500 into errors alike.
type oracleClient struct {
	base string
	hc   *http.Client
	sig  paykit.Signer
}

func newOracleClient(base string) *oracleClient {
	return &oracleClient{base: base, sig: paykit.HMACSigner(sandbox.DefaultSecret),
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}}
}

// oracleAnswer is one answer, classified.
type oracleAnswer struct {
	method, path string
	sent, at     time.Time
	status       int
	code         string
	body         string
	raw          []byte
	v            verdict
}

func (a oracleAnswer) str(key string) string {
	var m map[string]any
	if json.Unmarshal(a.raw, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

func (c *oracleClient) do(ctx context.Context, method, path, body string) oracleAnswer {
	a := oracleAnswer{method: method, path: path, sent: time.Now()}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Identity", sandbox.DefaultAPIKey)
	s, err := c.sig.Sign(req, []byte(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("X-Signature", s)
	res, err := c.hc.Do(req)
	a.at = time.Now()
	if err != nil {
		a.v, a.body = maybe, err.Error()
		return a
	}
	a.raw, err = io.ReadAll(res.Body)
	res.Body.Close()
	a.at = time.Now()
	a.status = res.StatusCode
	a.body = string(a.raw)
	if err != nil {
		a.v = maybe
		return a
	}
	var e struct {
		Error string `json:"error"`
	}
	json.Unmarshal(a.raw, &e)
	a.code = e.Error
	switch {
	case a.status >= 200 && a.status < 300:
		a.v = kept
	case a.status == http.StatusServiceUnavailable && a.code == "SANDBOX_STORE":
		a.v = notKept
	case a.status >= 500:
		a.v = maybe
	default:
		a.v = refusedV
	}
	return a
}

// oracleHooks is the merchant's receiver: it records every notification
// as "id/status" and answers 200.
type oracleHooks struct {
	url  string
	mu   sync.Mutex
	got  map[string]int
	errs []string
}

func newOracleHooks(t *testing.T) *oracleHooks {
	h := &oracleHooks{got: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var v struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if err != nil || json.Unmarshal(body, &v) != nil || v.ID == "" {
			h.errs = append(h.errs, "an undecodable notification")
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.Header.Get("X-Notification-Token") != oracleHookToken {
			h.errs = append(h.errs, "notification "+v.ID+" without its token")
		}
		h.got[v.ID+"/"+v.Status]++
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hooks"
	return h
}

func (h *oracleHooks) snapshot() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.got)
}

func (h *oracleHooks) bad() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.errs
	h.errs = nil
	return out
}
