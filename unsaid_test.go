package paykit_test

// Tests of what the spec leaves unsaid (its "not shown" points) and the SDK
// decides: the doc.go section "What the spec does not say" names each test
// here next to the behaviour it holds.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

const (
	unsaidPaymentID    = "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"
	unsaidPayoutID     = "0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2d"
	unsaidWithdrawalID = "9a8b7c6d-5e4f-4321-8765-43210fedcba9"
)

// unsaidPaymentJSON is a payment as GET returns it, in the given status.
func unsaidPaymentJSON(status string) string {
	return `{"id":"` + unsaidPaymentID + `","ext_id":"order-1","amount":1500.50,"currency":"RUB","status":"` + status + `",` +
		`"method":"CARD","requisites":{"type":"card","value":"2200123456789010","bank":"Sberbank","holder":"Ivan I."},` +
		`"payment_url":null,"valid_until":"2025-03-01T12:20:00Z","created_at":"2025-03-01T12:00:00Z","usdt_rate":92.50}`
}

// unsaidPayoutJSON is a payout as GET returns it, in the given status.
func unsaidPayoutJSON(status string) string {
	return `{"id":"` + unsaidPayoutID + `","ext_id":"payout-1","amount":2500.00,"currency":"RUB","method":"card",` +
		`"requisites":"2200123456789010","holder_name":"IVAN IVANOV","bank":"","status":"` + status + `",` +
		`"provider_order_id":"","created_at":"2025-03-01T12:00:00Z"}`
}

// unsaidWithdrawalJSON is a withdrawal as GET returns it, in the given status.
func unsaidWithdrawalJSON(status string) string {
	return `{"id":"` + unsaidWithdrawalID + `","amount":100.00,"fee":1.50,"currency":"USDT","address":"TXyz",` +
		`"tx_hash":null,"status":"` + status + `","created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:00:00Z"}`
}

// answer is a canned response of a fake API.
type answer struct {
	status int
	body   string
}

// fakeAPI serves canned answers keyed by "METHOD /escaped/path" over real
// loopback HTTP (anything else answers 404 with no body) and logs every
// request. The client retries within milliseconds.
func fakeAPI(t *testing.T, answers map[string]answer, opts ...paykit.Option) (*paykit.Client, *wireLog) {
	t.Helper()
	log := &wireLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		a, ok := answers[r.Method+" "+r.URL.EscapedPath()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	opts = append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond)}, opts...)
	c, err := paykit.NewClient(srv.URL, credKey, paykit.HMACSigner(credSecret), opts...)
	require.NoError(t, err)
	return c, log
}

// count counts the logged requests with this method and URI.
func (l *wireLog) count(method, uri string) int {
	n := 0
	for _, r := range l.all() {
		if r.Method == method && r.URI == uri {
			n++
		}
	}
	return n
}

// noResource lists 2xx answers that carry no resource the SDK can decode.
var noResource = []answer{
	{http.StatusOK, ``},
	{http.StatusOK, `null`},
	{http.StatusNoContent, ``},
	{http.StatusOK, `<html><body>OK</body></html>`},
	{http.StatusCreated, `{"id":"` + unsaidPaymentID + `","status":`},
}

// TestUnsaidSuccessStatusCodes: the spec shows no success status. Any 2xx
// is a success; a 2xx without a decodable resource is an error for reads,
// is settled by reading the resource back for creates and state changes,
// and is an unknown outcome for transfers and withdrawals.
func TestUnsaidSuccessStatusCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("any 2xx with a resource is a success", func(t *testing.T) {
		t.Parallel()
		for _, status := range []int{200, 201, 202, 203, 299} {
			c, log := fakeAPI(t, map[string]answer{
				"GET /v1/payments/" + unsaidPaymentID: {status, unsaidPaymentJSON("PENDING")},
				"POST /v1/payouts":                    {status, unsaidPayoutJSON("pending")},
			})
			p, err := c.GetPayment(ctx, unsaidPaymentID)
			require.NoError(t, err, "HTTP %d", status)
			assert.Equal(t, unsaidPaymentID, p.ID)
			assert.Equal(t, paykit.PaymentStatusPending, p.Status)
			po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "payout-1", Amount: dec("2500.00"),
				Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "IVAN IVANOV"})
			require.NoError(t, err, "HTTP %d", status)
			assert.Equal(t, unsaidPayoutID, po.ID)
			assert.False(t, po.Reconciled, "its own answer, not a read-back")
			assert.Len(t, log.all(), 2, "HTTP %d: no retry, no read-back", status)
		}
	})

	t.Run("reads: a 2xx without a resource is an error", func(t *testing.T) {
		t.Parallel()
		for _, a := range noResource {
			c, log := fakeAPI(t, map[string]answer{
				"GET /v1/payments/" + unsaidPaymentID: a,
				"GET /v1/payouts/" + unsaidPayoutID:   a,
				"GET /v1/balance":                     a,
			})
			_, err := c.GetPayment(ctx, unsaidPaymentID)
			assert.Error(t, err, "GetPayment, HTTP %d %q", a.status, a.body)
			assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome, "a read changes nothing")
			_, err = c.GetPayout(ctx, unsaidPayoutID)
			assert.Error(t, err, "GetPayout, HTTP %d %q", a.status, a.body)
			_, err = c.GetBalance(ctx)
			assert.Error(t, err, "GetBalance, HTTP %d %q", a.status, a.body)
			assert.Len(t, log.all(), 3, "one request each")
		}
	})

	t.Run("creates and state changes: read back", func(t *testing.T) {
		t.Parallel()
		byExtID := "GET /v1/payments/by-ext-id/order-1"
		byID := "GET /v1/payments/" + unsaidPaymentID
		for _, tc := range []struct {
			name     string
			post     string
			readBack string
			body     string
			call     func(*paykit.Client) (id string, status string, reconciled bool, err error)
			want     string
		}{
			{"CreatePayment", "/v1/payments", byExtID, unsaidPaymentJSON("PENDING"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "order-1", Amount: dec("1500.50"), Method: paykit.MethodCard})
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "PENDING"},
			{"CreatePayout", "/v1/payouts", "GET /v1/payouts/by-ext-id/payout-1", unsaidPayoutJSON("pending"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "payout-1", Amount: dec("2500.00"),
						Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "IVAN IVANOV"})
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "pending"},
			{"ConfirmPayment", "/v1/payments/" + unsaidPaymentID + "/confirm", byID, unsaidPaymentJSON("PROCESSING"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.ConfirmPayment(ctx, unsaidPaymentID, nil)
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "PROCESSING"},
			{"CancelPayment", "/v1/payments/" + unsaidPaymentID + "/cancel", byID, unsaidPaymentJSON("CANCELLED"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CancelPayment(ctx, unsaidPaymentID)
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "CANCELLED"},
			{"OpenDispute", "/v1/payments/" + unsaidPaymentID + "/dispute", byID, unsaidPaymentJSON("DISPUTE"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.OpenDispute(ctx, unsaidPaymentID, paykit.OpenDisputeParams{})
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "DISPUTE"},
			{"CancelDispute", "/v1/payments/" + unsaidPaymentID + "/dispute/cancel", byID, unsaidPaymentJSON("CANCELLED_APPEAL"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CancelDispute(ctx, unsaidPaymentID)
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "CANCELLED_APPEAL"},
		} {
			for _, a := range noResource {
				c, log := fakeAPI(t, map[string]answer{
					"POST " + tc.post: a,
					tc.readBack:       {http.StatusOK, tc.body},
				})
				id, status, reconciled, err := tc.call(c)
				if !assert.NoError(t, err, "%s answered HTTP %d %q", tc.name, a.status, a.body) {
					continue
				}
				assert.NotEmpty(t, id, tc.name)
				assert.Equal(t, tc.want, status, "%s: the read-back's status", tc.name)
				assert.True(t, reconciled, "%s: the result says it was read back", tc.name)
				assert.Equal(t, 1, log.count("POST", tc.post), "%s sent once", tc.name)
				rb := strings.SplitN(tc.readBack, " ", 2)
				assert.GreaterOrEqual(t, log.count(rb[0], rb[1]), 1, "%s read back", tc.name)
			}
		}
	})

	t.Run("transfers and withdrawals: unknown outcome", func(t *testing.T) {
		t.Parallel()
		for _, a := range noResource {
			c, log := fakeAPI(t, map[string]answer{"POST /v1/transfers": a, "POST /v1/withdrawals": a})
			_, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: "t1", ToTerminalID: "t2", Amount: dec("10")})
			assert.ErrorIs(t, err, paykit.ErrUnknownOutcome, "transfer, HTTP %d %q", a.status, a.body)
			_, err = c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: "t1", Amount: dec("10"), Address: "TXyz"})
			assert.ErrorIs(t, err, paykit.ErrUnknownOutcome, "withdrawal, HTTP %d %q", a.status, a.body)
			assert.Equal(t, []string{"POST /v1/transfers", "POST /v1/withdrawals"}, requestLines(log),
				"each sent once, nothing else (no read can settle a money move)")
		}
	})
}

// requestLines lists the logged requests as "METHOD URI".
func requestLines(l *wireLog) []string {
	var out []string
	for _, r := range l.all() {
		out = append(out, r.Method+" "+r.URI)
	}
	return out
}

// payoutLister is a GET /v1/payouts over a set that grows while a client
// pages through it: before answering each of the first `grow` requests it
// creates one more payout. It orders newest first or oldest first, and
// caps a page at maxLimit (0: no cap).
type payoutLister struct {
	mu          sync.Mutex
	newestFirst bool
	maxLimit    int
	grow        int
	created     int // payouts made so far; payout n has id unsaidID(n)
	log         wireLog
}

func unsaidID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func (s *payoutLister) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.log.add(r)
	if r.Method != http.MethodGet || r.URL.Path != "/v1/payouts" {
		http.NotFound(w, r)
		return
	}
	limit, offset := 100, 0
	if v := r.URL.Query().Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
	}
	if v := r.URL.Query().Get("offset"); v != "" {
		offset, _ = strconv.Atoi(v)
	}
	if s.maxLimit > 0 && limit > s.maxLimit {
		limit = s.maxLimit
	}
	s.mu.Lock()
	if s.grow > 0 {
		s.grow--
		s.created++
	}
	order := make([]int, s.created)
	for i := range order {
		order[i] = i
		if s.newestFirst {
			order[i] = s.created - 1 - i
		}
	}
	s.mu.Unlock()
	page := []json.RawMessage{}
	for i := offset; i < offset+limit && i < len(order); i++ {
		n := order[i]
		page = append(page, json.RawMessage(fmt.Sprintf(`{"id":%q,"ext_id":"po-%d","amount":100.00,"currency":"RUB",`+
			`"method":"card","requisites":"2200123456789010","holder_name":"H","bank":"","status":"pending",`+
			`"created_at":%q}`, unsaidID(n), n, time.Date(2025, 3, 1, 12, 0, n, 0, time.UTC).Format(time.RFC3339))))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"payouts": page, "total": len(order), "limit": limit, "offset": offset})
}

func (s *payoutLister) client(t *testing.T) *paykit.Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := paykit.NewClient(srv.URL, credKey, paykit.HMACSigner(credSecret))
	require.NoError(t, err)
	return c
}

// TestUnsaidPayoutListOrderingNoDuplicates: the spec shows neither the
// list's order nor what offset paging does while payouts are created.
// AllPayouts yields no payout twice and misses none that existed when it
// started, whichever order the server uses.
func TestUnsaidPayoutListOrderingNoDuplicates(t *testing.T) {
	t.Parallel()
	for _, newestFirst := range []bool{true, false} {
		name := map[bool]string{true: "newest first", false: "oldest first"}[newestFirst]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const existing, grow = 10, 6
			s := &payoutLister{newestFirst: newestFirst, created: existing, grow: grow}
			c := s.client(t)
			seen := map[string]int{}
			var order []string
			for p, err := range c.AllPayouts(context.Background(), paykit.ListPayoutsParams{Limit: 3}) {
				require.NoError(t, err)
				seen[p.ID]++
				order = append(order, p.ID)
				require.Less(t, len(order), 100, "AllPayouts does not end")
			}
			for id, n := range seen {
				assert.Equal(t, 1, n, "payout %s yielded %d times (order %v)", id, n, order)
			}
			for n := 0; n < existing; n++ {
				assert.Contains(t, seen, unsaidID(n), "payout that existed before paging began")
			}
		})
	}
}

// TestUnsaidPayoutListLimit: the spec shows no maximum limit. The SDK sends
// the caller's limit as given, and when the server answers fewer items than
// asked, AllPayouts goes on from offset+len(page) until total.
func TestUnsaidPayoutListLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("sent as given", func(t *testing.T) {
		t.Parallel()
		s := &payoutLister{created: 3}
		c := s.client(t)
		for _, limit := range []int{1, 100, 1000, 5000, 1 << 20} {
			l, err := c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: limit})
			require.NoError(t, err)
			assert.Equal(t, limit, l.Limit, "the envelope's limit, as the server reports it")
		}
		uris := requestLines(&s.log)
		assert.Equal(t, []string{"GET /v1/payouts?limit=1", "GET /v1/payouts?limit=100", "GET /v1/payouts?limit=1000",
			"GET /v1/payouts?limit=5000", "GET /v1/payouts?limit=1048576"}, uris)
	})

	t.Run("server caps the page", func(t *testing.T) {
		t.Parallel()
		s := &payoutLister{created: 250, maxLimit: 100}
		c := s.client(t)
		var ids []string
		for p, err := range c.AllPayouts(ctx, paykit.ListPayoutsParams{Limit: 500}) {
			require.NoError(t, err)
			ids = append(ids, p.ID)
		}
		assert.Len(t, ids, 250)
		slices.Sort(ids)
		assert.Len(t, slices.Compact(ids), 250, "no payout twice")
		assert.Equal(t, []string{"GET /v1/payouts?limit=500", "GET /v1/payouts?limit=500&offset=100",
			"GET /v1/payouts?limit=500&offset=200"}, requestLines(&s.log))
	})

	t.Run("sandbox reports the limit it used", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		l, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: 5000})
		require.NoError(t, err)
		assert.Equal(t, 1000, l.Limit, "the sandbox caps at 1000, and says so in the envelope")
		l, err = e.c.ListPayouts(ctx, paykit.ListPayoutsParams{})
		require.NoError(t, err)
		assert.Equal(t, 100, l.Limit, "the spec's default")
	})
}

// TestUnsaidFromToSentAsGiven: the spec does not say whether from and to
// are inclusive. The SDK sends both exactly as given (RFC 3339 in UTC,
// fractional seconds kept), equal bounds included; the sandbox counts both
// bounds in.
func TestUnsaidFromToSentAsGiven(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("wire", func(t *testing.T) {
		t.Parallel()
		s := &payoutLister{}
		c := s.client(t)
		at := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.FixedZone("MSK", 3*3600))
		_, err := c.ListPayouts(ctx, paykit.ListPayoutsParams{From: at, To: at})
		require.NoError(t, err)
		_, err = c.ListPayouts(ctx, paykit.ListPayoutsParams{From: at, To: at.Add(time.Nanosecond)})
		require.NoError(t, err)
		assert.Equal(t, []string{
			"GET /v1/payouts?from=2025-03-01T09%3A00%3A00.123456789Z&to=2025-03-01T09%3A00%3A00.123456789Z",
			"GET /v1/payouts?from=2025-03-01T09%3A00%3A00.123456789Z&to=2025-03-01T09%3A00%3A00.12345679Z",
		}, requestLines(&s.log))
	})

	t.Run("sandbox: both bounds inclusive", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		var ids []string
		for i := range 3 {
			p, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: fmt.Sprintf("w-%d", i), Amount: dec("10"),
				Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "H"})
			require.NoError(t, err)
			ids = append(ids, p.ID)
			e.sb.Advance(time.Second)
		}
		list := func(from, to time.Time) []string {
			var got []string
			for p, err := range e.c.AllPayouts(ctx, paykit.ListPayoutsParams{From: from, To: to}) {
				require.NoError(t, err)
				got = append(got, p.ID)
			}
			return got
		}
		assert.Equal(t, ids[1:2], list(t0.Add(time.Second), t0.Add(time.Second)), "from = to = created_at")
		assert.Equal(t, ids[0:2], list(t0, t0.Add(time.Second)))
		assert.Equal(t, ids, list(t0, t0.Add(2*time.Second)))
	})
}

// TestUnsaidValidityAndTimeout: the spec shows neither the span until
// valid_until nor the moment of the timeout cancellation. ValidUntil, as the
// server sends it, is the authority: the SDK neither assumes a span nor
// refuses a late call itself; the server answers it (PAY_008 from the
// sandbox once its clock reaches valid_until, the payment reading
// CANCELLED).
func TestUnsaidValidityAndTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("span is the server's", func(t *testing.T) {
		t.Parallel()
		for _, ttl := range []time.Duration{0, 7 * time.Minute, 48 * time.Hour} {
			e := newEnv(t, sandbox.Config{PaymentTTL: ttl})
			p := e.pay(t, "span", "1000")
			want := ttl
			if ttl == 0 {
				want = sandbox.DefaultPaymentTTL // the sandbox's choice: 20 minutes
			}
			assert.Equal(t, want, p.ValidUntil.Sub(p.CreatedAt), "TTL %s", ttl)
		}
	})

	t.Run("late confirm: PAY_008, payment CANCELLED", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		early, late := e.pay(t, "early", "1000"), e.pay(t, "late", "1001")
		e.sb.Advance(late.ValidUntil.Sub(e.sb.Now()) - time.Second)
		got, err := e.c.ConfirmPayment(ctx, early.ID, nil)
		require.NoError(t, err, "a second before valid_until")
		assert.Equal(t, paykit.PaymentStatusProcessing, got.Status)

		e.sb.Advance(time.Second) // the clock reaches valid_until
		_, err = e.c.ConfirmPayment(ctx, late.ID, nil)
		requireAPIError(t, err, paykit.ErrPaymentNotConfirmable, "PAY_008", http.StatusBadRequest)
		assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome)
		assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, late.ID))
		_, err = e.c.CancelPayment(ctx, late.ID)
		requireAPIError(t, err, paykit.ErrPaymentNotCancellable, "PAY_007", http.StatusBadRequest)
	})

	t.Run("the SDK does not expire payments itself", func(t *testing.T) {
		t.Parallel()
		// valid_until long past by any client clock: the call is still sent.
		expired := strings.Replace(unsaidPaymentJSON("PROCESSING"), "2025-03-01T12:20:00Z", "2000-01-01T00:00:00Z", 1)
		c, log := fakeAPI(t, map[string]answer{"POST /v1/payments/" + unsaidPaymentID + "/confirm": {http.StatusOK, expired}})
		p, err := c.ConfirmPayment(ctx, unsaidPaymentID, nil)
		require.NoError(t, err)
		assert.Equal(t, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), p.ValidUntil)
		assert.Equal(t, 1, log.count("POST", "/v1/payments/"+unsaidPaymentID+"/confirm"))
	})
}

// TestUnsaidPayoutAndWithdrawalTransitions: the spec lists the states of
// payouts and withdrawals but not their transitions. The SDK enforces none
// (it decodes whatever status a read answers, an unknown one kept as sent);
// the sandbox follows its documented graph, in which completed, failed and
// cancelled are final.
func TestUnsaidPayoutAndWithdrawalTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SDK: any status in any order", func(t *testing.T) {
		t.Parallel()
		payoutSeq := []string{"completed", "pending", "on_hold", "processing", "cancelled", "failed", "pending"}
		withdrawalSeq := []string{"completed", "pending", "refunded", "failed", "processing", "pending"}
		var pi, wi atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/v1/payouts/" + unsaidPayoutID:
				_, _ = w.Write([]byte(unsaidPayoutJSON(payoutSeq[pi.Add(1)-1])))
			case "/v1/withdrawals/" + unsaidWithdrawalID:
				_, _ = w.Write([]byte(unsaidWithdrawalJSON(withdrawalSeq[wi.Add(1)-1])))
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		c, err := paykit.NewClient(srv.URL, credKey, paykit.HMACSigner(credSecret))
		require.NoError(t, err)
		for _, want := range payoutSeq {
			p, err := c.GetPayout(ctx, unsaidPayoutID)
			require.NoError(t, err)
			assert.Equal(t, paykit.PayoutStatus(want), p.Status)
		}
		for _, want := range withdrawalSeq {
			w, err := c.GetWithdrawal(ctx, unsaidWithdrawalID)
			require.NoError(t, err)
			assert.Equal(t, paykit.WithdrawalStatus(want), w.Status)
		}
	})

	t.Run("sandbox: payout graph", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		n := 0
		payout := func(path ...string) string {
			n++
			p, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: fmt.Sprintf("g-%d", n), Amount: dec("10"),
				Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "H"})
			require.NoError(t, err)
			require.Equal(t, paykit.PayoutStatusPending, p.Status, "a new payout is pending")
			for _, st := range path {
				require.NoError(t, e.sb.SetPayoutStatus(p.ID, st), "-> %s", st)
				got, err := e.c.GetPayout(ctx, p.ID)
				require.NoError(t, err)
				assert.Equal(t, paykit.PayoutStatus(st), got.Status)
			}
			return p.ID
		}
		targets := []string{sandbox.PayoutProcessing, sandbox.PayoutCompleted, sandbox.PayoutFailed, sandbox.PayoutCancelled}
		for _, path := range [][]string{
			{"processing", "completed"}, {"processing", "failed"}, {"processing", "cancelled"},
			{"completed"}, {"failed"}, {"cancelled"},
		} {
			id := payout(path...)
			for _, to := range targets {
				assert.ErrorIs(t, e.sb.SetPayoutStatus(id, to), sandbox.ErrWrongState, "%v is final, -> %s", path, to)
			}
		}
		id := payout("processing")
		assert.ErrorIs(t, e.sb.SetPayoutStatus(id, sandbox.PayoutProcessing), sandbox.ErrWrongState)
		assert.ErrorIs(t, e.sb.SetPayoutStatus(id, sandbox.PayoutPending), sandbox.ErrInvalidArgument, "never back to pending")
		got, err := e.c.GetPayout(ctx, id)
		require.NoError(t, err)
		assert.NotEmpty(t, got.ProviderOrderID, "set on processing")
		assert.True(t, got.CompletedAt.IsZero())
	})

	t.Run("sandbox: withdrawal graph", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		withdrawal := func(path ...string) string {
			w, err := e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: sandbox.DefaultMainTerminalID,
				Amount: dec("10"), Address: "TXyzWallet"})
			require.NoError(t, err)
			require.Equal(t, paykit.WithdrawalStatusPending, w.Status, "a new withdrawal is pending")
			for _, st := range path {
				require.NoError(t, e.sb.SetWithdrawalStatus(w.ID, st, ""), "-> %s", st)
				got, err := e.c.GetWithdrawal(ctx, w.ID)
				require.NoError(t, err)
				assert.Equal(t, paykit.WithdrawalStatus(st), got.Status)
			}
			return w.ID
		}
		targets := []string{sandbox.WithdrawalProcessing, sandbox.WithdrawalCompleted, sandbox.WithdrawalFailed}
		for _, path := range [][]string{{"processing", "completed"}, {"processing", "failed"}, {"completed"}, {"failed"}} {
			id := withdrawal(path...)
			for _, to := range targets {
				assert.ErrorIs(t, e.sb.SetWithdrawalStatus(id, to, ""), sandbox.ErrWrongState, "%v is final, -> %s", path, to)
			}
		}
		id := withdrawal()
		assert.ErrorIs(t, e.sb.SetWithdrawalStatus(id, "cancelled", ""), sandbox.ErrInvalidArgument, "withdrawals have no cancelled")
		assert.ErrorIs(t, e.sb.SetWithdrawalStatus(id, sandbox.WithdrawalPending, ""), sandbox.ErrInvalidArgument)
	})
}

// TestUnsaidVersioning: the spec shows no versioning policy. /v1 is fixed
// in every path the SDK sends; a server that serves only /v2 answers 404,
// which surfaces as an *Error with HTTPStatus 404 (not retried, not an
// unknown outcome).
func TestUnsaidVersioning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type op struct {
		name string
		want string // "METHOD path" of the op's first request
		call func(c *paykit.Client, ids map[string]string) error
	}
	ops := []op{
		{"CreatePayment", "POST /v1/payments", func(c *paykit.Client, ids map[string]string) error {
			p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "v-1", Amount: dec("1000")})
			if err == nil {
				ids["payment"] = p.ID
			}
			return err
		}},
		{"GetPayment", "GET /v1/payments/{payment}", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPayment(ctx, ids["payment"])
			return err
		}},
		{"GetPaymentByExtID", "GET /v1/payments/by-ext-id/v-1", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPaymentByExtID(ctx, "v-1")
			return err
		}},
		{"ConfirmPayment", "POST /v1/payments/{payment}/confirm", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ConfirmPayment(ctx, ids["payment"], nil)
			return err
		}},
		{"CreatePayment", "POST /v1/payments", func(c *paykit.Client, ids map[string]string) error {
			p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "v-2", Amount: dec("1001")})
			if err == nil {
				ids["payment"] = p.ID
			}
			return err
		}},
		{"CancelPayment", "POST /v1/payments/{payment}/cancel", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.CancelPayment(ctx, ids["payment"])
			return err
		}},
		{"OpenDispute", "POST /v1/payments/{payment}/dispute", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.OpenDispute(ctx, ids["payment"], paykit.OpenDisputeParams{})
			return err
		}},
		{"CancelDispute", "POST /v1/payments/{payment}/dispute/cancel", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.CancelDispute(ctx, ids["payment"])
			return err
		}},
		{"CreatePayout", "POST /v1/payouts", func(c *paykit.Client, ids map[string]string) error {
			p, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "vp-1", Amount: dec("10"),
				Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "H"})
			if err == nil {
				ids["payout"] = p.ID
			}
			return err
		}},
		{"GetPayout", "GET /v1/payouts/{payout}", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPayout(ctx, ids["payout"])
			return err
		}},
		{"GetPayoutByExtID", "GET /v1/payouts/by-ext-id/vp-1", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPayoutByExtID(ctx, "vp-1")
			return err
		}},
		{"ListPayouts", "GET /v1/payouts?limit=10", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: 10})
			return err
		}},
		{"AllPayouts", "GET /v1/payouts?limit=10", func(c *paykit.Client, ids map[string]string) error {
			for _, err := range c.AllPayouts(ctx, paykit.ListPayoutsParams{Limit: 10}) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"ListTerminals", "GET /v1/terminals", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ListTerminals(ctx)
			return err
		}},
		{"GetBalance", "GET /v1/balance", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetBalance(ctx)
			return err
		}},
		{"ListBanks", "GET /v1/banks", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ListBanks(ctx)
			return err
		}},
		{"CreateTransfer", "POST /v1/transfers", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
				ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: dec("1")})
			return err
		}},
		{"CreateWithdrawal", "POST /v1/withdrawals", func(c *paykit.Client, ids map[string]string) error {
			w, err := c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: sandbox.DefaultMainTerminalID,
				Amount: dec("10"), Address: "TXyzWallet"})
			if err == nil {
				ids["withdrawal"] = w.ID
			}
			return err
		}},
		{"GetWithdrawal", "GET /v1/withdrawals/{withdrawal}", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetWithdrawal(ctx, ids["withdrawal"])
			return err
		}},
		{"GetWithdrawalFee", "GET /v1/withdrawals/fee", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetWithdrawalFee(ctx)
			return err
		}},
		{"CheckCredentials", "GET /v1/balance", func(c *paykit.Client, ids map[string]string) error {
			return c.CheckCredentials(ctx)
		}},
	}

	t.Run("every path starts with /v1", func(t *testing.T) {
		t.Parallel()
		sb := sandbox.New(sandbox.Config{})
		log := &wireLog{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			sb.ServeHTTP(w, r)
		}))
		t.Cleanup(func() { srv.Close(); sb.Close() })
		c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
		require.NoError(t, err)
		ids := map[string]string{}
		for _, o := range ops {
			before := len(log.all())
			require.NoError(t, o.call(c, ids), o.name)
			reqs := log.all()[before:]
			require.NotEmpty(t, reqs, o.name)
			want := o.want
			for k, v := range ids {
				want = strings.ReplaceAll(want, "{"+k+"}", v)
			}
			assert.Equal(t, want, reqs[0].Method+" "+reqs[0].URI, o.name)
		}
		for _, r := range log.all() {
			assert.True(t, strings.HasPrefix(r.URI, "/v1/"), "%s %s", r.Method, r.URI)
		}
	})

	t.Run("a /v2-only server answers 404", func(t *testing.T) {
		t.Parallel()
		log := &wireLog{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			if strings.HasPrefix(r.URL.Path, "/v2/") {
				_, _ = w.Write([]byte(`{}`))
				return
			}
			http.NotFound(w, r) // text/plain "404 page not found", as net/http's mux answers
		}))
		t.Cleanup(srv.Close)
		c, err := paykit.NewClient(srv.URL, credKey, paykit.HMACSigner(credSecret),
			paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond))
		require.NoError(t, err)
		ids := map[string]string{"payment": unsaidPaymentID, "payout": unsaidPayoutID, "withdrawal": unsaidWithdrawalID}
		for _, o := range ops {
			before := len(log.all())
			err := o.call(c, ids)
			var apiErr *paykit.Error
			if assert.True(t, errors.As(err, &apiErr), "%s: %v", o.name, err) {
				assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatus, o.name)
			}
			assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome, o.name)
			assert.Len(t, log.all()[before:], 1, "%s: a 404 is not retried", o.name)
		}
	})
}

// TestUnsaidSectionNamesRealTests keeps doc.go's "What the spec does not
// say" honest: one paragraph per "not shown" point of the spec (19), each
// naming at least one test, and every test it names exists.
func TestUnsaidSectionNamesRealTests(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		if l == "//" || strings.HasPrefix(l, "// ") {
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "//"), " "))
		}
	}
	doc := strings.Join(lines, "\n")
	_, section, ok := strings.Cut(doc, "# What the spec does not say\n")
	require.True(t, ok, "doc.go has the section")
	section, _, _ = strings.Cut(section, "\n# ")                   // up to the next heading, if any
	paras := strings.Split(strings.TrimSpace(section), "\n\n")[1:] // the first one introduces
	assert.Len(t, paras, 19, "one paragraph per point")

	tests := map[string]bool{}
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err, f)
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				tests[fn.Name.Name] = true
			}
		}
	}
	named := regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9]*`)
	for _, p := range paras {
		refs := named.FindAllString(p, -1)
		if assert.NotEmpty(t, refs, "paragraph names no test: %.60q", p) {
			for _, name := range refs {
				assert.True(t, tests[name], "doc.go names %s, which does not exist", name)
			}
		}
	}
}

// TestDefaultTransportHonoursProxyEnvironment holds the README's statement
// that the default transport, a clone of http.DefaultTransport, goes through
// HTTP_PROXY and HTTPS_PROXY. net/http reads them once per process, so the
// client runs in a child process of this test binary.
func TestDefaultTransportHonoursProxyEnvironment(t *testing.T) {
	if os.Getenv("PAYKIT_PROXY_CHILD") == "1" {
		ctx := context.Background()
		for _, base := range []string{"http://api.paykit.invalid", "https://api.paykit.invalid"} {
			c, err := paykit.NewClient(base, credKey, paykit.HMACSigner(credSecret), paykit.WithInsecureHTTP(), paykit.WithMaxRetries(0))
			require.NoError(t, err)
			_ = c.CheckCredentials(ctx) // the proxy answers the plain one and refuses the CONNECT
		}
		return
	}
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI)
		mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "no tunnels here", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(proxy.Close)

	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultTransportHonoursProxyEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PAYKIT_PROXY_CHILD=1", "HTTP_PROXY="+proxy.URL, "HTTPS_PROXY="+proxy.URL,
		"NO_PROXY=", "http_proxy=", "https_proxy=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"GET http://api.paykit.invalid/v1/balance", "CONNECT api.paykit.invalid:443"}, seen)
}
