package store_test

import (
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/store/storetest"
)

func openMemory(t *testing.T, start func() []*ledger.Merchant) ledger.Txn {
	st := store.NewMemory(start)
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	return st
}

// Merchants and terminals are stored resources in memory as on a file.
func TestMemoryMerchantsKeepOnlyWhatIsSaved(t *testing.T) {
	storetest.MerchantsKeepOnlyWhatIsSaved(t, openMemory)
}

// The memory store hands out copies as the SQL store does: a forgotten
// save is lost in memory too (the SQL store is checked by the sandbox's
// tests, which have a driver).
func TestMemoryKeepsOnlyWhatIsSaved(t *testing.T) { storetest.KeepsOnlyWhatIsSaved(t, openMemory) }

func TestMemoryExpiryFollowsSavedStatus(t *testing.T) {
	storetest.ExpiryFollowsSavedStatus(t, openMemory)
}

// Memory answers the many-row queries (lists, filters, counts, in-flight
// order, reset) as the expected answer the SQL store is held to too: the
// SQL side needs a driver, so only package sandbox's tests can run it
// (with openSQL, as TestSQLKeepsOnlyWhatIsSaved does).
func TestMemoryQueriesAgree(t *testing.T) { storetest.QueriesAgree(t, openMemory) }

func TestMemoryValuesFollowTheTransaction(t *testing.T) {
	storetest.ValuesFollowTheTransaction(t, openMemory)
}
