package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPICommand: paykit api makes a signed call through Client.Do and
// prints the answer as JSON, numbers masked; a method other than GET is
// confirmed like a money move (--yes off a terminal, the question on
// one); bad input is refused before anything is sent.
func TestAPICommand(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "api", "get", "/v1/balance")
	if r.code != 0 || r.stdout != `{"balance":1000.00,"balance_frozen":0.00,"currency":"USDT"}`+"\n" {
		t.Fatalf("api GET: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	data := `{"ext_id":"api-1","amount":12.50,"method":"card","requisites":"` + testCard + `","holder_name":"I P"}`
	before := len(e.sb.Requests())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"api", "POST", "/v1/payouts", "--data", data}, "pass --yes"},
		{[]string{"api", "POST", "/v1/payouts", "--data", "{not json", "--yes"}, "--data is not JSON"},
		{[]string{"api", "GET", "/v2/balance"}, "invalid path"},
		{[]string{"api", "GET", "/v1/balance", "-o", "csv"}, "prints the answer as JSON"},
		{[]string{"api", "POST", "/v1/payouts", "--data", "@" + filepath.Join(t.TempDir(), "none.json"), "--yes"}, "--data: open"},
	} {
		if r := e.run("", c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("paykit %v: exit %d, %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if n := len(e.sb.Requests()) - before; n != 0 {
		t.Fatalf("%d requests sent for refused api calls", n)
	}
	file := filepath.Join(t.TempDir(), "payout.json")
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "api", "POST", "/v1/payouts", "--data", "@"+file, "--yes")
	var p map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || p["ext_id"] != "api-1" || p["requisites"] != "************1111" ||
		strings.Contains(r.stdout, testCard) || !strings.Contains(r.stdout, `"amount":12.50`) {
		t.Fatalf("api POST: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if got, err := e.sdk.GetPayoutByExtID(context.Background(), "api-1"); err != nil || got.Amount.String() != "12.5" {
		t.Fatalf("the payout api created: %v %v", got, err)
	}
	r = e.run("", "api", "POST", "/v1/payouts", "--data", data, "--yes")
	if r.code != 1 || !strings.HasSuffix(r.stderr, "It exists already; show it with:\n  paykit payouts get --ext-id api-1\n") {
		t.Fatalf("api POST of a duplicate ext_id: exit %d, %q", r.code, r.stderr)
	}
	// The settling read is named from the body sent, wherever it was read.
	for _, c := range []struct{ stdin, data string }{{"", "@" + file}, {data, "-"}} {
		r = e.run(c.stdin, "api", "POST", "/v1/payouts", "--data", c.data, "--yes")
		if r.code != 1 || !strings.HasSuffix(r.stderr, "It exists already; show it with:\n  paykit payouts get --ext-id api-1\n") {
			t.Fatalf("api POST --data %s of a duplicate ext_id: exit %d, %q", c.data, r.code, r.stderr)
		}
	}
	host := strings.TrimPrefix(e.srv.URL, "http://")
	r = e.inProcess("n\n", "api", "POST", "/v1/transfers", "--data", `{"from_terminal_id":"a","to_terminal_id":"b","amount":1}`)
	if r.code != 2 || !strings.Contains(r.stderr, "POST /v1/transfers: Transfer 1.00 USDT from a to b on "+host+" (credentials from the environment)? [y/N] ") ||
		e.sb.RequestCount("POST", "/v1/transfers") != 0 {
		t.Fatalf("api POST on a terminal, answer n: exit %d, %q", r.code, r.stderr)
	}
	r = e.run("", "api", "GET", "/v1/payouts", "--jq", ".payouts[0].requisites")
	if r.code != 0 || r.stdout != "************1111\n" {
		t.Fatalf("api with --jq: exit %d, %q", r.code, r.stdout)
	}
}
