package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// failingStore is a store whose next commit of a change fails, as a full
// disk makes SQLite's: the section is then rolled back by the Server. A
// section that changed nothing (a request's counters) commits as usual,
// so the failure hits the change itself.
type failingStore struct {
	storage.Store
	storage.Txn      // the store's transaction, as Begin returned it
	failNext    bool // under Server.mu
	changed     bool // the section saved a resource, a terminal or the clock
}

func (f *failingStore) Begin() storage.Txn { f.Txn = f.Store.Begin(); return f }

func (f *failingStore) AddPayment(p *ledger.Payment) { f.changed = true; f.Txn.AddPayment(p) }
func (f *failingStore) SaveTerminal(m *ledger.Merchant, t *ledger.Terminal) {
	f.changed = true
	f.Txn.SaveTerminal(m, t)
}
func (f *failingStore) SaveMerchant(m *ledger.Merchant) { f.changed = true; f.Txn.SaveMerchant(m) }
func (f *failingStore) Reset()                          { f.changed = true; f.Txn.Reset() }

func (f *failingStore) Commit() error {
	changed := f.changed
	f.changed = false
	if f.failNext && changed {
		f.failNext = false
		return errors.New("database or disk is full (injected)")
	}
	return f.Txn.Commit()
}

// failNextCommit wraps e's store so that its next commit of a change
// fails.
func (e *env) failNextCommit() {
	e.sb.svc.Probe().WrapStore(func(st storage.Store) (storage.Store, func()) {
		if f, ok := st.(*failingStore); ok {
			f.failNext = true
			return f, nil
		}
		f := &failingStore{Store: st, failNext: true}
		return f, func() { f.changed = true } // the clock offset commits with the resources
	})
}

// stateOverHTTP is GET /sandbox/state, decoded.
func (e *env) stateOverHTTP() State {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + "/sandbox/state")
	must(e.t, err)
	defer res.Body.Close()
	var st State
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &st); err != nil {
		e.t.Fatalf("state %d: %v: %s", res.StatusCode, err, b)
	}
	return st
}

// After a failed commit the change answered 503 is nowhere: not in
// Server.Terminals, State, GET /sandbox/state or the dashboard; memory is
// what the last commit kept. Later changes are refused and kept nowhere
// either, until a restart.
func TestFailedCommitLeavesNothingVisible(t *testing.T) {
	e := newEnv(t, Config{})
	transfer := func(amount string) resp {
		return e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":`+amount+`}`)
	}
	wantStatus(t, transfer("100"), 200, "")
	must(t, e.sb.InjectFault(Fault{Method: "GET", Path: "/v1/banks", Mode: FaultErrorBefore, Status: 502, Count: 5}))
	_, sql := e.sb.svc.Probe().Store().(*storage.SQL)

	e.failNextCommit()
	wantStatus(t, transfer("50"), 503, "SANDBOX_STORE")

	check := func(when string) {
		t.Helper()
		wantDec(t, e.balance(DefaultMainTerminalID), "900")
		wantDec(t, e.balance(DefaultReserveTerminalID), "100")
		for name, st := range map[string]State{"State()": e.sb.State(), "GET /sandbox/state": e.stateOverHTTP()} {
			m := st.Merchants[0]
			if !m.Terminals[0].Balance.Equal(dec("900")) || !m.Terminals[1].Balance.Equal(dec("100")) || m.Transfers != 1 {
				t.Fatalf("%s: %s shows %v / %v, %d transfers; want the last commit's 900 / 100, 1", when, name,
					m.Terminals[0].Balance, m.Terminals[1].Balance, m.Transfers)
			}
			if sql && m.Payments[statusPending] != 0 {
				t.Fatalf("%s: %s shows a payment answered 503: %v", when, name, m.Payments)
			}
			if !st.Now.Equal(base) {
				t.Fatalf("%s: %s clock %v, want %v", when, name, st.Now, base)
			}
		}
		_, _, page := e.uiGet("/sandbox/ui/terminals?refresh=0")
		wantIn(t, page, `<td class="num balance">900.00 USDT</td>`, `<td class="num balance">100.00 USDT</td>`)
		_, _, page = e.uiGet("/sandbox/ui/faults?refresh=0")
		wantIn(t, page, "/v1/banks")
	}
	check("after the failed transfer")

	// Every later change is refused and undone too: the API, the Go
	// controls and the dashboard's forms.
	wantStatus(t, transfer("10"), 503, "SANDBOX_STORE")
	wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"gone","amount":100}`), 503, "SANDBOX_STORE")
	e.sb.Advance(time.Hour)
	e.sb.Reset()
	// The dashboard's clock and reset forms show the refusal too, as its
	// other forms do, instead of a redirect (303) as if done.
	for _, path := range []string{"/sandbox/ui/clock/advance", "/sandbox/ui/reset"} {
		status, _, page := e.uiPost(path, form("token", web.Token, "page", "payments", "seconds", "3600"), nil)
		if status == http.StatusSeeOther || !strings.Contains(page, ErrStore.Error()) {
			t.Fatalf("dashboard %s after the failure: %d, want the store's refusal on the page", path, status)
		}
	}
	if err := e.sb.InjectFault(Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore}); !errors.Is(err, ErrStore) {
		t.Fatalf("InjectFault after the failure: %v", err)
	}
	check("after later changes")
}

// The -db file removed (or replaced) under a running sandbox: the next
// write is refused with 503 SANDBOX_STORE instead of acknowledged into a
// file no restart finds, and /readyz says 503 even before any write.
func TestDBFileRemovedUnderARunningSandbox(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "sandbox.db")
			e := dbEnv(t, path, &clock{t: base}, Config{})
			e.createPayment(`{"ext_id":"kept","amount":100}`)
			eq(t, e.readyz(), 200)

			switch how {
			case "removed":
				must(t, os.Remove(path))
			case "replaced":
				must(t, os.WriteFile(filepath.Join(dir, "other"), nil, 0o600))
				must(t, os.Rename(filepath.Join(dir, "other"), path))
			}
			eq(t, e.readyz(), 503)
			wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"lost","amount":200}`), 503, "SANDBOX_STORE")
			wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":5}`),
				503, "SANDBOX_STORE")
			wantDec(t, e.balance(DefaultMainTerminalID), "1000")
			eq(t, e.readyz(), 503)
		})
	}
}

// After the store failed, the pages say so: the payer's I-paid answers 503
// (not "payment not found"), and a dashboard form shows that the database
// cannot be used, as the Go control's ErrStore says.
func TestPagesSayTheStoreFailed(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"pg-1","amount":1500}`).str("id")
	e.failNextCommit()
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":1}`),
		503, "SANDBOX_STORE")
	res, err := e.ts.Client().PostForm(e.ts.URL+"/pay/"+id, url.Values{"token": {web.PageToken(id)}})
	must(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "database cannot be used") {
		t.Fatalf("I-paid after the store failed: %d %q", res.StatusCode, body)
	}
	if err := e.sb.VerifyPayment(id, OutcomeCompleted); !errors.Is(err, ErrStore) {
		t.Fatalf("VerifyPayment after the store failed: %v", err)
	}
}
