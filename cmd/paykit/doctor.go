package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// Verdicts of doctor's lines.
const (
	verdictOK   = "ok"
	verdictWarn = "warn"
	verdictFail = "FAIL"
)

// maxClockSkew is the skew doctor warns about: a service that checks
// request times (the spec is silent) would refuse beyond a few minutes,
// and webhook timestamps would look wrong long before.
const maxClockSkew = 30 * time.Second

// probeLimit is the page size doctor asks for to learn the service's cap
// on the payout list's limit, which the spec does not state.
const probeLimit = 1000

func doctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check a setup against the service without moving money",
		Long: "doctor checks, with reads only: the base URL and TLS, the clock skew from the Date header,\n" +
			"the API key and signing scheme (CheckCredentials), the latency of a signed read, and what the\n" +
			"service's answers tell of points the spec leaves unsaid (the largest payout-list limit).\n" +
			"Each line ends with a verdict: ok, warn or FAIL. It exits 4 when the credentials are refused,\n" +
			"1 when another check fails.",
		Example: "  paykit doctor\n  paykit --profile staging doctor",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cr, err := loadCredentials(a.env.getenv, a.profile)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			d := &doctor{a: a, c: c}
			d.run(ctx, cr.baseURL)
			return d.err
		},
	}
}

type doctor struct {
	a   *app
	c   *paykit.Client
	err error
}

func (d *doctor) line(verdict, check, detail string) {
	fmt.Fprintf(d.a.out, "%-4s  %-20s %s\n", verdict, check, detail)
	if verdict == verdictFail && d.err == nil {
		d.err = errors.New("doctor: a check failed")
	}
}

func (d *doctor) run(ctx context.Context, base string) {
	u, err := url.Parse(base)
	if err != nil {
		d.line(verdictFail, "base URL", err.Error())
		return
	}
	switch {
	case u.Scheme == "https":
		d.tls(ctx, u)
	case isLoopbackHost(u.Hostname()):
		d.line(verdictOK, "base URL", base+" (plain http on loopback: a local sandbox)")
	default:
		d.line(verdictWarn, "base URL", base+": plain http beyond loopback sends the key and signatures in clear text")
	}

	err = d.c.CheckCredentials(ctx)
	skewDone := d.skew()
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
	if !skewDone {
		d.skew()
	}

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

	page, err := d.c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: probeLimit})
	switch {
	case err != nil:
		d.line(verdictWarn, "payout list limit", fmt.Sprintf("limit=%d refused: %v", probeLimit, err))
	case page.Limit < probeLimit:
		d.line(verdictOK, "payout list limit", fmt.Sprintf("the service caps limit at %d (asked %d); paykit payouts list --all pages past it", page.Limit, probeLimit))
	default:
		d.line(verdictOK, "payout list limit", fmt.Sprintf("limit=%d accepted (no cap at or below it)", page.Limit))
	}
	if _, err := d.c.ListBanks(ctx); err != nil {
		d.line(verdictWarn, "banks", err.Error())
	}
}

// skew compares the Date header of the last answer with the local clock;
// false when there was none to read.
func (d *doctor) skew() bool {
	d.a.cap.mu.Lock()
	date, rtt := d.a.cap.date, d.a.cap.elapsed
	d.a.cap.mu.Unlock()
	if date == "" {
		return false
	}
	t, err := http.ParseTime(date)
	if err != nil {
		d.line(verdictWarn, "clock", "the Date header is not an HTTP date")
		return true
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
	return true
}

func (d *doctor) tls(ctx context.Context, u *url.URL) {
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	dialer := &tls.Dialer{Config: &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		d.line(verdictFail, "TLS", err.Error())
		return
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
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
