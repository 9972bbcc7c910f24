package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// APIOptions are api's flags and arguments.
type APIOptions struct {
	app *app
	// Method is upper-cased; Path is below /v1/, with its query.
	Method, Path string
	// Data is --data: JSON text, @FILE or - for stdin; "" for no body.
	Data string
	Yes  bool
}

func apiCmd(a *app) *cobra.Command { return newCmdAPI(a, nil) }

func newCmdAPI(a *app, runF func(context.Context, *APIOptions) error) *cobra.Command {
	opts := &APIOptions{app: a}
	cmd := &cobra.Command{
		Use:   "api METHOD PATH [--data JSON|@FILE|-]",
		Short: "Make a signed call to any path of the API and print its JSON answer",
		Long: "api signs and sends one call through the SDK's Client.Do: the escape hatch for a field or an\n" +
			"endpoint the other commands do not cover. A GET is a read, retried like the typed reads.\n" +
			"Any other method is taken as a money move, since paykit cannot know what it does: it asks for\n" +
			"confirmation like payouts create (--yes off a terminal), is never re-sent after it may have\n" +
			"reached the service, and a lost answer exits 3. The answer prints as JSON (--json, --jq\n" +
			"apply) with card and phone numbers masked unless --unmask.",
		Example: "  paykit api GET /v1/balance\n  paykit api GET '/v1/payouts?status=failed&limit=5' --jq '.payouts[].id'\n" +
			"  paykit api POST /v1/payments --data '{\"ext_id\":\"order-1\",\"amount\":1500.00}' --yes",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Method, opts.Path = strings.ToUpper(args[0]), args[1]
			return runBounded(a, cmd, opts, runF, runAPI)
		},
	}
	cmd.Flags().StringVarP(&opts.Data, "data", "d", "", "JSON body: the text, @FILE to read it from a file, or - for stdin")
	cmd.Flags().BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation of a method other than GET")
	_ = cmd.RegisterFlagCompletionFunc("data", cobra.NoFileCompletions)
	return cmd
}

func runAPI(ctx context.Context, opts *APIOptions) error {
	a := opts.app
	if a.outputSet && a.output != "json" {
		return usagef("api prints the answer as JSON: -o %s does not apply", a.output)
	}
	var body any
	var data []byte // the body as sent, whichever way --data gave it
	var amount string
	if opts.Data != "" {
		b, err := readData(opts.Data, a.env.stdin)
		if err != nil {
			return err
		}
		data = b
		if !json.Valid(b) {
			return usagef("--data is not JSON")
		}
		body = json.RawMessage(b)
		var fields struct {
			Amount json.Number `json:"amount"`
		}
		if json.Unmarshal(b, &fields) == nil {
			amount = fields.Amount.String()
		}
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if opts.Method != "GET" {
		if err := a.confirm(ctx, opts.Method+" "+opts.Path, amount); err != nil {
			return err
		}
	}
	var out json.RawMessage
	if err := c.Do(ctx, opts.Method, opts.Path, body, &out); err != nil {
		show := apiSettle(opts.Path, data)
		if show == "" {
			return settle(err, show)
		}
		return duplicate(settle(err, show), show)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	if !a.unmask {
		a.sensitive = append(a.sensitive, sensitiveStrings(out)...)
	}
	return a.emitJSON(a.maskJSON(out))
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
