package paykit

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Input checks: everything the SDK refuses before any network call, with a
// *ValidationError (which matches ErrInvalidParameters) that names the
// field and never echoes its value.

// validate checks CreatePayment's params against the spec's limits.
func (p CreatePaymentParams) validate() error {
	if err := checkExtID(p.ExtID, MaxExtIDLength); err != nil {
		return err
	}
	if err := checkPaymentAmount("amount", p.Amount); err != nil {
		return err
	}
	if p.Method != "" && !slices.Contains(paymentMethods, p.Method) {
		return invalid("method", "must be CARD, SBP, SIM or CROSS_BORDER")
	}
	if p.Country != "" {
		if !slices.Contains(countries, p.Country) {
			return invalid("country", "must be TJ, KZ, UZ or KG")
		}
		if p.Method != MethodCrossBorder {
			return invalid("country", "applies only to method CROSS_BORDER")
		}
	}
	return checkURL("notify_url", p.NotifyURL)
}

// validate checks CreatePayout's params; the spec gives no format for
// requisites or holder_name, so they need only be present.
func (p CreatePayoutParams) validate() error {
	if p.Method != PayoutMethodCard && p.Method != PayoutMethodSBP {
		return invalid("method", "must be card or sbp")
	}
	return firstError(
		checkExtID(p.ExtID, 0),
		checkPositive("amount", p.Amount),
		checkRUB("amount", p.Amount),
		checkRequired("requisites", p.Requisites),
		checkRequired("holder_name", p.HolderName),
		checkURL("notify_url", p.NotifyURL))
}

// checkExtID validates an ext_id: present, not only white space (a trim
// somewhere would make another id), valid UTF-8 (JSON would store U+FFFD
// instead), and at most maxRunes characters when a bound is given.
func checkExtID(s string, maxRunes int) error {
	switch {
	case s == "":
		return invalid("ext_id", "is required")
	case strings.TrimSpace(s) == "":
		return invalid("ext_id", "is blank")
	case !utf8.ValidString(s):
		return invalid("ext_id", "is not valid UTF-8")
	case maxRunes > 0 && utf8.RuneCountInString(s) > maxRunes:
		return invalid("ext_id", fmt.Sprintf("is longer than %d characters", maxRunes))
	}
	return nil
}

// checkUUID validates an id that goes into a path: the canonical
// 8-4-4-4-12 form only (uuid.Parse also takes braces, URNs and bare hex).
func checkUUID(field, id string) error {
	if len(id) != 36 || uuid.Validate(id) != nil {
		return invalid(field, "is not a UUID")
	}
	return nil
}

// checkPaymentAmount holds a payment amount to the spec's bounds and to
// kopecks. A dispute's amount (what the payer actually paid) is held to the
// same bounds: the spec is silent, the sandbox answers PAY_002 outside them,
// and an approved dispute credits that sum, so no payment could carry more.
func checkPaymentAmount(field string, d decimal.Decimal) error {
	if d.LessThan(MinPaymentAmount) || d.GreaterThan(MaxPaymentAmount) {
		return invalid(field, fmt.Sprintf("must be between %d and %d RUB", spec.MinPaymentAmount, spec.MaxPaymentAmount))
	}
	return checkRUB(field, d)
}

// checkPositive validates an amount that must be above zero.
func checkPositive(field string, d decimal.Decimal) error {
	if !d.IsPositive() {
		return invalid(field, "must be greater than zero")
	}
	return nil
}

// checkRUB and checkUSDT refuse an amount finer than its currency can move
// (the spec is silent; see doc.go, "What the spec does not say"): kopecks
// for RUB, TRC-20 USDT's six decimals. Only the value counts, not how it
// is written: 1500.500 is two decimals; 300.00000000000004, float
// arithmetic's residue, is not. Every amount the SDK sends passes here, so
// they refuse one written with too many digits too (checkWritten).
func checkRUB(field string, d decimal.Decimal) error {
	return checkScale(field, d, spec.RUBScale, "RUB")
}

func checkUSDT(field string, d decimal.Decimal) error {
	return checkScale(field, d, spec.USDTScale, "USDT")
}

func checkScale(field string, d decimal.Decimal, places int32, currency string) error {
	if d.Exponent() < -places && !d.Equal(d.Truncate(places)) {
		return invalid(field, fmt.Sprintf("has more than %d decimal places, finer than %s can move", places, currency))
	}
	return checkWritten(field, d)
}

// checkWritten refuses an amount the SDK could send but not read back: the
// decoder refuses a number of more than maxAmountDigits digits (a hostile
// server's million digits), so the service's echo of one would turn a
// confirmed move into an unknown outcome. The digits counted are those
// amount writes, trailing zeros included (1500.50 followed by forty zeros
// is refused; written 1500.50, the same value is not).
func checkWritten(field string, d decimal.Decimal) error {
	if checkNumber([]byte(amount(d))) != nil {
		return invalid(field, fmt.Sprintf("is written with more than %d digits, more than the SDK reads back", maxAmountDigits))
	}
	return nil
}

// checkURL validates an optional absolute http(s) URL, such as notify_url.
func checkURL(field, s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid(field, "must be an absolute http:// or https:// URL")
	}
	return nil
}

// checkRequired validates a string parameter that must not be blank.
func checkRequired(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return invalid(field, "is required")
	}
	return nil
}

// firstError returns the first non-nil error, for validation chains.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
