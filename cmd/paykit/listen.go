package main

// paykit listen: a sandbox's notifications delivered to a laptop. It
// follows the merchant's listen feed (GET /sandbox/listen through
// sandbox.Remote.Listen, signed with the profile's key and secret as /v1
// requests are, so no control token is needed and only the merchant's own
// notifications come) and POSTs each to --forward-to with the body and
// headers the sandbox sends, printing one line per delivery. Remote.Listen
// reconnects with a growing wait and resumes after the last notification
// (Last-Event-ID); what the sandbox could not replay is said on stderr.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// ListenOptions are listen's flags.
type ListenOptions struct {
	app *app
	// ForwardTo is the local receiver's URL.
	ForwardTo string
	// Events keeps these kinds only (payment, payout, withdrawal).
	Events []string
	// PrintJSON prints each notification instead of forwarding it.
	PrintJSON bool
	// Token is the session's token, instead of one the sandbox makes.
	Token string
	// now measures the receiver's answer; tests may replace it.
	now func() time.Time
}

// listenKinds are the kinds of the feed.
var listenKinds = []string{"payment", "payout", "withdrawal"}

func newCmdListen(a *app, runF func(context.Context, *ListenOptions) error) *cobra.Command {
	opts := &ListenOptions{app: a, now: time.Now}
	cmd := &cobra.Command{
		Use:   "listen (--forward-to URL | --print-json) [--events payment,payout,withdrawal] [--token T]",
		Short: "Forward a sandbox's notifications for your merchant to a local URL",
		Long: "listen follows the notifications the sandbox of the profile (local, or a team's staging sandbox)\n" +
			"sends for the merchant's resources and POSTs each to --forward-to with the same body and headers,\n" +
			"X-Notification-Token included, printing one line per delivery: the resource, its status, the\n" +
			"local answer's status and how long it took. It signs in as the merchant (the profile's key and\n" +
			"secret), so it needs no control token and sees no other merchant's notifications.\n\n" +
			"Resources created without a notify URL or token are in the feed too, with the session's token,\n" +
			"which listen prints at start: configure your receiver with it (WebhookHandler.Token), or choose\n" +
			"it with --token. Withdrawals are only in the feed. It reconnects by itself and says when\n" +
			"notifications were missed. --print-json prints the notifications (one JSON object a line, card\n" +
			"and phone numbers masked unless --unmask) instead of forwarding them. Ctrl-C ends it (exit 130),\n" +
			"--timeout too (exit 0).",
		Example: "  paykit --profile sandbox listen --forward-to http://127.0.0.1:8090/paykit/webhook\n" +
			"  paykit --profile staging listen --forward-to http://127.0.0.1:8090/paykit/webhook --events payout --token demo-token\n" +
			"  paykit --profile sandbox listen --print-json | jq .body.status",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBounded(a, cmd, opts, runF, runListen)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ForwardTo, "forward-to", "", "the local receiver's URL (http or https)")
	f.StringSliceVar(&opts.Events, "events", nil, "only these kinds: payment, payout, withdrawal (default: all)")
	f.BoolVar(&opts.PrintJSON, "print-json", false, "print each notification as JSON instead of forwarding it")
	f.StringVar(&opts.Token, "token", "", "the session's token, put in notifications of resources created without one (default: one the sandbox makes)")
	cmd.MarkFlagsOneRequired("forward-to", "print-json")
	cmd.MarkFlagsMutuallyExclusive("forward-to", "print-json")
	_ = cmd.RegisterFlagCompletionFunc("events", cobra.FixedCompletions(listenKinds, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// delivered is one line of listen's -o json output.
type delivered struct {
	Position uint64 `json:"position"`
	Resource string `json:"resource"`
	ID       string `json:"id"`
	Status   string `json:"status"`
	Answer   int    `json:"answer_status"`
	Millis   int64  `json:"duration_ms"`
	Error    string `json:"error,omitempty"`
}

func runListen(ctx context.Context, opts *ListenOptions) error {
	a := opts.app
	if opts.ForwardTo != "" {
		if err := checkReceiverURL("--forward-to", opts.ForwardTo); err != nil {
			return err
		}
	}
	for _, k := range opts.Events {
		if !slices.Contains(listenKinds, k) {
			return usagef("--events takes %s, not %q", strings.Join(listenKinds, ", "), k)
		}
	}
	cr, err := a.credentials()
	if err != nil {
		return err
	}
	a.cred = cr
	lopts := []sandbox.ListenOption{}
	if len(opts.Events) > 0 {
		lopts = append(lopts, sandbox.ListenEvents(opts.Events...))
	}
	if opts.Token != "" {
		lopts = append(lopts, sandbox.ListenToken(opts.Token))
	}
	r, err := sandbox.NewRemote(cr.baseURL, sandbox.WithMerchant(cr.apiKey, paykit.HMACSigner(cr.secret)))
	if err != nil {
		return &credentialsError{msg: fmt.Sprintf("credentials (%s): the base URL is not an http(s) URL", cr.source())}
	}
	l := &listener{a: a, opts: opts}
	err = r.Listen(ctx, l.event, lopts...)
	var ce *sandbox.ControlError
	switch {
	case timedOut(a, err):
		return nil // --timeout: it listened as long as asked
	case errors.Is(err, sandbox.ErrInvalidArgument):
		return usagef("%s", strings.TrimPrefix(err.Error(), "sandbox: "))
	case errors.As(err, &ce) && ce.StatusCode == http.StatusUnauthorized:
		return &credentialsError{msg: fmt.Sprintf("the sandbox on %s refused the merchant's credentials (%s): %s (%s, HTTP %d)",
			a.target(), cr.source(), ce.Message, ce.Code, ce.StatusCode)}
	case errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s has no listen feed (GET /sandbox/listen answered 404): listen works with a sandbox only", a.target())
	}
	return err
}

// listener handles the feed's events, one at a time (Listen never calls
// it concurrently).
type listener struct {
	a        *app
	opts     *ListenOptions
	token    string
	sessions int
	header   bool // -o csv: the header is written
}

// listenHeader names the columns of a forwarded notification's CSV row.
var listenHeader = []string{"at", "resource", "id", "status", "answer", "latency"}

func (l *listener) event(ev sandbox.ListenEvent) error {
	a := l.a
	switch {
	case ev.Session != nil:
		l.sessions++
		if l.sessions == 1 || ev.Session.Token != l.token {
			target := "printing them as JSON"
			if l.opts.ForwardTo != "" {
				target = "forwarding to " + mask.URL(l.opts.ForwardTo)
			}
			fmt.Fprintf(a.env.stderr, "Ready: listening to the notifications of %s, %s.\n"+
				"The session's notification token (X-Notification-Token of resources created without one) is %s\n"+
				"Ctrl-C to stop.\n", a.target(), target, ev.Session.Token)
		} else {
			fmt.Fprintf(a.env.stderr, "paykit: reconnected; resuming after position %d\n", ev.Session.Position)
		}
		l.token = ev.Session.Token
		return nil
	case ev.Missed != nil:
		fmt.Fprintf(a.env.stderr, "paykit: %s\n", missedWords(ev.Missed, "notifications"))
		return nil
	case ev.Notification == nil:
		return nil
	}
	n := ev.Notification
	a.sensitive = a.sensitive[:0] // this notification's numbers only: a session may last days
	if l.opts.PrintJSON {
		return l.printNotification(n)
	}
	req, err := http.NewRequest(http.MethodPost, l.opts.ForwardTo, bytes.NewReader(n.Body))
	if err != nil {
		return err
	}
	for k, v := range n.Headers {
		req.Header.Set(k, v)
	}
	ans := forward(req, l.opts.now)
	d := delivered{Position: n.Position, Resource: n.Kind, ID: n.ID, Status: n.Status, Answer: ans.status, Millis: ans.took.Milliseconds(), Error: ans.err}
	res := strconv.Itoa(ans.status)
	if ans.status == 0 {
		res = "no answer (" + ans.err + ")"
	}
	row := []string{a.when(time.Now()), n.Kind, n.ID, n.Status, "->", res, strconv.FormatInt(d.Millis, 10) + "ms"}
	if a.output == "csv" {
		row = slices.Delete(row, 4, 5) // the arrow is for the eye
		if !l.header {
			if err := writeCSV(a.out, list{header: listenHeader}); err != nil {
				return err
			}
			l.header = true
		}
	}
	return a.followLine(d, row)
}

// printNotification prints one notification as JSON: its headers (the
// token masked: it was printed at start, or is the resource's own) and
// its body, card and phone numbers masked unless --unmask.
func (l *listener) printNotification(n *sandbox.ListenNotification) error {
	h := map[string]string{}
	for k, v := range n.Headers {
		if strings.EqualFold(k, "X-Notification-Token") && v != "" {
			v = "****"
		}
		h[k] = v
	}
	// The requisites are a payer's or recipient's card or phone number:
	// remembered, so that maskJSON masks them (unless --unmask).
	for _, s := range sensitiveStrings(n.Body) {
		l.a.mask(s)
	}
	body := json.RawMessage(l.a.maskJSON(n.Body))
	if !json.Valid(body) {
		b, _ := json.Marshal(string(n.Body))
		body = b
	}
	b, err := json.Marshal(struct {
		Position  uint64            `json:"position"`
		Resource  string            `json:"resource"`
		ID        string            `json:"id"`
		Status    string            `json:"status"`
		NotifyURL string            `json:"notify_url"`
		Headers   map[string]string `json:"headers"`
		Body      json.RawMessage   `json:"body"`
	}{n.Position, n.Kind, n.ID, n.Status, n.NotifyURL, h, body})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(l.a.out, "%s\n", b)
	return err
}

// timedOut tells a feed that ended because --timeout ran out: what a
// command that follows until then was asked to do (exit 0).
func timedOut(a *app, err error) bool {
	return a.timeout > 0 && errors.Is(err, context.DeadlineExceeded)
}
