package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox"
)

var (
	sandboxBinOnce sync.Once
	sandboxBin     string
	sandboxBinErr  error
)

// sandboxBinary builds cmd/paykit-sandbox once per test run, beside the
// paykit binary.
func sandboxBinary(t *testing.T) string {
	t.Helper()
	sandboxBinOnce.Do(func() {
		sandboxBin = filepath.Join(filepath.Dir(binary), "paykit-sandbox")
		out, err := exec.Command("go", "build", "-o", sandboxBin, "github.com/paykit-dev/paykit-go/cmd/paykit-sandbox").CombinedOutput()
		if err != nil {
			sandboxBinErr = err
			t.Logf("%s", out)
		}
	})
	if sandboxBinErr != nil {
		t.Fatalf("building paykit-sandbox: %v", sandboxBinErr)
	}
	return sandboxBin
}

// TestProofListenTrigger is issue 38's proof: the sandbox binary, a local
// receiver, `paykit listen --forward-to` it, `paykit trigger
// payment.completed` in another process; the receiver gets the payment's
// notifications with the session's token. Then the same with the sandbox
// in remote mode (-allow-remote with a control token): listen needs no
// control token, trigger does, and without it is refused (exit 4) before
// anything is created.
func TestProofListenTrigger(t *testing.T) {
	bin := sandboxBinary(t)
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	control := hex.EncodeToString(b)
	for _, mode := range []struct {
		name  string
		flags []string
	}{
		{"local", nil},
		{"remote", []string{"-allow-remote", "-control-token", control}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			e := &testEnv{t: t}
			sb := e.backgroundOf(bin, nil, append([]string{"-addr", "127.0.0.1:0"}, mode.flags...)...)
			base := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(sb.line(t, sb.out, `listening on http://`))[1]
			vars := map[string]string{"PAYKIT_BASE_URL": base, "PAYKIT_API_KEY": sandbox.DefaultAPIKey, "PAYKIT_SECRET": sandbox.DefaultSecret}
			recv := newReceiver(t)

			l := e.background(vars, "listen", "--forward-to", recv.url())
			tok := sessionToken(t, l)

			if mode.name == "remote" {
				r := e.runEnv(vars, "", "trigger", "payment.completed")
				if r.code != exitCredentials || !strings.Contains(r.stderr, controlTokenEnv) || strings.Contains(r.stderr, control) {
					t.Fatalf("trigger without the control token: exit %d, %q", r.code, r.stderr)
				}
				recv.none(t)
				vars[controlTokenEnv] = control
			}
			r := e.runEnv(vars, "", "trigger", "payment.completed", "-o", "json")
			var out triggerOut
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Status != "COMPLETED" {
				t.Fatalf("trigger: exit %d, %q %q", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"PROCESSING", "COMPLETED"} {
				g := recv.next(t)
				var body struct{ ID, Status string }
				if err := json.Unmarshal(g.body, &body); err != nil || body.ID != out.ID || body.Status != want {
					t.Errorf("the receiver got payment %s %s, want %s %s", body.ID, body.Status, out.ID, want)
				}
				sameToken(t, want, g.header, tok)
				if line := l.line(t, l.out, out.ID+"  "+want); !strings.Contains(line, "->  200  ") {
					t.Errorf("listen printed %q", line)
				}
			}
			if code := l.stop(t); code != exitInterrupted {
				t.Errorf("listen: exit %d on Ctrl-C", code)
			}
			if strings.Contains(l.output(), sandbox.DefaultSecret) || strings.Contains(l.output(), control) {
				t.Error("a secret in listen's output")
			}
			sb.stop(t)
		})
	}
}
