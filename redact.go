package paykit

// The digit-run scanner behind maskDigits (errors.go).

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

// digitRun is a maximal run of digit groups joined by separators, as
// maskDigits defines it.
type digitRun struct {
	start, end int // s[start:end], from the first digit to the last
	digits     int
	groups     [8][2]int // the first groups' bounds
	ng         int       // the number of groups (may exceed len(groups))
	dotsOnly   bool      // every separator is a single '.'
}

func isRunSep(c byte) bool { return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' }

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
		// A separator is one character, or two where one is a parenthesis.
		k, plain := j, 0
		for k < len(s) && k-j < 2 && isRunSep(s[k]) {
			if s[k] != '(' && s[k] != ')' {
				plain++
			}
			k++
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

// mask masks the card or phone numbers of the run in out (a copy of s made
// on the first need) and returns out.
func (r *digitRun) mask(s string, out []byte) []byte {
	switch {
	case r.digits < 10 && r.ng <= 3:
		return out // the common case: nothing to mask, no date to skip
	case r.dotsOnly && r.ng == 2: // a decimal number: its parts on their own
		for _, g := range r.groups[:2] {
			if g[1]-g[0] >= 10 {
				out = maskKeepLast4(s, out, g[0], g[1])
			}
		}
		return out
	case r.dotsOnly && r.ng == 4 && r.isIPv4(s):
		return out
	case r.ng >= 3 && r.isDatePrefix(s):
		if r.ng == 3 {
			return out
		}
		rest := scanDigitRun(s, r.groups[3][0])
		return rest.mask(s, out)
	case r.digits >= 10:
		return maskKeepLast4(s, out, r.start, r.end)
	}
	return out
}

// isDatePrefix: the run starts with an ISO date (YYYY-MM-DD) followed by
// a space or nothing, as in "2026-11-22 03:10:00".
func (r *digitRun) isDatePrefix(s string) bool {
	y, m, d := r.groups[0], r.groups[1], r.groups[2]
	if y[1]-y[0] != 4 || m[1]-m[0] != 2 || d[1]-d[0] != 2 || s[y[1]] != '-' || s[m[1]] != '-' {
		return false
	}
	if r.ng > 3 && s[d[1]] != ' ' {
		return false
	}
	month, day := atoi2(s[m[0]:]), atoi2(s[d[0]:])
	return month >= 1 && month <= 12 && day >= 1 && day <= 31
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

// maskKeepLast4 replaces every digit of s[a:b] but the last four with '*'.
func maskKeepLast4(s string, out []byte, a, b int) []byte {
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
