package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// TestPayoutWindowHalfOpen: --from and --to are the half-open window
// [from, to): a payout created exactly at a boundary is in exactly one of
// two consecutive windows, in one page and with --all, in every format.
// (The sandbox's own bounds are both inclusive, as a service's may be.)
func TestPayoutWindowHalfOpen(t *testing.T) {
	e := newEnv(t)
	if _, err := e.sdk.CreatePayout(context.Background(), paykit.CreatePayoutParams{ExtID: "edge", Amount: decimal.RequireFromString("10"),
		Method: paykit.PayoutMethodCard, Requisites: testCard, HolderName: "I P"}); err != nil {
		t.Fatal(err)
	}
	at := frozen.Format("2006-01-02T15:04:05Z") // the payout's created_at
	windows := map[string][]string{
		"before": {"--from", "2026-11-01", "--to", at},
		"after":  {"--from", at, "--to", "2026-12-01"},
	}
	want := map[string]int{"before": 0, "after": 1}
	for name, w := range windows {
		for _, extra := range [][]string{nil, {"--all"}} {
			args := append(append([]string{"payouts", "list"}, w...), extra...)
			r := e.run("", append(args, "-o", "csv")...)
			if got := len(readCSV(t, name, r.stdout)); r.code != 0 || got != want[name] {
				t.Errorf("%v -o csv: exit %d, %d payouts; want %d", args, r.code, got, want[name])
			}
			r = e.run("", append(args, "-o", "json")...)
			var page struct {
				Payouts []json.RawMessage `json:"payouts"`
				Total   int               `json:"total"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &page); err != nil || len(page.Payouts) != want[name] || page.Total != want[name] {
				t.Errorf("%v -o json: %v, %q; want %d payouts and total %d", args, err, r.stdout, want[name], want[name])
			}
			r = e.run("", args...)
			if got := strings.Count(r.stdout, "edge"); got != want[name] {
				t.Errorf("%v: the table shows the payout %d times; want %d", args, got, want[name])
			}
		}
	}
}

// TestListAllStuck: a service that ignores offset (the same payout on
// every page, a total it never reaches) ends payouts list --all with exit
// 1 and the SDK's reason after two pages, not an endless loop, and prints
// nothing on stdout.
func TestListAllStuck(t *testing.T) {
	pages := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pages++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"payouts":[{"id":"00000000-0000-4000-8000-000000000001","ext_id":"a","amount":1,"currency":"RUB","method":"card","status":"pending","created_at":"2026-11-03T09:30:00Z"}],"total":1000000,"limit":1,"offset":%s}`,
			cmp.Or(r.URL.Query().Get("offset"), "0"))
	}))
	t.Cleanup(srv.Close)
	e := &testEnv{t: t}
	r := e.runEnv(map[string]string{"PAYKIT_BASE_URL": srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "payouts", "list", "--all", "--limit", "1", "-o", "csv")
	mu.Lock()
	defer mu.Unlock()
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "no payout not already seen") || pages != 2 {
		t.Fatalf("exit %d after %d pages, stdout %q, stderr %q", r.code, pages, r.stdout, r.stderr)
	}
}
