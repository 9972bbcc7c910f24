package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCommands: config init writes a commented file readable by its
// owner alone; config set fills a profile key by key (a secret from stdin)
// keeping comments, the file then works for a command; get and list print
// api_key and secret as fingerprints, never the values.
func TestConfigCommands(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "sub", "config")
	vars := map[string]string{"PAYKIT_CONFIG": path}
	r := e.runEnv(vars, "", "--profile", "ops", "config", "init")
	if r.code != 0 || r.stdout != "wrote "+path+" with profile [ops]\n" {
		t.Fatalf("config init: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config init: %v, mode %v", err, st.Mode().Perm())
	}
	if r := e.runEnv(vars, "", "config", "init"); r.code != 2 || !strings.Contains(r.stderr, "exists already") {
		t.Fatalf("config init over a file: exit %d, %q", r.code, r.stderr)
	}
	for _, c := range []struct{ stdin, key, value string }{
		{"", "base_url", e.srv.URL},
		{testKey + "\n", "api_key", "-"},
		{testSecret + "\n", "secret", "-"},
	} {
		r := e.runEnv(vars, c.stdin, "--profile", "ops", "config", "set", c.key, c.value)
		if r.code != 0 || strings.Contains(r.stdout+r.stderr, testSecret) || strings.Contains(r.stdout+r.stderr, testKey) {
			t.Fatalf("config set %s: exit %d, %q %q", c.key, r.code, r.stdout, r.stderr)
		}
	}
	// A second profile, added at the end; the first's comments stay.
	if r := e.runEnv(vars, "", "--profile", "other", "config", "set", "base_url", "https://other.example.com"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, "base_url = "+e.srv.URL+"   # https://api.example.com\n") || !strings.Contains(text, "live     = false   # true:") ||
		!strings.HasSuffix(text, "[other]\nbase_url = https://other.example.com\n") {
		t.Fatalf("the file after set:\n%s", text)
	}
	if r := e.runEnv(vars, "", "--profile", "ops", "balance", "-o", "csv"); r.code != 0 || r.stdout != "balance,balance_frozen,currency\r\n1000.00,0.00,USDT\r\n" {
		t.Fatalf("the written profile: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	fp := fingerprint(testSecret)
	if r := e.runEnv(vars, "", "--profile", "ops", "config", "get", "secret"); r.code != 0 || r.stdout != fp+"\n" {
		t.Fatalf("config get secret: exit %d, %q", r.code, r.stdout)
	}
	if r := e.runEnv(vars, "", "--profile", "ops", "config", "get", "base_url"); r.code != 0 || r.stdout != e.srv.URL+"\n" {
		t.Fatalf("config get base_url: exit %d, %q", r.code, r.stdout)
	}
	r = e.runEnv(vars, "", "config", "list", "-o", "csv")
	want := "profile,base_url,api_key,secret,live\r\nops," + e.srv.URL + "," + fingerprint(testKey) + "," + fp + ",false\r\nother,https://other.example.com,,,\r\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("config list:\n got %q\nwant %q", r.stdout, want)
	}
	for _, c := range [][]string{
		{"config", "set", "nope", "x"},
		{"config", "set", "live", "yes"},
		{"config", "set", "base_url", "ftp://x"},
		{"config", "set", "secret", "abc #def"},
	} {
		if r := e.runEnv(vars, "", c...); r.code != 2 {
			t.Errorf("paykit %v: exit %d, %q; want 2", c, r.code, r.stderr)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("after set: mode %v, %v", st.Mode().Perm(), err)
	}
}
