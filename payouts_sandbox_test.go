package paykit_test

// Tests of payouts (payouts.go) through the public API: paging, limits,
// time bounds and the transitions the spec leaves unsaid.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
