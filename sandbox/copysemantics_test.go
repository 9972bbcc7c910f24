package sandbox

import (
	"path/filepath"
	"testing"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/store/storetest"
)

// openSQL opens the SQL store on a new file with this binary's driver
// (sqlite_test.go imports sandbox/sqlite).
func openSQL(t *testing.T, start func() []*ledger.Merchant) ledger.Txn {
	drv, ok := storage.Registered()
	if !ok {
		t.Fatal("no driver registered")
	}
	st, err := storage.OpenSQL(drv, storage.SQLDeps{Start: start, MaskKey: mask.Key, MaxSamePending: 100,
		RequestLogSize: DefaultRequestLogSize, DeliveryLogSize: DefaultDeliveryLogSize}, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.LoadMerchants()
	st.MarkWritten()
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	return st
}

// The SQL store keeps only what is saved, as the memory store does
// (internal/store's tests check that one with the same checks).
func TestSQLKeepsOnlyWhatIsSaved(t *testing.T) { storetest.KeepsOnlyWhatIsSaved(t, openSQL) }

func TestSQLExpiryFollowsSavedStatus(t *testing.T) { storetest.ExpiryFollowsSavedStatus(t, openSQL) }

// The SQL store answers every query as the memory store does: order, ties,
// filters and their far bounds, counts, in-flight, reset.
func TestSQLQueriesAgree(t *testing.T) { storetest.QueriesAgree(t, openSQL) }

func TestSQLMerchantsKeepOnlyWhatIsSaved(t *testing.T) {
	storetest.MerchantsKeepOnlyWhatIsSaved(t, openSQL)
}

func TestSQLValuesFollowTheTransaction(t *testing.T) {
	storetest.ValuesFollowTheTransaction(t, openSQL)
}
