// Package mask hides card and phone numbers, once for the whole module: the
// SDK's errors, logs and fmt output, the CLI's tables and the sandbox's
// dashboard and request log mask with these rules, so that a number shown
// masked by one is shown masked alike by the others.
//
// Three entry points, by what the caller knows about its string:
//
//   - Value, for a field known to hold one card or phone number
//     (Payout.Requisites, Requisites.Value): everything but the last four
//     characters becomes '*', "" stays "" so an absent number does not look
//     present. The CLI's masked and the SDK's LogValue use it.
//   - Text, for free text that may contain numbers among other words (an
//     error message a server echoed, a panic value, a log line): every run
//     of ten digits or more, however grouped, keeps its last four digits;
//     what such text must name (UUIDs, hashes, ext_ids with few digits,
//     amounts, dates, IPv4 addresses) stays readable.
//   - Path, for a URL path as sent (escaped): Text applied to each segment
//     unescaped, so that "4111%201111%201111%201111" is masked as the
//     number it is. The SDK's debug log and the sandbox's request log use
//     it.
//
// Last4 serves displays that draw their own mask ("•••• 9010", the
// sandbox's dashboard): it returns only the last four digits.
//
// Key is for an API key, which is no number: it shows the key's start,
// which tells merchants apart (the sandbox's dashboard, its log and its
// command line name merchants so).
//
// URL is for a URL a merchant chose (a notify_url, a forwarding target):
// what it may carry of a secret, user information and query values, is
// hidden; the scheme, host and path that say where it leads are kept.
//
// Text keeps the string's length in bytes and turns only ASCII digits into
// '*', so its output is still valid UTF-8, and masking twice changes
// nothing. Path masks as Text does, segment by segment, but escapes again
// a segment it masked, which may change its length and its escapes
// ("%2B" becomes "+"). Value, Key and Last4 change the length: they show
// a value, not a text around it.
package mask

import (
	"net/url"
	"strings"
)

// Value masks a string known to be one card or phone number: every
// character but the last four becomes '*', except '+' and spaces, so
// "+79123456789" shows "+*******6789". A value of four characters or
// fewer becomes "****"; "" stays "".
func Value(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) <= 4 {
		return "****"
	}
	for i := range r[:len(r)-4] {
		if r[i] != '+' && r[i] != ' ' {
			r[i] = '*'
		}
	}
	return string(r)
}

// URL hides the secrets a URL may carry: its user information, name and
// password alike, and every query value; the scheme, host and path stay.
// A URL that does not parse is shown as a phrase, never as its text.
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a URL that does not parse)" // its text could hold anything
	}
	if u.User != nil {
		// http://SECRET@host/ carries a credential as the name alone.
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword("xxxxx", "xxxxx")
		} else {
			u.User = url.User("xxxxx")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"} // ?api_key=..., ?token=...
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Key shows the start of an API key: its first four characters and "…",
// so "pk_sandbox" shows "pk_s…". A key of four characters or fewer shows
// "…" alone: its start would be all of it.
func Key(k string) string {
	r := []rune(k)
	if len(r) <= 4 {
		return "…"
	}
	return string(r[:4]) + "…"
}

// Last4 returns the last four digits of s (all of them if it has fewer),
// for a display that draws its own mask in front of them.
func Last4(s string) string {
	var d [4]byte
	n := 0
	for i := len(s) - 1; i >= 0 && n < len(d); i-- {
		if isDigit(s[i]) {
			n++
			d[len(d)-n] = s[i]
		}
	}
	return string(d[len(d)-n:])
}

// Path masks the card and phone numbers of an escaped URL path, segment
// by segment, each unescaped first so that an escaped separator ("%20")
// does not split a number into runs too short to be masked. A segment
// that does not unescape is masked as it is. It takes a whole URL as well
// (scheme, host and query are left as Text leaves them). A caller that
// shortens a path for its log does so after masking: a number cut first
// may be too short to be masked.
func Path(escaped string) string {
	var b strings.Builder
	for i, seg := range strings.Split(escaped, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		raw, err := url.PathUnescape(seg)
		if err != nil || raw == seg {
			b.WriteString(Text(seg))
			continue
		}
		if m := Text(raw); m != raw {
			// '*' is left unescaped, for the mask to read as one.
			seg = strings.ReplaceAll(url.PathEscape(m), "%2A", "*")
		}
		b.WriteString(seg)
	}
	return b.String()
}

// Text masks card and phone numbers in free text, keeping their last four
// digits. A number is a run of ten digits or more, in groups joined by one
// or two spaces, dashes, dots, commas, slashes, underscores or parentheses
// ("8 (912) 345-67-89"), glued to letters or not. What error texts must
// name stays readable: UUIDs, hashes, ext_ids with fewer than ten digits,
// decimal amounts, amounts with thousands commas, IPv4 addresses and a
// leading date. Text returns s itself when it has nothing to mask.
func Text(s string) string {
	var out []byte
	for i := 0; i < len(s); {
		if n := readableLen(s, i); n > 0 {
			i += n
			continue
		}
		if !isDigit(s[i]) {
			i++
			continue
		}
		r := scanDigitRun(s, i)
		out = r.mask(s, out)
		i = r.end
	}
	if out == nil {
		return s
	}
	return string(out)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func isAlnum(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }

// readableLen returns the length of the UUID or hash that starts at s[i],
// 0 when none does. Both must start and end at a token boundary.
func readableLen(s string, i int) int {
	if i > 0 && isAlnum(s[i-1]) {
		return 0
	}
	end := i
	for end < len(s) && isAlnum(s[end]) {
		end++
	}
	if n := uuidLen(s, i); n > 0 {
		return n
	}
	tok := s[i:end]
	if len(tok) > 2 && tok[0] == '0' && tok[1]|0x20 == 'x' && allHex(tok[2:]) || len(tok) >= 32 && allHex(tok) && !allDigits(tok) {
		return len(tok)
	}
	return 0
}

// uuidLen returns 36 when a UUID (8-4-4-4-12 hex digits) starts at s[i] and
// is not followed by another letter or digit.
func uuidLen(s string, i int) int {
	const n = 36
	if len(s)-i < n || len(s)-i > n && isAlnum(s[i+n]) {
		return 0
	}
	for k := range n {
		c := s[i+k]
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return 0
			}
		default:
			if !isHex(c) {
				return 0
			}
		}
	}
	return n
}

func allDigits(s string) bool {
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func allHex(s string) bool {
	for i := range len(s) {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// digitRun is a maximal run of digit groups joined by separators.
type digitRun struct {
	start, end int // s[start:end], from the first digit to the last
	digits     int
	groups     [8][2]int // the first groups' bounds
	ng         int       // the number of groups (may exceed len(groups))
	dotsOnly   bool      // every separator is a single '.'
}

func isRunSep(c byte) bool {
	switch c {
	case ' ', '-', '.', '(', ')', ',', '/', '_':
		return true
	}
	return false
}

// scanDigitRun reads the run that starts with the digit s[i].
func scanDigitRun(s string, i int) digitRun {
	r := digitRun{start: i, dotsOnly: true}
	j := i
	for {
		g := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if r.ng < len(r.groups) {
			r.groups[r.ng] = [2]int{g, j}
		}
		r.ng++
		r.digits += j - g
		// A separator is one character, or two where one is a parenthesis,
		// or two spaces, or a comma and a space.
		k, plain := j, 0
		for k < len(s) && k-j < 2 && isRunSep(s[k]) {
			if s[k] != '(' && s[k] != ')' {
				plain++
			}
			k++
		}
		if plain == 2 && s[j+1] == ' ' && (s[j] == ' ' || s[j] == ',') {
			plain = 1
		}
		if k == j || plain > 1 || k >= len(s) || !isDigit(s[k]) || readableLen(s, k) > 0 {
			break
		}
		if k-j != 1 || s[j] != '.' {
			r.dotsOnly = false
		}
		j = k
	}
	r.end = j
	return r
}

// mask masks the run's card or phone numbers in out, a copy of s made on
// the first need.
func (r *digitRun) mask(s string, out []byte) []byte {
	switch {
	case r.digits < 10 && r.ng <= 3:
		return out // the common case: nothing to mask, no date to skip
	case r.dotsOnly && r.ng == 2: // a decimal number: its parts on their own
		for _, g := range r.groups[:2] {
			if g[1]-g[0] >= 10 {
				out = keepLast4(s, out, g[0], g[1])
			}
		}
		return out
	case r.dotsOnly && r.ng == 4 && r.isIPv4(s):
		return out
	case r.isThousands(s): // an amount written with thousands commas
		return out
	case r.ng >= 3 && r.isDatePrefix(s):
		if r.ng == 3 {
			return out
		}
		rest := scanDigitRun(s, r.groups[3][0])
		return rest.mask(s, out)
	case r.digits >= 10:
		return keepLast4(s, out, r.start, r.end)
	}
	return out
}

// isDatePrefix: the run starts with a date (YYYY-MM-DD, DD-MM-YYYY or
// MM-DD-YYYY, separated by '-', '/' or '.') and then a space or nothing.
func (r *digitRun) isDatePrefix(s string) bool {
	a, b, c := r.groups[0], r.groups[1], r.groups[2]
	sep := s[a[1]]
	if b[0]-a[1] != 1 || c[0]-b[1] != 1 || s[b[1]] != sep || sep != '-' && sep != '/' && sep != '.' {
		return false
	}
	if r.ng > 3 && s[c[1]] != ' ' {
		return false
	}
	la, lb, lc := a[1]-a[0], b[1]-b[0], c[1]-c[0]
	switch {
	case la == 4 && lb == 2 && lc == 2: // year first
		month, day := atoi2(s[b[0]:]), atoi2(s[c[0]:])
		return month >= 1 && month <= 12 && day >= 1 && day <= 31
	case la == 2 && lb == 2 && lc == 4: // year last, day or month first
		x, y := atoi2(s[a[0]:]), atoi2(s[b[0]:])
		return x >= 1 && y >= 1 && min(x, y) <= 12 && max(x, y) <= 31
	}
	return false
}

// isThousands: an amount with thousands commas ("1,234,567,890.50"); a
// card number split by commas has groups of four and stays masked.
func (r *digitRun) isThousands(s string) bool {
	if r.ng < 2 || r.ng > len(r.groups) || r.groups[0][1]-r.groups[0][0] > 3 {
		return false
	}
	commas := 0
	for i := 1; i < r.ng; i++ {
		g, prev := r.groups[i], r.groups[i-1]
		if g[0]-prev[1] != 1 {
			return false
		}
		switch s[prev[1]] {
		case ',':
			if g[1]-g[0] != 3 || commas != i-1 {
				return false
			}
			commas++
		case '.':
			if i != r.ng-1 || g[1]-g[0] > 8 {
				return false
			}
		default:
			return false
		}
	}
	return commas > 0
}

func (r *digitRun) isIPv4(s string) bool {
	for _, g := range r.groups[:4] {
		n := g[1] - g[0]
		if n > 3 || n == 3 && s[g[0]:g[1]] > "255" {
			return false
		}
	}
	return true
}

func atoi2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

// keepLast4 replaces every digit of s[a:b] but the last four with '*'.
func keepLast4(s string, out []byte, a, b int) []byte {
	if out == nil {
		out = []byte(s)
	}
	keep := 4
	for k := b - 1; k >= a; k-- {
		if !isDigit(s[k]) {
			continue
		}
		if keep > 0 {
			keep--
			continue
		}
		out[k] = '*'
	}
	return out
}
