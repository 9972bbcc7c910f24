package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
)

// readyz is GET /readyz's status.
func (e *env) readyz() int {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + ReadyzPath)
	must(e.t, err)
	res.Body.Close()
	return res.StatusCode
}

// A -db that is a symbolic link to an existing database opens it (SQLite
// resolves the link and keeps its -wal beside the target, so the store
// syncs that one), writes through it, and what it wrote is in the target
// after a restart on the target's own name. A link to a link, and a
// directory reached through a link, resolve alike.
func TestDBSymlinkToAnExistingDatabase(t *testing.T) {
	for _, how := range []string{"link", "link to a link", "linked directory"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			real := filepath.Join(dir, "data", "sandbox.db")
			must(t, os.Mkdir(filepath.Dir(real), 0o700))
			e := dbEnv(t, real, &clock{t: base}, Config{})
			first := e.createPayment(`{"ext_id":"before","amount":100}`).str("id")
			e.stop()

			link := filepath.Join(dir, "sandbox.db")
			switch how {
			case "link":
				must(t, os.Symlink(real, link))
			case "link to a link":
				must(t, os.Symlink(real, filepath.Join(dir, "middle.db")))
				must(t, os.Symlink("middle.db", link)) // relative, as ln -s writes it
			case "linked directory":
				must(t, os.Symlink("data", filepath.Join(dir, "current")))
				link = filepath.Join(dir, "current", "sandbox.db")
			}
			e2 := dbEnv(t, link, &clock{t: base}, Config{})
			eq(t, e2.readyz(), 200)
			eq(t, e2.do("GET", "/v1/payments/"+first, "").str("ext_id"), "before")
			second := e2.createPayment(`{"ext_id":"through the link","amount":101}`).str("id")
			if _, err := os.Lstat(filepath.Join(dir, "sandbox.db-wal")); err == nil {
				t.Errorf("a -wal file beside the link's name: SQLite keeps it beside the target")
			}
			e2.stop()

			e3 := dbEnv(t, real, &clock{t: base}, Config{})
			eq(t, e3.do("GET", "/v1/payments/"+second, "").str("ext_id"), "through the link")
		})
	}
}

// A link that names no file is refused with a message that says so: the
// sandbox does not create a database at whatever a dangling link points
// to.
func TestDBDanglingSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "sandbox.db")
	must(t, os.Symlink(filepath.Join(dir, "gone", "sandbox.db"), link))
	_, err := Open(Config{DBPath: link})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Open on a dangling link: %v", err)
	}
}

// crashImage copies the database file at path, and its -wal file if one
// is there, into a new directory, as a SIGKILL would leave them (what the
// kernel holds for the files' names), and returns the copy's path.
func crashImage(t *testing.T, path string) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), filepath.Base(path))
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if suffix != "" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		must(t, err)
		must(t, os.WriteFile(img+suffix, b, 0o600))
	}
	return img
}

// The -wal file removed (or replaced) under a running sandbox, as the
// database file's removal is: /readyz answers 503 at once, and the next
// change is refused with 503 SANDBOX_STORE. The payment acknowledged
// before the removal lived only in the removed file: it is copied into the
// database when the removal is seen, so a kill after it (the files as the
// names reach them) loses nothing acknowledged.
func TestDBWALRemovedUnderARunningSandbox(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "sandbox.db")
			e := dbEnv(t, path, &clock{t: base}, Config{})
			id := e.createPayment(`{"ext_id":"acknowledged","amount":100}`).str("id")
			eq(t, e.readyz(), 200)

			switch how {
			case "removed":
				must(t, os.Remove(path+"-wal"))
			case "replaced":
				must(t, os.WriteFile(filepath.Join(dir, "other"), nil, 0o600))
				must(t, os.Rename(filepath.Join(dir, "other"), path+"-wal"))
			}
			eq(t, e.readyz(), 503)
			killed := crashImage(t, path)
			wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"refused","amount":200}`), 503, "SANDBOX_STORE")
			eq(t, e.readyz(), 503)

			e2 := dbEnv(t, killed, &clock{t: base}, Config{})
			eq(t, e2.do("GET", "/v1/payments/"+id, "").str("ext_id"), "acknowledged")
			wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/refused", ""), 404, "PAY_006")
		})
	}
}

// A change is what sees the removal when no probe comes first: the -wal
// file removed on a sandbox nobody probes, the next create is refused
// (not acknowledged into the removed file), and what came before survives
// a kill.
func TestDBWALRemovedSeenByTheNextChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	id := e.createPayment(`{"ext_id":"acknowledged","amount":100}`).str("id")
	must(t, os.Remove(path+"-wal"))
	wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"refused","amount":200}`), 503, "SANDBOX_STORE")
	killed := crashImage(t, path)
	eq(t, e.readyz(), 503)
	e2 := dbEnv(t, killed, &clock{t: base}, Config{})
	eq(t, e2.do("GET", "/v1/payments/"+id, "").str("ext_id"), "acknowledged")
	wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/refused", ""), 404, "PAY_006")
}

// answer is one HTTP answer of a request run in a goroutine.
type answer struct {
	name string
	r    resp
}

// post runs a signed POST in a goroutine and reports its answer on out.
func (e *env) post(out chan<- answer, name, path, body string) {
	go func() { out <- answer{name, e.do("POST", path, body)} }()
}

// transferBody moves amount from the main terminal to the reserve.
func transferBody(amount int) string {
	return fmt.Sprintf(`{"from_terminal_id":%q,"to_terminal_id":%q,"amount":%d}`,
		DefaultMainTerminalID, DefaultReserveTerminalID, amount)
}

// untilCommittedAndWaiting waits until n sections wait for a sync and no
// transaction is left open: every one of them has its commit.
func (e *env) untilCommittedAndWaiting(n int) {
	e.t.Helper()
	p := e.sb.svc.Probe()
	e.until(func() bool { return p.Open() == 0 && p.Waiting() == n }, func() string {
		return fmt.Sprintf("%d sections waiting for a sync, %d open; want %d, 0", p.Waiting(), p.Open(), n)
	})
}

// collect gathers n answers, releasing every sync the gate holds meanwhile
// with outcome, and fails when they do not all come before a deadline.
func (e *env) collect(out <-chan answer, g *gatedSync, n int, outcome error) map[string]resp {
	e.t.Helper()
	got := map[string]resp{}
	deadline := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case a := <-out:
			got[a.name] = a.r
		case <-g.entered:
			g.release <- outcome
		case <-deadline:
			e.t.Fatalf("%d answers of %d before the deadline: %v", len(got), n, got)
		}
	}
	return got
}

// behindAHeldSync starts a create (a Backend section) whose sync g holds,
// then sends one HTTP request (send reports it on out) and waits until it
// too has committed behind that sync: a change in the -wal file, not yet
// on disk, whose answer waits.
func (e *env) behindAHeldSync(send func(out chan<- answer)) (g *gatedSync, calls chan result, out chan answer) {
	g = e.gateSync()
	calls = make(chan result, 4)
	e.call(calls, "first", createPaymentOp(100), "first")
	<-g.entered // the create has committed; its sync is held
	out = make(chan answer, 4)
	send(out)
	e.untilCommittedAndWaiting(2)
	return g, calls, out
}

// refusesUntilRestart checks that the sandbox, its store failed, refuses a
// new change (503) and is not ready, then lets its Close run.
func (e *env) refusesUntilRestart(g *gatedSync) {
	e.t.Helper()
	wantStatus(e.t, e.do("POST", "/v1/transfers", transferBody(1)), 503, "SANDBOX_STORE")
	eq(e.t, e.readyz(), 503)
	g.ungate()
	e.stop()
}

// Issue 37: one failed commit under group commit made the sections whose
// own commit had returned (in the -wal file, waiting for their sync)
// answer 503 SANDBOX_STORE too, though a restart finds them: a client
// that retries moves the money twice. They get their sync and answer 200;
// only the change whose commit failed is refused (NotKept: 503), and it
// is the only one missing after a restart. Later requests are refused
// (503) and /readyz is 503.
func TestFailedCommitLeavesEarlierCommitsTheirAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	g, calls, out := e.behindAHeldSync(func(out chan<- answer) { e.post(out, "transfer 10", "/v1/transfers", transferBody(10)) })
	e.failNextCommit()
	e.call(calls, "transfer 50", transferOp(50), "")
	if r := <-calls; r.name != "transfer 50" {
		t.Fatalf("%s answered before its sync: %+v", r.name, r)
	} else if r.err == nil {
		t.Errorf("the transfer whose commit failed: %+v, want a refusal", r)
	} else if s := api.FromLedger(r.err); s.Status != 503 || s.Code != "SANDBOX_STORE" {
		t.Errorf("the transfer whose commit failed is answered %d %s, want 503 SANDBOX_STORE", s.Status, s.Code)
	}
	g.release <- nil // the create's sync
	if r := <-calls; r.err != nil {
		t.Fatalf("first: %+v", r)
	}
	got := e.collect(out, g, 1, nil)
	if r := got["transfer 10"]; r.status != 200 {
		t.Errorf("the transfer committed before the failed commit answered %d though its sync succeeded: %s", r.status, r.raw)
	}
	e.refusesUntilRestart(g)

	e2 := dbEnv(t, path, &clock{t: base}, Config{})
	wantDec(t, e2.balance(DefaultMainTerminalID), "990") // not the 50 refused
	wantDec(t, e2.balance(DefaultReserveTerminalID), "10")
	eq(t, e2.do("GET", "/v1/payments/by-ext-id/first", "").status, 200)
}

// transferOp moves amount from the main terminal to the reserve.
func transferOp(amount int64) backendOp {
	return func(b *service.Service, key, _ string) (any, *ledger.Error) {
		return nil, b.Transfer(key, DefaultMainTerminalID, DefaultReserveTerminalID, decimal.NewFromInt(amount))
	}
}

// A failed sync of the -wal file: the disk may or may not have kept what
// it covered, so the sections whose commit it covered are told exactly
// that (MaybeKept: 500 SANDBOX_STORE, may or may not be kept), never 503,
// which would say "not kept" of changes a restart may find (it finds them
// here: the process did not die, the kernel kept the writes). Later
// requests are refused with 503, and /readyz is 503.
func TestFailedSyncAnswersMaybeKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	g, calls, out := e.behindAHeldSync(func(out chan<- answer) { e.post(out, "transfer 10", "/v1/transfers", transferBody(10)) })
	g.release <- errors.New("input/output error (injected)")
	if r := <-calls; r.err == nil || api.FromLedger(r.err).Status != 500 {
		t.Errorf("the create covered by the failed sync: %+v, want MaybeKept (500)", r)
	}
	got := e.collect(out, g, 1, nil)
	if r := got["transfer 10"]; r.status != 500 || r.str("error") != "SANDBOX_STORE" || !strings.Contains(r.str("message"), "may or may not") {
		t.Errorf("the transfer covered by the failed sync: %d %s; want 500 SANDBOX_STORE, may or may not be kept", r.status, r.raw)
	}
	e.refusesUntilRestart(g)

	// What the restart finds is the file's to say; here the writes reached
	// it, which a 503 would have denied.
	e2 := dbEnv(t, path, &clock{t: base}, Config{})
	wantDec(t, e2.balance(DefaultMainTerminalID), "990")
	eq(t, e2.do("GET", "/v1/payments/by-ext-id/first", "").status, 200)
}

// Issue 37: a delivered webhook was sent again after a kill, its end
// written only with the next change, so on a quiet sandbox the window had
// no bound. The end is committed when the delivery ends: a kill right
// after it (the files as they are on disk) finds it delivered, and nothing
// is sent again.
func TestDBDeliveryEndSurvivesAKillOnAQuietSandbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	sink := newHookSink(t, 0)
	e := dbEnv(t, path, &clock{t: base}, Config{})
	id := e.createPayment(`{"ext_id":"hooked","amount":100,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
	e.flush() // delivered; nothing happens after it
	eq(t, strings.Join(sink.statuses(), ","), "CANCELLED")
	killed := crashImage(t, path)

	e2 := dbEnv(t, killed, &clock{t: base}, Config{})
	e2.flush()
	ds := e2.sb.Deliveries()
	if len(ds) != 1 || ds[0].State != DeliveryDelivered || len(ds[0].Attempts) != 1 {
		t.Fatalf("deliveries after the kill: %+v, want the one delivered before it", ds)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.attempts != 1 {
		t.Fatalf("the delivered webhook was sent %d times in all, want once", sink.attempts)
	}
}

// A control is a section too: the clock advanced by a control whose commit
// returned before another section's commit failed gets its sync and
// answers 200 (not 503: a retry would advance it twice), and the advance
// is in the file after a restart. The Go control whose section the store
// failed returns ErrStore.
func TestFailedCommitLeavesAnEarlierControlItsAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	g, calls, out := e.behindAHeldSync(func(out chan<- answer) {
		go func() { out <- answer{"advance", e.control("/sandbox/clock/advance", `{"seconds":60}`)} }()
	})
	e.failNextCommit()
	e.call(calls, "transfer 50", transferOp(50), "")
	if r := <-calls; r.err == nil || r.err.Kind != ledger.NotKept {
		t.Errorf("the transfer whose commit failed: %+v, want NotKept", r)
	}
	if err := e.sb.InjectFault(Fault{Method: "GET", Path: "/v1/banks", Mode: FaultErrorBefore}); !errors.Is(err, ErrStore) {
		t.Errorf("InjectFault after the failed commit: %v, want ErrStore", err)
	}
	g.release <- nil
	if r := <-calls; r.err != nil {
		t.Fatalf("first: %+v", r)
	}
	if r := e.collect(out, g, 1, nil)["advance"]; r.status != 200 {
		t.Errorf("the advance committed before the failed commit answered %d though its sync succeeded: %s", r.status, r.raw)
	}
	g.ungate()
	e.stop()

	e2 := dbEnv(t, path, &clock{t: base}, Config{})
	eq(t, e2.sb.Now(), base.Add(time.Minute))
	wantStatus(t, e2.do("GET", "/v1/banks", ""), 200, "") // the fault whose commit failed is not in the file
}

// The -wal file removed between a commit and its sync: the sync is what
// sees it, the store fails there (no later commit or probe rescues
// anything), so the sync's failure copies the removed file's commits into
// the database itself: the payments acknowledged before survive a kill.
func TestDBWALRemovedSeenByASync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	id := e.createPayment(`{"ext_id":"acknowledged","amount":100}`).str("id")
	g := e.gateSync()
	calls := make(chan result, 2)
	e.call(calls, "during", createPaymentOp(101), "during")
	<-g.entered // committed; the sync is held
	must(t, os.Remove(path+"-wal"))
	g.release <- nil // the real sync runs, and finds the file gone
	if r := <-calls; r.err == nil || r.err.Kind != ledger.MaybeKept {
		t.Fatalf("the create whose sync found the -wal file removed: %+v, want MaybeKept", r)
	}
	killed := crashImage(t, path)
	eq(t, e.readyz(), 503)
	g.ungate()

	e2 := dbEnv(t, killed, &clock{t: base}, Config{})
	eq(t, e2.do("GET", "/v1/payments/"+id, "").str("ext_id"), "acknowledged")
}
