package paykit

import (
	"errors"
	"fmt"
	"strings"

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

// sameName compares names for people (a bank's, a holder's) without regard
// to case or to how many spaces separate the words. The values are echoed
// only when echo is set: a holder's name is personal data.
func sameName(what, got, asked string, echo bool) (sameness, error) {
	g, a := strings.Fields(got), strings.Fields(asked)
	switch {
	case len(g) == 0:
		return cannotTell, fmt.Errorf("the %s is missing", what)
	case strings.EqualFold(strings.Join(g, " "), strings.Join(a, " ")):
		return same, nil
	case echo:
		return different, fmt.Errorf("the %s is %q, not %q", what, truncate(got, 40), truncate(asked, 40))
	}
	return different, fmt.Errorf("the %s differs from the call's", what)
}

// sameNumber compares card and phone numbers by their digits: "+7 912
// 345-67-89" is 79123456789 (E.164 without its separators), "4111 1111 1111
// 1111" is 4111111111111111. A value with anything but digits and the
// separators (space, '-', '.', '(', ')', a leading '+'), such as a masked
// "4111 **** 1111", cannot be compared unless it is exactly the one sent.
// Neither number is ever echoed.
func sameNumber(what, got, asked string) (sameness, error) {
	g, gok := digitsOf(got)
	a, aok := digitsOf(asked)
	switch {
	case strings.TrimSpace(got) == "":
		return cannotTell, fmt.Errorf("the %s is missing", what)
	case got == asked || gok && aok && g == a:
		return same, nil
	case gok && aok:
		return different, fmt.Errorf("the %s differs from the call's", what)
	}
	return cannotTell, fmt.Errorf("the %s is not a plain number, so it cannot be compared", what)
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

// digitsOf is a card or phone number's canonical form: its digits, the
// separators dropped; false if anything else is in it.
func digitsOf(s string) (string, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "+")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			b.WriteByte(c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// errNoBanks: an empty bank list proves nothing about a bank's name, and
// is not kept as the list.
var errNoBanks = errors.New("ListBanks answered no banks")
