package main

// paykit webhooks send: a notification on demand. It reads the resource's
// current state through the API and POSTs to any URL the notification
// webhooktest builds from it, byte for byte what the service sends, so a
// receiver can be tested against any environment without waiting for a
// status change. It moves no money: the only write is to the receiver.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/webhooktest"
)

// notificationTokenEnv holds the token to send when --token is not given:
// the variable the example receiver reads, out of the process list.
const notificationTokenEnv = "PAYKIT_NOTIFICATION_TOKEN"

// WebhooksSendOptions are webhooks send's flags.
type WebhooksSendOptions struct {
	app *app
	// To is the receiver's URL.
	To string
	// Payment, Payout and Withdrawal: exactly one is the resource's id.
	Payment, Payout, Withdrawal string
	// Token is sent as X-Notification-Token ("" sends none).
	Token string
	// now measures the receiver's answer; tests may replace it.
	now func() time.Time
}

func webhooksCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "webhooks", Short: "Send a webhook notification on demand",
		Example: "  paykit webhooks send --to http://127.0.0.1:8090/paykit/webhook --payment 3f0c..."}
	cmd.AddCommand(newCmdWebhooksSend(a, nil))
	return cmd
}

func newCmdWebhooksSend(a *app, runF func(context.Context, *WebhooksSendOptions) error) *cobra.Command {
	opts := &WebhooksSendOptions{app: a, now: time.Now}
	cmd := &cobra.Command{
		Use:   "send --to URL (--payment ID | --payout ID | --withdrawal ID) [--token T]",
		Short: "Send a resource's notification, as the service would, to any URL",
		Long: "send reads the resource's current state through the API (any environment: it moves no money)\n" +
			"and POSTs the notification the service sends for it to --to: the same body, byte for byte,\n" +
			"with Content-Type: application/json and the token as X-Notification-Token. It prints the\n" +
			"receiver's answer and how long it took, and exits 1 when the receiver does not answer 2xx.\n\n" +
			"The service sends a payment's notification_token, and no token for a payout: pass the token\n" +
			"your receiver expects with --token or " + notificationTokenEnv + " (which keeps it out of the process list).",
		Example: "  PAYKIT_NOTIFICATION_TOKEN=demo-token paykit webhooks send --to http://127.0.0.1:8090/paykit/webhook --payment 3f0c...\n" +
			"  paykit --profile staging webhooks send --to https://shop.example/paykit/webhook --payout 9d2a...\n" +
			"  paykit webhooks send --to http://127.0.0.1:8090/hook --withdrawal 7b1e... --token t -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("token") {
				opts.Token = a.env.getenv(notificationTokenEnv)
			}
			return runBounded(a, cmd, opts, runF, runWebhooksSend)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.To, "to", "", "the receiver's URL (http or https)")
	f.StringVar(&opts.Payment, "payment", "", "the payment's id")
	f.StringVar(&opts.Payout, "payout", "", "the payout's id")
	f.StringVar(&opts.Withdrawal, "withdrawal", "", "the withdrawal's id")
	f.StringVar(&opts.Token, "token", "", "X-Notification-Token to send (default: $"+notificationTokenEnv+"; none when empty)")
	_ = cmd.MarkFlagRequired("to")
	cmd.MarkFlagsOneRequired("payment", "payout", "withdrawal")
	cmd.MarkFlagsMutuallyExclusive("payment", "payout", "withdrawal")
	return cmd
}

// checkReceiverURL refuses, before anything is read or sent, a URL no
// notification could go to.
func checkReceiverURL(flag, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("%s must be an http(s) URL such as http://127.0.0.1:8090/paykit/webhook, not %q", flag, mask.URL(s))
	}
	return nil
}

func runWebhooksSend(ctx context.Context, opts *WebhooksSendOptions) error {
	a := opts.app
	if err := checkReceiverURL("--to", opts.To); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	var res any
	var kind, id, status string
	switch {
	case opts.Payment != "":
		p, err := c.GetPayment(ctx, opts.Payment)
		if err != nil {
			return err
		}
		res, kind, id, status = p, "payment", p.ID, string(p.Status)
	case opts.Payout != "":
		p, err := c.GetPayout(ctx, opts.Payout)
		if err != nil {
			return err
		}
		res, kind, id, status = p, "payout", p.ID, string(p.Status)
	default:
		w, err := c.GetWithdrawal(ctx, opts.Withdrawal)
		if err != nil {
			return err
		}
		res, kind, id, status = w, "withdrawal", w.ID, string(w.Status)
	}
	req, err := webhooktest.NewRequest(opts.To, opts.Token, res)
	if err != nil {
		return usagef("%s", err)
	}
	ans := forward(req.WithContext(ctx), opts.now)
	out := sentRecord{Resource: kind, ID: id, Status: status, To: mask.URL(opts.To), Answer: ans.status, Millis: ans.took.Milliseconds(), Error: ans.err}
	if err := out.print(a); err != nil {
		return err
	}
	return ans.verdict()
}

// answer is what a receiver made of one notification.
type answer struct {
	status int // 0: no answer
	took   time.Duration
	err    string
}

// verdict is exit 0 for a 2xx, else exit 1 naming what came back.
func (an answer) verdict() error {
	switch {
	case an.status == 0:
		return &exitError{code: exitAPI, msg: "the receiver did not answer: " + an.err}
	case an.status < 200 || an.status > 299:
		return &exitError{code: exitAPI, msg: fmt.Sprintf("the receiver answered %d %s, not 2xx: it did not take the notification", an.status, http.StatusText(an.status))}
	}
	return nil
}

// receiverClient posts notifications as the sandbox does: a redirect is
// not followed (another URL is not the receiver), 30 s at most.
var receiverClient = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// forward sends req to its receiver and says how it answered. The
// receiver's body is read (64 KB at most) and dropped.
func forward(req *http.Request, now func() time.Time) answer {
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "paykit-cli/"+version())
	}
	start := now()
	res, err := receiverClient.Do(req)
	if err != nil {
		return answer{took: now().Sub(start), err: receiverError(err)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	return answer{status: res.StatusCode, took: now().Sub(start)}
}

// receiverError says why a receiver did not answer without its URL (which
// may hold a secret): url.Error's text repeats it.
func receiverError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return plain(err.Error())
}

// sentRecord is webhooks send's output.
type sentRecord struct {
	Resource string `json:"resource"`
	ID       string `json:"id"`
	Status   string `json:"status"`
	To       string `json:"to"`
	Answer   int    `json:"answer_status"`
	Millis   int64  `json:"duration_ms"`
	Error    string `json:"error,omitempty"`
}

func (s sentRecord) print(a *app) error {
	var r record
	r.add("resource", s.Resource)
	r.add("id", s.ID)
	r.add("status", s.Status)
	r.add("to", s.To)
	ans := strconv.Itoa(s.Answer)
	if s.Answer == 0 {
		ans = "no answer"
	}
	r.add("answer", ans)
	r.add("time", strconv.FormatInt(s.Millis, 10)+"ms")
	r.opt("error", s.Error)
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return a.printRecord(b, r)
}
