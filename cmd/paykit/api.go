package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// APIOptions are api's flags and arguments.
type APIOptions struct {
	app *app
	// Method is upper-cased; Path is below /v1/, with its query.
	Method, Path string
	// Data is --data: JSON text, @FILE or - for stdin; "" for no body.
	Data string
	// Input is --input: a file holding the body, - for stdin.
	Input string
	// RawFields and TypedFields are -f and -F, key=value each (see
	// apibody.go for how -F types a value).
	RawFields, TypedFields []string
	// Include is -i: the answer's status line and headers first.
	Include bool
	// Paginate is --paginate: every page of GET /v1/payouts.
	Paginate bool
	Yes      bool
}

func apiCmd(a *app) *cobra.Command { return newCmdAPI(a, nil) }

const apiLong = `api signs and sends one call through the SDK's Client.Do: the escape hatch for a field or an
endpoint the other commands do not cover. A GET is a read, retried like the typed reads.
Any other method is taken as a money move, since paykit cannot know what it does: it asks for
confirmation like payouts create, naming what the body moves (--yes off a terminal; a live
profile's amount or name typed out), is never re-sent after it may have reached the service,
a lost answer exits 3, and an output that fails once it was done exits 7 (see the exit
codes below). The answer prints as JSON (--json, --jq apply) with card and phone
numbers masked unless --unmask.

The body: --data JSON (or @FILE, or - for stdin), --input FILE (or -), or fields:
  -f key=value   a string
  -F key=value   typed by the spec's wire type of key on that path: an amount is a JSON number
                 with the digits typed (refused when finer than its currency), a card or phone
                 number stays a string, subtract_fee_from_amount takes true or false. A key the
                 spec does not type: true, false and null are literals, a plain decimal is a
                 number (digits kept, never through a float), anything else a string.
                 @FILE reads the value from a file (@- from stdin).
On a GET, fields are the query's parameters instead.

--paginate reads every page of GET /v1/payouts (offset by offset, up to the total): the pages
print as one JSON array of the pages as the service wrote them, or, with --jq or --json, each
page shaped in turn (one JSON value per line). -i prints the answer's status line and headers
first, a header that could carry a secret masked (with --paginate and no --jq or --json, on
stderr, so that stdout stays one JSON array).`

func newCmdAPI(a *app, runF func(context.Context, *APIOptions) error) *cobra.Command {
	opts := &APIOptions{app: a}
	cmd := &cobra.Command{
		Use:   "api METHOD PATH [--data JSON|@FILE|- | --input FILE | -f key=value -F key=value]",
		Short: "Make a signed call to any path of the API and print its JSON answer",
		Long:  apiLong,
		Example: "  paykit api GET /v1/balance\n  paykit api GET '/v1/payouts?status=failed&limit=5' --jq '.payouts[].id'\n" +
			"  paykit api GET /v1/payouts --paginate --jq '.payouts[].id'\n" +
			"  paykit api POST /v1/payouts -f ext_id=payout-78 -F amount=500.00 -f method=card \\\n" +
			"      -f requisites=2200123412341234 -f holder_name='Ivan Petrov' --yes\n" +
			"  paykit api POST /v1/withdrawals --input withdrawal.json -i",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Method, opts.Path = strings.ToUpper(args[0]), args[1]
			// Unbounded, as the typed money moves: --timeout bounds the
			// call, not a person at the question.
			return runOr(cmd.Context(), opts, runF, runAPI)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Data, "data", "d", "", "JSON body: the text, @FILE to read it from a file, or - for stdin")
	f.StringVar(&opts.Input, "input", "", "read the JSON body from a file, or - for stdin")
	f.StringArrayVarP(&opts.RawFields, "raw-field", "f", nil, "add a string member key=value to the JSON body (query parameter on a GET)")
	f.StringArrayVarP(&opts.TypedFields, "field", "F", nil, "add a member key=value typed by the spec: amounts as exact numbers (see above)")
	f.BoolVarP(&opts.Include, "include", "i", false, "print the answer's status line and headers (secrets masked) before it")
	f.BoolVar(&opts.Paginate, "paginate", false, "read every page of GET /v1/payouts")
	f.BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation of a method other than GET")
	_ = cmd.RegisterFlagCompletionFunc("data", cobra.NoFileCompletions)
	return moneyCommand(cmd, "write", "")
}

// body is the request's body from --data, --input or the fields, read
// before anything is sent; for a GET the fields go into the path's query.
func (opts *APIOptions) body(stdin io.Reader) ([]byte, error) {
	given := 0
	for _, set := range []bool{opts.Data != "", opts.Input != "", len(opts.RawFields)+len(opts.TypedFields) > 0} {
		if set {
			given++
		}
	}
	if given > 1 {
		return nil, usagef("give the body one way: --data, --input, or -f/-F fields")
	}
	fields := len(opts.RawFields)+len(opts.TypedFields) > 0
	switch {
	case opts.Method == "GET" && fields:
		return nil, opts.fieldsQuery(stdin)
	case opts.Method == "GET" && given > 0:
		return nil, usagef("a GET has no body: give its parameters as -f key=value")
	case fields:
		return fieldsBody(opts.Path, opts.RawFields, opts.TypedFields, stdin)
	case opts.Input != "":
		name := opts.Input
		if name != "-" {
			name = "@" + name
		}
		b, err := readData(name, stdin)
		if err != nil {
			return nil, usagef("--input: %v", strings.TrimPrefix(err.Error(), "--data: "))
		}
		if !json.Valid(b) {
			return nil, usagef("--input: the file is not JSON")
		}
		return b, nil
	case opts.Data != "":
		b, err := readData(opts.Data, stdin)
		if err != nil {
			return nil, err
		}
		if !json.Valid(b) {
			return nil, usagef("--data is not JSON")
		}
		return b, nil
	}
	return nil, nil
}

// fieldsQuery adds -f and -F fields to a GET's query, as gh does.
func (opts *APIOptions) fieldsQuery(stdin io.Reader) error {
	p, rawQuery, _ := strings.Cut(opts.Path, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return usagef("the path's query: %v", err)
	}
	for i, kv := range append(append([]string(nil), opts.RawFields...), opts.TypedFields...) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("-f/-F %q: want key=value", kv)
		}
		if i >= len(opts.RawFields) && strings.HasPrefix(v, "@") {
			if v, err = readValue(v[1:], stdin); err != nil {
				return usagef("-F %s: %v", k, err)
			}
		}
		q.Add(k, v)
	}
	opts.Path = p + "?" + q.Encode()
	return nil
}

func runAPI(ctx context.Context, opts *APIOptions) error {
	a := opts.app
	if a.outputSet && a.output != "json" {
		return usagef("api prints the answer as JSON: -o %s does not apply", a.output)
	}
	data, err := opts.body(a.env.stdin)
	if err != nil {
		return err
	}
	write := opts.Method != "GET"
	if opts.Paginate && (write || pathShape(opts.Path) != "/v1/payouts") {
		return usagef("--paginate reads the pages of GET /v1/payouts, not %s %s", opts.Method, opts.Path)
	}
	// What can be checked before sending is: --json's fields against
	// the type the path answers with.
	if err := a.shape.checkFields(apiResources[pathShape(opts.Path)]); err != nil && write {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if write {
		what, amount := moveQuestion(opts.Path, data)
		q := opts.Method + " " + safeCell(opts.Path)
		if what != "" {
			q += ": " + what
		}
		if err := a.confirm(ctx, q, amount); err != nil {
			return err
		}
	}
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if opts.Paginate {
		return a.paginate(ctx, c, opts)
	}
	var body any
	if data != nil {
		body = json.RawMessage(data)
	}
	var out json.RawMessage
	if err := c.Do(ctx, opts.Method, opts.Path, body, &out); err != nil {
		if opts.Include {
			_ = a.printHead(a.out) // the refusal's headers; its error follows on stderr
		}
		show := apiSettle(opts.Path, data)
		if show == "" {
			return settle(err, show)
		}
		return duplicate(settle(err, show), show)
	}
	err = a.printAnswer(out, opts.Include)
	if write {
		what, show := apiDone(opts.Method, opts.Path, out, data)
		return doneOutput(err, what, show)
	}
	return err
}

// printAnswer prints one answer: its head with -i, then the JSON, masked
// and shaped.
func (a *app) printAnswer(out json.RawMessage, include bool) error {
	if include {
		if err := a.printHead(a.out); err != nil {
			return err
		}
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	if !a.unmask {
		a.sensitive = append(a.sensitive, sensitiveStrings(out)...)
	}
	return a.emitJSON(a.maskJSON(out))
}

// secretHeader tells a header whose value could be a credential or a
// signature: -i prints it masked.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"signature", "identity", "token", "secret", "key", "cookie", "authorization", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// printHead writes the last answer's status line and headers, sorted, then
// a blank line, as gh api -i does.
func (a *app) printHead(w io.Writer) error {
	h := a.cap.lastHead()
	if h.status == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString(safeCell(h.proto+" "+h.status) + "\n")
	keys := make([]string, 0, len(h.header))
	for k := range h.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h.header[k] {
			if secretHeader(k) {
				v = "(masked)"
			}
			b.WriteString(safeCell(k+": "+v) + "\n")
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// apiDone says what a write that was answered left at the service, from
// its answer ("payout 0140… (ext_id payout-77) is pending") or, when the
// answer names no resource, the call itself; and the command that shows
// it again.
func apiDone(method, path string, out, sent []byte) (what, show string) {
	var v struct {
		ID     string `json:"id"`
		ExtID  string `json:"ext_id"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(out, &v)
	switch resource := apiResources[pathShape(path)]; {
	case v.ID != "" && resource != "" && resource != "transfer":
		return doneWhat(resource, v.ID, v.ExtID, v.Status), getByID(resource, v.ID)
	case v.ID != "":
		return doneWhat("resource", v.ID, v.ExtID, v.Status), apiSettle(path, sent)
	}
	return safeCell(method + " " + path + " was answered"), apiSettle(path, sent)
}

// paginate prints every page of GET /v1/payouts from the path's offset:
// without --jq or --json one JSON array of the pages as the service wrote
// them, written as each arrives; with them, each page shaped in turn. A
// service that ignores offset (a page repeating one seen) is an error, not
// an endless loop.
func (a *app) paginate(ctx context.Context, c *paykit.Client, opts *APIOptions) error {
	p, rawQuery, _ := strings.Cut(opts.Path, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return usagef("the path's query: %v", err)
	}
	offset := 0
	if s := q.Get("offset"); s != "" {
		if offset, err = strconv.Atoi(s); err != nil || offset < 0 {
			return usagef("offset %q: want a whole number", s)
		}
	}
	shaped := a.shape.active()
	seen := map[string]bool{}
	for n := 0; ; n++ {
		q.Set("offset", strconv.Itoa(offset))
		var out json.RawMessage
		if err := c.Do(ctx, "GET", p+"?"+q.Encode(), nil, &out); err != nil {
			return err
		}
		var page struct {
			Payouts []struct {
				ID string `json:"id"`
			} `json:"payouts"`
			Total int `json:"total"`
		}
		if err := json.Unmarshal(out, &page); err != nil {
			return fmt.Errorf("the payout page at offset %d is not a payout list: %w", offset, err)
		}
		for _, it := range page.Payouts {
			if seen[it.ID] {
				return fmt.Errorf("the page at offset %d repeats payout %s: the service did not page", offset, it.ID)
			}
			seen[it.ID] = true
		}
		if !shaped {
			sep := ","
			if n == 0 {
				sep = "["
			}
			if _, err := io.WriteString(a.out, sep); err != nil {
				return err
			}
			if opts.Include {
				// The heads go to stderr here: stdout is one JSON array.
				if err := a.printHead(a.env.stderr); err != nil {
					return err
				}
			}
			if !a.unmask {
				a.sensitive = append(a.sensitive, sensitiveStrings(out)...)
			}
			if _, err := a.out.Write(bytes.TrimSpace(a.maskJSON(out))); err != nil {
				return err
			}
		} else if err := a.printAnswer(out, opts.Include); err != nil {
			return err
		}
		offset += len(page.Payouts)
		if len(page.Payouts) == 0 || offset >= page.Total {
			break
		}
	}
	if !shaped {
		_, err := io.WriteString(a.out, "]\n")
		return err
	}
	return nil
}

// readData is --data's body: the text itself, a file's (@FILE) or stdin's
// (-), before anything is sent.
func readData(data string, stdin io.Reader) ([]byte, error) {
	switch {
	case data == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, maxCapture))
		if err != nil {
			return nil, usagef("--data -: %v", err)
		}
		return b, nil
	case strings.HasPrefix(data, "@"):
		b, err := os.ReadFile(data[1:])
		if err != nil {
			return nil, usagef("--data: %v", err)
		}
		return b, nil
	}
	return []byte(data), nil
}

// apiSettle is the read that settles a raw call whose outcome is unknown,
// when the path and the body sent (not --data's text, which may name a
// file or stdin) tell it.
func apiSettle(path string, data []byte) string {
	var body struct {
		ExtID string `json:"ext_id"`
	}
	_ = json.Unmarshal(data, &body)
	switch p := strings.SplitN(path, "?", 2)[0]; {
	case p == "/v1/payouts" && body.ExtID != "":
		return "paykit payouts get --ext-id " + shellQuote(body.ExtID)
	case p == "/v1/payments" && body.ExtID != "":
		return "paykit payments get --ext-id " + shellQuote(body.ExtID)
	case p == "/v1/transfers" || p == "/v1/withdrawals":
		return "paykit terminals"
	}
	return ""
}

// sensitiveStrings finds the card and phone numbers in an answer the CLI
// has no type for, by their keys: "requisites" as a string (payouts),
// "value" inside a "requisites" object (payments).
func sensitiveStrings(raw []byte) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any, parent string)
	walk = func(v any, parent string) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				if s, ok := x.(string); ok && s != "" && (k == "requisites" || parent == "requisites" && k == "value") {
					out = append(out, s)
				}
				walk(x, k)
			}
		case []any:
			for _, x := range t {
				walk(x, parent)
			}
		}
	}
	walk(v, "")
	return out
}
