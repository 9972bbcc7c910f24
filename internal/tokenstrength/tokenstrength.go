// Package tokenstrength estimates, conservatively, how hard a shared secret
// such as the sandbox's control token is to guess, so that a sandbox
// reachable by others refuses one a person could guess or an attacker could
// enumerate.
//
// The estimate is zxcvbn's (github.com/trustelem/zxcvbn, a port of
// Dropbox's estimator): the token is split into the pieces an attacker
// would try first (words, names and common passwords of its dictionaries,
// also reversed or with l33t substitutions, keyboard walks, sequences such
// as abc or 0123, repeats, dates and years) and runs of other characters,
// guessed one by one; the split that needs the fewest guesses is the
// token's strength, log2 of that count its bits. Two changes fit it to
// machine-made tokens. zxcvbn prices every character of a run at 10
// guesses, which puts a random hex token at 3.3 bits a digit where it
// carries 4: here a run is priced by the alphabet it is drawn from (10 for
// digits, 16 for hex of one case, 64 for base64, else the classes it
// uses). And zxcvbn finds chance structure in any random string (a
// two-letter word, a l33t word, a date, a keyboard turn): structure worth
// less than chanceBits is not believed, and the token is priced by its
// characters alone.
package tokenstrength

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/trustelem/zxcvbn"
	"github.com/trustelem/zxcvbn/match"
	"github.com/trustelem/zxcvbn/matching"
	"github.com/trustelem/zxcvbn/scoring"
)

// MinBits is the least estimated entropy a token must have: 128 bits, what
// 16 random bytes carry, out of reach of any online guessing.
const MinBits = 128

// Advice says how to make a token that passes.
const Advice = "make one with `openssl rand -hex 32` or `head -c 32 /dev/urandom | base64`"

// maxLen bounds the part of a token that is estimated: its first 128
// bytes, far more than 128 bits need (32 random bytes in hex are 64), so
// that a huge token costs no more than that to check (about 0.1 s). A
// longer token is judged by that part.
const maxLen = 128

// Bits estimates the entropy of tok in bits: log2 of the guesses an
// attacker who knows how people and generators make tokens needs to find
// it (see the package comment). A token that looks patterned is put at 0
// whatever zxcvbn says: one character making up over a third of it, fewer
// than six distinct characters, or a short run repeated ("abcabcabc").
func Bits(tok string) float64 {
	bits, _ := estimate(tok)
	return bits
}

// Check returns nil when tok's estimated entropy reaches MinBits, else an
// error that says how far short it falls, what makes it guessable and how
// to make a good one. The error never contains the token or any part of
// it.
func Check(tok string) error {
	if bits, why := estimate(tok); bits < MinBits {
		return fmt.Errorf("the control token is too easy to guess (about %d bits of entropy; at least %d are needed): %s; %s",
			int(max(bits, 0)), MinBits, why, Advice)
	}
	return nil
}

// estimate returns tok's bits and, for a weak token, why, in words that
// name the kind of weakness and never a part of the token.
func estimate(tok string) (float64, string) {
	switch {
	case tok == "":
		return 0, "it is empty"
	case !utf8.ValidString(tok):
		return 0, "it is not valid UTF-8"
	}
	if len(tok) > maxLen {
		tok = tok[:maxLen]
		for !utf8.ValidString(tok) { // not in the middle of a character
			tok = tok[:len(tok)-1]
		}
	}
	if patterned(tok) {
		return 0, "it repeats a few characters"
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] >= utf8.RuneSelf {
			// zxcvbn's own search, every character priced at 10 guesses:
			// lower than any alphabet with letters beyond ASCII.
			r := zxcvbn.PasswordStrength(tok, nil)
			return math.Log2(max(r.Guesses, 1)), describe(r.Sequence, tok)
		}
	}
	return judge(tok)
}

// step is the last piece of the best split of a prefix into l pieces: a
// zxcvbn match, or (m nil) characters guessed one by one from start on.
type step struct {
	lg    float64 // log2 of the product of the pieces' guesses
	m     *match.Match
	start int
}

// search is zxcvbn's most-guessable-sequence search (scoring's
// MostGuessableMatchSequence) with the characters outside any match priced
// by their alphabet: it minimises l! * (the product of the l pieces'
// guesses) + 10000^(l-1) over the splits of tok into l pieces, where two
// runs of characters guessed one by one never follow each other. tok is
// ASCII.
func search(tok string, matches []*match.Match) (float64, []*match.Match) {
	n := len(tok)
	byEnd := make([][]*match.Match, n)
	for _, m := range matches {
		if m.I >= 0 && m.I <= m.J && m.J < n {
			byEnd[m.J] = append(byEnd[m.J], m)
		}
	}
	// best[k][l][run]: the best split of tok[:k+1] into l pieces, the
	// last a run of characters (run 1) or a match (run 0).
	inf := math.Inf(1)
	best := make([][][2]step, n)
	for k := range best {
		best[k] = make([][2]step, n+1)
		for l := range best[k] {
			best[k][l] = [2]step{{lg: inf}, {lg: inf}}
		}
	}
	offer := func(k, l, run int, s step) {
		if s.lg < best[k][l][run].lg {
			best[k][l][run] = s
		}
	}
	for k := 0; k < n; k++ {
		for _, m := range byEnd[k] {
			g := math.Log2(scoring.EstimateGuesses(m, tok))
			if m.I == 0 {
				offer(k, 1, 0, step{lg: g, m: m})
				continue
			}
			for l := 1; l < n; l++ {
				if p := min(best[m.I-1][l][0].lg, best[m.I-1][l][1].lg); p < inf {
					offer(k, l+1, 0, step{lg: p + g, m: m})
				}
			}
		}
		var seen classes
		for i := k; i >= 0; i-- {
			seen.add(tok[i])
			g := runGuesses(seen.size(), k-i+1, n)
			if i == 0 {
				offer(k, 1, 1, step{lg: g, start: 0})
				continue
			}
			for l := 1; l < n; l++ {
				if p := best[i-1][l][0].lg; p < inf {
					offer(k, l+1, 1, step{lg: p + g, start: i})
				}
			}
		}
	}
	bits, bestL, bestRun := inf, 0, 0
	for l := 1; l <= n; l++ {
		for run := range 2 {
			if lg := best[n-1][l][run].lg; lg < inf {
				lgFact, _ := math.Lgamma(float64(l + 1))
				if b := log2Sum(lgFact/math.Ln2+lg, float64(l-1)*math.Log2(scoring.MinGuessesBeforeGrowingSequence)); b < bits {
					bits, bestL, bestRun = b, l, run
				}
			}
		}
	}
	var seq []*match.Match
	for k, l, run := n-1, bestL, bestRun; k >= 0 && l > 0; l-- {
		s := best[k][l][run]
		run = 0 // a run follows only a match
		if s.m == nil {
			k = s.start - 1
			continue
		}
		seq = append(seq, s.m)
		k = s.m.I - 1
		if k >= 0 && best[k][l-1][1].lg < best[k][l-1][0].lg { // as offer chose
			run = 1
		}
	}
	return bits, seq
}

// runGuesses is log2 of the guesses of a run of length characters drawn
// from an alphabet of size, with zxcvbn's floors for a piece shorter than
// the token (of n characters), which let a match of the same characters
// win over the run.
func runGuesses(size, length, n int) float64 {
	g := float64(length) * math.Log2(float64(size))
	if length < n {
		floor := float64(scoring.MinSubmatchGuessesMultiChar + 1)
		if length == 1 {
			floor = scoring.MinSubmatchGuessesSingleChar + 1
		}
		g = max(g, math.Log2(floor))
	}
	return g
}

// log2Sum is log2(2^a + 2^b).
func log2Sum(a, b float64) float64 {
	hi, lo := max(a, b), min(a, b)
	return hi + math.Log2(1+math.Exp2(lo-hi))
}

// describe names the kinds of guessable pieces zxcvbn found in tok (seq,
// the best split), or, with none, says that it is too short for its
// characters.
func describe(seq []*match.Match, tok string) string {
	var kinds []string
	seen := map[string]bool{}
	for i := len(seq) - 1; i >= 0; i-- {
		k := kind(seq[i])
		if k != "" && !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return fmt.Sprintf("it is too short: %d characters of the kinds it uses are not enough", utf8.RuneCountInString(tok))
	}
	return "it contains " + strings.Join(kinds, ", ")
}

// kind says what a zxcvbn match is, without its text: one of kinds.
func kind(m *match.Match) string {
	what := kinds[m.Pattern]
	if m.Pattern == "dictionary" {
		switch m.DictionaryName {
		case "passwords":
			what = kinds["passwords"]
		case "male_names", "female_names", "surnames":
			what = kinds["names"]
		}
		if m.Reversed {
			what += kinds["reversed"]
		}
		if m.L33t {
			what += kinds["l33t"]
		}
	}
	return what
}

// kinds are the words an error names a guessable piece with, by zxcvbn's
// pattern (and for a dictionary word, its dictionary and variations).
var kinds = map[string]string{
	"dictionary": "a common word",
	"passwords":  "a common password",
	"names":      "a name",
	"reversed":   " reversed",
	"l33t":       " with look-alike substitutions",
	"spatial":    "a keyboard pattern",
	"sequence":   "a sequence (like abc or 0123)",
	"repeat":     "a repeated run",
	"date":       "a date",
	"regex":      "a recent year",
}

// classes are the kinds of ASCII characters a run of a token uses.
type classes struct {
	digit, lower, upper, other bool
	// Set when a character rules the run out of being hex of lower or
	// upper case, base64 or base64url.
	notHexLower, notHexUpper, notBase64, notBase64URL bool
}

func (c *classes) add(ch byte) {
	switch {
	case ch >= '0' && ch <= '9':
		c.digit = true
	case ch >= 'a' && ch <= 'z':
		c.lower = true
		c.notHexLower = c.notHexLower || ch > 'f'
	case ch >= 'A' && ch <= 'Z':
		c.upper = true
		c.notHexUpper = c.notHexUpper || ch > 'F'
	default:
		c.other = true
		c.notBase64 = c.notBase64 || !strings.ContainsRune("+/=", rune(ch))
		c.notBase64URL = c.notBase64URL || !strings.ContainsRune("-_=", rune(ch))
	}
}

// size is the alphabet the run is drawn from: 10 for digits, 16 for hex
// of one case, else the sum of the classes used: 10 digits, 26 lower, 26
// upper, and for the other characters 2 when they are base64's "+/" or
// base64url's "-_" (padding aside), else 33 (the other printable ones).
func (c *classes) size() int {
	switch {
	case c.other:
	case !c.lower && !c.upper:
		return 10
	case !c.upper && !c.notHexLower, !c.lower && !c.notHexUpper:
		return 16
	}
	size := 0
	for _, u := range []struct {
		used bool
		n    int
	}{{c.digit, 10}, {c.lower, 26}, {c.upper, 26}} {
		if u.used {
			size += u.n
		}
	}
	if c.other {
		if !c.notBase64 || !c.notBase64URL {
			size += 2
		} else {
			size += 33
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

// chanceBits is how much structure zxcvbn's matchers find in a random
// token by chance: short words and l33t words, dates, keyboard turns and
// repeats a few characters long. Measured on 4,000 random 16-byte tokens
// each, the best split saved at most 28 bits over pricing the characters
// alone in hex, and rarely more than 32 in base64 (with a word or a
// sequence a person chose, the tokens of the package's tests save from 37
// to 172). Structure worth less than this is not believed: the token is
// then priced by its characters, which makes a random 16-byte hex token
// pass (128 bits) however its digits fall. So a token passes with a
// character price of at least 128 bits and a zxcvbn estimate of at least
// 96.
const chanceBits = 32

// judge is search's estimate of an ASCII token, or, when the structure it
// found is no more than chance finds in random tokens (chanceBits), the
// price of its characters alone.
func judge(tok string) (float64, string) {
	bits, seq := search(tok, matching.Omnimatch(tok, nil))
	plain, _ := search(tok, nil)
	if plain-bits < chanceBits {
		return plain, describe(nil, tok)
	}
	return bits, describe(seq, tok)
}
