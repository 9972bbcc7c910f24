package paykit

// Benchmarks of the SDK's cost per call, each beside the leanest correct
// hand-written net/http + encoding/json version of the same call ("raw"):
// the least a Go program can do to send the same request bytes and decode
// the same answer. Both sides talk to one loopback httptest server that
// answers canned, spec-shaped bodies, so what differs between a pair is the
// client side alone.
//
// BenchmarkVsRaw runs both sides of each pair inside ONE benchmark, in
// alternating blocks, and reports the median ratio of adjacent blocks: on a
// shared 2-core machine two separate benchmark runs differ by more than the
// gap being measured, while adjacent blocks see the same machine.
// BenchmarkVsRawPerCall alternates single calls, for a machine so loaded
// that blocks of 50 calls are preempted unevenly. The
// scaling benchmarks (AllPayouts, Concurrent, WebhookHandlerConcurrent)
// show how the cost grows with work. See BENCHMARKS.md for the commands and
// the figures.

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
	"runtime"
	"slices"
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

// writeBenchPayout appends payout number i of a list page: even ones
// pending, odd ones completed (with provider_order_id and completed_at).
func writeBenchPayout(b *bytes.Buffer, i int) {
	if i%2 == 0 {
		fmt.Fprintf(b, `{"id":"0b7d3c2a-1e4f-4a5b-8c6d-%012d","ext_id":"po-%d","amount":2500.00,"currency":"RUB",`+
			`"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV","bank":"",`+
			`"status":"pending","created_at":"2024-05-01T10:00:00Z"}`, i, i)
		return
	}
	fmt.Fprintf(b, `{"id":"0b7d3c2a-1e4f-4a5b-8c6d-%012d","ext_id":"po-%d","amount":1500.50,"currency":"RUB",`+
		`"method":"sbp","requisites":"+79001234567","holder_name":"PETR PETROV","bank":"sber",`+
		`"status":"completed","provider_order_id":"prv-778899","created_at":"2024-05-01T10:00:00.25Z",`+
		`"completed_at":"2024-05-01T10:07:45Z"}`, i, i)
}

// benchPayoutPage renders the GET /v1/payouts page of payouts
// offset..offset+limit-1 out of total.
func benchPayoutPage(offset, limit, total int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"payouts":[`)
	for i := offset; i < min(offset+limit, total); i++ {
		if i > offset {
			b.WriteByte(',')
		}
		writeBenchPayout(&b, i)
	}
	fmt.Fprintf(&b, `],"total":%d,"limit":%d,"offset":%d}`, total, limit, offset)
	return b.Bytes()
}

// benchPayoutListJSON is a 100-item GET /v1/payouts page, half pending,
// half completed.
var benchPayoutListJSON = benchPayoutPage(0, 100, 100)

// echoExtID puts the ext_id of a create's request body into a canned
// payment, which carries "ext_id":"order-1001".
func echoExtID(payment, req []byte) []byte {
	const key = `"ext_id":"`
	i := bytes.Index(req, []byte(key))
	if i < 0 {
		return payment
	}
	rest := req[i+len(key):]
	id := rest[:bytes.IndexByte(rest, '"')]
	return bytes.Replace(payment, []byte("order-1001"), id, 1)
}

// writeCanned answers status and body with the headers a JSON API sends.
func writeCanned(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

// benchHandler answers the three benchmarked endpoints with canned bodies.
// It reads every request body whole, as a real server would; a create is
// answered with the ext_id it asked for, as the service would.
func benchHandler() http.Handler {
	payment := []byte(benchPaymentJSON)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/payments/"):
			writeCanned(w, http.StatusOK, payment)
		case r.Method == http.MethodPost && r.URL.Path == "/v1/payments":
			writeCanned(w, http.StatusCreated, echoExtID(payment, body))
		case r.Method == http.MethodGet && r.URL.Path == "/v1/payouts":
			writeCanned(w, http.StatusOK, benchPayoutListJSON)
		default:
			http.NotFound(w, r)
		}
	})
}

// benchConns counts the TCP connections a server accepts: in all, at most
// open at once, and closed so far.
type benchConns struct {
	mu                           sync.Mutex
	accepted, open, peak, closed int
}

func (c *benchConns) track(_ net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.accepted++
		c.open++
		c.peak = max(c.peak, c.open)
	case http.StateClosed, http.StateHijacked:
		c.open--
		c.closed++
	}
}

func (c *benchConns) counts() (accepted, peak, closed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.accepted, c.peak, c.closed
}

// newBenchServer starts a loopback server of h (benchHandler when nil);
// conns, when not nil, counts the TCP connections it accepts.
func newBenchServer(tb testing.TB, h http.Handler, conns *benchConns) *httptest.Server {
	tb.Helper()
	if h == nil {
		h = benchHandler()
	}
	srv := httptest.NewUnstartedServer(h)
	if conns != nil {
		srv.Config.ConnState = conns.track
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
// The hand-written side of each pair: the leanest correct code.

// rawUserAgent is the SDK's User-Agent, so both sides put the same bytes on
// the wire.
var rawUserAgent = "paykit-go/" + Version + " " + runtime.Version()

// rawClient is what a careful merchant would write without the SDK: a plain
// http.Client with no per-call timeout (the transport's idle pool raised to
// the SDK's, which costs nothing per call), the same headers, the
// documented HMAC signature computed for every call, the body decoded as
// it streams in, then drained and closed so the connection is reused.
type rawClient struct {
	base   string
	secret []byte
	hc     *http.Client
}

func newRawClient(tb testing.TB, srv *httptest.Server) *rawClient {
	tb.Helper()
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	tb.Cleanup(t.CloseIdleConnections)
	return &rawClient{base: srv.URL, secret: []byte(testSecret), hc: &http.Client{Transport: t}}
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
	mac := hmac.New(sha256.New, c.secret)
	mac.Write([]byte(method + "\n" + uri + "\n"))
	mac.Write(body)
	req.Header.Set("X-Identity", testKey)
	req.Header.Set("User-Agent", rawUserAgent)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Signature", hex.EncodeToString(mac.Sum(nil)))
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
// The pairs, one call each; i makes ext_ids distinct.

var benchAmount = dec("1500.50")

// callerDeadline bounds each call of the GetPaymentCallerDeadline pair, as
// a caller that sets a deadline per call does: sooner than the SDK's
// attempt timeout, so the SDK needs no attempt context of its own.
const callerDeadline = 10 * time.Second

type benchCall func(ctx context.Context, i int) error

// benchPairs returns the SDK and raw sides of every pair against srv.
func benchPairs(tb testing.TB, srv *httptest.Server) []struct {
	name     string
	sdk, raw benchCall
} {
	return benchPairsOf(tb, newBenchClient(tb, srv), newRawClient(tb, srv))
}

// benchPairsOf returns the SDK and raw sides of every pair for two clients
// of the same server or transport.
func benchPairsOf(tb testing.TB, sdk *Client, raw *rawClient) []struct {
	name     string
	sdk, raw benchCall
} {
	if callerDeadline >= DefaultAttemptTimeout {
		tb.Fatal("callerDeadline must come before the attempt timeout")
	}
	return []struct {
		name     string
		sdk, raw benchCall
	}{
		{"GetPayment",
			func(ctx context.Context, _ int) error { _, err := sdk.GetPayment(ctx, paymentID); return err },
			func(ctx context.Context, _ int) error { _, err := raw.getPayment(ctx, paymentID); return err }},
		{"GetPaymentCallerDeadline",
			func(ctx context.Context, _ int) error {
				ctx, cancel := context.WithTimeout(ctx, callerDeadline)
				defer cancel()
				_, err := sdk.GetPayment(ctx, paymentID)
				return err
			},
			func(ctx context.Context, _ int) error {
				ctx, cancel := context.WithTimeout(ctx, callerDeadline)
				defer cancel()
				_, err := raw.getPayment(ctx, paymentID)
				return err
			}},
		{"CreatePayment",
			func(ctx context.Context, i int) error {
				_, err := sdk.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-" + strconv.Itoa(i), Amount: benchAmount, Method: MethodCard})
				return err
			},
			func(ctx context.Context, i int) error {
				_, err := raw.createPayment(ctx, "order-"+strconv.Itoa(i), benchAmount)
				return err
			}},
		{"ListPayouts",
			func(ctx context.Context, _ int) error {
				l, err := sdk.ListPayouts(ctx, ListPayoutsParams{Limit: 100})
				if err == nil && len(l.Payouts) != 100 {
					err = fmt.Errorf("%d payouts", len(l.Payouts))
				}
				return err
			},
			func(ctx context.Context, _ int) error {
				l, err := raw.listPayouts(ctx, 100)
				if err == nil && len(l.Payouts) != 100 {
					err = fmt.Errorf("%d payouts", len(l.Payouts))
				}
				return err
			}},
	}
}

// Each side runs on its own, one call per op, for benchstat and profiles.
func BenchmarkSDK(b *testing.B) {
	for _, p := range benchPairs(b, newBenchServer(b, nil, nil)) {
		b.Run(p.name, func(b *testing.B) { runEach(b, p.sdk) })
	}
}

func BenchmarkRaw(b *testing.B) {
	for _, p := range benchPairs(b, newBenchServer(b, nil, nil)) {
		b.Run(p.name, func(b *testing.B) { runEach(b, p.raw) })
	}
}

func runEach(b *testing.B, f benchCall) {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := f(ctx, i); err != nil {
			b.Fatal(err)
		}
	}
}

// pairBlock is the number of calls in one block of blocked alternation.
const pairBlock = 50

// BenchmarkVsRaw measures each pair by blocked alternation: one op is a
// block of 50 SDK calls and a block of 50 raw calls, in alternating order,
// on one server and one connection each. It reports the median and
// quartiles of the per-op ratio SDK time / raw time ("ratio", "ratio-q1",
// "ratio-q3"), the same for the process's CPU time ("cpu-ratio"…; the
// in-process server's share is the same on both sides), the wall and CPU
// time and the allocations per call of each side, and their difference
// ("extra-allocs/call"). -benchtime=60x gives 60 blocks of
// each side. Allocations are counted with runtime.ReadMemStats between
// blocks and include the in-process server's, which are the same for both
// sides, so the difference is the client's alone.
func BenchmarkVsRaw(b *testing.B) {
	for _, p := range benchPairs(b, newBenchServer(b, nil, nil)) {
		b.Run(p.name, func(b *testing.B) { runBlocked(b, p.sdk, p.raw) })
	}
}

// BenchmarkVsRawInMemory is BenchmarkVsRaw with no sockets: both sides
// send through memTransport, an http.RoundTripper that answers canned
// bytes in memory, so what is timed is the client-side work alone
// (building, signing, checking, decoding) and this machine's network
// stack and scheduler noise mostly drop out. The SDK side is a default
// Client (30 s attempt timeout) over that transport.
func BenchmarkVsRawInMemory(b *testing.B) {
	mt := memTransport{handler: benchHandler()}
	sdk, err := NewClient(testBase, testKey, HMACSigner(testSecret),
		WithHTTPClient(&http.Client{Transport: mt, Timeout: DefaultAttemptTimeout}))
	require.NoError(b, err)
	raw := &rawClient{base: testBase, secret: []byte(testSecret), hc: &http.Client{Transport: mt}}
	for _, p := range benchPairsOf(b, sdk, raw) {
		b.Run(p.name, func(b *testing.B) { runBlocked(b, p.sdk, p.raw) })
	}
}

// memTransport answers each request in memory with what handler writes,
// as a server would: the request body read whole, the status, headers and
// body returned in a fresh response.
type memTransport struct{ handler http.Handler }

func (m memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &memResponse{header: http.Header{}, status: http.StatusOK}
	if req.Body == nil {
		req.Body = http.NoBody // as a server sees a body-less request
	}
	m.handler.ServeHTTP(w, req)
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: w.status, Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body)),
		ContentLength: int64(len(w.body)), Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// memResponse is the http.ResponseWriter of memTransport.
type memResponse struct {
	header http.Header
	status int
	body   []byte
}

func (w *memResponse) Header() http.Header         { return w.header }
func (w *memResponse) WriteHeader(status int)      { w.status = status }
func (w *memResponse) Write(b []byte) (int, error) { w.body = append(w.body, b...); return len(b), nil }

// BenchmarkAttemptTimeout prices the per-attempt timeout: GetPayment
// through a default Client (30 s per attempt, no caller deadline, so each
// attempt gets a context of its own) against one whose HTTP client has no
// timeout, by the same blocked alternation. Here "sdk" is the default
// Client and "raw" the one without the timeout.
func BenchmarkAttemptTimeout(b *testing.B) {
	srv := newBenchServer(b, nil, nil)
	timed := newBenchClient(b, srv)
	untimed, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: defaultTransport()}))
	require.NoError(b, err)
	runBlocked(b,
		func(ctx context.Context, _ int) error { _, err := timed.GetPayment(ctx, paymentID); return err },
		func(ctx context.Context, _ int) error { _, err := untimed.GetPayment(ctx, paymentID); return err })
}

// BenchmarkBlockedControl runs the blocked alternation on two identical
// default Clients: how far from 1 the method puts a pair with no
// difference at all is the resolution of every other ratio.
func BenchmarkBlockedControl(b *testing.B) {
	srv := newBenchServer(b, nil, nil)
	x, y := newBenchClient(b, srv), newBenchClient(b, srv)
	runBlocked(b,
		func(ctx context.Context, _ int) error { _, err := x.GetPayment(ctx, paymentID); return err },
		func(ctx context.Context, _ int) error { _, err := y.GetPayment(ctx, paymentID); return err })
}

// blockStats accumulates the blocks of one side.
type blockStats struct {
	time, cpu time.Duration
	allocs    uint64
	calls     int
}

func runBlocked(b *testing.B, sdk, raw benchCall) {
	ctx := context.Background()
	var ms runtime.MemStats
	i := 0
	block := func(f benchCall, s *blockStats) (wall, cpu time.Duration) {
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		c0 := processCPU()
		t0 := time.Now()
		for range pairBlock {
			i++
			if err := f(ctx, i); err != nil {
				b.Fatal(err)
			}
		}
		wall = time.Since(t0)
		cpu = processCPU() - c0
		runtime.ReadMemStats(&ms)
		s.time += wall
		s.cpu += cpu
		s.allocs += ms.Mallocs - m0
		s.calls += pairBlock
		return wall, cpu
	}
	// Warm both sides up: connections dialled, pools and caches filled.
	var warm blockStats
	block(sdk, &warm)
	block(raw, &warm)

	var s, r blockStats
	var ratios, cpuRatios []float64
	for b.Loop() {
		var ts, tr, cs, cr time.Duration
		if len(ratios)%2 == 0 {
			ts, cs = block(sdk, &s)
			tr, cr = block(raw, &r)
		} else {
			tr, cr = block(raw, &r)
			ts, cs = block(sdk, &s)
		}
		ratios = append(ratios, float64(ts)/float64(tr))
		if cr > 0 {
			cpuRatios = append(cpuRatios, float64(cs)/float64(cr))
		}
	}
	slices.Sort(ratios)
	slices.Sort(cpuRatios)
	b.ReportMetric(quantile(ratios, 0.5), "ratio")
	b.ReportMetric(quantile(ratios, 0.25), "ratio-q1")
	b.ReportMetric(quantile(ratios, 0.75), "ratio-q3")
	b.ReportMetric(quantile(cpuRatios, 0.5), "cpu-ratio")
	b.ReportMetric(quantile(cpuRatios, 0.25), "cpu-ratio-q1")
	b.ReportMetric(quantile(cpuRatios, 0.75), "cpu-ratio-q3")
	b.ReportMetric(float64(s.time.Nanoseconds())/float64(s.calls), "sdk-ns/call")
	b.ReportMetric(float64(r.time.Nanoseconds())/float64(r.calls), "raw-ns/call")
	b.ReportMetric(float64(s.cpu.Nanoseconds())/float64(s.calls), "sdk-cpu-ns/call")
	b.ReportMetric(float64(r.cpu.Nanoseconds())/float64(r.calls), "raw-cpu-ns/call")
	sa, ra := float64(s.allocs)/float64(s.calls), float64(r.allocs)/float64(r.calls)
	b.ReportMetric(sa, "sdk-allocs/call")
	b.ReportMetric(ra, "raw-allocs/call")
	b.ReportMetric(sa-ra, "extra-allocs/call")
}

// BenchmarkVsRawPerCall is BenchmarkVsRaw at the finest grain, for a
// machine too loaded for blocks of 50 calls (a block of 3 ms is preempted
// unevenly): one op is one SDK call and one raw call, in alternating
// order, each timed alone, so both sides of a pair see the machine within
// microseconds of each other. It reports the ratio of the sides' median
// call times ("ratio"), the ratio of their means without each side's
// slowest 5% of calls ("trimmed-ratio", where preemptions land), and, as
// Control, the same for two identical default Clients: the method's
// resolution.
func BenchmarkVsRawPerCall(b *testing.B) {
	srv := newBenchServer(b, nil, nil)
	for _, p := range benchPairs(b, srv) {
		if p.name != "GetPayment" {
			continue
		}
		b.Run(p.name, func(b *testing.B) { runPerCall(b, p.sdk, p.raw) })
	}
	x, y := newBenchClient(b, srv), newBenchClient(b, srv)
	b.Run("Control", func(b *testing.B) {
		runPerCall(b,
			func(ctx context.Context, _ int) error { _, err := x.GetPayment(ctx, paymentID); return err },
			func(ctx context.Context, _ int) error { _, err := y.GetPayment(ctx, paymentID); return err })
	})
}

func runPerCall(b *testing.B, sdk, raw benchCall) {
	ctx := context.Background()
	i := 0
	timed := func(f benchCall) float64 {
		i++
		t0 := time.Now()
		if err := f(ctx, i); err != nil {
			b.Fatal(err)
		}
		return float64(time.Since(t0))
	}
	for range pairBlock { // warm up: connections dialled, pools filled
		timed(sdk)
		timed(raw)
	}
	var s, r []float64
	for b.Loop() {
		if len(s)%2 == 0 {
			s = append(s, timed(sdk))
			r = append(r, timed(raw))
		} else {
			r = append(r, timed(raw))
			s = append(s, timed(sdk))
		}
	}
	slices.Sort(s)
	slices.Sort(r)
	b.ReportMetric(quantile(s, 0.5)/quantile(r, 0.5), "ratio")
	b.ReportMetric(trimmedMean(s, 0.95)/trimmedMean(r, 0.95), "trimmed-ratio")
	b.ReportMetric(quantile(s, 0.5), "sdk-median-ns")
	b.ReportMetric(quantile(r, 0.5), "raw-median-ns")
}

// trimmedMean is the mean of the smallest keep share of sorted xs.
func trimmedMean(xs []float64, keep float64) float64 {
	n := max(1, int(float64(len(xs))*keep))
	if n > len(xs) {
		return 0
	}
	sum := 0.0
	for _, x := range xs[:n] {
		sum += x
	}
	return sum / float64(n)
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

// ---------------------------------------------------------------------------
// How cost grows: AllPayouts over many pages.

// pagedPayoutsHandler serves total payouts in pages of limit, all rendered
// before it is returned, so what the server holds is fixed before any
// measurement and it allocates nothing per page beyond net/http's own.
func pagedPayoutsHandler(total, limit int) http.Handler {
	pages := make(map[int][]byte, total/limit+1)
	for off := 0; off < total; off += limit {
		pages[off] = benchPayoutPage(off, limit, total)
	}
	empty := benchPayoutPage(total, limit, total)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/payouts" || r.URL.Query().Get("limit") != strconv.Itoa(limit) {
			http.NotFound(w, r)
			return
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		page, ok := pages[off]
		if !ok {
			page = empty
		}
		writeCanned(w, http.StatusOK, page)
	})
}

// allPayoutsPage is the page size AllPayouts asks for.
const allPayoutsPage = 100

// BenchmarkAllPayouts iterates over 1,000 and 10,000 payouts. One op is a
// whole iteration; "ns/payout", "B/payout" and "allocs/payout" show how
// time and allocation grow with the count (flat means linear).
// "peak-heap-B" is the most heap the iteration kept live at any point,
// beyond what was live before it started (the server's pre-rendered pages
// included): it is sampled after a forced GC every 25 payouts, in a pass
// of its own after the timed ones so the forced GCs cost no time there.
// The consumer keeps nothing, so the figure is what the SDK holds.
func BenchmarkAllPayouts(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			c := newBenchClient(b, newBenchServer(b, pagedPayoutsHandler(n, allPayoutsPage), nil))
			ctx := context.Background()
			params := ListPayoutsParams{Limit: allPayoutsPage}
			iterate := func(sample func()) {
				seen := 0
				for p, err := range c.AllPayouts(ctx, params) {
					if err != nil {
						b.Fatal(err)
					}
					if p.ExtID != "po-"+strconv.Itoa(seen) {
						b.Fatalf("payout %d is %s", seen, p.ExtID)
					}
					seen++
					if sample != nil && seen%25 == 0 {
						sample()
					}
				}
				if seen != n {
					b.Fatalf("yielded %d payouts, want %d", seen, n)
				}
			}
			iterate(nil) // warm: connection dialled
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m0, by0 := ms.Mallocs, ms.TotalAlloc
			ops := 0
			for b.Loop() {
				iterate(nil)
				ops++
			}
			elapsed := b.Elapsed()
			runtime.ReadMemStats(&ms)
			payouts := float64(ops * n)
			b.ReportMetric(float64(elapsed.Nanoseconds())/payouts, "ns/payout")
			b.ReportMetric(float64(ms.TotalAlloc-by0)/payouts, "B/payout")
			b.ReportMetric(float64(ms.Mallocs-m0)/payouts, "allocs/payout")
			b.ReportMetric(float64(peakHeap(func(sample func()) { iterate(sample) })), "peak-heap-B")
		})
	}
}

// peakHeap runs f and returns the highest live heap, above the live heap
// before f, seen at the points where f calls sample. Each sample forces a
// GC first, so only what is still referenced counts.
func peakHeap(f func(sample func())) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	f(func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
			peak = ms.HeapAlloc - base
		}
	})
	return peak
}

// ---------------------------------------------------------------------------
// How cost grows: many goroutines sharing one Client.

// concurrentCalls is the size of one batch of the concurrent benchmark.
const concurrentCalls = 10_000

// BenchmarkConcurrent runs batches of 10,000 GetPayment calls from 64 and
// from 256 goroutines sharing one Client, so one op is one batch. It
// reports the time per call, the calls that failed ("errors"), and the TCP
// connections the server saw beside the default transport's cap per host
// ("pool"): the most open at once ("peak-conns"), all it accepted over the
// run ("conns") and those closed during the run ("dropped"). net/http drops
// a connection after a response when its write loop has not reported the
// request written within 50 ms, as happens on a starved CPU, and dials a
// new one; the server may see the new one before the old one's close, so
// the bound checked is peak-conns <= pool + dropped. It fails if any call
// failed or if that bound is broken: a client that did not share one
// bounded pool would open up to one connection per goroutine.
func BenchmarkConcurrent(b *testing.B) {
	for _, callers := range []int{64, 256} {
		b.Run("goroutines="+strconv.Itoa(callers), func(b *testing.B) {
			var conns benchConns
			c := newBenchClient(b, newBenchServer(b, nil, &conns))
			ctx := context.Background()
			var failed atomic.Int64
			var firstErr atomic.Value
			b.ReportAllocs()
			for b.Loop() {
				var next atomic.Int64
				var wg sync.WaitGroup
				for range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= concurrentCalls {
							if _, err := c.GetPayment(ctx, paymentID); err != nil {
								failed.Add(1)
								firstErr.CompareAndSwap(nil, err)
							}
						}
					}()
				}
				wg.Wait()
			}
			accepted, peak, dropped := conns.counts()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*concurrentCalls), "ns/call")
			b.ReportMetric(float64(peak), "peak-conns")
			b.ReportMetric(float64(accepted), "conns")
			b.ReportMetric(float64(dropped), "dropped")
			b.ReportMetric(DefaultMaxIdleConnsPerHost, "pool")
			b.ReportMetric(float64(failed.Load()), "errors")
			if n := failed.Load(); n > 0 {
				b.Errorf("%d calls failed; the first: %v", n, firstErr.Load())
			}
			if peak > DefaultMaxIdleConnsPerHost+dropped {
				b.Errorf("%d connections were open at once, more than the pool's %d per host (+%d dropped)",
					peak, DefaultMaxIdleConnsPerHost, dropped)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// How cost grows: WebhookHandler under concurrent deliveries.

// webhookDeliveries is how many deliveries run at once.
const webhookDeliveries = 64

// nopBody is a request body over a bytes.Reader that the benchmark
// rewinds for every delivery.
type nopBody struct{ *bytes.Reader }

func (nopBody) Close() error { return nil }

// statusWriter keeps only the status, so the benchmark measures the
// handler rather than httptest.ResponseRecorder.
type statusWriter struct {
	header http.Header
	code   int
}

func (w *statusWriter) Header() http.Header         { return w.header }
func (w *statusWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *statusWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkWebhookHandlerConcurrent delivers payment notifications to one
// WebhookHandler from 64 goroutines at once (token checked, body decoded,
// callback run, no read-back). One op is one delivery: allocs/op is
// allocations per delivery, "deliveries/s" the throughput.
func BenchmarkWebhookHandlerConcurrent(b *testing.B) {
	const token = "nt_bench_token_5d4c"
	var handled atomic.Int64
	h := &WebhookHandler{Token: token, OnPayment: func(_ context.Context, p *Payment) error {
		if p.ID != paymentID {
			return fmt.Errorf("payment %s", p.ID)
		}
		handled.Add(1)
		return nil
	}}
	body := []byte(benchPaymentJSON)
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((webhookDeliveries + procs - 1) / procs)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rd := bytes.NewReader(body)
		req := httptest.NewRequest(http.MethodPost, "/paykit/webhook", nil)
		req.Header.Set(WebhookTokenHeader, token)
		w := &statusWriter{header: http.Header{}}
		for pb.Next() {
			rd.Reset(body)
			req.Body = nopBody{rd}
			w.code = 0
			h.ServeHTTP(w, req)
			if w.code != http.StatusOK {
				b.Errorf("status %d", w.code)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(((webhookDeliveries+procs-1)/procs)*procs), "goroutines")
	if got := handled.Load(); got != int64(b.N) {
		b.Errorf("callback ran %d times for %d deliveries", got, b.N)
	}
}

// ---------------------------------------------------------------------------
// The pairs compare like with like: both sides put the same request on the
// wire (method, request URI, body, headers, signature) and decode the same
// values.

func TestBenchPairsSendTheSameRequests(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	var accepts []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := rec.record(r)
		mu.Lock()
		accepts = append(accepts, r.Header.Get("Accept"))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(got.Body))
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
		assert.Equal(t, sdkReq, rawReq, "request %d", i/2)
		assert.Equal(t, "application/json", accepts[i])
		assert.Equal(t, accepts[i], accepts[i+1])
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

// The paged server the AllPayouts benchmark runs against serves every
// payout once, in order, and AllPayouts walks it to the end.
func TestPagedPayoutsServer(t *testing.T) {
	t.Parallel()
	srv := newBenchServer(t, pagedPayoutsHandler(250, allPayoutsPage), nil)
	c := newBenchClient(t, srv)
	var ids []string
	for p, err := range c.AllPayouts(ctx, ListPayoutsParams{Limit: allPayoutsPage}) {
		require.NoError(t, err)
		ids = append(ids, p.ExtID)
	}
	require.Len(t, ids, 250)
	for i, id := range ids {
		assert.Equal(t, "po-"+strconv.Itoa(i), id)
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 0.0, quantile(nil, 0.5))
	assert.Equal(t, 3.0, quantile([]float64{3}, 0.25))
	assert.Equal(t, 2.0, quantile([]float64{1, 2, 3}, 0.5))
	assert.Equal(t, 2.5, quantile([]float64{1, 2, 3, 4}, 0.5))
	assert.Equal(t, 1.75, quantile([]float64{1, 2, 3, 4}, 0.25))
}

// ---------------------------------------------------------------------------
// What the pipeline's allocation cuts must not change.

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// writeCounter counts the writes on the connections it dials.
type writeCounter struct {
	net.Conn
	writes *atomic.Int32
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// countWrites makes tr count the writes of the connections it dials.
func countWrites(tr *http.Transport, writes *atomic.Int32) {
	d := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return writeCounter{c, writes}, nil
	}
}

// BenchmarkAllPayoutsMillion iterates over 1,000,000 payouts served in
// memory (pages rendered on demand) and reports the peak live heap of the
// iteration, sampled every 20,000 payouts: AllPayouts remembers only the
// ids of its latest pages, so the figure does not grow with the count.
func BenchmarkAllPayoutsMillion(b *testing.B) {
	const n = 1_000_000
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		writeCanned(w, http.StatusOK, benchPayoutPage(off, allPayoutsPage, n))
	})
	c, err := NewClient(testBase, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: memTransport{handler: h}}))
	require.NoError(b, err)
	iterate := func(sample func()) {
		seen := 0
		for _, err := range c.AllPayouts(context.Background(), ListPayoutsParams{Limit: allPayoutsPage}) {
			if err != nil {
				b.Fatal(err)
			}
			seen++
			if sample != nil && seen%20_000 == 0 {
				sample()
			}
		}
		if seen != n {
			b.Fatalf("yielded %d payouts, want %d", seen, n)
		}
	}
	for b.Loop() {
		iterate(nil)
	}
	b.ReportMetric(float64(peakHeap(iterate)), "peak-heap-B")
}
