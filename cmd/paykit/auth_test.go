package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthStatus: auth status names the profile and how it was chosen,
// the host, where each credential came from and the API key's
// fingerprint, sends nothing and shows neither the key nor the secret.
func TestAuthStatus(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte("[ops]  # the on-call profile\nbase_url = "+e.srv.URL+"   # staging\napi_key = "+testKey+
		" ; rotated monthly\nsecret = "+testSecret+"\nlive = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(testKey))
	fp := "sha256:" + hex.EncodeToString(sum[:])[:12]
	host := strings.TrimPrefix(e.srv.URL, "http://")
	var st authStatus
	decode := func(r result) {
		t.Helper()
		st = authStatus{}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
			t.Fatalf("auth status: exit %d, %q %q", r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, testKey) || strings.Contains(r.stdout+r.stderr, testSecret) {
			t.Fatal("auth status printed the key or the secret")
		}
	}
	decode(e.runEnv(map[string]string{"PAYKIT_CONFIG": path, "PAYKIT_SECRET": "other"}, "", "--profile", "ops", "auth", "status", "-o", "json"))
	fileFrom := "config file " + path + " [ops]"
	if st != (authStatus{Profile: "ops", ProfileFrom: "--profile", Host: host, BaseURL: e.srv.URL, BaseURLFrom: fileFrom, APIKeyFrom: fileFrom,
		SecretFrom: fileFrom, KeyFingerprint: fp, Live: true}) {
		t.Fatalf("--profile ops: %+v", st)
	}
	decode(e.runEnv(map[string]string{"PAYKIT_CONFIG": path, "PAYKIT_PROFILE": "ops", "PAYKIT_SECRET": "other"}, "", "auth", "status", "-o", "json"))
	if st.ProfileFrom != "PAYKIT_PROFILE" || st.SecretFrom != "environment (PAYKIT_SECRET)" || st.APIKeyFrom != fileFrom {
		t.Fatalf("PAYKIT_PROFILE with PAYKIT_SECRET: %+v", st)
	}
	decode(e.run("", "auth", "status", "-o", "json"))
	if st.Profile != "" || st.BaseURLFrom != "environment (PAYKIT_BASE_URL)" || st.KeyFingerprint != fp || st.Live {
		t.Fatalf("from the environment: %+v", st)
	}
	r := e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "--profile", "ops", "auth", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "host:             "+host+"\n") || !strings.Contains(r.stdout, "key_fingerprint:  "+fp+"\n") {
		t.Fatalf("table: %q", r.stdout)
	}
	if n := len(e.sb.Requests()); n != 0 {
		t.Fatalf("auth status sent %d requests", n)
	}
}

// TestLiveProfileTypedConfirmation: on a profile marked live, a money
// move is confirmed only by typing the amount as shown or the profile's
// name; y is refused and nothing is sent.
func TestLiveProfileTypedConfirmation(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte("[prod]\nbase_url = "+e.srv.URL+"\napi_key = "+testKey+"\nsecret = "+testSecret+"\nlive = true ; typed confirmations\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PAYKIT_CONFIG": path}
	payout := func(ext string) []string {
		return []string{"--profile", "prod", "payouts", "create", "--ext-id", ext, "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "I P"}
	}
	for _, answer := range []string{"y", "yes", "10", ""} {
		r := e.inProcessEnv(vars, answer+"\n", payout("live-no")...)
		if r.code != 2 || !strings.Contains(r.stderr, "This is a LIVE profile: type the amount (10.00) or the profile's name to confirm: ") {
			t.Fatalf("answer %q on a live profile: exit %d, %q", answer, r.code, r.stderr)
		}
	}
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 0 {
		t.Fatalf("%d payouts sent without a typed confirmation", n)
	}
	for i, answer := range []string{"10.00", "prod"} {
		r := e.inProcessEnv(vars, answer+"\n", payout("live-"+answer)...)
		if r.code != 0 || e.sb.RequestCount("POST", "/v1/payouts") != i+1 {
			t.Fatalf("answer %q: exit %d, %q", answer, r.code, r.stderr)
		}
	}
}
