package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPIQuestion: paykit api's question names what the body moves, as
// the typed commands' do, whichever way the body came (text, a file,
// stdin, fields), and a live profile must type the amount.
func TestAPIQuestion(t *testing.T) {
	e := newEnv(t)
	host := strings.TrimPrefix(e.srv.URL, "http://")
	data := `{"ext_id":"q-1","amount":12.50,"method":"card","requisites":"` + testCard + `","holder_name":"I P"}`
	file := filepath.Join(t.TempDir(), "payout.json")
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "POST /v1/payouts: Pay out 12.50 RUB by card to ************1111 (ext_id q-1) on " + host + " (credentials from the environment)? [y/N] "
	for _, c := range []struct {
		name, stdin string
		args        []string
	}{
		{"--data text", "n\n", []string{"--data", data}},
		{"--data @file", "n\n", []string{"--data", "@" + file}},
		{"--input file", "n\n", []string{"--input", file}},
		// The body is stdin: the answer then reads as no.
		{"--data -", data, []string{"--data", "-"}},
		{"--input -", data, []string{"--input", "-"}},
		{"fields", "n\n", []string{"-f", "ext_id=q-1", "-F", "amount=12.50", "-f", "method=card", "-f", "requisites=" + testCard, "-f", "holder_name=I P"}},
	} {
		r := e.inProcess(c.stdin, append([]string{"api", "POST", "/v1/payouts"}, c.args...)...)
		if strings.Contains(r.stderr, testCard) {
			t.Fatalf("%s: the question shows the card number in full", c.name) // not printed
		}
		if r.code != 2 || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, r.code, r.stderr, want)
		}
	}
	for _, c := range []struct{ path, body, want string }{
		{"/v1/transfers", `{"from_terminal_id":"a","to_terminal_id":"b","amount":1.5}`, "POST /v1/transfers: Transfer 1.50 USDT from a to b on "},
		{"/v1/withdrawals", `{"terminal_id":"a","amount":5,"address":"TXYZ","subtract_fee_from_amount":true}`, "POST /v1/withdrawals: Withdraw 5.00 USDT (fee subtracted) from a to TXYZ on "},
		{"/v1/payments", `{"ext_id":"o-1","amount":1500}`, "POST /v1/payments: Create a payment of 1500.00 RUB (ext_id o-1) on "},
		{"/v1/payments/3f0c/dispute", `{"amount":300}`, "POST /v1/payments/3f0c/dispute: amount 300.00 on "},
	} {
		if r := e.inProcess("n\n", "api", "POST", c.path, "--data", c.body); r.code != 2 || !strings.HasPrefix(r.stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want %q", c.path, r.code, r.stderr, c.want)
		}
	}
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 0 {
		t.Fatalf("%d payouts sent unconfirmed", n)
	}

	// A live profile: the amount as shown must be typed.
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("[prod]\nbase_url = "+e.srv.URL+"\napi_key = "+testKey+"\nsecret = "+testSecret+"\nlive = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	live := map[string]string{"PAYKIT_CONFIG": cfg}
	r := e.inProcessEnv(live, "y\n", "--profile", "prod", "api", "POST", "/v1/payouts", "--data", "@"+file)
	wantLive := "POST /v1/payouts: Pay out 12.50 RUB by card to ************1111 (ext_id q-1) on " + host + ` (profile "prod")?` +
		"\nThis is a LIVE profile: type the amount (12.50) or the profile's name to confirm: "
	if r.code != 2 || !strings.HasPrefix(r.stderr, wantLive) || e.sb.RequestCount("POST", "/v1/payouts") != 0 {
		t.Fatalf("live profile, answer y: exit %d, %q", r.code, r.stderr)
	}
	r = e.inProcessEnv(live, "12.50\n", "--profile", "prod", "api", "POST", "/v1/payouts", "--data", "@"+file)
	if r.code != 0 || e.sb.RequestCount("POST", "/v1/payouts") != 1 {
		t.Fatalf("live profile, amount typed: exit %d, %q", r.code, r.stderr)
	}
}

// TestAPIFields: -f and -F build the JSON body exactly (the bytes on the
// wire), -F typed by the spec: an amount keeps its digits and is refused
// finer than its currency, a card number stays a string; on a GET they
// are the query.
func TestAPIFields(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "api", "POST", "/v1/payouts", "-f", "ext_id=f-1", "-F", "amount=1500.50", "-f", "method=card",
		"-F", "requisites="+testCard, "-f", "holder_name=I P", "--yes")
	posted := e.posted("/v1/payouts")
	want := `{"ext_id":"f-1","method":"card","holder_name":"I P","amount":1500.50,"requisites":"` + testCard + `"}`
	if r.code != 0 || len(posted) != 1 || string(posted[0]) != want {
		t.Fatalf("api -f/-F: exit %d, %q; sent %q, want %q", r.code, r.stderr, posted, want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-F", "amount=100.005"}, "-F amount: 100.005 RUB is finer than RUB moves"},
		{[]string{"-F", "amount=1e3"}, "-F amount: want a decimal amount such as 1500.00"},
		{[]string{"-f", "novalue"}, `-f "novalue": want key=value`},
		{[]string{"-f", "a=1", "-F", "a=2"}, `"a" is given twice`},
		{[]string{"-f", "a=1", "--data", "{}"}, "give the body one way"},
		{[]string{"--input", filepath.Join(t.TempDir(), "none.json")}, "--input: open"},
	} {
		before := len(e.posted("/v1/payouts"))
		r := e.run("", append([]string{"api", "POST", "/v1/payouts", "--yes"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || len(e.posted("/v1/payouts")) != before {
			t.Errorf("%v: exit %d, %q; want 2, %q and nothing sent", c.args, r.code, r.stderr, c.want)
		}
	}
	// USDT's scale, and a boolean the spec names.
	if r := e.run("", "api", "POST", "/v1/withdrawals", "--yes", "-F", "amount=1.1234567"); r.code != 2 || !strings.Contains(r.stderr, "finer than USDT") {
		t.Errorf("-F amount=1.1234567 on a withdrawal: exit %d, %q", r.code, r.stderr)
	}
	if r := e.run("", "api", "POST", "/v1/withdrawals", "--yes", "-F", "subtract_fee_from_amount=yes"); r.code != 2 || !strings.Contains(r.stderr, "want true or false") {
		t.Errorf("-F subtract_fee_from_amount=yes: exit %d, %q", r.code, r.stderr)
	}
	// Keys the spec does not type follow gh; numbers keep their digits.
	valueFile := filepath.Join(t.TempDir(), "v.txt")
	if err := os.WriteFile(valueFile, []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := fieldsBody("/v1/other", []string{"s=12"}, []string{"n=12.30", "big=123456789012345678.000000000000000001", "t=true", "z=null", "w=word", "f=@" + valueFile}, nil)
	if err != nil || string(b) != `{"s":"12","n":12.30,"big":123456789012345678.000000000000000001,"t":true,"z":null,"w":"word","f":"from a file"}` {
		t.Errorf("fieldsBody on an untyped path: %s, %v", b, err)
	}
	b, err = fieldsBody("/v1/withdrawals", nil, []string{"terminal_id=123", "amount=0.000001", "subtract_fee_from_amount=true", "address=T1"}, nil)
	if err != nil || string(b) != `{"terminal_id":"123","amount":0.000001,"subtract_fee_from_amount":true,"address":"T1"}` {
		t.Errorf("fieldsBody on withdrawals: %s, %v", b, err)
	}
	// On a GET the fields are the query.
	e.createPayouts("10", "g-1", "g-2")
	r = e.run("", "api", "GET", "/v1/payouts", "-f", "status=pending", "-F", "limit=1", "--jq", ".limit, (.payouts | length)")
	if r.code != 0 || r.stdout != "1\n1\n" {
		t.Errorf("api GET with fields: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "api", "GET", "/v1/payouts", "--data", "{}"); r.code != 2 || !strings.Contains(r.stderr, "a GET has no body") {
		t.Errorf("api GET --data: exit %d, %q", r.code, r.stderr)
	}
}

// TestAPIPaginate: --paginate reads every page of the payout list: one JSON
// array of the pages, or with --jq each page's results, one a line; it is
// for GET /v1/payouts only.
func TestAPIPaginate(t *testing.T) {
	e := newEnv(t)
	e.createPayouts("10", "pg-1", "pg-2", "pg-3", "pg-4", "pg-5")
	before := e.sb.RequestCount("GET", "/v1/payouts")
	r := e.run("", "api", "GET", "/v1/payouts?limit=2", "--paginate")
	var pages []struct {
		Payouts []struct {
			ExtID      string `json:"ext_id"`
			Requisites string `json:"requisites"`
		} `json:"payouts"`
		Total int `json:"total"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &pages) != nil || len(pages) != 3 {
		t.Fatalf("--paginate: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	var exts []string
	for _, p := range pages {
		for _, x := range p.Payouts {
			exts = append(exts, x.ExtID)
			if x.Requisites != "************1111" {
				t.Errorf("--paginate: requisites %q not masked", x.Requisites)
			}
		}
	}
	if strings.Join(exts, ",") != "pg-1,pg-2,pg-3,pg-4,pg-5" || e.sb.RequestCount("GET", "/v1/payouts")-before != 3 {
		t.Errorf("--paginate: payouts %v in %d requests", exts, e.sb.RequestCount("GET", "/v1/payouts")-before)
	}
	r = e.run("", "api", "GET", "/v1/payouts?limit=2&offset=1", "--paginate", "--jq", ".payouts[].ext_id")
	if r.code != 0 || r.stdout != "pg-2\npg-3\npg-4\npg-5\n" {
		t.Errorf("--paginate --jq from offset 1: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"POST", "/v1/payouts"}, {"GET", "/v1/balance"}} {
		if r := e.run("", append([]string{"api"}, append(args, "--paginate", "--yes")...)...); r.code != 2 || !strings.Contains(r.stderr, "--paginate reads the pages of GET /v1/payouts") {
			t.Errorf("api %v --paginate: exit %d, %q", args, r.code, r.stderr)
		}
	}
}

// TestAPIInclude: -i prints the status line and the headers, sorted, a
// header that could carry a secret masked, then the answer.
func TestAPIInclude(t *testing.T) {
	e := newEnv(t)
	const secret = "sig_LEAKCHECK_deadbeef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Signature", secret)
		w.Header().Set("Set-Cookie", "session="+secret)
		w.Header().Set("X-Request-Id", "req-1")
		e.sb.ServeHTTP(w, r)
	}))
	defer srv.Close()
	vars := map[string]string{"PAYKIT_BASE_URL": srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}
	r := e.runEnv(vars, "", "api", "GET", "/v1/balance", "-i")
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Fatal("-i printed a secret header's value") // not printed
	}
	head, body, ok := strings.Cut(r.stdout, "\n\n")
	if r.code != 0 || !ok || !strings.HasPrefix(head, "HTTP/1.1 200 OK\n") || !strings.Contains(head, "\nContent-Type: application/json") ||
		!strings.Contains(head, "\nSet-Cookie: (masked)") || !strings.Contains(head, "\nX-Request-Id: req-1") || !strings.Contains(head, "\nX-Signature: (masked)") ||
		body != `{"balance":1000.00,"balance_frozen":0.00,"currency":"USDT"}`+"\n" {
		t.Fatalf("-i: exit %d, stdout %q", r.code, r.stdout)
	}
	// A refusal's head is shown too; its error goes to stderr.
	r = e.runEnv(vars, "", "api", "GET", "/v1/payments/by-ext-id/none", "-i")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "HTTP/1.1 404 Not Found\n") || !strings.Contains(r.stderr, "PAY_006") {
		t.Fatalf("-i on a 404: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}
