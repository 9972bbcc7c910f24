package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
)

// gatedSync holds every sync of the -wal file until the test releases it,
// so that sections pile up behind it as they do behind a slow fsync, and
// can fail it as a failing disk would.
type gatedSync struct {
	entered chan struct{} // a sync is waiting
	release chan error    // its outcome: nil syncs
	ungate  func()        // puts the real sync back, for Close
}

// gateSync wraps the sync of e's group commit in a gatedSync.
func (e *env) gateSync() *gatedSync {
	g := &gatedSync{entered: make(chan struct{}), release: make(chan error)}
	g.ungate = e.sb.svc.Probe().WrapSync(func(real func() error) func() error {
		return func() error {
			g.entered <- struct{}{}
			if err := <-g.release; err != nil {
				return err
			}
			return real()
		}
	})
	e.t.Cleanup(g.ungate) // before the Server's Close
	return g
}

// syncs is how many syncs of the -wal file (each an fsync) were made.
func (e *env) syncs() int {
	return e.sb.svc.Probe().Syncs()
}

// untilWaiting waits until n sections wait for a sync (one of them may
// be running it).
func (e *env) untilWaiting(n int) {
	e.t.Helper()
	p := e.sb.svc.Probe()
	e.until(func() bool { return p.Waiting() == n }, func() string {
		return fmt.Sprintf("%d sections waiting for a sync, want %d", p.Waiting(), n)
	})
}

// until polls reached until it holds, and fails with what saw says when
// it does not before a deadline.
func (e *env) until(reached func() bool, saw func() string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !reached() {
		if time.Now().After(deadline) {
			e.t.Fatal(saw())
		}
		runtime.Gosched()
	}
}

// result is what a section run by a goroutine of these tests returned.
type result struct {
	name string
	body string
	err  *ledger.Error
}

// backendOp is one operation of the API's Backend, as a section the tests
// run without HTTP.
type backendOp func(b *service.Service, key, arg string) (any, *ledger.Error)

// createPaymentOp creates a CARD payment of ext_id arg and amount; the
// tests give distinct amounts, so that PAY_005 leaves them alone.
func createPaymentOp(amount int64) backendOp {
	return func(b *service.Service, key, extID string) (any, *ledger.Error) {
		return b.CreatePayment(key, api.NewPayment{ExtID: extID, Amount: decimal.NewFromInt(amount), Method: "CARD"})
	}
}

// paymentByExtOp reads the payment of ext_id arg.
func paymentByExtOp(b *service.Service, key, extID string) (any, *ledger.Error) {
	return b.PaymentByExtID(key, extID)
}

// call runs op on arg as the API would (without HTTP) in a goroutine and
// reports on out.
func (e *env) call(out chan<- result, name string, op backendOp, arg string) {
	go func() {
		v, lerr := op(e.sb.svc, e.key, arg)
		out <- result{name: name, body: fmt.Sprint(v), err: lerr}
	}()
}

// notYet fails when any section has answered.
func notYet(t *testing.T, out <-chan result, when string) {
	t.Helper()
	select {
	case r := <-out:
		t.Fatalf("%s answered before the sync covering it returned (%s): %v %s", r.name, when, r.err, r.body)
	default:
	}
}

// Writers that commit while a sync runs share the next one: 8 creates
// committed behind one sync take one more sync, not 8, and none answers
// before that sync has returned. All 9 payments are in the file after a
// restart.
func TestConcurrentWritersShareASync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, nil, Config{})
	g := e.gateSync()
	before := e.syncs()
	out := make(chan result, 16)
	e.call(out, "first", createPaymentOp(100), "first")
	<-g.entered // the first create has committed and syncs
	for i := range 8 {
		e.call(out, fmt.Sprint("w", i), createPaymentOp(int64(101+i)), fmt.Sprint("w", i))
	}
	e.untilWaiting(9) // the 8 committed while the first's sync runs
	notYet(t, out, "the first sync is held")
	g.release <- nil
	if r := <-out; r.name != "first" || r.err != nil {
		t.Fatalf("first answer: %+v", r)
	}
	<-g.entered // one of the 8 syncs for all
	notYet(t, out, "their sync is held")
	g.release <- nil
	for range 8 {
		if r := <-out; r.err != nil {
			t.Fatalf("%s: %v", r.name, r.err)
		}
	}
	if n := e.syncs() - before; n != 2 {
		t.Fatalf("8 writers committed behind a sync took %d syncs in all, want 2", n)
	}
	g.ungate()
	e.stop()

	e2 := dbEnv(t, path, nil, Config{})
	for _, ext := range []string{"first", "w0", "w3", "w7"} {
		wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/"+ext, ""), 200, "")
	}
	if n := e2.sb.State().Merchants[0].Payments[statusPending]; n != 9 {
		t.Fatalf("%d payments after a restart, want 9", n)
	}
}

// A section that only reads waits for the sync of a change it read (a
// payment whose create waits for its sync), and answers at once, while a
// sync runs, when it read only what is synced.
func TestReadersWaitOnlyForChangesTheyRead(t *testing.T) {
	e := dbEnv(t, filepath.Join(t.TempDir(), "sandbox.db"), nil, Config{})
	e.createPayment(`{"ext_id":"old","amount":100}`)
	g := e.gateSync()
	out := make(chan result, 8)
	e.call(out, "first", createPaymentOp(101), "first")
	<-g.entered
	e.call(out, "create new", createPaymentOp(102), "new")
	e.untilWaiting(2)
	e.call(out, "read new", paymentByExtOp, "new")
	e.untilWaiting(3)
	e.call(out, "read old", paymentByExtOp, "old")
	if r := <-out; r.name != "read old" || r.err != nil || !strings.Contains(r.body, "old") {
		t.Fatalf("the read of a synced payment waited for a sync, or failed: %+v", r)
	}
	notYet(t, out, "the first sync is held")
	g.release <- nil
	if r := <-out; r.name != "first" || r.err != nil {
		t.Fatalf("answered before the sync of what it wrote or read: %+v", r)
	}
	<-g.entered
	notYet(t, out, "the sync of what they wrote or read is held")
	g.release <- nil
	got := map[string]result{}
	for range 2 {
		r := <-out
		got[r.name] = r
	}
	if r := got["read new"]; r.err != nil || !strings.Contains(r.body, "new") {
		t.Fatalf("read new: %+v", r)
	}
	if r := got["create new"]; r.err != nil {
		t.Fatalf("create new: %+v", r)
	}
}

// A failed sync fails every section it covered and every later one: each
// it covered is told that its change may have been kept (MaybeKept: the
// API answers 500 SANDBOX_STORE, never 503), the webhooks of their commits
// are not sent, a section that commits afterwards is refused (503), and
// /readyz is 503, while the writer whose sync succeeded before keeps its
// payment after a restart.
func TestFailedSyncFailsEveryWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	sink := newHookSink(t, 0)
	e := dbEnv(t, path, &clock{t: base}, Config{})
	for i := range 3 {
		e.createPayment(fmt.Sprintf(`{"ext_id":"hooked%d","amount":%d,"notify_url":"%s"}`, i, 200+i, sink.srv.URL))
	}
	hooks := len(e.sb.Deliveries())
	g := e.gateSync()
	out := make(chan result, 16)
	e.call(out, "first", createPaymentOp(100), "first")
	<-g.entered
	for i := range 4 {
		e.call(out, fmt.Sprint("w", i), createPaymentOp(int64(101+i)), fmt.Sprint("w", i))
	}
	advanced := make(chan struct{})
	go func() { e.sb.Advance(30 * 24 * time.Hour); close(advanced) }() // expires the hooked payments: 3 webhooks
	e.untilWaiting(6)
	g.release <- nil
	if r := <-out; r.name != "first" || r.err != nil {
		t.Fatalf("first answer: %+v", r)
	}
	<-g.entered
	g.release <- errors.New("input/output error (injected)")
	for range 4 {
		if r := <-out; r.err == nil || r.err.Kind != ledger.MaybeKept {
			t.Errorf("%s, covered by the failed sync: %+v, want MaybeKept", r.name, r)
		}
	}
	<-advanced
	if err := e.sb.svc.StoreFailed(); !errors.Is(err, ErrStore) || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("after the failed sync: %v", err)
	}
	if n := len(e.sb.Deliveries()); n != hooks {
		t.Fatalf("%d deliveries after a failed sync, want the %d before it: a webhook of an unsynced commit was sent", n, hooks)
	}
	wantStatus(t, e.do("GET", "/v1/payments/by-ext-id/w0", ""), 503, "SANDBOX_STORE")
	wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"later","amount":120}`), 503, "SANDBOX_STORE")
	wantStatus(t, e.do("GET", "/readyz", ""), 503, "")
	g.ungate()
	e.stop()

	e2 := dbEnv(t, path, &clock{t: base}, Config{})
	wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/first", ""), 200, "")
	wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/later", ""), 404, "PAY_006")
}

// Close makes every commit durable (SQLite checkpoints the WAL into the
// database and syncs it): a section still waiting for its sync then
// answers, and its payment is there after a restart.
func TestCloseCompletesAWaitingSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, nil, Config{})
	g := e.gateSync()
	out := make(chan result, 4)
	e.call(out, "first", createPaymentOp(100), "first")
	<-g.entered
	e.call(out, "second", createPaymentOp(101), "second")
	e.untilWaiting(2)
	closed := make(chan struct{})
	go func() { e.stop(); close(closed) }()
	e.untilWaiting(3) // Close has committed and closed the database: it waits for its sync too
	g.release <- nil  // first's sync; the next leader's runs after Close released the WAL
	<-g.entered
	g.release <- nil
	for range 2 {
		if r := <-out; r.err != nil {
			t.Fatalf("%s: %v", r.name, r.err)
		}
	}
	<-closed
	e2 := dbEnv(t, path, nil, Config{})
	for _, ext := range []string{"first", "second"} {
		wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/"+ext, ""), 200, "")
	}
}

// untilEntering waits until n sections wait to take the Server's lock.
func (e *env) untilEntering(n int32) {
	e.t.Helper()
	p := e.sb.svc.Probe()
	e.until(func() bool { return p.Entering() == n }, func() string {
		return fmt.Sprintf("%d sections waiting to begin, want %d", p.Entering(), n)
	})
}

// commits is how many commits of a change the SQL store made.
func (e *env) commits() uint64 {
	return e.sb.svc.Probe().LastCommit()
}

// fourQueued starts four creates while the test holds the Server's lock,
// and releases it once all four wait for it: each of the first three ends
// while the others still wait, so the last commits for all.
func (e *env) fourQueued(out chan<- result) {
	e.sb.svc.Probe().Begin()
	for i := range 4 {
		e.call(out, fmt.Sprint("w", i), createPaymentOp(int64(101+i)), fmt.Sprint("w", i))
	}
	e.untilEntering(4)
	e.sb.svc.Probe().Commit()
}

// Writers that queue for the Server's lock share one commit (and one
// sync): the last of them commits for all, and every one answers once
// that commit is synced; all are in the file after a restart.
func TestWritersQueuedForTheLockShareACommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, nil, Config{})
	commits, syncs := e.commits(), e.syncs()
	out := make(chan result, 4)
	e.fourQueued(out)
	for range 4 {
		if r := <-out; r.err != nil {
			t.Fatalf("%s: %v", r.name, r.err)
		}
	}
	if n := e.commits() - commits; n != 1 {
		t.Fatalf("4 writers queued for the lock made %d commits, want 1", n)
	}
	if n := e.syncs() - syncs; n != 1 {
		t.Fatalf("4 writers queued for the lock took %d syncs, want 1", n)
	}
	e.stop()
	e2 := dbEnv(t, path, nil, Config{})
	for i := range 4 {
		wantStatus(t, e2.do("GET", fmt.Sprintf("/v1/payments/by-ext-id/w%d", i), ""), 200, "")
	}
}

// A failed group commit fails every section in it: each is told that its
// change was not kept (NotKept: the API answers 503 SANDBOX_STORE), and
// after a restart none of their changes is in the file, while the commit
// before them is.
func TestFailedGroupCommitFailsEveryWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, nil, Config{})
	e.createPayment(`{"ext_id":"before","amount":100}`)
	e.failNextCommit()
	out := make(chan result, 4)
	e.fourQueued(out)
	for range 4 {
		if r := <-out; r.err == nil || r.err.Kind != ledger.NotKept {
			t.Errorf("%s, in the failed group commit: %+v, want NotKept", r.name, r)
		}
	}
	if err := e.sb.svc.StoreFailed(); !errors.Is(err, ErrStore) {
		t.Fatalf("after the failed group commit: %v", err)
	}
	wantStatus(t, e.do("GET", "/v1/payments/by-ext-id/before", ""), 503, "SANDBOX_STORE")
	e.stop()
	e2 := dbEnv(t, path, nil, Config{})
	wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/before", ""), 200, "")
	for i := range 4 {
		wantStatus(t, e2.do("GET", fmt.Sprintf("/v1/payments/by-ext-id/w%d", i), ""), 404, "PAY_006")
	}
}
