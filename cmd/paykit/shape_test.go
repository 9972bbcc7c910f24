package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOutputShaping: --json FIELDS keeps those fields (of each item of a
// list) with the service's number spellings, --jq filters with a jq
// expression (strings raw), -q prints ids alone; all after masking. A bad
// expression or a field the answer lacks is a usage error.
func TestOutputShaping(t *testing.T) {
	e := newEnv(t)
	e.createPayouts("10.50", "s-1", "s-2", "s-3")
	r := e.run("", "payouts", "get", "--ext-id", "s-1", "--json", "ext_id,amount,requisites")
	if r.code != 0 || r.stdout != `{"amount":10.50,"ext_id":"s-1","requisites":"************1111"}`+"\n" {
		t.Fatalf("--json on a record: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "payouts", "list", "--json", "ext_id,status")
	var got []map[string]string
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || len(got) != 3 || got[2]["ext_id"] != "s-3" || got[2]["status"] != "pending" || len(got[0]) != 2 {
		t.Fatalf("--json on a list: exit %d, %q", r.code, r.stdout)
	}
	r = e.run("", "payouts", "list", "--jq", ".payouts[] | select(.ext_id != \"s-2\") | .ext_id + \" \" + .requisites")
	if r.code != 0 || r.stdout != "s-1 ************1111\ns-3 ************1111\n" {
		t.Fatalf("--jq: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "payouts", "list", "--json", "amount", "--jq", "map(.amount)")
	if r.code != 0 || r.stdout != "[10.50,10.50,10.50]\n" {
		t.Fatalf("--json with --jq: exit %d, %q", r.code, r.stdout)
	}
	r = e.run("", "payouts", "list", "-q")
	ids := strings.Fields(r.stdout)
	if r.code != 0 || len(ids) != 3 || strings.Count(r.stdout, "\n") != 3 || !uuidRE.MatchString(ids[0]) {
		t.Fatalf("-q list: exit %d, %q", r.code, r.stdout)
	}
	if r := e.run("", "payouts", "get", ids[1], "-q"); r.code != 0 || r.stdout != ids[1]+"\n" {
		t.Fatalf("-q get: exit %d, %q", r.code, r.stdout)
	}
	if r := e.run("", "banks", "-q"); r.code != 0 || !strings.HasPrefix(r.stdout, "sber\n") {
		t.Fatalf("-q banks: exit %d, %q", r.code, r.stdout)
	}
	before := len(e.sb.Requests())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"payouts", "list", "--jq", ".["}, "--jq: "},
		{[]string{"payouts", "list", "--json", "id", "-o", "csv"}, "do not go with -o csv"},
		{[]string{"payouts", "list", "--json", "id", "-q"}, "does not go with --json"},
	} {
		if r := e.run("", c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("paykit %v: exit %d, %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if n := len(e.sb.Requests()) - before; n != 0 {
		t.Fatalf("%d requests sent for refused shaping flags", n)
	}
	if r := e.run("", "payouts", "list", "--json", "id,nope"); r.code != 2 || !strings.Contains(r.stderr, `no field "nope" in the answer; its fields: amount, bank, created_at`) {
		t.Fatalf("--json of an unknown field: exit %d, %q", r.code, r.stderr)
	}
}

// TestTruncatedPage: one page of a longer list says so on stderr, with
// the way to the rest; stdout holds the page alone.
func TestTruncatedPage(t *testing.T) {
	e := newEnv(t)
	e.createPayouts("10", "t-1", "t-2", "t-3")
	r := e.run("", "payouts", "list", "--limit", "2", "-o", "csv")
	if r.code != 0 || r.stderr != "paykit: 2 of 3 payouts shown; use --all for every one, or --offset 2 for the next page\n" || len(readCSV(t, "page", r.stdout)) != 2 {
		t.Fatalf("a truncated page: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("", "payouts", "list", "--limit", "2", "--offset", "1"); r.stderr != "" {
		t.Fatalf("the last page: stderr %q", r.stderr)
	}
	if got := thousands(2345) + " " + thousands(100) + " " + thousands(1234567); got != "2,345 100 1,234,567" {
		t.Fatalf("thousands: %s", got)
	}
}
