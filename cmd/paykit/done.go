package main

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// exitOutputFailed: a money move was done as asked, then its output could
// not be shaped or written (a --jq program that failed at run time, a
// stdout that is full or gone). The resource's id and state are on
// stderr. Once a request may have reached the service, codes 1 and 2 are
// never used: a script that reads 1 or 2 as "not done" and retries under
// a new ext_id would pay twice.
const exitOutputFailed = 7

// Annotations on the command tree. TestExitOracle walks the tree for
// annMoney and fails when a command carrying it is not in its table, so a
// new money command cannot go untested.
const (
	// annMoney marks a command that can move money (or change a payment's
	// state): its value says when, "always" or "write" (api, for a method
	// other than GET).
	annMoney = "paykit/money"
	// annResource names the resource a command answers with (payment,
	// payout, transfer, withdrawal): --json's fields are checked against
	// its type before anything is sent.
	annResource = "paykit/resource"
)

// moneyCommand marks cmd as a money move answering with resource.
func moneyCommand(cmd *cobra.Command, when, resource string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[annMoney] = when
	if resource != "" {
		cmd.Annotations[annResource] = resource
	}
	return cmd
}

// resourceTypes are the SDK's types of the resources a money move answers
// with; their JSON names are the fields --json takes.
var resourceTypes = map[string]reflect.Type{
	"payment":    reflect.TypeFor[paykit.Payment](),
	"payout":     reflect.TypeFor[paykit.Payout](),
	"transfer":   reflect.TypeFor[paykit.Transfer](),
	"withdrawal": reflect.TypeFor[paykit.Withdrawal](),
}

// resourceFields are the top-level JSON members of the resource's type,
// sorted; nil for a resource paykit has no type for.
func resourceFields(resource string) []string {
	t, ok := resourceTypes[resource]
	if !ok {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// checkFields refuses, before anything is sent, a --json field that the
// resource's type does not have: after the move it could only fail the
// output of money that moved. A field the type has and an answer lacks
// prints as null (see shape.pick).
func (s *shape) checkFields(resource string) error {
	known := resourceFields(resource)
	if s == nil || s.fields == nil || known == nil {
		return nil
	}
	for _, f := range s.fields {
		if !slices.Contains(known, f) {
			return usagef("--json: a %s has no field %q; its fields: %s; nothing was sent", resource, f, strings.Join(known, ", "))
		}
	}
	s.typed = true
	return nil
}

// doneError is a money move the service did as asked whose output then
// failed: exit 7, never 1 or 2. what says what is now true at the service
// ("payout 0140… (ext_id payout-77) is pending"), show the command that
// prints it again.
type doneError struct {
	what, show string
	err        error
}

func (e *doneError) Error() string { return e.err.Error() }
func (e *doneError) Unwrap() error { return e.err }

// doneOutput is err, the output's failure after a done move, as a
// doneError; nil stays nil.
func doneOutput(err error, what, show string) error {
	if err == nil {
		return nil
	}
	return &doneError{what: what, show: show, err: err}
}

// doneResource is doneOutput for a move that answered with a resource of
// kind (payment, payout, withdrawal): what doneWhat says, shown again by
// its get by id.
func doneResource(err error, kind, id, extID, status string) error {
	return doneOutput(err, doneWhat(kind, id, extID, status), getByID(kind, id))
}

// getByID is the paykit command that shows the resource of kind by its id.
func getByID(kind, id string) string { return "paykit " + kind + "s get " + shellQuote(id) }

// doneWhat says what a done move left at the service: "payout 0140…
// (ext_id payout-77) is pending", made safe for a terminal.
func doneWhat(kind, id, extID, status string) string {
	s := kind + " " + id
	if extID != "" {
		s += " (ext_id " + shellQuote(extID) + ")"
	}
	if status != "" {
		s += " is " + status
	}
	return safeCell(s)
}

// reportDone prints a doneError: what was done first, so that a reader of
// a truncated stderr still sees it, then why the output failed.
func reportDone(w io.Writer, e *doneError) int {
	fmt.Fprintf(w, "paykit: done: %s; the output failed: %s\n", e.what, plain(e.err.Error()))
	if e.show != "" {
		fmt.Fprintf(w, "It was done; do not repeat it. Show it with:\n  %s\n", e.show)
	}
	return exitOutputFailed
}

// brokenPipe tells a write to a pipe whose reader has gone (paykit …
// | head): main asks for SIGPIPE so that such a write returns EPIPE
// instead of killing the process before a money move's exit 7 is said.
func brokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
