package main

// paykit sandbox logs: the sandbox's request log (GET /sandbox/requests),
// or with --follow its live feed (GET /sandbox/requests?follow=1 through
// sandbox.Remote.FollowRequests, which reconnects and resumes by itself).
// Paths are masked as the sandbox's log masks them; the filters are
// applied here, to what the sandbox sends.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// SandboxLogsOptions are sandbox logs' flags.
type SandboxLogsOptions struct {
	app *app
	// Follow prints records as the sandbox answers requests, until
	// interrupted (or --timeout).
	Follow bool
	// Path, Status and Method filter the records (see match).
	Path, Status, Method string
}

func newCmdSandboxLogs(a *app, runF func(context.Context, *SandboxLogsOptions) error) *cobra.Command {
	opts := &SandboxLogsOptions{app: a}
	cmd := &cobra.Command{
		Use:   "logs [--follow] [--path P] [--status N] [--method M]",
		Short: "Show the sandbox's request log: method, path, status, latency, merchant, fault applied",
		Long: "logs prints the requests the sandbox answered, oldest first (at most the " + strconv.Itoa(sandbox.DefaultRequestLogSize) + " it keeps), with\n" +
			"their paths masked as the sandbox's log masks them. --follow then prints each new one as the\n" +
			"sandbox answers it, one line each (-o json: one JSON object a line), reconnecting by itself and\n" +
			"saying so when records were lost, until Ctrl-C (exit 130) or --timeout (exit 0). The control\n" +
			"token of remote mode comes from " + controlTokenEnv + ".",
		Example: "  paykit --profile sandbox sandbox logs\n" +
			"  paykit --profile sandbox sandbox logs --follow --path /v1/payouts --status 5xx\n" +
			"  paykit --profile sandbox sandbox logs --method POST -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBounded(a, cmd, opts, runF, runSandboxLogs)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.Follow, "follow", "f", false, "keep printing requests as the sandbox answers them")
	f.StringVar(&opts.Path, "path", "", "only requests whose path begins with P, or whose route is P (such as /v1/payments/{id})")
	f.StringVar(&opts.Status, "status", "", "only answers with this HTTP status: 404, or a class such as 5xx")
	f.StringVar(&opts.Method, "method", "", "only requests with this method (GET, POST, ...)")
	return cmd
}

// logFilter is the parsed filters.
type logFilter struct {
	path, method string
	status       int // 0: any
	class        int // 1..5 for Nxx, 0: none
}

func parseLogFilter(o *SandboxLogsOptions) (logFilter, error) {
	f := logFilter{path: o.Path, method: strings.ToUpper(o.Method)}
	switch s := strings.ToLower(o.Status); {
	case s == "":
	case len(s) == 3 && s[1:] == "xx" && s[0] >= '1' && s[0] <= '5':
		f.class = int(s[0] - '0')
	default:
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return f, usagef("--status takes an HTTP status (404) or a class (5xx), not %q", o.Status)
		}
		f.status = n
	}
	return f, nil
}

func (f logFilter) match(r *sandbox.RequestRecord) bool {
	switch {
	case f.method != "" && r.Method != f.method:
		return false
	case f.status != 0 && r.Status != f.status:
		return false
	case f.class != 0 && r.Status/100 != f.class:
		return false
	case f.path != "" && !strings.HasPrefix(r.Path, f.path) && r.Route != f.path:
		return false
	}
	return true
}

var requestHeader = []string{"at", "method", "path", "status", "code", "latency", "merchant", "fault"}

// requestRow is one record as a row; the merchant is its API key's start
// as the sandbox masks it, empty for a control or a refused request.
func (a *app) requestRow(r *sandbox.RequestRecord) []string {
	return []string{a.when(r.At), r.Method, r.Path, strconv.Itoa(r.Status), r.Code, latency(r.Duration), r.Merchant, r.Fault}
}

// latency is a duration as a person reads it: 3.2ms, 1.5s.
func latency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func runSandboxLogs(ctx context.Context, opts *SandboxLogsOptions) error {
	a := opts.app
	f, err := parseLogFilter(opts)
	if err != nil {
		return err
	}
	r, err := a.remote()
	if err != nil {
		return err
	}
	if opts.Follow {
		if err := followLogs(ctx, a, r, f); !timedOut(a, err) {
			return a.controlTokenError(err)
		}
		return nil
	}
	recs, err := r.Requests(ctx)
	if err != nil {
		return a.controlTokenError(err)
	}
	// The sandbox answers newest first; a log reads oldest first, as
	// --follow prints it.
	kept := []sandbox.RequestRecord{}
	for i := len(recs) - 1; i >= 0; i-- {
		if f.match(&recs[i]) {
			kept = append(kept, recs[i])
		}
	}
	l := list{header: requestHeader}
	for i := range kept {
		l.rows = append(l.rows, a.requestRow(&kept[i]))
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	return a.printList(b, l)
}

// followLogs prints each record as it comes: a line of fixed columns for
// the table, a CSV row (after a header), a JSON object a line. Lost
// records are said on stderr.
func followLogs(ctx context.Context, a *app, r *sandbox.Remote, f logFilter) error {
	if a.output == "csv" {
		if err := writeCSV(a.out, list{header: requestHeader}); err != nil {
			return err
		}
	}
	return r.FollowRequests(ctx, func(ev sandbox.RequestEvent) error {
		if ev.Missed != nil {
			fmt.Fprintf(a.env.stderr, "paykit: %s\n", missedWords(ev.Missed, "request records"))
			return nil
		}
		if ev.Record == nil || !f.match(ev.Record) {
			return nil
		}
		return a.followLine(ev.Record, a.requestRow(ev.Record))
	})
}

// followLine writes one record of a live feed to a.out in the output
// format: a JSON object a line, a CSV row (the header was written once at
// start), or the cells joined unaligned (a live line cannot wait for the
// next one's widths).
func (a *app) followLine(v any, row []string) error {
	switch a.output {
	case "json":
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return a.emitJSON(a.maskJSON(b))
	case "csv":
		return writeCSV(a.out, list{rows: [][]string{row}})
	}
	cells := make([]string, len(row))
	for i, c := range row {
		cells[i] = safeCell(c)
	}
	_, err := fmt.Fprintln(a.out, strings.Join(cells, "  "))
	return err
}

// missedWords says what a feed lost, and why.
func missedWords(m *sandbox.ListenMissed, what string) string {
	why := map[string]string{"slow": "this listener fell behind and the sandbox dropped its oldest",
		"window": "they are older than the sandbox keeps", "restart": "the sandbox restarted"}[m.Reason]
	if why == "" {
		why = m.Reason
	}
	if m.Count < 0 {
		return fmt.Sprintf("missed an unknown number of %s (%s)", what, why)
	}
	return fmt.Sprintf("missed %d %s, positions %d to %d (%s)", m.Count, what, m.From, m.To, why)
}
