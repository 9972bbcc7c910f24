// Package tokenstrength estimates, conservatively, how hard a shared secret
// such as the sandbox's control token is to guess, so that a sandbox
// reachable by others refuses one a person could guess or an attacker could
// enumerate.
package tokenstrength

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// MinBits is the least estimated entropy a token must have: 128 bits, what
// 16 random bytes carry, out of reach of any online guessing.
const MinBits = 128

// Advice says how to make a token that passes.
const Advice = "make one with `openssl rand -hex 32` or `head -c 32 /dev/urandom | base64`"

// Bits estimates the entropy of tok in bits: its length in characters times
// log2 of the alphabet its characters come from (16 when all are hex
// digits of one case, else the sum of the classes used: 10 digits, 26
// lower, 26 upper, 33 other). The estimate is an upper bound for a random
// token and too high for a chosen one, so a token that looks patterned is
// put at 0: one character making up over a third of it, fewer than six
// distinct characters, or a short run repeated ("abcabcabc").
func Bits(tok string) float64 {
	n := utf8.RuneCountInString(tok)
	if n == 0 || patterned(tok) {
		return 0
	}
	return float64(n) * math.Log2(float64(alphabet(tok)))
}

// Check returns nil when tok's estimated entropy reaches MinBits, else an
// error that says how far short it falls and how to make a good one. The
// error never contains the token.
func Check(tok string) error {
	if b := Bits(tok); b < MinBits {
		return fmt.Errorf("the control token is too easy to guess (about %d bits of entropy; at least %d are needed): %s",
			int(b), MinBits, Advice)
	}
	return nil
}

func alphabet(tok string) int {
	var digit, lower, upper, other, hexLower, hexUpper bool
	hexLower, hexUpper = true, true
	for _, r := range tok {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z':
			lower = true
			hexUpper = false
			hexLower = hexLower && r <= 'f'
		case r >= 'A' && r <= 'Z':
			upper = true
			hexLower = false
			hexUpper = hexUpper && r <= 'F'
		default:
			other = true
			hexLower, hexUpper = false, false
		}
	}
	if hexLower || hexUpper {
		if !lower && !upper {
			return 10
		}
		return 16
	}
	size := 0
	for _, c := range []struct {
		used bool
		n    int
	}{{digit, 10}, {lower, 26}, {upper, 26}, {other, 33}} {
		if c.used {
			size += c.n
		}
	}
	return size
}

// patterned reports a token whose characters are too few, too uneven or
// repeat a short run: what a person types, not what a generator draws.
func patterned(tok string) bool {
	rs := []rune(tok)
	counts := map[rune]int{}
	for _, r := range rs {
		counts[r]++
		if counts[r]*3 > len(rs) {
			return true
		}
	}
	if len(counts) < 6 {
		return true
	}
	// A string with period p equals itself shifted by p.
	for p := 1; p <= len(tok)/2; p++ {
		if tok[p:] == tok[:len(tok)-p] {
			return true
		}
	}
	return false
}
