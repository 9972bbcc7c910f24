package sandbox

import (
	"bytes"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/service"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
)

// dbEnv serves a sandbox on the SQLite file path with the frozen clock c.
func dbEnv(t *testing.T, path string, c *clock, cfg Config) *env {
	t.Helper()
	cfg.DBPath = path
	if c != nil {
		cfg.Now = c.Now
	}
	return newEnv(t, cfg)
}

// stop closes e as a graceful shutdown would: no request in flight, the
// store flushed and its lock released.
func (e *env) stop() {
	e.ts.Close()
	e.sb.Close()
}

// TestStoreModeFollowsTestSwitch: PAYKIT_SANDBOX_TEST_DB=file really runs
// the suite on SQLite (CI's second run), and without it on maps.
func TestStoreModeFollowsTestSwitch(t *testing.T) {
	sb := New(Config{})
	defer sb.Close()
	_, onFile := sb.svc.Probe().Store().(*storage.SQL)
	if want := os.Getenv("PAYKIT_SANDBOX_TEST_DB") == "file"; onFile != want {
		t.Fatalf("store on a file: %v, want %v", onFile, want)
	}
	sb2 := New(Config{DBPath: filepath.Join(t.TempDir(), "x.db")})
	defer sb2.Close()
	if _, ok := sb2.svc.Probe().Store().(*storage.SQL); !ok {
		t.Fatal("DBPath set, store not SQLite")
	}
}

// Everything stored comes back after a restart on the same file:
// payments in every state with their dispute, payouts, withdrawals,
// balances, transfers, the clock offset, an armed fault, the counters and
// both logs.
func TestDBRestartKeepsState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	c := &clock{t: base}
	sink := newHookSink(t, 0)
	e := dbEnv(t, path, c, Config{})

	pend := e.createPayment(`{"ext_id":"p-pend","amount":1500.50,"notify_url":"` + sink.srv.URL + `","notification_token":"tk"}`)
	done := e.createPayment(`{"ext_id":"p-done","amount":925,"method":"SBP"}`).str("id")
	wantStatus(t, e.confirm("/v1/payments/"+done), 200, "")
	must(t, e.sb.VerifyPayment(done, OutcomeCompleted))
	disp := e.createPayment(`{"ext_id":"p-disp","amount":300,"method":"CROSS_BORDER","country":"KZ"}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+disp+"/cancel", ""), 200, "")
	wantStatus(t, e.do("POST", "/v1/payments/"+disp+"/dispute", `{"amount":250.5,"comment":"paid","receipt_url":"https://r.example/1"}`), 200, "")
	po := e.do("POST", "/v1/payouts", `{"ext_id":"po1","amount":500.10,"method":"card","requisites":"2200","holder_name":"A B"}`).str("id")
	must(t, e.sb.SetPayoutStatus(po, PayoutProcessing))
	wd := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10.123456,"address":"TXyz"}`).str("id")
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":1.000001}`), 200, "")
	e.sb.Advance(90 * time.Second)
	must(t, e.sb.InjectFault(Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore, Status: 502, Count: 2}))
	e.flush()

	type snap struct {
		pend, done, disp, byExt, po, poList, wd, terms string
		stats                                          Stats
		now                                            time.Time
		deliveries                                     int
	}
	take := func(e *env) snap {
		return snap{
			pend: e.do("GET", "/v1/payments/"+pend.str("id"), "").raw, done: e.do("GET", "/v1/payments/"+done, "").raw,
			disp: e.do("GET", "/v1/payments/"+disp, "").raw, byExt: e.do("GET", "/v1/payments/by-ext-id/p-done", "").raw,
			po: e.do("GET", "/v1/payouts/"+po, "").raw, poList: e.do("GET", "/v1/payouts?status=processing", "").raw,
			wd: e.do("GET", "/v1/withdrawals/"+wd, "").raw, terms: e.do("GET", "/v1/terminals", "").raw,
			stats: e.sb.Stats(e.key), now: e.sb.Now(), deliveries: len(e.sb.Deliveries()),
		}
	}
	before := take(e)
	reqs := len(e.sb.Requests())
	counted := e.sb.RequestCount("GET", "/v1/payments/{id}")
	e.stop()

	e2 := dbEnv(t, path, c, Config{})
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("database file mode: %v %v, want 0600 (it holds notification tokens)", fi.Mode(), err)
	}
	eq(t, len(e2.sb.Requests()), reqs)
	eq(t, e2.sb.RequestCount("GET", "/v1/payments/{id}"), counted)
	after := take(e2)
	eq(t, after, before)
	if !strings.Contains(after.disp, `"status":"DISPUTE"`) || !strings.Contains(after.pend, `"amount":1500.50`) {
		t.Fatalf("stored payments: %s %s", after.disp, after.pend)
	}
	eq(t, before.stats, Stats{Payments: 3, Payouts: 1, Withdrawals: 1, Transfers: 1})
	eq(t, after.now, base.Add(90*time.Second))
	// 1000.00 + 925/92.50 - (10.123456 + 1.50 fee) - 1.000001
	wantDec(t, e2.balance(DefaultMainTerminalID), "997.376543")
	wantDec(t, e2.balance(DefaultReserveTerminalID), "1.000001")
	eq(t, e2.sb.Terminals(DefaultAPIKey)[0].BalanceFrozen.String(), "11.623456")
	// The fault is still armed: two shots.
	wantStatus(t, e2.do("GET", "/v1/balance", ""), 502, "")
	wantStatus(t, e2.do("GET", "/v1/balance", ""), 502, "")
	wantStatus(t, e2.do("GET", "/v1/balance", ""), 200, "")
	// The dispute is reviewable after the restart, and credits its amount.
	must(t, e2.sb.ReviewDispute(disp, OutcomeApproved))
	if r := e2.do("GET", "/v1/payments/"+disp, ""); r.str("status") != statusCompleted {
		t.Fatalf("after review: %s", r.raw)
	}
}

// A 2xx means the change is on disk: a copy of the file and its WAL taken
// right after the answer (what a kill or power loss would leave) holds it.
func TestDBAnswerIsOnDiskBeforeIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	id := e.createPayment(`{"ext_id":"disk-1","amount":777}`).str("id")
	copyFile(t, path, filepath.Join(dir, "copy.db"))
	copyFile(t, path+"-wal", filepath.Join(dir, "copy.db-wal"))
	e.stop()
	c := dbEnv(t, filepath.Join(dir, "copy.db"), &clock{t: base}, Config{})
	r := c.do("GET", "/v1/payments/"+id, "")
	wantStatus(t, r, 200, "")
	eq(t, r.str("ext_id"), "disk-1")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// With the real clock, a payment stored PENDING expires at valid_until
// after a restart without any request: the timer is armed at open.
func TestDBExpiryResumesAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	sink := newHookSink(t, 0)
	cfg := Config{DBPath: path, PaymentTTL: 1500 * time.Millisecond, WebhookRetryWait: time.Millisecond}
	sb := New(cfg)
	ts := httptest.NewServer(sb)
	e := &env{t: t, sb: sb, ts: ts, key: DefaultAPIKey, sec: DefaultSecret}
	id := e.createPayment(`{"ext_id":"exp-1","amount":100,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	e.stop()

	sb2 := New(cfg)
	defer sb2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(sink.statuses()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no expiry webhook after the restart")
		}
		time.Sleep(10 * time.Millisecond) // polling the receiver with a deadline, not a timed wait
	}
	eq(t, strings.Join(sink.statuses(), ","), statusCancelled)
	sink.mu.Lock()
	eq(t, sink.bodies[0]["id"], any(id))
	sink.mu.Unlock()
}

// A webhook the sandbox still owed at a stop is sent after the restart,
// with its body and token, and the log shows its earlier attempts.
func TestDBPendingWebhookDeliveredAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	c := &clock{t: base}
	var mu sync.Mutex
	up := false
	var got []string
	var tokens []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !up {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
		tokens = append(tokens, r.Header.Get("X-Notification-Token"))
	}))
	defer recv.Close()
	e := dbEnv(t, path, c, Config{WebhookRetryWait: time.Hour, WebhookMaxAttempts: 3})
	id := e.createPayment(`{"ext_id":"wh-1","amount":100,"notify_url":"` + recv.URL + `","notification_token":"tok-1"}`).str("id")
	wantStatus(t, e.confirm("/v1/payments/"+id), 200, "")
	// The first attempt fails; the retry waits an hour: the stop cuts it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds := e.sb.Deliveries()
		if len(ds) == 1 && len(ds[0].Attempts) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no first attempt: %+v", ds)
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.stop()

	mu.Lock()
	up = true
	mu.Unlock()
	e2 := dbEnv(t, path, c, Config{WebhookMaxAttempts: 3})
	e2.flush()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], `"status":"PROCESSING"`) || !strings.Contains(got[0], id) {
		t.Fatalf("delivered after restart: %q", got)
	}
	eq(t, strings.Join(tokens, ","), "tok-1")
	ds := e2.sb.Deliveries()
	eq(t, len(ds), 1)
	eq(t, ds[0].State, DeliveryDelivered)
	eq(t, len(ds[0].Attempts), 2) // the one before the stop, the one after
	eq(t, ds[0].Attempts[0].StatusCode, 503)
	eq(t, ds[0].Attempts[1].StatusCode, 200)
}

// The autopilot's steps resume after a restart: a payout created before
// it moves along after it.
func TestDBAutopilotResumesAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	c := &clock{t: base}
	ap := Autopilot{Enabled: true, PayoutDelay: time.Minute}
	e := dbEnv(t, path, c, Config{Autopilot: ap})
	po := e.do("POST", "/v1/payouts", `{"ext_id":"ap-1","amount":100,"method":"card","requisites":"2200000000000000","holder_name":"A"}`).str("id")
	e.stop()
	e2 := dbEnv(t, path, c, Config{Autopilot: ap})
	eq(t, e2.sb.AutopilotPending(), 1)
	e2.sb.Advance(time.Minute)
	eq(t, e2.do("GET", "/v1/payouts/"+po, "").str("status"), PayoutProcessing)
	e2.sb.Advance(time.Minute)
	eq(t, e2.do("GET", "/v1/payouts/"+po, "").str("status"), PayoutCompleted)
}

// openRefused checks that Open refuses path with a message containing
// want, and leaves the file's bytes as they were.
func openRefused(t *testing.T, path, want string) {
	t.Helper()
	before, _ := os.ReadFile(path)
	sb, err := Open(Config{DBPath: path})
	if err == nil {
		sb.Close()
		t.Fatalf("Open accepted %s", path)
	}
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q, want it to name the file and say %q", err, want)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("the refused file was changed")
	}
}

func TestDBRefusesNotSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database at all\n", 300)), 0o600); err != nil {
		t.Fatal(err)
	}
	openRefused(t, path, "not a usable SQLite database")
}

func TestDBRefusesTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	for i := range 20 {
		e.createPayment(`{"ext_id":"t-` + strings.Repeat("x", 200) + string(rune('a'+i%26)) + itoa(i) + `","amount":100.` + itoa(10+i%80) + `}`)
	}
	e.stop() // checkpointed into the main file at close
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 64<<10 {
		t.Fatalf("file only %d bytes", len(b))
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	// SQLite finds the damage at the header or at the integrity check,
	// depending on where the cut falls: refused either way.
	openRefused(t, path, "malformed")
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDBRefusesNewerVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	sb := New(Config{DBPath: path})
	sb.Close()
	db := rawDB(t, path)
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	openRefused(t, path, "schema version 99, newer than this sandbox's 2")
}

func TestDBRefusesAnotherProgramsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db := rawDB(t, path)
	if _, err := db.Exec("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	openRefused(t, path, "another program")
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// A file of schema version 1 (before the request log was stored), built
// by hand, is migrated: its payment is served, and it is version 2 after.
func TestDBMigratesVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db := rawDB(t, path)
	for _, q := range []string{
		storage.Migration(0),
		"PRAGMA user_version = 1",
		"PRAGMA application_id = " + strconv.Itoa(storage.ApplicationID),
		`INSERT INTO merchants (api_key, transfers) VALUES ('pk_sandbox', 4)`,
		`INSERT INTO terminals VALUES ('pk_sandbox', 'term_sandbox_main', 0, 'Main terminal', '1234.50', '0.00', '1.50', 1),
			('pk_sandbox', 'term_sandbox_reserve', 1, 'Reserve terminal', '0.00', '0.00', '1.50', 1)`,
		`INSERT INTO payments (id, api_key, terminal_id, ext_id, amount, amount_key, method, bank_code, bank_name, bank_country,
			req_type, req_value, holder, country, currency, amount_local, client_id, notify_url, token, status, valid_until,
			created_at, usdt_rate, payment_url, receipt, dispute) VALUES ('11111111-1111-4111-8111-111111111111', 'pk_sandbox',
			'term_sandbox_main', 'old-1', '1500.50', '1500.5', 'CARD', 'sber', 'Sberbank', 'RU', 'card', '2200000000000004',
			'Ivan P.', '', '', '0', '', '', '', 'COMPLETED', 1740831600000000000, 1740830400000000000, '92.50',
			'http://127.0.0.1/pay/11111111-1111-4111-8111-111111111111', 0, NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	e := dbEnv(t, path, &clock{t: base}, Config{})
	r := e.do("GET", "/v1/payments/11111111-1111-4111-8111-111111111111", "")
	wantStatus(t, r, 200, "")
	eq(t, r.str("ext_id"), "old-1")
	eq(t, r.str("amount"), "1500.50")
	eq(t, r.str("status"), statusCompleted)
	wantDec(t, e.balance(DefaultMainTerminalID), "1234.50")
	eq(t, e.sb.Stats(DefaultAPIKey).Transfers, 4)
	e.do("GET", "/v1/balance", "")
	e.createPayment(`{"ext_id":"new-1","amount":100}`) // a write: the request log goes to the new table
	e.stop()
	db = rawDB(t, path)
	defer db.Close()
	var v, n int
	must(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	eq(t, v, SchemaVersion)
	must(t, db.QueryRow("SELECT count(*) FROM reqlog").Scan(&n))
	if n == 0 {
		t.Fatal("the migrated file's request log is empty")
	}
}

// A file one Server holds is refused to a second one, not shared; once
// the first closes, the file opens again.
func TestDBHeldFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	first := New(Config{DBPath: path})
	_, err := Open(Config{DBPath: path})
	if err == nil || !strings.Contains(err.Error(), "held by another process") {
		first.Close()
		t.Fatalf("second Open: %v", err)
	}
	first.Close()
	again, err := Open(Config{DBPath: path})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}

// When the store fails (here: its database closed underneath), the API
// answers 503 SANDBOX_STORE, Go controls return ErrStore and /readyz 503,
// rather than answering from memory what the file no longer keeps.
func TestDBStoreFailureIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	id := e.createPayment(`{"ext_id":"f-1","amount":100}`).str("id")
	eq(t, e.readyz(), 200)

	e.sb.svc.Probe().Store().(*storage.SQL).DB().Close()
	wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"f-2","amount":100}`), 503, "SANDBOX_STORE")
	wantStatus(t, e.do("GET", "/v1/payments/"+id, ""), 503, "SANDBOX_STORE")
	if err := e.sb.VerifyPayment(id, OutcomeCompleted); !errors.Is(err, ErrStore) {
		t.Fatalf("control after the failure: %v", err)
	}
	wantStatus(t, e.control("/sandbox/payments/"+id+"/verify", `{"outcome":"completed"}`), 503, "SANDBOX_STORE")
	eq(t, e.readyz(), 503)
}

// Terminals configured differently from a used file's are reported in the
// log as ignored; the stored balances are the ones served.
func TestDBConfigDifferenceIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":100}`), 200, "")
	e.stop()
	var logs bytes.Buffer
	m := DefaultMerchant(DefaultAPIKey, DefaultSecret)
	m.Terminals[0].Balance = dec("5000.00")
	e2 := dbEnv(t, path, &clock{t: base}, Config{Merchants: []Merchant{m},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	wantDec(t, e2.balance(DefaultMainTerminalID), "900.00")
	wantDec(t, e2.balance(DefaultReserveTerminalID), "100.00")
	out := logs.String()
	if !strings.Contains(out, "IGNORED") || !strings.Contains(out, "balance 5000.00") || !strings.Contains(out, "balance 1000.00") ||
		!strings.Contains(out, "balance 900.00") {
		t.Fatalf("log does not report the ignored configuration: %s", out)
	}
	// The same configuration again: nothing to report.
	e2.stop()
	logs.Reset()
	e3 := dbEnv(t, path, &clock{t: base}, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	wantDec(t, e3.balance(DefaultMainTerminalID), "900.00")
	if strings.Contains(logs.String(), "IGNORED") {
		t.Fatalf("reported a difference of the stored configuration itself: %s", logs.String())
	}
}

// A backlog of expiries (a restart after a long stop) is worked off in
// batches, each committed, and every payment of it expires.
func TestExpiryBacklogInBatches(t *testing.T) {
	t.Cleanup(service.SetExpiryBatch(3))
	path := filepath.Join(t.TempDir(), "sandbox.db")
	c := &clock{t: base}
	e := dbEnv(t, path, c, Config{})
	var ids []string
	for i := range 8 {
		ids = append(ids, e.createPayment(`{"ext_id":"b-`+itoa(i)+`","amount":10`+itoa(i)+`}`).str("id"))
	}
	e.stop()
	c.Set(base.Add(time.Hour))
	e2 := dbEnv(t, path, c, Config{})
	for _, id := range ids {
		eq(t, e2.do("GET", "/v1/payments/"+id, "").str("status"), statusCancelled)
	}
	eq(t, e2.sb.State().Merchants[0].Payments[statusCancelled], 8)

	m := newEnv(t, Config{Now: c.Now}) // the same in memory
	for i := range 8 {
		m.createPayment(`{"ext_id":"b-` + itoa(i) + `","amount":10` + itoa(i) + `}`)
	}
	m.sb.Advance(time.Hour)
	eq(t, m.sb.State().Merchants[0].Payments[statusCancelled], 8)
}

// Concurrent creates, confirms, verifications, transfers and withdrawals
// on a file: after a restart, the money on the terminals (balance plus
// frozen) is the start plus exactly the credits acknowledged, and every
// acknowledged withdrawal is there, pending, with its hold frozen.
func TestDBConcurrentLoadConservesMoney(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	c := &clock{t: base}
	e := dbEnv(t, path, c, Config{MaxSamePendingAmount: 1000})
	var mu sync.Mutex
	credits := dec("0")
	held := dec("0")
	var wds []string
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				amount := "1" + itoa(g) + itoa(i%10) + ".50"
				r := e.do("POST", "/v1/payments", `{"ext_id":"c-`+itoa(g)+`-`+itoa(i)+`","amount":`+amount+`}`)
				if r.status != 200 {
					t.Errorf("create: %s", r.raw)
					return
				}
				if r := e.confirm("/v1/payments/" + r.str("id")); r.status != 200 {
					t.Errorf("confirm: %s", r.raw)
					return
				}
				if err := e.sb.VerifyPayment(r.str("id"), OutcomeCompleted); err != nil {
					t.Errorf("verify: %v", err)
					return
				}
				mu.Lock()
				credits = credits.Add(dec(amount).DivRound(dec("92.50"), 2))
				mu.Unlock()
				from, to := "term_sandbox_main", "term_sandbox_reserve"
				if i%2 == 1 {
					from, to = to, from
				}
				e.do("POST", "/v1/transfers", `{"from_terminal_id":"`+from+`","to_terminal_id":"`+to+`","amount":0.000007}`)
				if w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":0.25,"address":"T`+itoa(g)+`"}`); w.status == 200 {
					mu.Lock()
					held = held.Add(dec("1.75"))
					wds = append(wds, w.str("id"))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	e.stop()
	e2 := dbEnv(t, path, c, Config{MaxSamePendingAmount: 1000})
	total, frozen := dec("0"), dec("0")
	for _, term := range e2.sb.Terminals(DefaultAPIKey) {
		total = total.Add(term.Balance).Add(term.BalanceFrozen)
		frozen = frozen.Add(term.BalanceFrozen)
	}
	wantDec(t, total, dec("1000.00").Add(credits).String())
	wantDec(t, frozen, held.String())
	for _, id := range wds {
		eq(t, e2.do("GET", "/v1/withdrawals/"+id, "").str("status"), WithdrawalPending)
	}
	eq(t, e2.sb.Stats(DefaultAPIKey).Payments, 40)
}

// A path with characters that mean something in a URI still names that
// file, and only that file.
func TestDBOddPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a?b#c%41 d.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	id := e.createPayment(`{"ext_id":"odd","amount":100}`).str("id")
	e.stop()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files in the directory: %v", entries)
	}
	e2 := dbEnv(t, path, &clock{t: base}, Config{})
	eq(t, e2.do("GET", "/v1/payments/"+id, "").str("ext_id"), "odd")
}

// With a file, the heap does not grow with stored payments: 500 more leave
// it within 200 KB (about 50 KB measured), where the maps of the in-memory
// mode grow by some 420 KB for them.
func TestDBHeapFlatWithStoredPayments(t *testing.T) {
	if raceEnabled {
		t.Skip("heap figures under -race are the detector's; this runs in the plain test runs")
	}
	e := dbEnv(t, filepath.Join(t.TempDir(), "sandbox.db"), &clock{t: base}, Config{})
	create := func(from, to int) {
		for i := from; i < to; i++ {
			e.createPayment(`{"ext_id":"h-` + itoa(i) + `","amount":` + itoa(100+i/100) + `.` + itoa(10+i%90) + `}`)
		}
	}
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	create(0, 200)
	before := heap()
	create(200, 700)
	grown := heap() - before
	t.Logf("heap grew %d bytes over 500 stored payments", grown)
	if grown > 200<<10 {
		t.Fatalf("heap grew %d KB over 500 stored payments", grown>>10)
	}
}

// A stored fault list that is valid JSON but holds a null is refused when
// the file is opened, as any malformed record is, rather than armed as a
// nil fault that the first request would dereference.
func TestDBNullStoredFaultIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	sb := New(Config{DBPath: path})
	must(t, sb.InjectFault(Fault{Method: "GET", Path: "/v1/banks", Mode: FaultErrorBefore, Count: 1}))
	sb.Close()
	drv, ok := storage.Registered()
	if !ok {
		t.Fatal("no driver registered")
	}
	db, err := drv.Open(path)
	must(t, err)
	res, err := db.Exec(`UPDATE meta SET value = '[null]' WHERE key = 'faults'`)
	must(t, err)
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d fault records updated, want 1", n)
	}
	must(t, db.Close())
	_, err = Open(Config{DBPath: path})
	if err == nil || !strings.Contains(err.Error(), "stored faults: a null entry") {
		t.Fatalf("Open of a file with a null fault: %v", err)
	}
}

// The request log is written with a commit at least every
// storage.DiagEvery commits, not only at Close: a copy of the file taken
// while the sandbox runs (what a kill leaves) holds every create's line
// but those of the last DiagEvery commits or so; Close writes the rest.
func TestDBRequestLogWrittenWhileRunning(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	const n = 2*storage.DiagEvery + 2
	for i := 0; i < n; i++ {
		e.createPayment(`{"ext_id":"log-` + itoa(i) + `","amount":` + itoa(100+i) + `}`)
	}
	copyFile(t, path, filepath.Join(dir, "copy.db"))
	copyFile(t, path+"-wal", filepath.Join(dir, "copy.db-wal"))
	e.stop()
	creates := func(sb *Server) int {
		k := 0
		for _, r := range sb.Requests() {
			if r.Method == "POST" && r.Route == "/v1/payments" && r.Status == 200 {
				k++
			}
		}
		return k
	}
	c := dbEnv(t, filepath.Join(dir, "copy.db"), &clock{t: base}, Config{})
	if k := creates(c.sb); k < n-storage.DiagEvery-2 || k > n {
		t.Fatalf("a copy taken while running holds %d of %d create lines, want at least %d", k, n, n-storage.DiagEvery-2)
	}
	c.stop()
	again := dbEnv(t, path, &clock{t: base}, Config{})
	defer again.stop()
	if k := creates(again.sb); k != n {
		t.Fatalf("after Close the log holds %d of %d create lines", k, n)
	}
}
