package main

import (
	"errors"
	"regexp"
	"strings"

	paykit "github.com/paykit-dev/paykit-go"
)

// Errors reach operators, not Go programmers: the SDK's texts name its
// functions (GetPayoutByExtID), Go's name their packages
// (strconv.ParseInt, context canceled). plain rewrites them into what an
// operator acts on; the facts (codes, HTTP statuses, hosts, the reason)
// stay.
var plainRewrites = []struct {
	re   *regexp.Regexp
	with string
}{
	// The SDK's advice names its read; the CLI prints the paykit command.
	{regexp.MustCompile(`; read it(?: back)? with [A-Za-z]+\("(?:[^"\\]|\\.)*"\)[^;)]*`), ""},
	{regexp.MustCompile(`\(ListTerminals\)`), "(paykit terminals)"},
	{regexp.MustCompile(`(?:Get|Post|Put|Patch|Delete) "([a-z]+://[^/"]+)[^"]*": dial tcp [^ ]+: connect: `), "cannot connect to $1: "},
	{regexp.MustCompile(`(?:Get|Post|Put|Patch|Delete) "([a-z]+://[^/"]+)[^"]*": `), "request to $1 failed: "},
	{regexp.MustCompile(`context deadline exceeded`), "--timeout ran out"},
	{regexp.MustCompile(`context canceled`), "interrupted"},
	{regexp.MustCompile(`strconv\.Parse(?:Int|Uint): parsing "[^"]*": invalid syntax`), "not a whole number"},
	{regexp.MustCompile(`strconv\.ParseFloat: parsing "[^"]*": invalid syntax`), "not a number"},
	{regexp.MustCompile(`strconv\.ParseBool: parsing "[^"]*": invalid syntax`), "not true or false"},
	{regexp.MustCompile(`strconv\.Parse[A-Za-z]+: parsing "[^"]*": value out of range`), "out of range"},
	{regexp.MustCompile(`time: (?:invalid|missing unit in) duration "[^"]*"`), "not a duration such as 30s, 5m or 1h"},
	// An SDK operation's name before its error; only the SDK's names, so
	// that a service's message ("ExtId: required") keeps its words.
	{regexp.MustCompile(`\b(?:` + strings.Join(sdkNames, "|") + `): `), ""},
}

// sdkNames are the SDK's functions whose names prefix its errors: the
// Client's methods (TestSDKNamesCovered keeps the list whole) and
// NewClient.
var sdkNames = []string{"AllPayouts", "CancelDispute", "CancelPayment", "CheckCredentials", "ConfirmPayment", "CreatePayment",
	"CreatePayout", "CreateTransfer", "CreateWithdrawal", "Do", "GetBalance", "GetPayment", "GetPaymentByExtID", "GetPayout",
	"GetPayoutByExtID", "GetWithdrawal", "GetWithdrawalFee", "ListBanks", "ListPayouts", "ListTerminals", "NewClient",
	"OpenDispute", "WaitPayment", "WaitPayout"}

// plain is msg in operator words (see plainRewrites).
func plain(msg string) string {
	msg = strings.ReplaceAll(msg, "paykit: ", "")
	for _, r := range plainRewrites {
		msg = r.re.ReplaceAllString(msg, r.with)
	}
	return msg
}

// unknownCause is the failure behind an unknown outcome, without the
// SDK's own wording around it.
func unknownCause(err error) error {
	for e := err; e != nil; {
		if m, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range m.Unwrap() {
				if c != paykit.ErrUnknownOutcome {
					return c
				}
			}
			return nil
		}
		e = errors.Unwrap(e)
	}
	return nil
}

// hintError is an error with the paykit command that helps next.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

// duplicate adds, to a PAY_003 refusal of a create, the command that
// shows the resource that holds the ext_id already.
func duplicate(err error, show string) error {
	var uo *unknownError
	if errors.As(err, &uo) || !errors.Is(err, paykit.ErrDuplicateExtID) {
		return err
	}
	return &hintError{err: err, hint: "It exists already; show it with:\n  " + show}
}
