package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// TestTableControlCharacters: control characters in the API's data (an
// ext_id with ESC, set by whoever created the payout) reach the terminal
// as visible text, never as the bytes a terminal acts on; csv and json
// keep the data as it is.
func TestTableControlCharacters(t *testing.T) {
	e := newEnv(t)
	evil := "ord\x1b]0;pwned\x07\x1b[2J\r\x7f\u009b1m"
	if _, err := e.sdk.CreatePayout(context.Background(), paykit.CreatePayoutParams{ExtID: evil, Amount: decimal.RequireFromString("10"),
		Method: paykit.PayoutMethodCard, Requisites: testCard, HolderName: "I P"}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"payouts", "list"}, {"payouts", "get", "--ext-id", evil}} {
		r := e.run("", args...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d, %q", args, r.code, r.stderr)
		}
		for _, c := range r.stdout {
			if c < 0x20 && c != '\n' || c == 0x7f || c >= 0x80 && c <= 0x9f {
				t.Fatalf("%q: the table holds the control character %U: %q", args, c, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, `ord\x1b]0;pwned\x07\x1b[2J\x0d\x7f\u009b1m`) {
			t.Fatalf("%q: the ext_id is not shown escaped: %q", args, r.stdout)
		}
	}
}

// TestTableDisplayWidth: columns line up by the width a terminal gives a
// character (two for CJK, none for a combining accent), not by its bytes
// or runes.
func TestTableDisplayWidth(t *testing.T) {
	var out bytes.Buffer
	a := &app{output: "table", out: &out}
	l := list{header: []string{"name", "active"}, rows: [][]string{{"Сбербанк", "true"}, {"中国银行", "true"}, {"Cafe\u0301", "false"}}}
	if err := a.printList(nil, l); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	col := -1
	for _, line := range lines {
		i := strings.LastIndex(line, "  ") + 2
		w := runewidth.StringWidth(line[:i])
		if col >= 0 && w != col {
			t.Fatalf("the second column starts at display column %d and %d:\n%s", col, w, out.String())
		}
		col = w
	}
	if col != len("Сбербанк")/2+2 {
		t.Fatalf("the second column starts at %d, want %d:\n%s", col, len("Сбербанк")/2+2, out.String())
	}
}

// TestLocalTime: times are UTC unless --local-time asks for the local zone.
func TestLocalTime(t *testing.T) {
	e := newEnv(t)
	vars := map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, "TZ": "Asia/Tokyo"}
	if r := e.runEnv(vars, "", "payments", "create", "--ext-id", "o-1", "--amount", "100"); !strings.Contains(r.stdout, "created_at:   2026-11-03T09:30:00Z\n") {
		t.Fatalf("default: %q %q", r.stdout, r.stderr)
	}
	r := e.runEnv(vars, "", "payments", "get", "--ext-id", "o-1", "--local-time")
	if !strings.Contains(r.stdout, "created_at:   2026-11-03T18:30:00+09:00\n") || !strings.Contains(r.stdout, "valid_until:  2026-11-03T18:50:00+09:00\n") {
		t.Fatalf("--local-time in Asia/Tokyo: %q %q", r.stdout, r.stderr)
	}
}
