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
)

// gatedStore holds every commit of a change until the test releases it,
// so that sections pile up behind it as they do behind a slow fsync, and
// can fail it as a full disk would.
type gatedStore struct {
	store
	sq      *sqlStore
	entered chan struct{} // a commit of a change is waiting
	release chan error    // its outcome: nil commits
}

func (g *gatedStore) commit() error {
	if g.sq.tx == nil || !g.sq.wrote {
		return g.store.commit()
	}
	g.entered <- struct{}{}
	if err := <-g.release; err != nil {
		g.store.rollback()
		return err
	}
	return g.store.commit()
}

// gate wraps e's SQL store in a gatedStore.
func (e *env) gate() *gatedStore {
	e.sb.mu.Lock()
	defer e.sb.mu.Unlock()
	g := &gatedStore{store: e.sb.st, sq: e.sb.st.(*sqlStore), entered: make(chan struct{}), release: make(chan error)}
	e.sb.st = g
	return g
}

// syncs is how many commits of a change (each an fsync) the store made.
func (e *env) syncs() int {
	e.sb.mu.Lock()
	defer e.sb.mu.Unlock()
	return e.sb.st.(*gatedStore).sq.syncs
}

// untilEntering waits until n sections wait in begin: they queue on the
// Server's lock in that order.
func (e *env) untilEntering(n int32) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.sb.grp.entering.Load() != n {
		if time.Now().After(deadline) {
			e.t.Fatalf("%d sections waiting to begin, want %d", e.sb.grp.entering.Load(), n)
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
type backendOp func(b apiBackend, key, arg string) (any, *ledger.Error)

// createPaymentOp creates a CARD payment of ext_id arg and amount; the
// tests give distinct amounts, so that PAY_005 leaves them alone.
func createPaymentOp(amount int64) backendOp {
	return func(b apiBackend, key, extID string) (any, *ledger.Error) {
		return b.CreatePayment(key, api.NewPayment{ExtID: extID, Amount: decimal.NewFromInt(amount), Method: "CARD"})
	}
}

// paymentByExtOp reads the payment of ext_id arg.
func paymentByExtOp(b apiBackend, key, extID string) (any, *ledger.Error) {
	return b.PaymentByExtID(key, extID)
}

// call runs op on arg as the API would (without HTTP) in a goroutine and
// reports on out.
func (e *env) call(out chan<- result, name string, op backendOp, arg string) {
	go func() {
		v, lerr := op(apiBackend{e.sb}, e.key, arg)
		out <- result{name: name, body: fmt.Sprint(v), err: lerr}
	}()
}

// notYet fails when any section has answered.
func notYet(t *testing.T, out <-chan result, when string) {
	t.Helper()
	select {
	case r := <-out:
		t.Fatalf("%s answered before the commit covering it returned (%s): %v %s", r.name, when, r.err, r.body)
	default:
	}
}

// Writers that arrive while a commit is in flight share the next one: 8
// creates queued behind one commit take one more commit, not 8, and
// none answers before that commit has returned. All 9 payments are in the
// file after a restart.
func TestConcurrentWritersShareACommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, nil, Config{})
	g := e.gate()
	before := e.syncs()
	out := make(chan result, 16)
	e.call(out, "first", createPaymentOp(100), "first")
	<-g.entered // the first create holds the lock in its commit
	for i := range 8 {
		e.call(out, fmt.Sprint("w", i), createPaymentOp(int64(101+i)), fmt.Sprint("w", i))
		e.untilEntering(int32(i + 1))
	}
	g.release <- nil
	if r := <-out; r.name != "first" || r.err != nil {
		t.Fatalf("first answer: %+v", r)
	}
	<-g.entered // the last of the 8 commits for all
	notYet(t, out, "its commit is held")
	g.release <- nil
	for range 8 {
		if r := <-out; r.err != nil {
			t.Fatalf("%s: %v", r.name, r.err)
		}
	}
	if n := e.syncs() - before - 1; n != 1 {
		t.Fatalf("8 writers queued behind a commit took %d commits, want 1", n)
	}
	e.stop()

	e2 := dbEnv(t, path, nil, Config{})
	for _, ext := range []string{"first", "w0", "w3", "w7"} {
		wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/"+ext, ""), 200, "")
	}
	if n := e2.sb.State().Merchants[0].Payments[statusPending]; n != 9 {
		t.Fatalf("%d payments after a restart, want 9", n)
	}
}

// A section that only reads waits for the commit of a change it read (a
// payment created by a section still waiting for its commit), and answers
// at once when it read only what is committed.
func TestReadersWaitOnlyForChangesTheyRead(t *testing.T) {
	e := dbEnv(t, filepath.Join(t.TempDir(), "sandbox.db"), nil, Config{})
	e.createPayment(`{"ext_id":"old","amount":100}`)
	g := e.gate()
	out := make(chan result, 8)
	e.call(out, "first", createPaymentOp(101), "first")
	<-g.entered
	e.call(out, "create new", createPaymentOp(102), "new")
	e.untilEntering(1)
	e.call(out, "read new", paymentByExtOp, "new")
	e.untilEntering(2)
	e.call(out, "read old", paymentByExtOp, "old")
	e.untilEntering(3)
	e.call(out, "create last", createPaymentOp(103), "last")
	e.untilEntering(4)
	g.release <- nil
	for range 2 { // the next commit, "create last"'s, cannot end before the gate lets it
		switch r := <-out; {
		case r.name == "first" && r.err == nil:
		case r.name == "read old" && r.err == nil && strings.Contains(r.body, "old"):
		default:
			t.Fatalf("answered before the commit of what it wrote or read: %+v", r)
		}
	}
	<-g.entered
	notYet(t, out, "the commit of what they wrote or read is held")
	g.release <- nil
	got := map[string]result{}
	for range 3 {
		r := <-out
		got[r.name] = r
	}
	if r := got["read new"]; r.err != nil || !strings.Contains(r.body, "new") {
		t.Fatalf("read new: %+v", r)
	}
}

// A failed group commit fails every section in it: each is told (the API
// answers 503 SANDBOX_STORE), memory goes back to the last commit (the
// clock moved by one of them), and after a restart none of their changes
// is in the file, while the commit before them is.
func TestFailedGroupCommitFailsEveryWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	g := e.gate()
	out := make(chan result, 16)
	e.call(out, "first", createPaymentOp(100), "first")
	<-g.entered
	for i := range 4 {
		e.call(out, fmt.Sprint("w", i), createPaymentOp(int64(101+i)), fmt.Sprint("w", i))
		e.untilEntering(int32(i + 1))
	}
	advanced := make(chan struct{})
	go func() { e.sb.Advance(time.Hour); close(advanced) }()
	e.untilEntering(5)
	g.release <- nil
	if r := <-out; r.name != "first" || r.err != nil {
		t.Fatalf("first answer: %+v", r)
	}
	<-g.entered
	g.release <- errors.New("database or disk is full (injected)")
	for range 4 {
		<-out // each handler's value; the API answers 503 on storeFailed, below
	}
	<-advanced
	if err := e.sb.storeFailed(); !errors.Is(err, ErrStore) {
		t.Fatalf("after the failed group commit: %v", err)
	}
	wantStatus(t, e.do("GET", "/v1/payments/by-ext-id/w0", ""), 503, "SANDBOX_STORE")
	if now := e.sb.State().Now; !now.Equal(base) {
		t.Fatalf("clock %v after its Advance failed, want %v", now, base)
	}
	e.stop()

	e2 := dbEnv(t, path, &clock{t: base}, Config{})
	wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/first", ""), 200, "")
	for i := range 4 {
		wantStatus(t, e2.do("GET", fmt.Sprintf("/v1/payments/by-ext-id/w%d", i), ""), 404, "PAY_006")
	}
	if now := e2.sb.State().Now; !now.Equal(base) {
		t.Fatalf("clock %v after a restart, want %v", now, base)
	}
}
