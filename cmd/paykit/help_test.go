package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// TestHelpEveryCommand: every command, groups and cobra's own help and
// completion commands included, answers --help from the built binary with
// an example and the exit codes.
func TestHelpEveryCommand(t *testing.T) {
	root := newRoot(&app{env: &env{getenv: os.Getenv, isTerminal: isTerminal}})
	e := &testEnv{t: t}
	var paths []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		paths = append(paths, c.CommandPath())
		if c.Example == "" {
			t.Errorf("%s has no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, p := range paths {
		args := append(strings.Fields(p)[1:], "--help")
		if p == "paykit sandbox" {
			// sandbox passes its flags through to paykit-sandbox's own
			// parser; cobra's help for it is "paykit help sandbox".
			args = []string{"help", "sandbox"}
		}
		r := e.runEnv(nil, "", args...)
		codes := strings.Contains(r.stdout, "Exit codes:\n  0  success") && strings.Contains(r.stdout, "3  unknown outcome") &&
			strings.Contains(r.stdout, "4  credentials refused")
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:\n  ") || !codes {
			t.Errorf("paykit %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// The 16 API commands of issue 22 (get --ext-id is a flag of get),
	// doctor, wait, sandbox; the groups payments, disputes, payouts,
	// transfers, withdrawals; the root, help, the config topic, completion
	// and its four shells; auth and auth status; api; config's init, set,
	// get and list; the sandbox's eight controls, webhooks' list and resend;
	// issue 38's listen, trigger, webhooks and webhooks send, sandbox logs.
	if len(paths) != 19+5+1+1+1+5+2+1+4+10+5 {
		t.Errorf("%d commands walked: %v", len(paths), paths)
	}
}

// TestCompletionAndVersion: completion scripts for bash, zsh and fish
// that complete paykit's own commands and flag values, and a --version
// naming the SDK's version.
func TestCompletionAndVersion(t *testing.T) {
	e := &testEnv{t: t}
	for sh, mark := range map[string]string{"bash": "__start_paykit", "zsh": "#compdef paykit", "fish": "complete -c paykit"} {
		r := e.runEnv(nil, "", "completion", sh)
		if r.code != 0 || !strings.Contains(r.stdout, mark) || len(r.stdout) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes, no %q", sh, r.code, len(r.stdout), mark)
		}
	}
	// What the scripts ask the binary for.
	r := e.runEnv(nil, "", "__complete", "payouts", "list", "--status", "")
	if !strings.Contains(r.stdout, "completed\n") {
		t.Errorf("no completion of --status values: %q", r.stdout)
	}
	r = e.runEnv(nil, "", "__complete", "pay")
	if !strings.Contains(r.stdout, "payments\t") || !strings.Contains(r.stdout, "payouts\t") {
		t.Errorf("no completion of commands: %q", r.stdout)
	}
	r = e.runEnv(nil, "", "__complete", "wait", "")
	if !strings.Contains(r.stdout, "payment\n") || !strings.Contains(r.stdout, "payout\n") {
		t.Errorf("no completion of wait's argument: %q", r.stdout)
	}
	// A build without a tag says it is a development build of the SDK's
	// version (internal/buildversion), whatever the go command recorded.
	r = e.runEnv(nil, "", "--version")
	want := regexp.MustCompile(`^paykit ` + regexp.QuoteMeta(paykit.Version) + ` \(development build [^;]+; paykit-go SDK ` + regexp.QuoteMeta(paykit.Version) + `\)\n$`)
	if r.code != 0 || !want.MatchString(r.stdout) {
		t.Errorf("--version: %q, want %s", r.stdout, want)
	}
}
