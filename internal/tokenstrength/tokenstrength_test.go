package tokenstrength

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

// What the generators the advice names produce passes; what a person types
// or a pattern repeats does not, however long.
func TestCheck(t *testing.T) {
	good := []string{
		"3f9c2a7b1e8d4c6f0a5b9e2d7c1f8a4b",             // openssl rand -hex 16: exactly 128 bits
		"3F9C2A7B1E8D4C6F0A5B9E2D7C1F8A4B",             // upper-case hex
		"q8Zl1m0PZs8v6w2kJ4xYb7u9T3cR5nE1aH6gD0fVtKo=", // head -c 32 /dev/urandom | base64
		"Kx9_mP2-vL7qR4sT8wY1zA3bC6dE5fG0hJ",           // base64url, 34 characters
	}
	for _, tok := range good {
		if err := Check(tok); err != nil {
			t.Errorf("%s refused: %v (%.0f bits)", tok, err, Bits(tok))
		}
	}
	bad := []string{
		"", "a", "ctl-77", "password", "correct-horse",
		"3f9c2a7b1e8d4c6f0a5b9e2d7c1f8a4",                  // 31 hex digits: 124 bits
		"12345678901234567890123456789012345678901",        // digits only: 41 * log2(10) = 136, but periodic
		strings.Repeat("a", 100),                           // one character
		strings.Repeat("abc123", 20),                       // a repeated run
		strings.Repeat("x", 40) + "0123456789abcdefghijkl", // one character over a third
		"abababababcdcdcdcdcdababababababcdcdcdcdcdabab",   // five distinct characters
	}
	for _, tok := range bad {
		wantRefused(t, tok, "")
	}
}

// wantRefused fails unless Check refuses tok with an error that says why
// (naming why, when given), how far short it falls and how to make a good
// token, and shows neither the token nor any eight characters of it. It
// never prints the token's text on a failure of that last kind.
func wantRefused(t *testing.T, tok, why string) {
	t.Helper()
	err := Check(tok)
	if err == nil {
		t.Errorf("%q accepted (%.0f bits)", tok, Bits(tok))
		return
	}
	msg := err.Error()
	words := msg // the error's own words may be the token's too ("password")
	for _, k := range kinds {
		words = strings.ReplaceAll(words, k, "")
	}
	if !strings.Contains(msg, "openssl rand -hex 32") || !strings.Contains(msg, "at least 128 are needed") ||
		!strings.Contains(msg, "too easy to guess (about ") || !strings.Contains(msg, why) {
		t.Errorf("%q: the error does not say why (%q) and how to make a token: %s", tok, why, msg)
	}
	for i := 0; i+8 <= len(tok); i++ {
		if strings.Contains(words, tok[i:i+8]) {
			t.Errorf("the error for a token of %d characters shows part of it", len(tok))
			break
		}
	}
	if len(tok) >= 4 && strings.Contains(words, tok) {
		t.Errorf("the error for a token of %d characters shows it", len(tok))
	}
}

// The guessable tokens of issue 37 passed the length-times-alphabet
// estimate (128 to 186 bits): a sequence of hex digits there and back,
// the alphabet and the digits, keyboard walks, and words joined by dashes.
// The estimator sees each, and the error says what it saw.
func TestGuessableTokensRefused(t *testing.T) {
	for tok, why := range map[string]string{
		"0123456789abcdeffedcba9876543210":     "it contains a sequence (like abc or 0123)",
		"abcdefghijklmnopqrstuvwxyz0123456789": "it contains a sequence (like abc or 0123)",
		"qwertyuiopasdfghjklzxcvbnm1234567890": "it contains a common password", // qwertyuiop is one
		"1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p": "a keyboard pattern",
		"paykit-sandbox-staging-control-token": "it contains a common word",
		"3f9c2a7b1e8d4c6f0a5b9e2d7c1f8a4":      "it is too short: 31 characters",
		"a8f5f167f44f4964e6c998de" + // 96 random bits do not carry a word
			"password": "a common password",
		"Sandbox2026!Sandbox2026!Staging": "",
	} {
		wantRefused(t, tok, why)
	}
}

// Random tokens as the advice makes them pass, every one: 32 bytes in hex
// and base64 far above the floor, and 16 bytes in hex, exactly at it, in
// spite of the words, dates and keyboard turns chance puts in them. The
// bytes come from a seeded ChaCha8, so the draws are the same every run.
func TestRandomTokensPass(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{'p', 'a', 'y', 'k', 'i', 't'})
	for i := range 200 {
		var b [32]byte
		rng.Read(b[:])
		toks := map[string]string{"hex 16 bytes": hex.EncodeToString(b[:16])}
		if i < 25 { // each far above the floor, and slower to check
			toks["hex 32 bytes"] = hex.EncodeToString(b[:])
			toks["HEX 32 bytes"] = strings.ToUpper(hex.EncodeToString(b[:]))
			toks["base64 32 bytes"] = base64.StdEncoding.EncodeToString(b[:])
			toks["base64url 32 bytes"] = base64.RawURLEncoding.EncodeToString(b[:])
		}
		for name, tok := range toks {
			if err := Check(tok); err != nil {
				t.Fatalf("draw %d, %s refused: %v", i, name, err)
			}
		}
	}
}

// A token longer than maxLen is judged by its first maxLen bytes, so that
// a huge one costs no more to check; a weak start is not excused by a
// strong end, and a strong start passes.
func TestLongTokensJudgedByTheirStart(t *testing.T) {
	strong := "7c1e9a4f3b2d8e6a0f5c9b1d4e7a2c8f3b6d9e0a1c4f7b2e5d8a3c6f9b0e1d4a"
	wantRefused(t, strings.Repeat("correcthorsebatterystaple", 6)+strong, "")
	var b [maxLen / 2]byte
	rand.NewChaCha8([32]byte{'l', 'o', 'n', 'g'}).Read(b[:])
	if err := Check(hex.EncodeToString(b[:]) + strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
}
