package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestNetworkFailure: no service at the base URL is exit 1, with the
// reason, and no secret.
func TestNetworkFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	e := &testEnv{t: t}
	r := e.runEnv(map[string]string{"PAYKIT_BASE_URL": base, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "balance")
	if r.code != 1 || !strings.Contains(r.stderr, "connection refused") || strings.Contains(r.stderr+r.stdout, testSecret) || strings.Contains(r.stderr+r.stdout, testKey) {
		t.Fatalf("no service: exit %d, %q", r.code, r.stderr)
	}
	// A base URL the SDK refuses is a credentials error (exit 4) naming
	// where the values came from, and not the URL's password.
	r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": "http://user:" + testSecret + "@127.0.0.1:1", "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "balance")
	if r.code != 4 || r.stderr != "paykit: credentials (from the environment): base URL must not carry credentials\n" {
		t.Fatalf("base URL with a password: exit %d, %q", r.code, r.stderr)
	}
}

// TestCrashMessage: a panic inside a command is exit 70 with a trace but
// not the panic's value, which could hold a request or a config line.
func TestCrashMessage(t *testing.T) {
	var errb bytes.Buffer
	code := run(context.Background(), []string{"--version"}, &env{
		stdin: strings.NewReader(""), stdout: panicWriter{}, stderr: &errb, getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false },
	})
	if code != 70 || !strings.Contains(errb.String(), "internal error") || !strings.Contains(errb.String(), "goroutine") || strings.Contains(errb.String(), testSecret) {
		t.Fatalf("crash: exit %d, stderr %q", code, errb.String())
	}
}

// panicWriter panics with a secret in its value.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("boom: secret=" + testSecret) }
