package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// Verdicts of doctor's lines: ok, warn and FAIL judge the setup; info
// reports what doctor learnt of a point the spec leaves unsaid.
const (
	verdictOK   = "ok"
	verdictWarn = "warn"
	verdictFail = "FAIL"
	verdictInfo = "info"
)

// maxClockSkew is the skew doctor warns about: a service that checks
// request times (the spec is silent) would refuse beyond a few minutes,
// and webhook timestamps would look wrong long before.
const maxClockSkew = 30 * time.Second

// probeLimits are the payout-list page sizes doctor asks for, in turn, to
// learn the largest the service accepts (the spec shows none). They are
// asked over a window of time in 2000 that holds no payout, so that even
// a page of a million costs the service nothing.
var probeLimits = []int{100, 1_000, 10_000, 100_000, 1_000_000}

// emptyFrom and emptyTo bound that window.
var (
	emptyFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	emptyTo   = emptyFrom.Add(time.Second)
)

// Credentials doctor sends on purpose to see how the service refuses
// them: made up, so no real secret is involved.
const (
	doctorUnknownKey  = "paykit-doctor-unknown-key"
	doctorWrongSecret = "paykit-doctor-wrong-secret"
)

func doctorCmd(a *app) *cobra.Command { return newCmdDoctor(a, nil) }

// DoctorOptions are doctor's options (none of its own).
type DoctorOptions struct {
	app *app
}

func newCmdDoctor(a *app, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{app: a}
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check a setup against the service without moving money",
		Long: "doctor checks, with reads only: the base URL and TLS, the API key and signing scheme\n" +
			"(CheckCredentials), the clock skew from the Date header, the latency of a signed read, and\n" +
			"what the service's answers tell of points the spec leaves unsaid: how it refuses a wrong\n" +
			"signature and an unknown key, the largest payout-list limit it accepts, the order of the\n" +
			"payout list, whether its from and to bounds are inclusive, and its rate-limit headers.\n" +
			"Each line starts with a verdict: ok, warn or FAIL, or info for what was learnt. It exits 4\n" +
			"when the credentials are refused, 1 when another check fails. -o json and -o csv give the\n" +
			"lines as records (verdict, check, detail).",
		Example: "  paykit doctor\n  paykit --profile staging doctor -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBounded(a, cmd, opts, runF, runDoctor)
		},
	}
}

func runDoctor(ctx context.Context, opts *DoctorOptions) error {
	a := opts.app
	cr, err := a.credentials()
	if err != nil {
		return err
	}
	d := &doctor{a: a, cr: cr}
	if d.baseURL(ctx) {
		if d.c, err = a.client(); err != nil {
			// The SDK's own refusal (a malformed URL, a key with a line
			// break): a line of the report, then exit 4.
			d.line(verdictFail, "client", err.Error())
			d.err = err
		} else {
			d.run(ctx)
		}
	}
	if err := d.print(); err != nil {
		return err
	}
	return d.err
}

// finding is one line of doctor's report.
type finding struct {
	// Verdict is ok, warn, FAIL or info.
	Verdict string `json:"verdict"`
	// Check names what was looked at, such as "payout list limit".
	Check string `json:"check"`
	// Detail is what doctor saw, for a person.
	Detail string `json:"detail"`
}

type doctor struct {
	a     *app
	c     *paykit.Client
	cr    *credentials
	lines []finding
	err   error
}

// line records a finding; the table prints it at once, so a person sees
// each check as it ends.
func (d *doctor) line(verdict, check, detail string) {
	d.lines = append(d.lines, finding{verdict, check, detail})
	if d.a.output == "table" {
		fmt.Fprintf(d.a.out, "%-4s  %-20s %s\n", verdict, check, detail)
	}
	if verdict == verdictFail && d.err == nil {
		d.err = errors.New("doctor: a check failed")
	}
}

// print writes the report for -o json and -o csv.
func (d *doctor) print() error {
	switch d.a.output {
	case "json":
		b, err := json.Marshal(d.lines)
		if err != nil {
			return err
		}
		return d.a.emitJSON(b)
	case "csv":
		l := list{header: []string{"verdict", "check", "detail"}}
		for _, f := range d.lines {
			l.rows = append(l.rows, []string{f.Verdict, f.Check, f.Detail})
		}
		return writeCSV(d.a.out, l)
	}
	return nil
}

// baseURL judges the base URL, and TLS for https; false when nothing
// more can be checked.
func (d *doctor) baseURL(ctx context.Context) bool {
	u, err := url.Parse(d.cr.baseURL)
	if err != nil || u.Host == "" {
		// Not echoed: a mistyped URL may hold a password.
		d.line(verdictFail, "base URL", "not an absolute http(s) URL")
		d.err = &credentialsError{msg: "doctor: the base URL is unusable"}
		return false
	}
	base := u.Redacted() // a password in it stays out of the report
	switch {
	case u.Scheme == "https":
		return d.tls(ctx, u)
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		d.line(verdictOK, "base URL", base+" (plain http on loopback: a local sandbox)")
		return true
	case u.Scheme == "http":
		d.line(verdictFail, "base URL", base+": plain http beyond loopback would send the key and signatures in clear text; the SDK refuses it: use https://")
		d.err = &credentialsError{msg: "doctor: the base URL is unusable"}
		return false
	default:
		d.line(verdictFail, "base URL", fmt.Sprintf("%s: the scheme must be https (or http on loopback)", base))
		d.err = &credentialsError{msg: "doctor: the base URL is unusable"}
		return false
	}
}

func (d *doctor) run(ctx context.Context) {
	err := d.c.CheckCredentials(ctx)
	switch {
	case err == nil:
		d.line(verdictOK, "credentials", "the service accepts the API key and the HMAC signing scheme")
	case errors.Is(err, paykit.ErrUnauthorized):
		d.line(verdictFail, "credentials", "refused: check the API key, the secret, and that the service signs with HMAC-SHA256 as HMACSigner does")
		d.err = &credentialsError{msg: "doctor: the service refused the credentials"}
		return
	default:
		d.line(verdictFail, "credentials", "not judged: "+err.Error())
		return
	}
	d.skew()

	var times []time.Duration
	for range 3 {
		start := time.Now()
		if _, err := d.c.GetBalance(ctx); err != nil {
			d.line(verdictFail, "signed read", err.Error())
			return
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	verdict := verdictOK
	if times[1] > 2*time.Second {
		verdict = verdictWarn
	}
	d.line(verdict, "latency", fmt.Sprintf("GET /v1/balance, median of 3: %s (fastest %s)", times[1].Round(time.Microsecond), times[0].Round(time.Microsecond)))
	if banks, err := d.c.ListBanks(ctx); err != nil {
		d.line(verdictWarn, "banks", err.Error())
	} else {
		d.line(verdictOK, "banks", fmt.Sprintf("%d banks listed", len(banks)))
	}

	// What the spec leaves unsaid, learnt by reads alone.
	d.refusals(ctx)
	d.listLimit(ctx)
	d.listOrderAndBounds(ctx)
	d.rateLimits()
}

// skew compares the Date header of the last answer with the local clock.
func (d *doctor) skew() {
	d.a.cap.mu.Lock()
	date, rtt := d.a.cap.date, d.a.cap.elapsed
	d.a.cap.mu.Unlock()
	if date == "" {
		d.line(verdictWarn, "clock", "the service sends no Date header: the clock skew is unknown")
		return
	}
	t, err := http.ParseTime(date)
	if err != nil {
		d.line(verdictWarn, "clock", "the Date header is not an HTTP date")
		return
	}
	// The Date header has second precision and was written somewhere in
	// the round trip: allow a second plus the round trip before blaming
	// either clock.
	skew := time.Since(t)
	verdict := verdictOK
	if skew.Abs() > maxClockSkew+time.Second+rtt {
		verdict = verdictWarn
	}
	d.line(verdict, "clock", fmt.Sprintf("skew %s against the service's Date header (warn beyond %s)", skew.Round(time.Second), maxClockSkew))
}

// refusals reads the balance with a wrong signature and with an unknown
// key (spec: "Response to a missing or invalid key or signature: not
// shown"). A service that answers either with the balance does not check
// what it should.
func (d *doctor) refusals(ctx context.Context) {
	var parts []string
	verdict := verdictInfo
	for _, probe := range []struct{ what, key, secret string }{
		{"a wrong signature", d.cr.apiKey, doctorWrongSecret},
		{"an unknown key", doctorUnknownKey, doctorWrongSecret},
	} {
		c, err := paykit.NewClient(d.cr.baseURL, probe.key, paykit.HMACSigner(probe.secret),
			paykit.WithHTTPClient(&http.Client{Transport: d.a.cap, Timeout: paykit.DefaultAttemptTimeout}), paykit.WithUserAgent("paykit-cli/"+version()))
		if err != nil {
			d.line(verdictWarn, "refusals", err.Error())
			return
		}
		_, err = c.GetBalance(ctx)
		var apiErr *paykit.Error
		switch {
		case err == nil:
			verdict = verdictWarn
			parts = append(parts, probe.what+": ACCEPTED (the service does not check it)")
		case errors.As(err, &apiErr):
			s := fmt.Sprintf("%s: HTTP %d", probe.what, apiErr.HTTPStatus)
			if apiErr.Code != "" {
				s += " " + apiErr.Code
			}
			parts = append(parts, s)
		default:
			d.line(verdictWarn, "refusals", probe.what+": "+err.Error())
			return
		}
	}
	d.line(verdict, "refusals", strings.Join(parts, "; "))
}

// listLimit learns the largest payout-list limit the service accepts
// (spec: "Maximum value of the payout list limit: not shown"): the probe
// sizes in turn over an empty window; a size answered with a smaller
// limit is a cap, a refused one is bisected against the last accepted.
func (d *doctor) listLimit(ctx context.Context) {
	const check = "payout list limit"
	page := func(limit int) (int, error) {
		p, err := d.c.ListPayouts(ctx, paykit.ListPayoutsParams{From: emptyFrom, To: emptyTo, Limit: limit})
		if err != nil {
			return 0, err
		}
		return p.Limit, nil
	}
	refused := func(err error) bool {
		var apiErr *paykit.Error
		return errors.As(err, &apiErr) && apiErr.HTTPStatus >= 400 && apiErr.HTTPStatus < 500
	}
	accepted := 0
	for _, asked := range probeLimits {
		got, err := page(asked)
		switch {
		case err != nil && refused(err) && accepted > 0:
			lo, hi := accepted, asked // lo accepted, hi refused
			var hiErr = err
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if _, err := page(mid); err == nil {
					lo = mid
				} else if refused(err) {
					hi, hiErr = mid, err
				} else {
					d.line(verdictWarn, check, fmt.Sprintf("limit=%d: %v", mid, err))
					return
				}
			}
			d.line(verdictInfo, check, fmt.Sprintf("the largest limit accepted is %d; limit=%d is refused (%s)", lo, hi, short(hiErr)))
			return
		case err != nil:
			d.line(verdictWarn, check, fmt.Sprintf("limit=%d: %v", asked, err))
			return
		case got == 0:
			d.line(verdictInfo, check, fmt.Sprintf("limit=%d accepted; the answer does not say the limit it used", asked))
			return
		case got < asked:
			d.line(verdictInfo, check, fmt.Sprintf("a larger limit is lowered to %d, not refused (asked %d); paykit payouts list --all pages past it", got, asked))
			return
		}
		accepted = asked
	}
	d.line(verdictInfo, check, fmt.Sprintf("limit=%d accepted and used: no cap up to there", accepted))
}

// listOrderAndBounds learns the payout list's order and whether from and
// to are inclusive (spec: "Ordering of the payout list and whether the
// from and to bounds are inclusive: not shown") from the merchant's own
// payouts: the first and the last of the list, and the first again in a
// one-second window starting or ending at its created_at.
func (d *doctor) listOrderAndBounds(ctx context.Context) {
	first, err := d.c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: 1})
	if err != nil {
		d.line(verdictWarn, "payout list order", err.Error())
		return
	}
	if len(first.Payouts) == 0 {
		d.line(verdictInfo, "payout list order", "not learnt: there is no payout to look at")
		d.line(verdictInfo, "payout list bounds", "not learnt: there is no payout to look at")
		return
	}
	p := first.Payouts[0]
	switch last, err := d.c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: 1, Offset: first.Total - 1}); {
	case err != nil:
		d.line(verdictWarn, "payout list order", err.Error())
	case first.Total < 2 || len(last.Payouts) == 0:
		d.line(verdictInfo, "payout list order", "not learnt: fewer than two payouts")
	case last.Payouts[0].CreatedAt.Before(p.CreatedAt):
		d.line(verdictInfo, "payout list order", fmt.Sprintf("newest first (created_at of the first and last of %d payouts)", first.Total))
	case p.CreatedAt.Before(last.Payouts[0].CreatedAt):
		d.line(verdictInfo, "payout list order", fmt.Sprintf("oldest first (created_at of the first and last of %d payouts)", first.Total))
	default:
		d.line(verdictInfo, "payout list order", "not learnt: the first and last payouts have the same created_at")
	}
	if p.CreatedAt.IsZero() {
		d.line(verdictInfo, "payout list bounds", "not learnt: the payout has no created_at")
		return
	}
	holds := func(from, to time.Time) (bool, error) {
		page, err := d.c.ListPayouts(ctx, paykit.ListPayoutsParams{From: from, To: to, Limit: 100})
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(page.Payouts, func(q paykit.Payout) bool { return q.ID == p.ID }), nil
	}
	t := p.CreatedAt
	fromIn, err := holds(t, t.Add(time.Second))
	if err != nil {
		d.line(verdictWarn, "payout list bounds", err.Error())
		return
	}
	toIn, err := holds(t.Add(-time.Second), t)
	if err != nil {
		d.line(verdictWarn, "payout list bounds", err.Error())
		return
	}
	word := map[bool]string{true: "inclusive", false: "exclusive"}
	d.line(verdictInfo, "payout list bounds", fmt.Sprintf("from is %s, to is %s (a payout's own created_at as the bound, at its precision)", word[fromIn], word[toIn]))
}

// rateLimits reports the rate-limit headers seen on doctor's reads (spec:
// "Rate limits of requests: not shown").
func (d *doctor) rateLimits() {
	d.a.cap.mu.Lock()
	var seen []string
	for _, h := range rateHeaders {
		if v, ok := d.a.cap.rate[h]; ok {
			seen = append(seen, fmt.Sprintf("%s: %q", h, truncate(v, 80)))
		}
	}
	d.a.cap.mu.Unlock()
	if len(seen) == 0 {
		d.line(verdictInfo, "rate limits", "no rate-limit header on any answer (RateLimit-*, X-RateLimit-*, Retry-After)")
		return
	}
	d.line(verdictInfo, "rate limits", strings.Join(seen, ", "))
}

// short is an error's text without the SDK's prefix.
func short(err error) string { return strings.TrimPrefix(err.Error(), "paykit: ") }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// tls dials the host and judges its certificate; false when the
// handshake fails, which every request would then fail too.
func (d *doctor) tls(ctx context.Context, u *url.URL) bool {
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	dialer := &tls.Dialer{Config: &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		d.line(verdictFail, "TLS", err.Error())
		return false
	}
	defer conn.Close()
	st := conn.(*tls.Conn).ConnectionState()
	leaf := st.PeerCertificates[0]
	left := time.Until(leaf.NotAfter)
	verdict := verdictOK
	if left < 14*24*time.Hour {
		verdict = verdictWarn
	}
	d.line(verdict, "TLS", fmt.Sprintf("%s, %s, certificate valid until %s (%d days)", u.Host, tls.VersionName(st.Version),
		leaf.NotAfter.UTC().Format(time.DateOnly), int(left.Hours()/24)))
	return true
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") { // as the SDK's NewClient: host names ignore case
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
