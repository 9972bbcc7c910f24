package paykit

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Comparing an answer, or a copy read back, with what the call asked. A
// merchant told "that ext_id is someone else's" creates again under a new
// one, so "different" must be proven field by field: a comparison that
// cannot be made is a verdict of its own, never a difference.

// sameness is the verdict one comparison with the request comes to. Only
// same is success, and only different ever ends in a definite "not this
// call's" (ErrDuplicateExtID after a read-back); cannotTell (a lookup that
// failed, timed out or was cancelled, a field missing on one side, a cache
// that may be stale) ends in ErrUnknownOutcome naming the read that
// settles it.
type sameness uint8

const (
	same sameness = iota
	different
	cannotTell
)

// comparison gathers the verdicts on a resource's fields. One field that
// provably differs makes the resource different even when another could
// not be compared: this call cannot have left it so. Short of that, one
// field that could not be compared leaves the whole cannotTell.
type comparison struct {
	v   sameness
	why error
}

func (c *comparison) add(v sameness, why error) {
	if v == different && c.v != different || v == cannotTell && c.v == same {
		c.v, c.why = v, why
	}
}

func (c *comparison) result() (sameness, error) { return c.v, c.why }

// sameAmount compares amounts by value (1500.5 is 1500.50). Zero read back
// is a missing amount, since every amount the SDK sends is positive.
func sameAmount(what string, got, asked decimal.Decimal) (sameness, error) {
	switch {
	case got.IsZero():
		return cannotTell, fmt.Errorf("the %s carries no amount", what)
	case got.Equal(asked):
		return same, nil
	}
	return different, fmt.Errorf("the %s's amount is %s, not %s", what, got, asked)
}

// sameCode compares codes (bank codes, methods, statuses) without regard
// to case: the API writes "sber" and "SBER", "card" and "CARD" for the
// same thing. Empty read back is missing, not different.
func sameCode(what, got, asked string) (sameness, error) {
	switch {
	case strings.TrimSpace(got) == "":
		return cannotTell, fmt.Errorf("the %s is missing", what)
	case strings.EqualFold(strings.TrimSpace(got), strings.TrimSpace(asked)):
		return same, nil
	}
	return different, fmt.Errorf("the %s is %q, not %q", what, truncate(got, 40), truncate(asked, 40))
}

// seenIn says where a compared resource comes from: the call's own 2xx
// answer, or a read-back after that answer was lost, unusable or "already
// done". Some evidence settles the first and not the second: a masked
// card number's visible digits (see sameCard).
type seenIn uint8

const (
	// inAnswer: the create's (or state change's) own 2xx answer.
	inAnswer seenIn = iota
	// inReadBack: the resource read back to settle the call.
	inReadBack
)

// sameName compares names for people (a holder's; a bank's name goes
// through bankVerdict, on the same nameForms) as they are written: without
// regard to case, to how many spaces separate the words, to Unicode form
// where Russian names decompose (И or и with U+0306 is Й or й, Е or е with
// U+0308 is Ё or ё; likewise Ў and Ї), to ё against е, which services and
// people write interchangeably, or to a typographic apostrophe or dash
// against ASCII's. A difference is proven only between names written
// wholly in Latin or Cyrillic letters, punctuation and spaces; a name
// with any other combining mark, a formatting or control character, or
// another script cannot be told from another form of itself without the
// Unicode tables, so unless the two are equal as they stand it cannot be
// compared; nor can a name in Latin letters with one in Cyrillic (a
// transliteration is the same person). Neither name is ever echoed: a
// holder's name is personal data.
func sameName(what, got, asked string) (sameness, error) {
	g, a := formOf(got), formOf(asked)
	switch v := g.compare(a); {
	case g.key == "" || a.key == "":
		return cannotTell, fmt.Errorf("the %s is missing", what)
	case v == same:
		return same, nil
	case v == cannotTell:
		return cannotTell, fmt.Errorf("the %s is written in characters it cannot be compared by", what)
	case script(g.key) != script(a.key):
		return cannotTell, fmt.Errorf("the %s is written in another alphabet than the call's", what)
	}
	return different, fmt.Errorf("the %s differs from the call's", what)
}

// nameForm is a name's canonical form and whether a difference in it is
// decidable (nameKey).
type nameForm struct {
	key string
	ok  bool
}

func formOf(name string) nameForm {
	k, ok := nameKey(name)
	return nameForm{k, ok}
}

// compare is same when the forms are equal, different when they are not
// and both are decidable, cannotTell otherwise (or when either is blank).
func (f nameForm) compare(o nameForm) sameness {
	switch {
	case f.key == "" || o.key == "":
		return cannotTell
	case f.key == o.key:
		return same
	case f.ok && o.ok:
		return different
	}
	return cannotTell
}

// nameKey is a name's canonical form for sameName: its words joined by one
// space, the Cyrillic letters that decompose composed, each rune folded by
// foldRune (ё into е, typographic punctuation, case as strings.EqualFold
// folds it), in one pass. ok is false when the name holds a character
// whose canonical form (NFC) this cannot know: a combining mark left
// over, a character outside Latin, Cyrillic, their punctuation and spaces.
func nameKey(s string) (key string, ok bool) {
	ok = true
	b := make([]byte, 0, len(s))
	space := false
	var prev rune // the last rune written, for composing; 0 after a space
	for _, r := range s {
		if unicode.IsSpace(r) {
			space, prev = len(b) > 0, 0
			continue
		}
		if c, composed := composeCyrillic(prev, r); composed {
			b = b[:len(b)-utf8.RuneLen(foldRune(prev))] // prev, replaced by c
			r = c
		} else {
			if space {
				b = append(b, ' ')
				space = false
			}
			ok = ok && decidableRune(r)
		}
		prev = r
		b = utf8.AppendRune(b, foldRune(r))
	}
	return string(b), ok
}

// script tells the alphabet of a name's letters: 'L' all Latin, 'C' all
// Cyrillic, 0 none or both. A name in Latin letters may be the Cyrillic
// one transliterated (as bank systems do), which proves no difference.
func script(key string) byte {
	var latin, cyrillic bool
	for _, r := range key {
		latin = latin || unicode.Is(unicode.Latin, r)
		cyrillic = cyrillic || unicode.Is(unicode.Cyrillic, r)
	}
	switch {
	case latin && !cyrillic:
		return 'L'
	case cyrillic && !latin:
		return 'C'
	}
	return 0
}

// composeCyrillic composes a Cyrillic base letter and a combining mark
// into the precomposed letter NFC gives them.
func composeCyrillic(base, mark rune) (rune, bool) {
	switch mark {
	case '\u0306': // combining breve
		switch base {
		case 'И':
			return 'Й', true
		case 'и':
			return 'й', true
		case 'У':
			return 'Ў', true
		case 'у':
			return 'ў', true
		}
	case '\u0308': // combining diaeresis
		switch base {
		case 'Е':
			return 'Ё', true
		case 'е':
			return 'ё', true
		case 'І':
			return 'Ї', true
		case 'і':
			return 'ї', true
		}
	}
	return 0, false
}

// foldRune folds ё into е, a typographic apostrophe or dash into ASCII's
// (a phone or word processor writes O’Brien and Анна‑Мария for O'Brien and
// Анна-Мария), then case: the least rune of r's case-folding orbit.
func foldRune(r rune) rune {
	switch {
	case r == 'ё' || r == 'Ё':
		r = 'е'
	case r == '\u2018' || r == '\u2019':
		r = '\''
	case r >= 0x2010 && r <= 0x2015:
		r = '-'
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// decidableRune: r is its own NFC form in every context but before a
// combining mark (which is itself not decidable), so two names of such
// runes that differ are different names. Latin (Basic, Latin-1, Extended
// A and B, Extended Additional), Cyrillic (with its Supplement), and the
// dashes and quotation marks names carry; no mark (Cyrillic has its own
// combining ones), control or formatting character (a soft hyphen is
// invisible).
func decidableRune(r rune) bool {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return false
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0x24f && r != 0xad,
		r >= 0x1e00 && r <= 0x1eff, r >= 0x400 && r <= 0x52f,
		r >= 0x2010 && r <= 0x2015, r >= 0x2018 && r <= 0x201f:
		return true
	}
	return false
}

// samePhone compares phone numbers as people in Russia write them: +7 912
// 345-67-89, 8 (912) 345-67-89, 79123456789 and the national 9123456789 are
// one number, whose canonical form is its ten national digits (ruPhone).
// Numbers with the same digits, separators aside (and a leading '+' on
// both or neither), are the same whatever their form. Two numbers that
// both map are different exactly when their national digits differ; a
// form that does not map (masked, another country's, an exit prefix such
// as 8-10-7 or 007) cannot be compared. Neither number is ever echoed.
func samePhone(what, got, asked string) (sameness, error) {
	if v, err, settled := sameDigits(what, got, asked); settled {
		return v, err
	}
	g, gok := ruPhone(got)
	a, aok := ruPhone(asked)
	switch {
	case gok && aok && g == a:
		return same, nil
	case gok && aok:
		return different, fmt.Errorf("the %s differs from the call's", what)
	}
	return cannotTell, fmt.Errorf("the %s is not a phone number in a form it can be compared by", what)
}

// ruPhone maps a Russian phone number, as people write it, to its ten
// national digits: "+7" and ten digits; "7" or the trunk prefix "8" and ten
// digits; the ten digits alone; with spaces, dashes, dots and parentheses
// anywhere. National numbers start with 3 to 9 (area and mobile codes;
// the 6xx and 7xx of +7 are Kazakhstan's, in the same numbering plan, and
// dialled from Russia with 8 as well).
func ruPhone(s string) (string, bool) {
	d, ok := digitsOf(s)
	plus := hasPlus(s)
	switch {
	case !ok:
		return "", false
	case len(d) == 11 && (d[0] == '7' || d[0] == '8' && !plus):
		d = d[1:]
	case len(d) != 10 || plus:
		return "", false
	}
	return d, d[0] >= '3'
}

// sameCard compares card numbers by their digits: "4111 1111 1111 1111" is
// 4111111111111111, and other digits are another card. A masked number
// ("220000******0004", "2200 00** **** 0004", "**** 0004": visible digits
// at its start and end, one run of '*', '•', 'X' or '#' between) is
// compared by what it shows: visible digits that disagree with the card
// sent are another card. Visible digits that agree, all else matching,
// are the call's own card only in the create's own 2xx answer (from
// inAnswer): that answer is the resource this request has just created
// under its ext_id. In a read-back after a lost answer (inReadBack) they
// cannot tell: an earlier payout under the same ext_id, to another card
// sharing those digits, would read back the same. A number that is
// neither cannot be compared unless it is exactly the one sent. Neither
// number is ever echoed.
func sameCard(what, got, asked string, from seenIn) (sameness, error) {
	if v, err, settled := sameDigits(what, got, asked); settled {
		return v, err
	}
	a, aok := digitsOf(asked)
	_, gok := digitsOf(got)
	head, tail, masked := maskedDigits(got)
	switch {
	case aok && gok:
		return different, fmt.Errorf("the %s differs from the call's", what)
	case !aok || !masked || head == "" && tail == "" || len(head)+len(tail) > len(a):
		return cannotTell, fmt.Errorf("the %s is not a card number in a form it can be compared by", what)
	case !strings.HasPrefix(a, head) || !strings.HasSuffix(a, tail):
		return different, fmt.Errorf("the %s differs from the call's in its visible digits", what)
	case from == inReadBack:
		return cannotTell, fmt.Errorf("the %s read back is masked: its visible digits agree, "+
			"which another card sharing them would too", what)
	}
	return same, nil
}

// sameDigits is what card and phone numbers share: one missing cannot be
// compared, one exactly as sent or with the same digits (separators aside,
// and both with a leading '+' or neither: +9123456789 is in India) is the
// same. Anything else is left to the caller (settled false).
func sameDigits(what, got, asked string) (v sameness, why error, settled bool) {
	if strings.TrimSpace(got) == "" || strings.TrimSpace(asked) == "" {
		return cannotTell, fmt.Errorf("the %s is missing", what), true
	}
	g, gok := digitsOf(got)
	a, aok := digitsOf(asked)
	return same, nil, got == asked || gok && aok && g == a && hasPlus(got) == hasPlus(asked)
}

func hasPlus(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "+") }

// maskedDigits splits a masked card number into the digits it shows before
// and after its one run of mask characters, separators dropped; false if
// it is not shaped so.
func maskedDigits(s string) (head, tail string, ok bool) {
	var h, t strings.Builder
	part := 0 // 0 head, 1 mask run, 2 tail
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r >= '0' && r <= '9':
			if part == 1 {
				part = 2
			}
			if part == 0 {
				h.WriteRune(r)
			} else {
				t.WriteRune(r)
			}
		case r == '*' || r == '•' || r == 'X' || r == 'x' || r == '#' || r == '…':
			if part == 2 {
				return "", "", false
			}
			part = 1
		case isSeparator(r):
		default:
			return "", "", false
		}
	}
	return h.String(), t.String(), part != 0
}

// sameExact compares opaque strings (terminal ids, wallet addresses)
// exactly: the API gives them no canonical form. A missing
// one cannot be compared.
func sameExact(what, got, asked string) (sameness, error) {
	switch {
	case got == "":
		return cannotTell, fmt.Errorf("the %s is missing", what)
	case got != asked:
		return different, fmt.Errorf("the %s is %q, not %q", what, truncate(got, 64), truncate(asked, 64))
	}
	return same, nil
}

// digitsOf is a card or phone number's digits, its separators dropped
// (spaces, dashes, dots, parentheses) and a leading '+'; false if anything
// else is in it.
func digitsOf(s string) (string, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "+")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case isSeparator(r):
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// isSeparator: what people put between a number's digit groups.
func isSeparator(r rune) bool {
	return unicode.IsSpace(r) || r == '-' || r == '.' || r == '(' || r == ')' || r >= 0x2010 && r <= 0x2015
}

// errNoBanks: an empty bank list proves nothing about a bank's name, and
// is not kept as the list.
var errNoBanks = errors.New("ListBanks answered no banks")
