package tokenstrength

import (
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
		err := Check(tok)
		if err == nil {
			t.Errorf("%q accepted (%.0f bits)", tok, Bits(tok))
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "openssl rand -hex 32") || !strings.Contains(msg, "128") {
			t.Errorf("the error does not say how to make a token: %s", msg)
		}
		if len(tok) > 3 && strings.Contains(msg, tok) {
			t.Errorf("the error shows the token: %s", msg)
		}
	}
}
