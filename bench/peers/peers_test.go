// Package peers measures paykit-go beside two well-known Go API clients,
// stripe-go and go-github, each against the leanest hand-written call that
// puts the same request on the wire and decodes the same body. It is a
// module of its own so that the SDK's users never download the peers.
package peers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"
	"github.com/paykit-dev/paykit-go"
	"github.com/shopspring/decimal"
	"github.com/stripe/stripe-go/v85"
)

// Credentials of the loopback server; none of them is real.
const (
	paykitKey    = "pk_bench_key"
	paykitSecret = "sk_bench_secret"
	stripeKey    = "sk_test_bench"
	githubToken  = "ghp_bench_token"
)

// call is one API call of one side of a pair.
type call func(ctx context.Context) error

// pair is one peer: its SDK call and its raw call, against one server.
type pair struct {
	name     string
	sdk, raw call
}

// newPairs makes the three pairs against srv. Each SDK is made as its
// documentation shows, with its defaults, pointed at srv; stripe-go's
// logger is silenced and go-github gets a transport of its own (both share
// http.DefaultTransport otherwise). Each raw side has its own transport.
func newPairs(tb testing.TB, srv string) []pair {
	tb.Helper()
	pc, err := paykit.NewClient(srv, paykitKey, paykit.HMACSigner(paykitSecret))
	if err != nil {
		tb.Fatal(err)
	}
	sc := stripe.NewClient(stripeKey, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL:           stripe.String(srv),
		HTTPClient:    &http.Client{Timeout: 80 * time.Second, Transport: leanTransport(tb)},
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	base := srv + "/"
	gc, err := github.NewClient(github.WithHTTPClient(&http.Client{Transport: leanTransport(tb)}),
		github.WithAuthToken(githubToken), github.WithURLs(&base, nil))
	if err != nil {
		tb.Fatal(err)
	}
	raw := &rawClient{base: srv, hc: &http.Client{Transport: leanTransport(tb)}}
	return []pair{
		{"paykit-go",
			func(ctx context.Context) error {
				p, err := pc.GetPayment(ctx, paymentID)
				return check(err, p != nil && p.ID == paymentID)
			},
			func(ctx context.Context) error {
				p, err := raw.getPayment(ctx, paymentID)
				return check(err, p.ID == paymentID)
			}},
		{"stripe-go",
			func(ctx context.Context) error {
				pi, err := sc.V1PaymentIntents.Retrieve(ctx, paymentIntentID, nil)
				return check(err, pi != nil && pi.ID == paymentIntentID)
			},
			func(ctx context.Context) error {
				pi, err := raw.getPaymentIntent(ctx, paymentIntentID)
				return check(err, pi.ID == paymentIntentID)
			}},
		{"go-github",
			func(ctx context.Context) error {
				is, _, err := gc.Issues.Get(ctx, issueOwner, issueRepo, issueNumber)
				return check(err, is != nil && is.GetNumber() == issueNumber)
			},
			func(ctx context.Context) error {
				is, err := raw.getIssue(ctx, issueOwner, issueRepo, issueNumber)
				return check(err, is.Number == issueNumber)
			}},
	}
}

func check(err error, ok bool) error {
	if err == nil && !ok {
		err = fmt.Errorf("wrong resource decoded")
	}
	return err
}

// ---------------------------------------------------------------------------
// The raw sides: a plain http.Client without a timeout, the SDK's request
// headers, the body decoded as it streams in, then drained and closed.

type rawClient struct {
	base string
	hc   *http.Client
}

// get sends req and decodes a 2xx JSON answer into out.
func (c *rawClient) get(req *http.Request, out any) error {
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err = fmt.Errorf("HTTP %d", resp.StatusCode)
	} else {
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}

// paykitUserAgent is the User-Agent paykit-go sends.
var paykitUserAgent = "paykit-go/" + paykit.Version + " " + runtime.Version()

// getPayment signs every call with the documented HMAC, as the SDK does.
func (c *rawClient) getPayment(ctx context.Context, id string) (*rawPayment, error) {
	uri := "/v1/payments/" + id
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+uri, nil)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, []byte(paykitSecret))
	mac.Write([]byte("GET\n" + uri + "\n"))
	req.Header.Set("X-Identity", paykitKey)
	req.Header.Set("User-Agent", paykitUserAgent)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Signature", hex.EncodeToString(mac.Sum(nil)))
	p := new(rawPayment)
	return p, c.get(req, p)
}

// stripeClientUA is the X-Stripe-Client-User-Agent stripe-go sends.
var stripeClientUA = `{"application":null,"bindings_version":"` + stripe.ClientVersion + `","lang":"go","lang_version":"` +
	runtime.Version() + `","platform":"` + runtime.GOOS + " " + runtime.GOARCH + `"}`

func (c *rawClient) getPaymentIntent(ctx context.Context, id string) (*rawPaymentIntent, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/payment_intents/"+id, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+stripeKey)
	req.Header.Set("User-Agent", "Stripe/v1 GoBindings/"+stripe.ClientVersion)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Stripe-Version", stripe.APIVersion)
	req.Header.Set("X-Stripe-Client-User-Agent", stripeClientUA)
	pi := new(rawPaymentIntent)
	return pi, c.get(req, pi)
}

func (c *rawClient) getIssue(ctx context.Context, owner, repo string, number int) (*rawIssue, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		c.base+"/repos/"+owner+"/"+repo+"/issues/"+strconv.Itoa(number), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+githubToken)
	req.Header.Set("Accept", "application/vnd.github.squirrel-girl-preview")
	req.Header.Set("User-Agent", "go-github/"+github.Version)
	req.Header.Set("X-Github-Api-Version", "2022-11-28")
	is := new(rawIssue)
	return is, c.get(req, is)
}

// rawPayment has the fields of paykit.Payment that the body carries, with
// the same types (decimal.Decimal money, time.Time times).
type rawPayment struct {
	ID         string          `json:"id"`
	ExtID      string          `json:"ext_id"`
	Amount     decimal.Decimal `json:"amount"`
	Currency   string          `json:"currency"`
	Status     string          `json:"status"`
	Method     string          `json:"method"`
	Requisites struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		Bank     string `json:"bank"`
		BankCode string `json:"bank_code"`
		Holder   string `json:"holder"`
	} `json:"requisites"`
	PaymentURL string          `json:"payment_url"`
	ValidUntil time.Time       `json:"valid_until"`
	CreatedAt  time.Time       `json:"created_at"`
	USDTRate   decimal.Decimal `json:"usdt_rate"`
}

// rawID stands for an expandable Stripe object: null here, an object with
// an id when present.
type rawID struct {
	ID string `json:"id"`
}

// rawPaymentIntent has the fields of stripe.PaymentIntent that the body
// carries, with stripe-go's types (int64 amounts, Unix-seconds times).
type rawPaymentIntent struct {
	ID               string `json:"id"`
	Object           string `json:"object"`
	Amount           int64  `json:"amount"`
	AmountCapturable int64  `json:"amount_capturable"`
	AmountDetails    *struct {
		Tip *struct {
			Amount int64 `json:"amount"`
		} `json:"tip"`
	} `json:"amount_details"`
	AmountReceived          int64  `json:"amount_received"`
	Application             *rawID `json:"application"`
	ApplicationFeeAmount    int64  `json:"application_fee_amount"`
	AutomaticPaymentMethods *struct {
		AllowRedirects string `json:"allow_redirects"`
		Enabled        bool   `json:"enabled"`
	} `json:"automatic_payment_methods"`
	CanceledAt         int64  `json:"canceled_at"`
	CancellationReason string `json:"cancellation_reason"`
	CaptureMethod      string `json:"capture_method"`
	ClientSecret       string `json:"client_secret"`
	ConfirmationMethod string `json:"confirmation_method"`
	Created            int64  `json:"created"`
	Currency           string `json:"currency"`
	Customer           *rawID `json:"customer"`
	Description        string `json:"description"`
	LastPaymentError   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"last_payment_error"`
	LatestCharge *rawID            `json:"latest_charge"`
	Livemode     bool              `json:"livemode"`
	Metadata     map[string]string `json:"metadata"`
	NextAction   *struct {
		Type string `json:"type"`
	} `json:"next_action"`
	OnBehalfOf           *rawID `json:"on_behalf_of"`
	PaymentMethod        *rawID `json:"payment_method"`
	PaymentMethodOptions *struct {
		Card *struct {
			Installments *struct {
				Enabled bool `json:"enabled"`
			} `json:"installments"`
			MandateOptions *struct {
				Amount int64 `json:"amount"`
			} `json:"mandate_options"`
			Network             string `json:"network"`
			RequestThreeDSecure string `json:"request_three_d_secure"`
		} `json:"card"`
		Link *struct {
			PersistentToken string `json:"persistent_token"`
		} `json:"link"`
	} `json:"payment_method_options"`
	PaymentMethodTypes []string `json:"payment_method_types"`
	Processing         *struct {
		Type string `json:"type"`
	} `json:"processing"`
	ReceiptEmail     string `json:"receipt_email"`
	Review           *rawID `json:"review"`
	SetupFutureUsage string `json:"setup_future_usage"`
	Shipping         *struct {
		Name string `json:"name"`
	} `json:"shipping"`
	Source                    *rawID `json:"source"`
	StatementDescriptor       string `json:"statement_descriptor"`
	StatementDescriptorSuffix string `json:"statement_descriptor_suffix"`
	Status                    string `json:"status"`
	TransferData              *struct {
		Amount int64 `json:"amount"`
	} `json:"transfer_data"`
	TransferGroup string `json:"transfer_group"`
}

// rawUser has the fields of github.User that an issue's users carry.
type rawUser struct {
	Login             string `json:"login"`
	ID                int64  `json:"id"`
	NodeID            string `json:"node_id"`
	AvatarURL         string `json:"avatar_url"`
	GravatarID        string `json:"gravatar_id"`
	URL               string `json:"url"`
	HTMLURL           string `json:"html_url"`
	FollowersURL      string `json:"followers_url"`
	FollowingURL      string `json:"following_url"`
	GistsURL          string `json:"gists_url"`
	StarredURL        string `json:"starred_url"`
	SubscriptionsURL  string `json:"subscriptions_url"`
	OrganizationsURL  string `json:"organizations_url"`
	ReposURL          string `json:"repos_url"`
	EventsURL         string `json:"events_url"`
	ReceivedEventsURL string `json:"received_events_url"`
	Type              string `json:"type"`
	SiteAdmin         bool   `json:"site_admin"`
}

// rawIssue has the fields of github.Issue that the body carries.
type rawIssue struct {
	ID            int64    `json:"id"`
	NodeID        string   `json:"node_id"`
	URL           string   `json:"url"`
	RepositoryURL string   `json:"repository_url"`
	LabelsURL     string   `json:"labels_url"`
	CommentsURL   string   `json:"comments_url"`
	EventsURL     string   `json:"events_url"`
	HTMLURL       string   `json:"html_url"`
	Number        int      `json:"number"`
	State         string   `json:"state"`
	Title         string   `json:"title"`
	Body          string   `json:"body"`
	User          *rawUser `json:"user"`
	Labels        []struct {
		ID          int64  `json:"id"`
		NodeID      string `json:"node_id"`
		URL         string `json:"url"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Color       string `json:"color"`
		Default     bool   `json:"default"`
	} `json:"labels"`
	Assignee  *rawUser   `json:"assignee"`
	Assignees []*rawUser `json:"assignees"`
	Milestone *struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
	} `json:"milestone"`
	Locked            bool       `json:"locked"`
	ActiveLockReason  string     `json:"active_lock_reason"`
	Comments          int        `json:"comments"`
	ClosedAt          *time.Time `json:"closed_at"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	ClosedBy          *rawUser   `json:"closed_by"`
	AuthorAssociation string     `json:"author_association"`
	StateReason       string     `json:"state_reason"`
	Reactions         *struct {
		URL        string `json:"url"`
		TotalCount int    `json:"total_count"`
		PlusOne    int    `json:"+1"`
		MinusOne   int    `json:"-1"`
		Laugh      int    `json:"laugh"`
		Hooray     int    `json:"hooray"`
		Confused   int    `json:"confused"`
		Heart      int    `json:"heart"`
		Rocket     int    `json:"rocket"`
		Eyes       int    `json:"eyes"`
	} `json:"reactions"`
}

// ---------------------------------------------------------------------------
// Blocked alternation.

// blockSize is the number of calls in one block: 50 unless -block says.
var blockSize = flag.Int("block", 50, "calls per block of blocked alternation")

// BenchmarkPeers measures each peer against its raw call by blocked
// alternation on one loopback server: one op is a block of 50 SDK calls
// and a block of 50 raw calls, in alternating order. It reports the median
// and quartiles of the per-op ratio SDK time / raw time, the time and the
// allocations per call of each side and their difference. Allocations are
// counted with runtime.ReadMemStats between blocks and include the
// in-process server's, the same for both sides of a pair. Run it with
// -benchtime=60x -count=5 for the figures in BENCHMARKS.md.
func BenchmarkPeers(b *testing.B) {
	srv := newServer(b, nil)
	for _, p := range newPairs(b, srv.URL) {
		b.Run(p.name, func(b *testing.B) { runBlocked(b, p) })
	}
}

// sideStats accumulates the blocks of one side.
type sideStats struct {
	time   time.Duration
	allocs uint64
	calls  int
}

func runBlocked(b *testing.B, p pair) {
	ctx := context.Background()
	var ms runtime.MemStats
	block := *blockSize
	run := func(f call, s *sideStats) time.Duration {
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		t0 := time.Now()
		for range block {
			if err := f(ctx); err != nil {
				b.Fatal(err)
			}
		}
		d := time.Since(t0)
		runtime.ReadMemStats(&ms)
		s.time += d
		s.allocs += ms.Mallocs - m0
		s.calls += block
		return d
	}
	var warm sideStats
	run(p.sdk, &warm)
	run(p.raw, &warm)

	var s, r sideStats
	var ratios []float64
	for b.Loop() {
		var ts, tr time.Duration
		if len(ratios)%2 == 0 {
			ts, tr = run(p.sdk, &s), run(p.raw, &r)
		} else {
			tr, ts = run(p.raw, &r), run(p.sdk, &s)
		}
		ratios = append(ratios, float64(ts)/float64(tr))
	}
	slices.Sort(ratios)
	b.ReportMetric(quantile(ratios, 0.5), "ratio")
	b.ReportMetric(quantile(ratios, 0.25), "ratio-q1")
	b.ReportMetric(quantile(ratios, 0.75), "ratio-q3")
	b.ReportMetric(float64(s.time.Nanoseconds())/float64(s.calls), "sdk-ns/call")
	b.ReportMetric(float64(r.time.Nanoseconds())/float64(r.calls), "raw-ns/call")
	sa, ra := float64(s.allocs)/float64(s.calls), float64(r.allocs)/float64(r.calls)
	b.ReportMetric(sa, "sdk-allocs/call")
	b.ReportMetric(ra, "raw-allocs/call")
	b.ReportMetric(sa-ra, "extra-allocs/call")
}

// quantile of sorted xs, interpolated linearly.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pos := q * float64(len(xs)-1)
	lo := int(pos)
	if lo+1 >= len(xs) {
		return xs[lo]
	}
	return xs[lo] + (pos-float64(lo))*(xs[lo+1]-xs[lo])
}
