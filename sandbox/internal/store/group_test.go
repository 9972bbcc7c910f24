package store_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/store"
)

// failCommit is a store whose next commit fails, as a full disk's would.
type failCommit struct {
	store.Store
	fail bool
}

func (f *failCommit) Begin() store.Txn { return failTxn{f.Store.Begin(), f} }

type failTxn struct {
	store.Txn
	f *failCommit
}

func (t failTxn) Commit() error {
	if t.f.fail {
		t.f.fail = false
		t.Txn.Rollback()
		return errors.New("disk full (injected)")
	}
	return t.Txn.Commit()
}

var errFailed = errors.New("the store failed")

// Over a store whose commits are durable when they return (memory) a
// section's outcome is its commit's: Kept releases what it held, in the
// order held; a failed commit is NotKept, releases nothing, rolls the
// change back, and every later section is NotKept too, its change
// nowhere, with Err and Ping wrapping GroupConfig.Failed.
func TestGroupOverMemory(t *testing.T) {
	start := func() []*ledger.Merchant {
		return []*ledger.Merchant{{APIKey: "k", Name: "m"}}
	}
	f := &failCommit{Store: store.NewMemory(start)}
	var released []string
	g := store.NewGroup(f, store.GroupConfig[string]{Release: func(h string) { released = append(released, h) }, Failed: errFailed})
	transfers := map[string]int{"a": 1, "b": 2, "c": 3}
	change := func(name string) store.Outcome {
		tx := g.Begin()
		m := tx.Merchant("k")
		m.Transfers = transfers[name]
		tx.SaveMerchant(m)
		g.Hold(name + "/1")
		g.Hold(name + "/2")
		return g.End()
	}
	kept := func() int {
		tx := g.Begin()
		defer g.End()
		return tx.Merchant("k").Transfers
	}

	if out := change("a"); out != store.Kept {
		t.Fatalf("first section: %v, want Kept", out)
	}
	if want := []string{"a/1", "a/2"}; !reflect.DeepEqual(released, want) {
		t.Fatalf("released %q, want %q", released, want)
	}
	if err := g.Ping(); err != nil {
		t.Fatalf("Ping: %v", err)
	}

	f.fail = true
	if out := change("b"); out != store.NotKept {
		t.Fatalf("section whose commit failed: %v, want NotKept", out)
	}
	if out := change("c"); out != store.NotKept {
		t.Fatalf("section after the failure: %v, want NotKept", out)
	}
	if len(released) != 2 {
		t.Fatalf("released %q after the failure, want only a's", released)
	}
	if got := kept(); got != transfers["a"] {
		t.Fatalf("transfers %d after the failed commits, want a's %d", got, transfers["a"])
	}
	g.Lock()
	err := g.Err()
	g.Unlock()
	if !errors.Is(err, errFailed) || !errors.Is(g.Ping(), errFailed) {
		t.Fatalf("Err %v, Ping %v: want both to wrap %v", err, g.Ping(), errFailed)
	}
	if g.Deferred() || g.LastCommit() != 0 || g.Syncs() != 0 {
		t.Fatalf("memory: Deferred %v, LastCommit %d, Syncs %d; want false, 0, 0", g.Deferred(), g.LastCommit(), g.Syncs())
	}
}
