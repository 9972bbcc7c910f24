package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplicitProfileWinsOverEnvironment: --profile on the command line
// wins over exported PAYKIT_* variables, as aws-cli's --profile wins over
// AWS_ACCESS_KEY_ID: the payout goes to the profile's service and none
// reaches the environment's. PAYKIT_PROFILE, itself from the environment,
// still yields to the variables. The question on a terminal names the
// profile and its host.
func TestExplicitProfileWinsOverEnvironment(t *testing.T) {
	staging, other := newEnv(t), newEnv(t)
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte("[staging]\nbase_url = "+staging.srv.URL+"\napi_key = "+testKey+"\nsecret = "+testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PAYKIT_CONFIG": path, "PAYKIT_BASE_URL": other.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}
	payout := []string{"payouts", "create", "--ext-id", "p-env", "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "Ivan Petrov"}
	r := staging.runEnv(vars, "", append([]string{"--profile", "staging"}, append(payout, "--yes")...)...)
	if r.code != 0 {
		t.Fatalf("--profile staging: exit %d, %q", r.code, r.stderr)
	}
	if s, o := staging.sb.RequestCount("POST", "/v1/payouts"), other.sb.RequestCount("POST", "/v1/payouts"); s != 1 || o != 0 {
		t.Fatalf("--profile staging with PAYKIT_* exported: %d payouts on the profile's service, %d on the environment's; want 1 and 0", s, o)
	}
	// PAYKIT_PROFILE is the environment too: the variables win over it.
	vars["PAYKIT_PROFILE"] = "staging"
	r = staging.runEnv(vars, "", append(payout[:3:3], "p-env-2", "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "I P", "--yes")...)
	if r.code != 0 || other.sb.RequestCount("POST", "/v1/payouts") != 1 {
		t.Fatalf("PAYKIT_PROFILE with PAYKIT_* exported: exit %d, %d payouts on the environment's service; want 1", r.code, other.sb.RequestCount("POST", "/v1/payouts"))
	}
	delete(vars, "PAYKIT_PROFILE")
	// On a terminal the question says where the money goes.
	r = staging.inProcessEnv(vars, "n\n", append([]string{"--profile", "staging"}, payout...)...)
	want := "on " + strings.TrimPrefix(staging.srv.URL, "http://") + ` (profile "staging")? [y/N] `
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("the question: exit %d, stderr %q; want it to end %q", r.code, r.stderr, want)
	}
}

// TestConfigLineNotEchoed: a malformed config line is refused (exit 4)
// with its line number and none of its text, even when it parses as
// "key = value" (a base64 secret pasted alone ends in "=").
func TestConfigLineNotEchoed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	const secret = "c2tfbGl2ZV9zM2NyM3RfdmFsdWU="
	for _, body := range []string{"[default]\n" + secret + "\n", "[default]\n" + secret + "=\n", "[default]\nbase_url = x\n" + secret + " = y\n"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		e := &testEnv{t: t}
		r := e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "balance")
		if r.code != 4 || strings.Contains(r.stderr, "c2tfbGl2ZV9") || !strings.Contains(r.stderr, path+":") {
			t.Fatalf("malformed line %q: exit %d, stderr %q; want 4, the line number and none of its text", body, r.code, r.stderr)
		}
	}
}
