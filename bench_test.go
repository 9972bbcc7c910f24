package paykit

// Benchmarks of the SDK's cost per call, each beside a hand-written
// net/http + encoding/json version of the same call ("RawHTTP"): the least a
// Go program can do to send the same request and decode the same answer.
// Both sides talk to one loopback httptest server that answers canned,
// spec-shaped bodies, so what differs between a pair is the client side
// alone. See BENCHMARKS.md for how to run them and for the figures.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchPaymentJSON is a GET /v1/payments/{id} (and POST /v1/payments)
// answer shaped after the spec's Payment table.
const benchPaymentJSON = `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"order-1001","amount":1500.50,"currency":"RUB",` +
	`"status":"PENDING","method":"CARD",` +
	`"requisites":{"type":"card","value":"2200123456789012","bank":"Sberbank","bank_code":"sber","holder":"IVAN I."},` +
	`"payment_url":"https://pay.example/p/6f1c2a5e","valid_until":"2026-11-22T10:20:00Z",` +
	`"created_at":"2026-11-22T10:00:00.25Z","usdt_rate":92.45}`

// benchPayoutListJSON is a 100-item GET /v1/payouts page: half pending,
// half completed (with provider_order_id and completed_at).
var benchPayoutListJSON = func() []byte {
	var b bytes.Buffer
	b.WriteString(`{"payouts":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"id":"0b7d3c2a-1e4f-4a5b-8c6d-%012d","ext_id":"po-%d","amount":2500.00,"currency":"RUB",`+
				`"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV","bank":"",`+
				`"status":"pending","created_at":"2024-05-01T10:00:00Z"}`, i, i)
		} else {
			fmt.Fprintf(&b, `{"id":"0b7d3c2a-1e4f-4a5b-8c6d-%012d","ext_id":"po-%d","amount":1500.50,"currency":"RUB",`+
				`"method":"sbp","requisites":"+79001234567","holder_name":"PETR PETROV","bank":"sber",`+
				`"status":"completed","provider_order_id":"prv-778899","created_at":"2024-05-01T10:00:00.25Z",`+
				`"completed_at":"2024-05-01T10:07:45Z"}`, i, i)
		}
	}
	b.WriteString(`],"total":100,"limit":100,"offset":0}`)
	return b.Bytes()
}()

// benchHandler answers the three benchmarked endpoints with canned bodies.
// It reads every request body whole, as a real server would.
func benchHandler() http.Handler {
	payment := []byte(benchPaymentJSON)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var status int
		var body []byte
		switch {
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/payments/"):
			status, body = http.StatusOK, payment
		case r.Method == http.MethodPost && r.URL.Path == "/v1/payments":
			status, body = http.StatusCreated, payment
		case r.Method == http.MethodGet && r.URL.Path == "/v1/payouts":
			status, body = http.StatusOK, benchPayoutListJSON
		default:
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.WriteHeader(status)
		w.Write(body)
	})
}

// newBenchServer starts the loopback server; conns, when not nil, counts
// the TCP connections it accepts.
func newBenchServer(tb testing.TB, conns *atomic.Int64) *httptest.Server {
	tb.Helper()
	srv := httptest.NewUnstartedServer(benchHandler())
	if conns != nil {
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
	}
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv
}

// newBenchClient is an SDK client with every default, as a merchant would
// make it.
func newBenchClient(tb testing.TB, srv *httptest.Server) *Client {
	tb.Helper()
	c, err := NewClient(srv.URL, testKey, HMACSigner(testSecret))
	require.NoError(tb, err)
	tb.Cleanup(c.http.HTTPClient.CloseIdleConnections)
	return c
}

// ---------------------------------------------------------------------------
// The hand-written side of each pair.

// rawClient is what a careful merchant would write without the SDK: the
// same attempt timeout and idle-connection pool as the SDK's default
// client, the same four headers, the documented HMAC signature.
type rawClient struct {
	base string
	hc   *http.Client
}

func newRawClient(tb testing.TB, srv *httptest.Server) *rawClient {
	tb.Helper()
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2 * DefaultMaxIdleConnsPerHost
	t.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	tb.Cleanup(t.CloseIdleConnections)
	return &rawClient{base: srv.URL, hc: &http.Client{Timeout: DefaultAttemptTimeout, Transport: t}}
}

// call sends one signed request and decodes a 2xx JSON answer into out.
func (c *rawClient) call(ctx context.Context, method, uri string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+uri, rd)
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write([]byte(method + "\n" + uri + "\n"))
	mac.Write(body)
	req.Header.Set("X-Identity", testKey)
	req.Header.Set("X-Signature", hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "raw/1.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, data)
	}
	return json.Unmarshal(data, out)
}

// rawPayment is the raw side's equivalent of Payment, decoded by plain
// encoding/json into the same field types.
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
		BankName string `json:"bank_name"`
		Holder   string `json:"holder"`
	} `json:"requisites"`
	PaymentURL string          `json:"payment_url"`
	ValidUntil time.Time       `json:"valid_until"`
	CreatedAt  time.Time       `json:"created_at"`
	USDTRate   decimal.Decimal `json:"usdt_rate"`
}

type rawPayout struct {
	ID              string          `json:"id"`
	ExtID           string          `json:"ext_id"`
	Amount          decimal.Decimal `json:"amount"`
	Currency        string          `json:"currency"`
	Method          string          `json:"method"`
	Requisites      string          `json:"requisites"`
	HolderName      string          `json:"holder_name"`
	Bank            string          `json:"bank"`
	Status          string          `json:"status"`
	ProviderOrderID string          `json:"provider_order_id"`
	CreatedAt       time.Time       `json:"created_at"`
	CompletedAt     time.Time       `json:"completed_at"`
}

type rawPayoutList struct {
	Payouts []rawPayout `json:"payouts"`
	Total   int         `json:"total"`
	Limit   int         `json:"limit"`
	Offset  int         `json:"offset"`
}

// rawCreatePayment is the request body. json.Number carries the amount as
// a bare number with its digits (decimal.Decimal would quote it).
type rawCreatePayment struct {
	ExtID  string      `json:"ext_id"`
	Amount json.Number `json:"amount"`
	Method string      `json:"method"`
}

func (c *rawClient) createPayment(ctx context.Context, extID string, amt decimal.Decimal) (*rawPayment, error) {
	body, err := json.Marshal(rawCreatePayment{ExtID: extID, Amount: json.Number(amt.StringFixed(-amt.Exponent())), Method: "CARD"})
	if err != nil {
		return nil, err
	}
	p := new(rawPayment)
	return p, c.call(ctx, http.MethodPost, "/v1/payments", body, p)
}

func (c *rawClient) getPayment(ctx context.Context, id string) (*rawPayment, error) {
	p := new(rawPayment)
	return p, c.call(ctx, http.MethodGet, "/v1/payments/"+id, nil, p)
}

func (c *rawClient) listPayouts(ctx context.Context, limit int) (*rawPayoutList, error) {
	l := new(rawPayoutList)
	return l, c.call(ctx, http.MethodGet, "/v1/payouts?limit="+strconv.Itoa(limit), nil, l)
}

// ---------------------------------------------------------------------------
// The pairs.

var benchAmount = dec("1500.50")

func BenchmarkGetPayment(b *testing.B) {
	c := newBenchClient(b, newBenchServer(b, nil))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetPayment(ctx, paymentID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetPaymentRawHTTP(b *testing.B) {
	c := newRawClient(b, newBenchServer(b, nil))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.getPayment(ctx, paymentID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreatePayment(b *testing.B) {
	c := newBenchClient(b, newBenchServer(b, nil))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		_, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-" + strconv.Itoa(i), Amount: benchAmount, Method: MethodCard})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreatePaymentRawHTTP(b *testing.B) {
	c := newRawClient(b, newBenchServer(b, nil))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := c.createPayment(ctx, "order-"+strconv.Itoa(i), benchAmount); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListPayouts(b *testing.B) {
	c := newBenchClient(b, newBenchServer(b, nil))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := c.ListPayouts(ctx, ListPayoutsParams{Limit: 100})
		if err != nil || len(l.Payouts) != 100 {
			b.Fatal(err)
		}
	}
}

func BenchmarkListPayoutsRawHTTP(b *testing.B) {
	c := newRawClient(b, newBenchServer(b, nil))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := c.listPayouts(ctx, 100)
		if err != nil || len(l.Payouts) != 100 {
			b.Fatal(err)
		}
	}
}

// ---------------------------------------------------------------------------
// Concurrency: one shared Client, 64 goroutines.

const (
	concurrentCallers = 64
	concurrentCalls   = 10_000
)

// BenchmarkGetPaymentConcurrent runs batches of 10,000 GetPayment calls
// from 64 goroutines sharing one Client, so one op is one batch. It reports
// the TCP connections the server accepted over the whole run ("conns")
// beside the client's idle pool per host ("maxidle"), and the time per call.
func BenchmarkGetPaymentConcurrent(b *testing.B) {
	var conns atomic.Int64
	c := newBenchClient(b, newBenchServer(b, &conns))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, concurrentCallers)
		for range concurrentCallers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= concurrentCalls {
					if _, err := c.GetPayment(ctx, paymentID); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*concurrentCalls), "ns/call")
	b.ReportMetric(float64(conns.Load()), "conns")
	b.ReportMetric(DefaultMaxIdleConnsPerHost, "maxidle")
	if n := conns.Load(); n > DefaultMaxIdleConnsPerHost {
		b.Errorf("server accepted %d connections, more than the client's %d idle connections per host", n, DefaultMaxIdleConnsPerHost)
	}
}

// ---------------------------------------------------------------------------
// The pairs compare like with like: both sides put the same request on the
// wire (method, request URI, body, identity and signature) and decode the
// same values.

func TestBenchPairsSendTheSameRequests(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		r.Body = io.NopCloser(bytes.NewReader(nil))
		benchHandler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	sdk := newBenchClient(t, srv)
	raw := newRawClient(t, srv)

	p, err := sdk.GetPayment(ctx, paymentID)
	require.NoError(t, err)
	rp, err := raw.getPayment(ctx, paymentID)
	require.NoError(t, err)
	assertSamePayment(t, p, rp)

	p, err = sdk.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-1", Amount: benchAmount, Method: MethodCard})
	require.NoError(t, err)
	rp, err = raw.createPayment(ctx, "order-1", benchAmount)
	require.NoError(t, err)
	assertSamePayment(t, p, rp)

	l, err := sdk.ListPayouts(ctx, ListPayoutsParams{Limit: 100})
	require.NoError(t, err)
	rl, err := raw.listPayouts(ctx, 100)
	require.NoError(t, err)
	require.Len(t, l.Payouts, 100)
	require.Len(t, rl.Payouts, 100)
	for i := range l.Payouts {
		g, w := l.Payouts[i], rl.Payouts[i]
		assert.Equal(t, w.ID, g.ID)
		assert.Equal(t, w.Status, string(g.Status))
		assert.True(t, w.Amount.Equal(g.Amount))
		assert.True(t, w.CreatedAt.Equal(g.CreatedAt))
		assert.True(t, w.CompletedAt.Equal(g.CompletedAt))
	}

	reqs := rec.all()
	require.Len(t, reqs, 6)
	assertWire(t, reqs[0], "GET", "/v1/payments/"+paymentID, "", "")
	assertWire(t, reqs[2], "POST", "/v1/payments", "application/json", `{"ext_id":"order-1","amount":1500.50,"method":"CARD"}`)
	assertWire(t, reqs[4], "GET", "/v1/payouts?limit=100", "", "")
	for i := 0; i < len(reqs); i += 2 {
		sdkReq, rawReq := reqs[i], reqs[i+1]
		assert.Equal(t, sdkReq.Method, rawReq.Method)
		assert.Equal(t, sdkReq.URI, rawReq.URI)
		assert.Equal(t, sdkReq.ContentType, rawReq.ContentType)
		assert.Equal(t, sdkReq.Identity, rawReq.Identity)
		assert.Equal(t, sdkReq.Signature, rawReq.Signature)
		assert.Equal(t, string(sdkReq.Body), string(rawReq.Body))
	}
}

func assertSamePayment(t *testing.T, p *Payment, rp *rawPayment) {
	t.Helper()
	assert.Equal(t, rp.ID, p.ID)
	assert.Equal(t, rp.Status, string(p.Status))
	assert.Equal(t, rp.Requisites.Value, p.Requisites.Value)
	assert.Equal(t, rp.Requisites.BankCode, p.Requisites.BankCode)
	assert.True(t, rp.Amount.Equal(p.Amount))
	assert.True(t, rp.USDTRate.Equal(p.USDTRate))
	assert.True(t, rp.ValidUntil.Equal(p.ValidUntil))
	assert.True(t, rp.CreatedAt.Equal(p.CreatedAt))
}

// unquote's fast path must decode exactly what json.Unmarshal decodes, and
// refuse what it refuses.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`""`, `"PENDING"`, `"a b"`, `"2026-11-22T10:00:00Z"`, `"a\"b"`, `"a\\b"`,
		`"\u0041"`, `"заказ"`, "\"\xff\"", "\"a\x01\"", "\"a\x7f\"", `"a"b"`, `"`, `x`, `1`, `null`, ` "a"`} {
		var want string
		wantErr := json.Unmarshal([]byte(in), &want)
		got, err := unquote([]byte(in))
		if wantErr != nil {
			assert.Error(t, err, "%q", in)
			continue
		}
		assert.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
}

// ListPayouts decodes its page without PayoutList's per-item
// UnmarshalJSON; the result must be the one that path gives.
func TestListPayoutsDecodesLikePayoutList(t *testing.T) {
	t.Parallel()
	for _, body := range []string{payoutListJSON, string(benchPayoutListJSON), `{"payouts":null,"total":0}`, `{"payouts":[]}`} {
		var want PayoutList
		require.NoError(t, json.Unmarshal([]byte(body), &want))
		c, _ := mockClient(t, http.StatusOK, body)
		got, err := c.ListPayouts(ctx, ListPayoutsParams{})
		require.NoError(t, err)
		assert.Equal(t, &want, got)
	}
}
