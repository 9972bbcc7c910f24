package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/internal/spec"
)

func errorsIsUnknown(err error) bool { return errors.Is(err, paykit.ErrUnknownOutcome) }

var payoutHeader = []string{"id", "ext_id", "status", "amount", "currency", "method", "requisites", "bank", "provider_order_id", "created_at", "completed_at"}

// payoutRow is a payout for the table and csv: the number masked by the
// SDK, the holder's name left out (personal data, as the SDK's logs do).
func payoutRow(a *app, p *paykit.Payout) []string {
	return []string{p.ID, p.ExtID, string(p.Status), money(p.Amount), p.Currency, string(p.Method), a.mask(p.Requisites),
		p.Bank, p.ProviderOrderID, a.when(p.CreatedAt), a.when(p.CompletedAt)}
}

// payoutRecord is payoutRow for one payout: in csv the very columns of
// payouts list -o csv, so rows from get and list can be appended.
func payoutRecord(a *app, p *paykit.Payout) record {
	var r record
	for i, v := range payoutRow(a, p) {
		k := payoutHeader[i]
		switch k {
		case "amount":
			r.amount(k, p.Amount, p.Currency, true)
		case "currency":
			r.csvOnly(k, v)
		default:
			r.opt(k, v)
		}
	}
	if p.Reconciled {
		r.keys = append(r.keys, "reconciled")
		r.values = append(r.values, "yes (the answer was lost; read back)")
	}
	return r
}

// parseWhen takes RFC 3339 or a bare date (midnight UTC).
func parseWhen(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--%s: want 2026-11-01 or 2026-11-01T00:00:00Z, not %q", flag, s)
}

func payoutsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "payouts", Short: "Send RUB payouts to cards or through SBP, and read them",
		Example: "  paykit payouts get --ext-id payout-77\n  paykit payouts list --all --from 2026-11-01 --to 2026-12-01 -o csv > november.csv"}
	cmd.AddCommand(newCmdPayoutsCreate(a, nil), newCmdPayoutsGet(a, nil), newCmdPayoutsList(a, nil))
	return cmd
}

// PayoutsCreateOptions are payouts create's flags.
type PayoutsCreateOptions struct {
	app    *app
	Params paykit.CreatePayoutParams
	// Amount and Method are the flags as typed, parsed by runPayoutsCreate.
	Amount, Method string
}

func newCmdPayoutsCreate(a *app, runF func(context.Context, *PayoutsCreateOptions) error) *cobra.Command {
	opts := &PayoutsCreateOptions{app: a}
	cmd := &cobra.Command{
		Use:   "create --ext-id ID --amount RUB --method card|sbp --requisites NUMBER --holder-name NAME",
		Short: "Send a payout (asks for confirmation; --yes when not on a terminal)",
		Example: "  paykit payouts create --ext-id payout-77 --amount 500.00 --method sbp --requisites +79001234567 \\\n" +
			"      --holder-name 'Ivan Petrov' --bank sber --yes",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOr(cmd.Context(), opts, runF, runPayoutsCreate)
		},
	}
	p := &opts.Params
	f := cmd.Flags()
	f.StringVar(&p.ExtID, "ext-id", "", "your payout id, unique: what makes a retry safe (required)")
	f.StringVar(&opts.Amount, "amount", "", "amount in RUB, at most two decimals (required)")
	f.StringVar(&opts.Method, "method", "", "card or sbp (required)")
	f.StringVar(&p.Requisites, "requisites", "", "card number (card) or phone number (sbp) (required)")
	f.StringVar(&p.HolderName, "holder-name", "", "recipient's full name (required)")
	f.StringVar(&p.Bank, "bank", "", "bank code, for sbp")
	f.StringVar(&p.NotifyURL, "notify-url", "", "webhook URL for status changes")
	f.BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation")
	for _, n := range []string{"ext-id", "amount", "method", "requisites", "holder-name"} {
		_ = cmd.MarkFlagRequired(n)
	}
	_ = cmd.RegisterFlagCompletionFunc("method", cobra.FixedCompletions(spec.PayoutMethods, cobra.ShellCompDirectiveNoFileComp))
	return moneyCommand(cmd, "always", "payout")
}

// runPayoutsCreate is given the command's context unbounded: the question
// before sending is not bounded by --timeout (a person may take their
// time), the call is.
func runPayoutsCreate(ctx context.Context, opts *PayoutsCreateOptions) error {
	a, p := opts.app, opts.Params
	d, err := decimalArg("amount", opts.Amount, "RUB")
	if err != nil {
		return err
	}
	p.Amount, p.Method = d, paykit.PayoutMethod(opts.Method)
	got, err := moveMoney(ctx, a, fmt.Sprintf("Pay out %s RUB by %s to %s (ext_id %s)", money(d), opts.Method, masked(p.Requisites), p.ExtID), d,
		func(c *paykit.Client, ctx context.Context) (*paykit.Payout, error) { return c.CreatePayout(ctx, p) })
	if err != nil {
		show := "paykit payouts get --ext-id " + shellQuote(p.ExtID)
		return duplicate(settle(err, show), show)
	}
	return doneResource(a.printRecord(a.cap.last(), payoutRecord(a, got)), "payout", got.ID, got.ExtID, string(got.Status))
}

// PayoutsGetOptions are payouts get's flags and arguments.
type PayoutsGetOptions struct {
	app       *app
	ID, ExtID string
}

func newCmdPayoutsGet(a *app, runF func(context.Context, *PayoutsGetOptions) error) *cobra.Command {
	opts := &PayoutsGetOptions{app: a}
	cmd := &cobra.Command{
		Use:     "get (ID | --ext-id EXT_ID)",
		Short:   "Show a payout by its id or by your payout id",
		Example: "  paykit payouts get --ext-id payout-77",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := idOrExtID("payout", args, opts.ExtID, &opts.ID); err != nil {
				return err
			}
			return runBounded(a, cmd, opts, runF, runPayoutsGet)
		},
	}
	cmd.Flags().StringVar(&opts.ExtID, "ext-id", "", "your payout id instead of the service's")
	return cmd
}

func runPayoutsGet(ctx context.Context, opts *PayoutsGetOptions) error {
	return show(ctx, opts.app, func(c *paykit.Client, ctx context.Context) (*paykit.Payout, error) {
		if opts.ExtID != "" {
			return c.GetPayoutByExtID(ctx, opts.ExtID)
		}
		return c.GetPayout(ctx, opts.ID)
	}, payoutRecord)
}

// PayoutsListOptions are payouts list's flags.
type PayoutsListOptions struct {
	app *app
	// Status, From and To are the flags as typed.
	Status, From, To string
	Limit, Offset    int
	All              bool
}

func newCmdPayoutsList(a *app, runF func(context.Context, *PayoutsListOptions) error) *cobra.Command {
	opts := &PayoutsListOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--status S] [--from T] [--to T] [--limit N] [--offset N] [--all]",
		Short: "List payouts, one page or --all of them",
		Long: "list shows one page of payouts (saying on stderr when there are more), or --all of them.\n" +
			"--from and --to are the half-open window [from, to): a payout created exactly at --to is\n" +
			"not in it, so consecutive windows (a month's export, then the next) share no payout.",
		Example: "  paykit payouts list --status completed --limit 20\n" +
			"  paykit payouts list --all --from 2026-11-01 --to 2026-12-01 -o csv > november.csv",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBounded(a, cmd, opts, runF, runPayoutsList)
		},
	}
	lf := cmd.Flags()
	lf.StringVar(&opts.Status, "status", "", "pending, processing, completed, failed or cancelled")
	lf.StringVar(&opts.From, "from", "", "created at or after (2026-11-01 or RFC 3339)")
	lf.StringVar(&opts.To, "to", "", "created before, not at (2026-12-01 or RFC 3339): consecutive windows share no payout")
	lf.IntVar(&opts.Limit, "limit", 0, fmt.Sprintf("page size (default: the service's, %d)", spec.DefaultPayoutListLimit))
	lf.IntVar(&opts.Offset, "offset", 0, "payouts to skip")
	lf.BoolVar(&opts.All, "all", false, "page through every matching payout (progress on stderr when it is a terminal)")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{"pending", "processing", "completed", "failed", "cancelled"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runPayoutsList(ctx context.Context, opts *PayoutsListOptions) error {
	a := opts.app
	lp := paykit.ListPayoutsParams{Status: paykit.PayoutStatus(opts.Status), Limit: opts.Limit, Offset: opts.Offset}
	var err error
	if lp.From, err = parseWhen("from", opts.From); err != nil {
		return err
	}
	if lp.To, err = parseWhen("to", opts.To); err != nil {
		return err
	}
	if lp.Limit < 0 || lp.Offset < 0 {
		return usagef("--limit and --offset must not be negative")
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if opts.All {
		return a.listAll(ctx, c, lp)
	}
	page, err := c.ListPayouts(ctx, lp)
	if err != nil {
		return err
	}
	l := list{header: payoutHeader}
	var out []string
	for i := range page.Payouts {
		if !inWindow(lp, &page.Payouts[i]) {
			out = append(out, page.Payouts[i].ID)
			continue
		}
		l.rows = append(l.rows, payoutRow(a, &page.Payouts[i]))
	}
	raw := a.cap.last()
	if len(out) > 0 && a.output == "json" {
		if raw, err = dropPayouts(raw, out); err != nil {
			return err
		}
	}
	if err := a.printList(raw, l); err != nil {
		return err
	}
	// One page of more: say so where a person looks and a script's stdout
	// is not disturbed.
	if next := page.Offset + len(page.Payouts); page.Total > next && len(page.Payouts) > 0 {
		fmt.Fprintf(a.env.stderr, "paykit: %s of %s payouts shown; use --all for every one, or --offset %d for the next page\n",
			thousands(len(page.Payouts)), thousands(page.Total), next)
	}
	return nil
}

// inWindow tells whether p is in the half-open window [From, To) of lp.
// The service's bounds are not specified (the sandbox's are both
// inclusive; paykit doctor tells a service's): the CLI sends them as given
// and drops what lies outside, so that November's export and December's
// never both hold the payout created at midnight on the 1st.
func inWindow(lp paykit.ListPayoutsParams, p *paykit.Payout) bool {
	if !lp.To.IsZero() && !p.CreatedAt.Before(lp.To) {
		return false
	}
	return lp.From.IsZero() || !p.CreatedAt.Before(lp.From)
}

// dropPayouts removes the payouts with the given ids from a page as the
// service wrote it, and counts them out of its total; every other member
// is kept as it came.
func dropPayouts(raw []byte, ids []string) ([]byte, error) {
	var page map[string]json.RawMessage
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, fmt.Errorf("the payout page is not a JSON object: %w", err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(page["payouts"], &items); err != nil {
		return nil, fmt.Errorf("the payout page's payouts are not a JSON array: %w", err)
	}
	kept := []json.RawMessage{}
	for _, it := range items {
		var id struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(it, &id) == nil && slices.Contains(ids, id.ID) {
			continue
		}
		kept = append(kept, it)
	}
	var err error
	if page["payouts"], err = json.Marshal(kept); err != nil {
		return nil, err
	}
	var total int
	if json.Unmarshal(page["total"], &total) == nil {
		page["total"] = json.RawMessage(strconv.Itoa(max(0, total-(len(items)-len(kept)))))
	}
	return json.Marshal(page)
}

// listAll is the SDK's AllPayouts, with its guards against a list that
// shifts or a service that ignores offset (a payout listed again is shown
// once; paging that brings nothing new is an error, not an endless loop).
// The CLI adds the service's own JSON of each payout, taken from the page
// the SDK just fetched, and the progress line. -o json prints
// {"payouts":[...],"total":N} where each payout is the service's JSON.
// Nothing is printed on stdout unless every page was read.
func (a *app) listAll(ctx context.Context, c *paykit.Client, lp paykit.ListPayoutsParams) error {
	progress := a.env.isTerminal(a.env.stderr)
	shown := -1
	show := func(n, total int) {
		if progress && n != shown {
			fmt.Fprintf(a.env.stderr, "\rfetched %d of %d payouts", n, total)
			shown = n
		}
	}
	var raws []json.RawMessage
	l := list{header: payoutHeader}
	pageSeq, total, dropped := -1, 0, 0
	var pageRaw map[string]json.RawMessage
	var lastID string
	for p, err := range c.AllPayouts(ctx, lp) {
		if err != nil {
			if progress && shown >= 0 {
				fmt.Fprintln(a.env.stderr)
			}
			return err
		}
		if body, seq := a.cap.lastSeq(); seq != pageSeq {
			var page struct {
				Payouts []json.RawMessage `json:"payouts"`
				Total   int               `json:"total"`
			}
			if err := json.Unmarshal(body, &page); err != nil {
				return fmt.Errorf("payout page at offset %d: %w", len(l.rows), err)
			}
			pageSeq, total, pageRaw, lastID = seq, page.Total, make(map[string]json.RawMessage, len(page.Payouts)), ""
			for _, r := range page.Payouts {
				var id struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(r, &id) == nil {
					pageRaw[id.ID], lastID = r, id.ID
				}
			}
		}
		raw, ok := pageRaw[p.ID]
		if !ok {
			return fmt.Errorf("payout %s: not in the page the service answered", p.ID)
		}
		if inWindow(lp, &p) {
			l.rows = append(l.rows, payoutRow(a, &p)) // first: it registers the number maskJSON masks
			raws = append(raws, a.maskJSON(raw))
		} else {
			dropped++
		}
		if p.ID == lastID {
			show(len(l.rows)+dropped, total)
		}
	}
	if progress {
		show(len(l.rows)+dropped, total)
		fmt.Fprintln(a.env.stderr)
	}
	// The service counted the payouts at --to (see inWindow).
	total -= dropped
	if a.output == "json" && !a.quiet {
		if raws == nil {
			raws = []json.RawMessage{}
		}
		b, err := json.Marshal(struct {
			Payouts []json.RawMessage `json:"payouts"`
			Total   int               `json:"total"`
		}{raws, total})
		if err != nil {
			return err
		}
		return a.emitJSON(b)
	}
	return a.printList(nil, l) // table or csv: raw is not used
}
