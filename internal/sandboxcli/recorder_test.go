package sandboxcli

// The recorder: a scripted session through the public API of package
// sandbox (Open, the Server as an http.Handler) with a fixed clock, every
// answer written byte for byte (status, headers but Date, body), and with
// -db the file's tables dumped after Close. Ids, tokens and the other
// values the sandbox draws at random are replaced by placeholders in order
// of appearance, so the transcript is the same on every run; it is held to
// testdata/session-mem.golden and testdata/session-db.golden, and any change
// of a byte of the API, the controls, the pages or the file's logical
// contents fails it. A change on purpose is recorded again with
// `go test ./internal/sandboxcli -run TestRecordedSession -update` (read the
// diff). It lives here rather than in package sandbox because it reads the
// file through the SQLite driver, which no test of package sandbox may
// import (TestNoRegularTestFileImportsSQLite), and a merchant never imports
// internal/sandboxcli.

import (
	"bytes"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

var updateGolden = flag.Bool("update", false, "write the recorder's golden transcripts (testdata/session-*.golden)")

// recClock is the session's fixed clock: it moves only when the script
// moves it.
type recClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *recClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *recClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestRecordedSession(t *testing.T) {
	for _, mode := range []string{"mem", "db"} {
		t.Run(mode, func(t *testing.T) {
			got := recordSession(t, mode == "db")
			golden := filepath.Join("testdata", "session-"+mode+".golden")
			if *updateGolden {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (record it with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the session's transcript differs from %s at line %d:\n%s", golden, firstDiffLine(got, want), lineDiff(got, want))
			}
		})
	}
}

// firstDiffLine is the 1-based number of the first line where a and b differ.
func firstDiffLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range al {
		if i >= len(bl) || al[i] != bl[i] {
			return i + 1
		}
	}
	return len(al) + 1
}

// lineDiff shows a few lines around the first difference, got then want.
func lineDiff(got, want []byte) string {
	n := firstDiffLine(got, want) - 1
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	window := func(l []string) string {
		lo, hi := max(n-3, 0), min(n+4, len(l))
		if lo >= hi {
			return "(end)"
		}
		return strings.Join(l[lo:hi], "\n")
	}
	return "got:\n" + window(gl) + "\nwant:\n" + window(wl)
}

func recordSession(t *testing.T, onFile bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	dbPath := ""
	if onFile {
		dbPath = filepath.Join(t.TempDir(), "rec.db")
	}
	clk := &recClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
	}))
	defer hook.Close()
	sb, err := sandbox.Open(sandbox.Config{Now: clk.Now, DBPath: dbPath, BaseURL: "http://sandbox.test",
		WebhookRetryWait: time.Millisecond, Autopilot: sandbox.Autopilot{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	signer := paykit.HMACSigner(sandbox.DefaultSecret)
	do := func(method, path, body string, signed bool, hdr ...string) {
		req := httptest.NewRequest(method, "http://127.0.0.1:8080"+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		if signed {
			req.Header.Set("X-Identity", sandbox.DefaultAPIKey)
			sig, err := signer.Sign(req, []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Signature", sig)
		}
		w := httptest.NewRecorder()
		sb.ServeHTTP(w, req)
		res := w.Result()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0, len(res.Header))
		for k := range res.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&buf, "=== %s %s %s\n%d\n", method, path, body, res.StatusCode)
		for _, k := range keys {
			if k == "Date" {
				continue
			}
			fmt.Fprintf(&buf, "%s: %s\n", k, strings.Join(res.Header[k], ", "))
		}
		fmt.Fprintf(&buf, "\n%s\n", b)
	}
	ids := func() []string {
		return regexp.MustCompile(`"id":"([0-9a-f-]{36})"`).FindAllString(buf.String(), -1)
	}
	last := func() string {
		l := ids()
		if len(l) == 0 {
			return "none"
		}
		s := l[len(l)-1]
		return s[6 : len(s)-1]
	}
	tok := func() string {
		m := regexp.MustCompile(`name="token" value="([0-9a-f]+)"`).FindAllStringSubmatch(buf.String(), -1)
		if len(m) == 0 {
			return ""
		}
		return m[len(m)-1][1]
	}
	do("GET", "/healthz", "", false)
	do("GET", "/readyz", "", false)
	do("GET", "/v1/banks", "", true)
	do("GET", "/v1/terminals", "", true)
	do("GET", "/v1/payments/nope", "", true)
	do("POST", "/v1/payments", `{"amount":1500.50,"ext_id":"e1","method":"CARD","notify_url":"`+hook.URL+`","notification_token":"tok1"}`, true)
	p1 := last()
	do("POST", "/v1/payments", `{"amount":1500.50,"ext_id":"e1","method":"CARD"}`, true)
	do("POST", "/v1/payments", `{"amount":-1,"ext_id":"e2","method":"CARD"}`, true)
	do("POST", "/v1/payments", `{"amount":200.12,"ext_id":"e3","method":"SBP"}`, true)
	p3 := last()
	do("POST", "/v1/payments", `{"amount":404.04,"ext_id":"e4","method":"CARD"}`, true)
	do("POST", "/v1/payments", `{"amount":700,"ext_id":"e5","method":"CROSS_BORDER","country":"KZ"}`, true)
	p5 := last()
	do("GET", "/v1/payments/"+p1, "", true)
	do("GET", "/v1/payments/ext/e1", "", true)
	do("POST", "/v1/payments/"+p1+"/confirm", `{}`, true)
	do("POST", "/v1/payments/"+p1+"/confirm", `{}`, true)
	do("POST", "/sandbox/payments/"+p1+"/verify", `{"outcome":"bogus"}`, false)
	do("POST", "/sandbox/payments/nope/verify", `{"outcome":"completed"}`, false)
	do("POST", "/sandbox/payments/"+p1+"/verify", `{"outcome":"completed"}`, false)
	do("POST", "/sandbox/payments/"+p1+"/verify", `{"outcome":"completed"}`, false)
	do("POST", "/v1/payments/"+p3+"/cancel", ``, true)
	do("POST", "/v1/payments/"+p3+"/dispute", `{"comment":"please reject","amount":100}`, true)
	do("POST", "/sandbox/payments/"+p3+"/dispute/review", `{"outcome":"approved"}`, false)
	do("GET", "/pay/"+p5, "", false)
	do("POST", "/pay/"+p5, "token="+tok(), false, "Content-Type", "application/x-www-form-urlencoded", "Origin", "http://127.0.0.1:8080")
	do("GET", "/pay/nope", "", false)
	do("POST", "/v1/payouts", `{"amount":300,"ext_id":"po1","requisites":"4000000000000002","bank":"sber","holder_name":"Ivan Petrov","method":"card"}`, true)
	po := last()
	do("GET", "/v1/payouts/"+po, "", true)
	do("GET", "/v1/payouts?limit=5", "", true)
	do("POST", "/sandbox/payouts/"+po+"/status", `{"status":"bogus"}`, false)
	do("POST", "/sandbox/payouts/"+po+"/status", `{"status":"processing"}`, false)
	do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":10.5}`, true)
	do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":100000}`, true)
	do("GET", "/v1/balance", "", true)
	do("GET", "/v1/withdrawals/fee", "", true)
	do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":20,"address":"TXYZsandboxAddress"}`, true)
	wd := last()
	do("GET", "/v1/withdrawals/"+wd, "", true)
	do("POST", "/sandbox/withdrawals/"+wd+"/status", `{"status":"completed","tx_hash":"abc"}`, false)
	do("POST", "/sandbox/withdrawals/"+wd+"/status", `{"status":"failed"}`, false)
	do("POST", "/sandbox/faults", `{"method":"GET","path":"/v1/banks","mode":"error_before"}`, false)
	do("POST", "/sandbox/faults", `{"method":"GET","path":"banks","mode":"error_before"}`, false)
	do("POST", "/sandbox/faults", `{"method":"GET","path":"/v1/banks","mode":"nope"}`, false)
	do("GET", "/v1/banks", "", true)
	do("POST", "/sandbox/clock/advance", `{"seconds":600}`, false)
	clk.add(time.Second)
	do("POST", "/sandbox/clock/advance", `{"seconds":1200}`, false)
	do("GET", "/v1/payments/"+p5, "", true)
	do("POST", "/sandbox/webhooks/flush", `{}`, false)
	do("GET", "/sandbox/state", "", false)
	do("GET", "/sandbox/ui", "", false)
	for _, pg := range []string{"payouts", "withdrawals", "terminals", "faults", "webhooks", "requests", "testvalues"} {
		do("GET", "/sandbox/ui/"+pg, "", false)
	}
	do("GET", "/sandbox/ui", "", false)
	do("POST", "/sandbox/ui/payments/nope/verify", "token="+tok()+"&outcome=completed", false, "Content-Type", "application/x-www-form-urlencoded", "Origin", "http://127.0.0.1:8080")
	do("POST", "/sandbox/ui/clock/advance", "token="+tok()+"&seconds=abc", false, "Content-Type", "application/x-www-form-urlencoded", "Origin", "http://127.0.0.1:8080")
	do("GET", "/sandbox/requests", "", false)
	do("GET", "/sandbox/deliveries", "", false)
	do("POST", "/sandbox/reset", `{}`, false)
	do("GET", "/sandbox/state", "", false)
	do("GET", "/sandbox/openapi.yaml", "", false)
	sb.Close()
	s := buf.String()
	if onFile {
		s += dumpTables(t, dbPath)
	}
	return []byte(normalise(s))
}

// dumpTables writes every table of the file, its columns and its rows
// sorted, as the file's logical contents.
func dumpTables(t *testing.T, dbPath string) string {
	t.Helper()
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type='table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var nm string
		if err := rows.Scan(&nm); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, nm)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	for _, tb := range tables {
		r, err := db.Query(`SELECT * FROM "` + tb + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := r.Columns()
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for r.Next() {
			v := make([]any, len(cols))
			p := make([]any, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			if err := r.Scan(p...); err != nil {
				t.Fatal(err)
			}
			var parts []string
			for i := range v {
				switch x := v[i].(type) {
				case []byte:
					parts = append(parts, cols[i]+"="+string(x))
				default:
					parts = append(parts, fmt.Sprintf("%s=%v", cols[i], x))
				}
			}
			lines = append(lines, strings.Join(parts, " | "))
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		sort.Strings(lines)
		s.WriteString("### table " + tb + " " + strings.Join(cols, ",") + "\n" + strings.Join(lines, "\n") + "\n")
	}
	return s.String()
}

// normalise replaces what the sandbox draws at random or measures (ids,
// tokens, card and phone numbers, names, durations, the webhook
// receiver's port) by placeholders: ids in order of appearance, so that
// the same id is the same placeholder throughout.
func normalise(s string) string {
	n := 0
	seen := map[string]string{}
	s = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := seen[m]; ok {
			return v
		}
		n++
		seen[m] = fmt.Sprintf("ID%03d", n)
		return seen[m]
	})
	s = regexp.MustCompile(`prv_[0-9a-f]{16}`).ReplaceAllString(s, `PRV`)
	s = regexp.MustCompile(`•••• \d{4}`).ReplaceAllString(s, `•••• LAST4`)
	s = regexp.MustCompile(`title="(ID\d+)">[0-9a-f]{8}<`).ReplaceAllString(s, `title="$1">SHORT<`)
	s = regexp.MustCompile(`[0-9a-f]{64}`).ReplaceAllString(s, `HEX64`)
	s = regexp.MustCompile(`\+?\b\d{11,16}\b`).ReplaceAllString(s, `NUM`)
	s = regexp.MustCompile(`\b(Dmitry|Sergey|Ivan|Anna|Olga|Maria|Elena|Alexey|Pavel|Nikolai|Natalia|Irina)\b( [A-Z]\.)?`).ReplaceAllString(s, `NAME`)
	s = regexp.MustCompile(`"holder":"[^"]*"`).ReplaceAllString(s, `"holder":"H"`)
	s = regexp.MustCompile(`"duration_ns":\d+`).ReplaceAllString(s, `"duration_ns":D`)
	s = regexp.MustCompile(`\d+(\.\d+)?(µs|ms|ns|s)\b`).ReplaceAllString(s, `DUR`)
	s = regexp.MustCompile(`127\.0\.0\.1:\d{4,5}`).ReplaceAllString(s, `HOOK`)
	s = regexp.MustCompile(`"tx_hash":"[0-9a-f]{64}"`).ReplaceAllString(s, `"tx_hash":"H"`)
	s = regexp.MustCompile(`opened_at \| value=\S+`).ReplaceAllString(s, `opened_at | value=T`)
	s = regexp.MustCompile(`OK in (&lt;)?\d+ ms`).ReplaceAllString(s, `OK in N ms`)
	s = regexp.MustCompile(`JSON, \d+ bytes`).ReplaceAllString(s, `JSON, N bytes`)
	return s
}
