package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// The test payout numbers, which the leak test looks for in full.
const (
	testCard  = "4111111111111111"
	testPhone = "+79001234567"
)

// formats are the three outputs; table is the default, so its command
// line has no -o.
var formats = []string{"table", "json", "csv"}

func withFormat(f string, args ...string) []string {
	if f == "table" {
		return args
	}
	return append(args, "-o", f)
}

// readCSV parses an RFC 4180 answer with a header and returns its rows as
// maps, failing the test when it does not parse.
func readCSV(t *testing.T, name, s string) []map[string]string {
	t.Helper()
	if !strings.HasSuffix(s, "\r\n") {
		t.Errorf("%s: csv lines do not end in CRLF: %q", name, s)
	}
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil || len(recs) < 1 {
		t.Fatalf("%s: not RFC 4180 csv: %v\n%s", name, err, s)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

// checkFormat checks what every format promises, beyond the golden file:
// json is valid JSON (the API's answer), csv parses with a header row and
// its amount columns are plain decimal text.
func checkFormat(t *testing.T, name, f string, r result) {
	t.Helper()
	switch f {
	case "json":
		if !json.Valid([]byte(r.stdout)) || !strings.HasSuffix(r.stdout, "\n") {
			t.Errorf("%s: -o json is not one JSON value and a newline: %q", name, r.stdout)
		}
	case "csv":
		for _, row := range readCSV(t, name, r.stdout) {
			for _, k := range []string{"amount", "fee", "balance", "balance_frozen", "withdrawal_fee", "amount_local", "dispute_amount"} {
				v, ok := row[k]
				if !ok || v == "" {
					continue
				}
				if !plainDecimal.MatchString(v) {
					t.Errorf("%s: csv %s %q is not plain decimal text", name, k, v)
				}
			}
		}
	}
}

// TestSession runs every subcommand in every output format against one
// sandbox, compares each transcript with its golden file, then greps all
// output of the session (doctor, wait, -v logs, errors and unknown
// outcomes included) for the API key, the secret, every signature the
// sandbox received and every full card and phone number, and finds none.
func TestSession(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	run := func(name string, code int, args ...string) result {
		t.Helper()
		return e.step(name, code, args...)
	}
	each := func(name string, code int, args func(f string) []string) map[string]result {
		t.Helper()
		out := map[string]result{}
		for _, f := range formats {
			r := run(name+"_"+f, code, withFormat(f, args(f)...)...)
			checkFormat(t, name+"_"+f, f, r)
			out[f] = r
		}
		return out
	}
	idOf := func(args ...string) string { return id(t, e.run("", append(args, "-o", "json")...)) }
	sdkPayment := func(ext string) string {
		p, err := e.sdk.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: ext, Amount: decimal.RequireFromString("300.00")})
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}

	// Payments: one per format for each change.
	ext := map[string]string{"table": "order-1001", "json": "order-1002", "csv": "order-1003"}
	rs := each("payments_create", 0, func(f string) []string {
		return []string{"payments", "create", "--ext-id", ext[f], "--amount", "1500.50", "--method", "SBP", "--bank", "sber"}
	})
	if !strings.Contains(rs["table"].stdout, "amount:       1500.50 RUB\n") {
		t.Errorf("table amount not shown with two decimals and its currency: %s", rs["table"].stdout)
	}
	if !strings.Contains(rs["json"].stdout, `"amount":1500.50,`) {
		t.Errorf("-o json did not keep the service's number: %s", rs["json"].stdout)
	}
	if row := readCSV(t, "payments_create_csv", rs["csv"].stdout)[0]; row["amount"] != "1500.50" || row["currency"] != "RUB" || row["ext_id"] != "order-1003" {
		t.Errorf("payments create -o csv: %v", row)
	}
	pay := map[string]string{}
	for f, x := range ext {
		pay[f] = idOf("payments", "get", "--ext-id", x)
	}
	each("payments_get", 0, func(string) []string { return []string{"payments", "get", pay["table"]} })
	each("payments_get_extid", 0, func(string) []string { return []string{"payments", "get", "--ext-id", "order-1001"} })

	png := filepath.Join(t.TempDir(), "receipt.png")
	receipt := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR receipt bytes")
	if err := os.WriteFile(png, receipt, 0o600); err != nil {
		t.Fatal(err)
	}
	each("payments_confirm", 0, func(f string) []string { return []string{"payments", "confirm", pay[f], "--receipt", png} })
	e.checkReceipts(receipt, 3)

	cancelled := map[string]string{}
	for _, f := range formats {
		cancelled[f] = sdkPayment("cancel-" + f)
	}
	each("payments_cancel", 0, func(f string) []string { return []string{"payments", "cancel", cancelled[f]} })
	each("disputes_open", 0, func(f string) []string {
		return []string{"disputes", "open", cancelled[f], "--amount", "300.00", "--receipt-url", "https://example.com/r.png", "--comment", "paid late"}
	})
	each("disputes_cancel", 0, func(f string) []string { return []string{"disputes", "cancel", cancelled[f]} })

	// Payouts.
	payoutArgs := map[string][]string{
		"table": {"--ext-id", "payout-77", "--amount", "500", "--method", "card", "--requisites", testCard, "--holder-name", "Ivan Petrov"},
		"json":  {"--ext-id", "payout-78", "--amount", "750.25", "--method", "sbp", "--requisites", testPhone, "--holder-name", "Olga Ivanova", "--bank", "sber"},
		"csv":   {"--ext-id", "payout-79", "--amount", "0.5", "--method", "card", "--requisites", testCard, "--holder-name", "Anna Smirnova"},
	}
	rs = each("payouts_create", 0, func(f string) []string {
		return append(append([]string{"payouts", "create"}, payoutArgs[f]...), "--yes")
	})
	if row := readCSV(t, "payouts_create_csv", rs["csv"].stdout)[0]; row["amount"] != "0.50" || row["currency"] != "RUB" || row["requisites"] != "************1111" {
		t.Errorf("payouts create -o csv: %v", row)
	}
	po := map[string]string{}
	for f, a := range payoutArgs {
		po[f] = idOf("payouts", "get", "--ext-id", a[1])
	}
	run("payouts_create_no_yes", 2, "payouts", "create", "--ext-id", "payout-80", "--amount", "1", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov")
	if _, err := e.sdk.GetPayoutByExtID(ctx, "payout-80"); err == nil {
		t.Error("a payout refused for want of --yes was sent")
	}
	each("payouts_get", 0, func(string) []string { return []string{"payouts", "get", po["json"]} })
	each("payouts_get_extid", 0, func(string) []string { return []string{"payouts", "get", "--ext-id", "payout-77"} })
	rs = each("payouts_list", 0, func(string) []string { return []string{"payouts", "list"} })
	rows := readCSV(t, "payouts_list_csv", rs["csv"].stdout)
	if len(rows) != 3 || rows[0]["amount"] != "500.00" || rows[1]["amount"] != "750.25" || rows[0]["requisites"] != "************1111" ||
		rows[1]["requisites"] != "'+*******4567" || rows[2]["amount"] != "0.50" {
		t.Errorf("payouts list -o csv: %v", rows)
	}
	before := e.sb.RequestCount("GET", "/v1/payouts")
	rs = each("payouts_list_all", 0, func(string) []string { return []string{"payouts", "list", "--all", "--limit", "1"} })
	if got := e.sb.RequestCount("GET", "/v1/payouts") - before; got != 9 {
		t.Errorf("--all --limit 1 over 3 payouts, three times: %d list requests, want 9", got)
	}
	if len(readCSV(t, "payouts_list_all_csv", rs["csv"].stdout)) != 3 {
		t.Errorf("--all -o csv: %q", rs["csv"].stdout)
	}
	var all struct {
		Payouts []json.RawMessage `json:"payouts"`
		Total   int               `json:"total"`
	}
	if err := json.Unmarshal([]byte(rs["json"].stdout), &all); err != nil || len(all.Payouts) != 3 || all.Total != 3 {
		t.Errorf("--all -o json: %v %q", err, rs["json"].stdout)
	}
	each("payouts_list_status", 0, func(string) []string {
		return []string{"payouts", "list", "--status", "pending", "--from", "2026-11-01", "--to", "2026-12-01", "--limit", "2", "--offset", "1"}
	})
	// A page of more says so on stderr; --json, --jq and -q shape the output.
	run("payouts_list_truncated", 0, "payouts", "list", "--limit", "1")
	run("payouts_list_json_fields", 0, "payouts", "list", "--json", "ext_id,amount,requisites,status")
	run("payouts_list_jq", 0, "payouts", "list", "--jq", ".payouts[] | .ext_id + \" \" + .requisites")
	run("payouts_list_quiet", 0, "payouts", "list", "-q")
	// api --paginate: every page, as one array or shaped page by page.
	run("api_paginate", 0, "api", "GET", "/v1/payouts?limit=2", "--paginate")
	run("api_paginate_jq", 0, "api", "GET", "/v1/payouts?limit=2", "--paginate", "--jq", ".payouts[].ext_id")

	// Wait: settled resources come back at once, in every format.
	for _, f := range formats {
		if err := e.sb.SetPayoutStatus(po[f], "completed"); err != nil {
			t.Fatal(err)
		}
		if err := e.sb.VerifyPayment(pay[f], "completed"); err != nil {
			t.Fatal(err)
		}
	}
	each("wait_payout", 0, func(f string) []string { return []string{"wait", "payout", po[f], "--interval", "10ms"} })
	each("wait_payment", 0, func(f string) []string { return []string{"wait", "payment", pay[f], "--interval", "10ms"} })
	pending := sdkPayment("order-pending")
	run("wait_payment_timeout", 1, "wait", "payment", pending, "--interval", "10ms", "--timeout", "300ms")
	run("wait_payment_timeout_exit_status", 6, "wait", "payment", pending, "--interval", "10ms", "--timeout", "300ms", "--exit-status")
	failed, err := e.sdk.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "payout-failing", Amount: decimal.RequireFromString("20"),
		Method: paykit.PayoutMethodCard, Requisites: testCard, HolderName: "Ivan Petrov"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetPayoutStatus(failed.ID, "failed"); err != nil {
		t.Fatal(err)
	}
	run("wait_payout_exit_status", 5, "wait", "payout", "--ext-id", "payout-failing", "--exit-status")

	// Terminals, balance, banks.
	each("terminals", 0, func(string) []string { return []string{"terminals"} })
	each("balance", 0, func(string) []string { return []string{"balance"} })
	each("banks", 0, func(string) []string { return []string{"banks"} })

	// Money moves between terminals and out.
	each("transfers_create", 0, func(f string) []string {
		return []string{"transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID,
			"--amount", map[string]string{"table": "100.00", "json": "0.5", "csv": "1.25"}[f], "--yes"}
	})
	run("transfers_create_no_yes", 2, "transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID, "--amount", "1")
	wd := map[string]string{}
	rs = each("withdrawals_create", 0, func(f string) []string {
		return []string{"withdrawals", "create", "--terminal", sandbox.DefaultMainTerminalID, "--amount", "50.00",
			"--address", "TXYZabcdefghijklmnopqrstuvwxyz1234", "--yes"}
	})
	wd["json"] = id(t, rs["json"])
	each("withdrawals_get", 0, func(string) []string { return []string{"withdrawals", "get", wd["json"]} })
	each("withdrawals_fee", 0, func(string) []string { return []string{"withdrawals", "fee"} })
	terms, err := e.sdk.ListTerminals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 + 3 x 16.22 (1500.50 RUB / 92.50) credited by the completed
	// payments, - 101.75 transferred, - 3 x (50 + 1.50 fee) withdrawn.
	if got := terms[0].Balance.String(); got != "792.41" {
		t.Errorf("main terminal balance %s after the session's moves, want 792.41", got)
	}

	// doctor, in every format: reads only.
	moves := func() int {
		return e.sb.RequestCount("POST", "/v1/payouts") + e.sb.RequestCount("POST", "/v1/transfers") + e.sb.RequestCount("POST", "/v1/withdrawals")
	}
	m := moves()
	each("doctor", 0, func(string) []string { return []string{"doctor"} })
	if moves() != m {
		t.Errorf("doctor moved money: %d requests", moves()-m)
	}

	// The payments' requisites, for the leak check (before Reset below).
	secrets := []string{testKey, testSecret, testCard, testPhone}
	for _, pid := range append(mapValues(pay), mapValues(cancelled)...) {
		if p, err := e.sdk.GetPayment(ctx, pid); err == nil && p.Requisites.Value != "" {
			secrets = append(secrets, p.Requisites.Value)
		}
	}

	// Failures and their exit codes.
	run("error_not_found", 1, "payments", "get", "--ext-id", "no-such-order")
	run("error_usage_output", 2, "balance", "-o", "yaml")
	run("error_usage_args", 2, "payments", "get")
	run("error_usage_required", 2, "payments", "create", "--amount", "100")
	run("error_usage_unknown_command", 2, "refunds", "create")
	run("error_usage_amount", 2, "payments", "create", "--ext-id", "x", "--amount", "lots")
	run("error_usage_kopecks", 2, "payments", "create", "--ext-id", "x", "--amount", "100.005")
	run("error_usage_mistyped", 2, "payouts", "lst")
	run("error_duplicate_ext_id", 1, "payouts", "create", "--ext-id", "payout-77", "--amount", "1", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes")
	run("auth_status", 0, "auth", "status")
	run("api_get_balance", 0, "api", "GET", "/v1/balance")
	// api's fields build the body; an amount keeps its digits, and one
	// finer than its currency is refused before sending.
	run("api_post_fields", 0, "api", "POST", "/v1/payouts", "-f", "ext_id=payout-90", "-F", "amount=500.50", "-f", "method=card",
		"-F", "requisites="+testCard, "-f", "holder_name=Ivan Petrov", "--yes")
	run("api_post_kopecks", 2, "api", "POST", "/v1/payouts", "-f", "ext_id=payout-91", "-F", "amount=100.005", "--yes")
	// What can be checked before sending is (exit 2); an output that
	// fails after the payout was made is exit 7, never 1 or 2.
	run("error_usage_json_field", 2, "payouts", "create", "--ext-id", "payout-92", "--amount", "1", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes", "--json", "payout_id")
	run("done_output_failed_jq", 7, "payouts", "create", "--ext-id", "payout-93", "--amount", "1", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes", "--jq", ".amount[]")
	run("error_validation", 2, "payments", "get", "not-a-uuid")
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("not an image"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("error_receipt_not_image", 2, "payments", "confirm", pay["table"], "--receipt", notes)
	run("error_receipt_missing", 2, "payments", "confirm", pay["table"], "--receipt", filepath.Join(filepath.Dir(notes), "receipt.png"))
	for _, amount := range []string{"1e999999999", "-5", "1.1234567", "0x10", "1,5"} {
		r := e.run("", "transfers", "create", "--from", "a", "--to", "b", "--amount", amount, "--yes")
		if r.code != 2 || !strings.Contains(r.stderr, "want a decimal amount") && !strings.Contains(r.stderr, "six decimals") {
			t.Errorf("--amount %s: exit %d, stderr %q; want 2 before any call", amount, r.code, r.stderr)
		}
	}
	r := e.runEnv(map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": "wrong-secret"}, "", "balance")
	if r.code != 4 || !strings.Contains(r.stderr, "AUTH_001") {
		t.Errorf("a wrong secret: exit %d, stderr %q; want 4 naming the refusal", r.code, r.stderr)
	}

	// Unknown outcomes: the answer is lost and so is every read that could
	// settle it. Exit 3 and the command that settles it.
	inject := func(f sandbox.Fault) {
		t.Helper()
		if err := e.sb.InjectFault(f); err != nil {
			t.Fatal(err)
		}
	}
	inject(sandbox.Fault{Method: "POST", Path: "/v1/payouts", Mode: sandbox.FaultDropAfter})
	inject(sandbox.Fault{Method: "GET", Path: "/v1/payouts/by-ext-id/{id}", Mode: sandbox.FaultErrorBefore, Count: 100})
	run("unknown_outcome_payout", 3, "payouts", "create", "--ext-id", "payout-81", "--amount", "10", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes")
	inject(sandbox.Fault{Method: "POST", Path: "/v1/payments", Mode: sandbox.FaultDropAfter})
	inject(sandbox.Fault{Method: "GET", Path: "/v1/payments/by-ext-id/{id}", Mode: sandbox.FaultErrorBefore, Count: 100})
	run("unknown_outcome_payment", 3, "payments", "create", "--ext-id", "order 2001", "--amount", "100")
	// A transfer and a withdrawal have no id to read back: the settling
	// command is the terminals' balances.
	inject(sandbox.Fault{Method: "POST", Path: "/v1/transfers", Mode: sandbox.FaultDropAfter})
	run("unknown_outcome_transfer", 3, "transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID, "--amount", "1", "--yes")
	inject(sandbox.Fault{Method: "POST", Path: "/v1/withdrawals", Mode: sandbox.FaultDropAfter})
	run("unknown_outcome_withdrawal", 3, "withdrawals", "create", "--terminal", sandbox.DefaultMainTerminalID, "--amount", "5",
		"--address", "TXYZabcdefghijklmnopqrstuvwxyz1234", "--yes")
	e.sb.Reset()

	// -v logs every attempt: part of the session the leak test reads.
	for _, args := range [][]string{
		{"payouts", "create", "--ext-id", "payout-82", "--amount", "10", "--method", "sbp", "--requisites", testPhone, "--holder-name", "Ivan Petrov", "--yes"},
		{"payouts", "list", "--all", "-o", "json"},
		{"payments", "create", "--ext-id", "order-3001", "--amount", "100", "-o", "csv"},
		{"doctor"},
		{"balance"},
	} {
		r := e.run("", append([]string{"-v"}, args...)...)
		if r.code != 0 || !strings.Contains(r.stderr, "level=") {
			t.Errorf("-v %v: exit %d, stderr %q; want 0 and log lines", args, r.code, r.stderr)
		}
	}
	if p, err := e.sdk.GetPaymentByExtID(ctx, "order-3001"); err == nil {
		secrets = append(secrets, p.Requisites.Value)
	}

	// The leak check over everything the binary wrote.
	e.mu.Lock()
	everything, sigs := e.all.String(), append([]string(nil), e.sigs...)
	e.mu.Unlock()
	if len(sigs) < 100 {
		t.Errorf("only %d signatures recorded: the session did not run", len(sigs))
	}
	for _, s := range append(secrets, sigs...) {
		if s != "" && strings.Contains(everything, s) {
			t.Errorf("the session's output contains a secret or full number (%d characters, ending %q)", len(s), s[max(0, len(s)-4):])
		}
	}
	// The numbers did pass through the output, masked: the check above
	// looked where they would have been.
	for _, m := range []string{"************1111", "+*******4567"} {
		if !strings.Contains(everything, m) {
			t.Errorf("the session's output never shows %s: the leak check saw no number at all", m)
		}
	}
	if len(secrets) < 10 {
		t.Errorf("the payments' requisites were not read back for the leak check: %d values", len(secrets))
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, f := range formats {
		out = append(out, m[f])
	}
	return out
}

// checkReceipts: each confirm carried the receipt file as the attachment
// part of a multipart/form-data body, byte for byte, named by its base
// name (no local directory) and typed as an image.
func (e *testEnv) checkReceipts(want []byte, n int) {
	t := e.t
	t.Helper()
	e.mu.Lock()
	bodies := append([]wireBody(nil), e.confirms...)
	e.mu.Unlock()
	if len(bodies) != n {
		t.Fatalf("%d confirm requests crossed the wire, want %d", len(bodies), n)
	}
	for _, b := range bodies {
		mt, params, err := mime.ParseMediaType(b.contentType)
		if err != nil || mt != "multipart/form-data" {
			t.Fatalf("confirm Content-Type %q", b.contentType)
		}
		mr := multipart.NewReader(bytes.NewReader(b.body), params["boundary"])
		part, err := mr.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			t.Fatal(err)
		}
		if part.FormName() != "attachment" || part.FileName() != "receipt.png" || part.Header.Get("Content-Type") != "image/png" || !bytes.Equal(data, want) {
			t.Errorf("confirm part %q, file %q, type %q, %d bytes; want attachment, receipt.png, image/png, the file's %d bytes",
				part.FormName(), part.FileName(), part.Header.Get("Content-Type"), len(data), len(want))
		}
		if _, err := mr.NextPart(); err != io.EOF {
			t.Errorf("confirm body has a part after the attachment: %v", err)
		}
	}
}

// TestUnmask: --unmask is the one way to see a full number; without it a
// number is masked even where the service escaped its digits.
func TestUnmask(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "payouts", "create", "--ext-id", "p-1", "--amount", "10", "--method", "card", "--requisites", testCard,
		"--holder-name", "Ivan Petrov", "--yes", "-o", "json", "--unmask")
	if r.code != 0 || !strings.Contains(r.stdout, `"requisites":"`+testCard+`"`) {
		t.Fatalf("--unmask: exit %d, %s", r.code, r.stdout)
	}
	var p paykit.Payout
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.ExtID != "p-1" {
		t.Fatalf("the answer does not decode as a payout: %v", err)
	}
}

// TestMaskJSON: the masking of -o json works on string tokens: an escaped
// number is found, a number inside a longer text is masked there, and
// every other byte (spacing, number spellings, key order) is the service's.
func TestMaskJSON(t *testing.T) {
	a := &app{sensitive: []string{testCard, testPhone}}
	raw := `{ "requisites" : "\u0034111111111111111", "amount":1500.50,` + "\n" +
		`"message":"paid from 4111111111111111 & ok", "phone":"+79001234567", "n":[1e3, "x"]}`
	want := `{ "requisites" : "************1111", "amount":1500.50,` + "\n" +
		`"message":"paid from ************1111 & ok", "phone":"+*******4567", "n":[1e3, "x"]}`
	if got := string(a.maskJSON([]byte(raw))); got != want {
		t.Fatalf("maskJSON:\n got %s\nwant %s", got, want)
	}
	if got := string(a.maskJSON([]byte("not json"))); got != "not json" {
		t.Fatalf("not JSON: %q", got)
	}
}

// TestMaskedAsSDK: the CLI's masking is the SDK's, for payout and
// payment numbers alike.
func TestMaskedAsSDK(t *testing.T) {
	for _, n := range []string{testCard, testPhone, "2200 1234 5678 9010", "12345", "+7 (900) 123-45-67"} {
		want := paykit.Requisites{Value: n}.LogValue()
		var sdk string
		for _, a := range want.Group() {
			if a.Key == "value" {
				sdk = a.Value.String()
			}
		}
		if got := masked(n); got != sdk || got == n {
			t.Errorf("masked(%q) = %q, the SDK masks it as %q", n, got, sdk)
		}
	}
}
