package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startConfigSet runs paykit --profile ops config set KEY - with the
// config file at path, on the terminal p.
func startConfigSet(p *tty, path, key string) (*bytes.Buffer, chan error) {
	_, out, done := p.startSession([]string{"PAYKIT_CONFIG=" + path}, "--profile", "ops", "config", "set", key, "-")
	return out, done
}

// waitEchoOff polls the terminal's settings until its echo is off: the
// prompt is written just before the read turns echo off, and a person
// types after both (what is typed ahead of a prompt is echoed by the
// terminal before any program could stop it).
func (p *tty) waitEchoOff() {
	p.t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		tio, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
		if err != nil {
			p.t.Fatal(err)
		}
		if tio.Lflag&unix.ECHO == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			p.t.Fatalf("the terminal's echo was never turned off; it showed %q", p.shown())
		}
	}
}

// TestConfigSetSecretTerminal: config set secret - on a terminal prompts
// on stderr and reads the secret without echo: the terminal shows the
// prompt, then the line break paykit writes, and nothing of what was
// typed. The old command showed no prompt and the terminal echoed the
// secret as it was typed. Ctrl-C at the prompt exits 130 with the file
// unchanged and the terminal's echo back on. Piped, the value is read
// with no prompt at all.
func TestConfigSetSecretTerminal(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "config")
	const prompt = "secret for profile [ops] (not shown as you type): "

	p := openTTY(t)
	out, done := startConfigSet(p, path, "secret")
	p.waitFor(prompt)
	p.waitEchoOff()
	if _, err := p.master.Write([]byte(testSecret + "\n")); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(<-done); code != 0 || out.String() != "[ops] secret = "+fingerprint(testSecret)+"\n" {
		t.Fatalf("exit %d, stdout %q", code, redacted(out.String()))
	}
	// The line break paykit writes after the read comes after anything
	// the terminal would have echoed.
	p.waitUntil("a line break after the prompt", func(s string) bool {
		i := strings.Index(s, prompt)
		return i >= 0 && strings.Contains(s[i:], "\n")
	})
	if shown := p.shown(); strings.Contains(shown, testSecret) || strings.Contains(shown, testSecret[:8]) {
		t.Fatalf("the terminal echoed the secret: %q", redacted(shown))
	}
	if shown, want := p.shown(), prompt+"\r\n"; shown != want {
		t.Errorf("the terminal showed %q, want %q", redacted(shown), want)
	}
	_, profiles, err := readProfiles(path)
	if err != nil || profiles["ops"]["secret"] != testSecret {
		t.Fatalf("the secret typed is not what the file holds (%d characters): %v", len(profiles["ops"]["secret"]), err)
	}

	// Ctrl-C at the prompt.
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p = openTTY(t)
	out, done = startConfigSet(p, path, "api_key")
	p.waitFor("api_key for profile [ops] (not shown as you type): ")
	p.waitEchoOff()
	if _, err := p.master.Write([]byte("pk_half\x03")); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(<-done); code != 130 || out.Len() != 0 {
		t.Fatalf("Ctrl-C at the prompt: exit %d, stdout %q, terminal %q", code, out.String(), p.shown())
	}
	p.waitFor("interrupted; the config file was not changed")
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("Ctrl-C at the prompt changed the file: %v", err)
	}
	tio, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 {
		t.Fatal("after Ctrl-C at the prompt the terminal's echo is still off")
	}

	// Piped: no prompt, the first line.
	r := e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "pk_piped\n", "--profile", "ops", "config", "set", "api_key", "-")
	if r.code != 0 || r.stderr != "" || r.stdout != "[ops] api_key = "+fingerprint("pk_piped")+"\n" {
		t.Fatalf("piped: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Nothing read is refused, the file unchanged.
	before, _ = os.ReadFile(path)
	r = e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "--profile", "ops", "config", "set", "secret", "-")
	if after, _ := os.ReadFile(path); r.code != 2 || !strings.Contains(r.stderr, "nothing was read") || !bytes.Equal(after, before) {
		t.Fatalf("empty stdin: exit %d, stderr %q", r.code, r.stderr)
	}
}
