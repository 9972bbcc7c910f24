package sandboxcli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestWebhookFaultsFlag: -webhook-faults, PAYKIT_SANDBOX_WEBHOOK_FAULTS
// and webhook_faults set Config.WebhookFaults (the flag winning), the
// banner prints the faults with their seed, /sandbox/state shows them,
// and a bad value is a usage error that says which setting and why.
func TestWebhookFaultsFlag(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	env := map[string]string{"PAYKIT_SANDBOX_WEBHOOK_FAULTS": "duplicate=0.5"}
	go func() {
		err := runEnv(ctx, []string{"-addr", "127.0.0.1:0", "-webhook-faults", "duplicate=0.1,reorder=0.2,delay=2s,seed=42"}, envOf(env), pw, io.Discard)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	lines := bufio.NewScanner(pr)
	lines.Scan()
	base := strings.TrimPrefix(lines.Text(), "paykit sandbox listening on ")
	var banner []string
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "  health:") {
		banner = append(banner, lines.Text())
	}
	go io.Copy(io.Discard, pr)
	want := "  webhook faults: duplicate=0.1,reorder=0.2,delay=2s,seed=42 (on purpose; the same seed replays this run)"
	if !strings.Contains(strings.Join(banner, "\n"), want) {
		t.Fatalf("banner lacks %q:\n%s", want, strings.Join(banner, "\n"))
	}
	res, err := http.Get(base + "/sandbox/state")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"faults":{"duplicate":0.1,"reorder":0.2,"delay_ns":2000000000,"seed":42}`) {
		t.Fatalf("/sandbox/state: %s", body)
	}

	// The variable alone, and the file.
	var out bytes.Buffer
	if err := runEnv(context.Background(), []string{"-print-config"}, envOf(env), &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), `"webhook_faults": "duplicate=0.5"`) {
		t.Fatalf("from the variable: %v\n%s", err, out.String())
	}
	path := writeFile(t, `{"webhook_faults": "delay=1s,seed=7"}`)
	out.Reset()
	if err := runEnv(context.Background(), []string{"-config", path, "-print-config"}, envOf(nil), &out, io.Discard); err != nil ||
		!strings.Contains(out.String(), `"webhook_faults": "delay=1s,seed=7"`) {
		t.Fatalf("from the file: %v\n%s", err, out.String())
	}

	for _, c := range []struct {
		args []string
		env  map[string]string
		msg  string
	}{
		{[]string{"-webhook-faults", "duplicate=2"}, nil, "-webhook-faults (PAYKIT_SANDBOX_WEBHOOK_FAULTS, webhook_faults): webhook faults: duplicate is a probability and must be between 0 and 1, not 2"},
		{nil, map[string]string{"PAYKIT_SANDBOX_WEBHOOK_FAULTS": "delay=soon"}, `delay=soon: time: invalid duration "soon"`},
		{[]string{"-webhook-faults", "lag=1s"}, nil, `unknown setting "lag"`},
	} {
		err := runEnv(context.Background(), append([]string{"-print-config"}, c.args...), envOf(c.env), io.Discard, io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v %v: %v, want a usage error with %q", c.args, c.env, err, c.msg)
		}
	}

	out.Reset()
	if err := runEnv(context.Background(), []string{"-help"}, envOf(nil), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-webhook-faults", "duplicate=0.1,reorder=0.1,delay=2s,seed=42", "GET /sandbox/listen", "GET /sandbox/requests?follow=1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-help lacks %q", want)
		}
	}
}
