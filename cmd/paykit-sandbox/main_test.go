package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

func TestRunServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-api-key", "k1", "-secret", "s1"}, pw)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	first := lines.Text()
	const prefix = "paykit sandbox listening on "
	if !strings.HasPrefix(first, prefix) {
		t.Fatalf("first line %q", first)
	}
	base := strings.TrimPrefix(first, prefix)
	var out strings.Builder
	for i := 0; i < 5 && lines.Scan(); i++ {
		out.WriteString(lines.Text() + "\n")
	}
	go io.Copy(io.Discard, pr)
	for _, want := range []string{"k1", "s1", sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("%q not in banner:\n%s", want, out.String())
		}
	}

	req, _ := http.NewRequest("GET", base+"/v1/banks", nil)
	sig, _ := paykit.HMACSigner("s1").Sign(req, nil)
	req.Header.Set("X-Identity", "k1")
	req.Header.Set("X-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"code":"sber"`) {
		t.Fatalf("banks: %d %s", res.StatusCode, body)
	}

	// A connection that never sends a request (a browser's preconnect)
	// must not turn an interrupt into a failed exit.
	idle, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get(base + "/v1/banks"); err == nil {
		t.Fatal("server still answering after cancel")
	}
}

func TestRunHelpAndBadFlags(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"-help"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-addr", "-api-key", "-secret", "/sandbox/payments/{id}/verify", "drop_after", "/sandbox/reset"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("%q not in help:\n%s", want, out.String())
		}
	}
	for _, args := range [][]string{{"-nope"}, {"extra"}, {"-secret", ""}, {"-addr", "256.0.0.1:x"}} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Fatalf("%v: no error", args)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.IPv4zero, Port: 80}:            "http://127.0.0.1:80",
		&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 9}: "http://127.0.0.1:9",
		&net.UnixAddr{Name: "x"}:                            "http://127.0.0.1:0",
	} {
		if got := baseURL(addr); got != want {
			t.Fatalf("%v: %q, want %q", addr, got, want)
		}
	}
}
