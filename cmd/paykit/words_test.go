package main

import (
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"

	paykit "github.com/paykit-dev/paykit-go"
)

// TestPlainWords: errors reach the operator without SDK function names,
// Go package names or context jargon; the facts stay.
func TestPlainWords(t *testing.T) {
	for in, want := range map[string]string{
		`paykit: GetPayoutByExtID: paykit: PAY_001 (HTTP 404): payout not found`:                                     `PAY_001 (HTTP 404): payout not found`,
		`paykit: GetBalance: Get "http://127.0.0.1:9/v1/balance": dial tcp 127.0.0.1:9: connect: connection refused`: `cannot connect to http://127.0.0.1:9: connection refused`,
		`paykit: CreateTransfer: Post "https://api.example.com/v1/transfers": EOF`:                                   `request to https://api.example.com failed: EOF`,
		`invalid argument "abc" for "--limit" flag: strconv.ParseInt: parsing "abc": invalid syntax`:                 `invalid argument "abc" for "--limit" flag: not a whole number`,
		`invalid argument "5" for "--timeout" flag: time: missing unit in duration "5"`:                              `invalid argument "5" for "--timeout" flag: not a duration such as 30s, 5m or 1h`,
		`ListTerminals: context canceled`:       `interrupted`,
		`GetPayment: context deadline exceeded`: `--timeout ran out`,
		`PAY_003 (HTTP 409): ext_id exists; read it back with GetPayoutByExtID("p-1") before creating it again`: `PAY_003 (HTTP 409): ext_id exists`,
	} {
		if got := plain(in); got != want {
			t.Errorf("plain(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestOperatorWordsEndToEnd: the binary's own errors, for a bad flag value
// and an unreachable service, say what is wrong in operator words.
func TestOperatorWordsEndToEnd(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"payouts", "list", "--limit", "abc"}, 2, "not a whole number"},
		{[]string{"balance", "--timeout", "5"}, 2, "not a duration"},
		{[]string{"payouts", "get", "--ext-id", "none"}, 1, "PAY_001 (HTTP 404)"},
	} {
		r := e.run("", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "strconv") || strings.Contains(r.stderr, "time:") ||
			strings.Contains(r.stderr, "ByExtID") {
			t.Errorf("paykit %v: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close()
	r := e.runEnv(map[string]string{"PAYKIT_BASE_URL": base, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "payouts", "get", "--ext-id", "x")
	if r.code != 1 || r.stderr != "paykit: cannot connect to "+base+": connection refused\n" {
		t.Fatalf("no service: exit %d, %q", r.code, r.stderr)
	}
}

// TestSDKNamesCovered: every method of the SDK's Client that can fail is
// in sdkNames, so a new one's name does not reach operators.
func TestSDKNamesCovered(t *testing.T) {
	ct := reflect.TypeOf(&paykit.Client{})
	errType := reflect.TypeOf((*error)(nil)).Elem()
	for i := range ct.NumMethod() {
		m := ct.Method(i)
		fails := false
		for j := range m.Type.NumOut() {
			fails = fails || m.Type.Out(j) == errType
		}
		if fails && !slices.Contains(sdkNames, m.Name) && m.Name != "AllPayouts" {
			t.Errorf("the SDK's Client.%s is not in sdkNames", m.Name)
		}
	}
}
