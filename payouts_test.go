package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// Response bodies shaped after the spec's Payout table.

const payoutPendingJSON = `{
  "id": "0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2d",
  "ext_id": "po-1",
  "amount": 2500.00,
  "currency": "RUB",
  "method": "card",
  "requisites": "4111111111111111",
  "holder_name": "IVAN IVANOV",
  "bank": "",
  "status": "pending",
  "created_at": "2024-05-01T10:00:00Z"
}`

const payoutCompletedJSON = `{
  "id": "0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2d",
  "ext_id": "po-2",
  "amount": 1500.50,
  "currency": "RUB",
  "method": "sbp",
  "requisites": "+79001234567",
  "holder_name": "PETR PETROV",
  "bank": "sber",
  "status": "completed",
  "provider_order_id": "prv-778899",
  "created_at": "2024-05-01T10:00:00.250Z",
  "completed_at": "2024-05-01T10:07:45Z"
}`

func assertPendingPayout(t *testing.T, p *Payout) {
	t.Helper()
	require.NotNil(t, p)
	assert.Equal(t, payoutID, p.ID)
	assert.Equal(t, "po-1", p.ExtID)
	assertDec(t, "2500.00", p.Amount, "amount")
	assert.Equal(t, "RUB", p.Currency)
	assert.Equal(t, PayoutMethodCard, p.Method)
	assert.Equal(t, "4111111111111111", p.Requisites)
	assert.Equal(t, "IVAN IVANOV", p.HolderName)
	assert.Equal(t, "", p.Bank)
	assert.Equal(t, PayoutStatusPending, p.Status)
	assert.Equal(t, "", p.ProviderOrderID)
	opAssertTime(t, time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), p.CreatedAt, "created_at")
	assert.True(t, p.CompletedAt.IsZero(), "absent completed_at must be the zero time, got %s", p.CompletedAt)
}

func assertCompletedPayout(t *testing.T, p *Payout) {
	t.Helper()
	require.NotNil(t, p)
	assert.Equal(t, payoutID, p.ID)
	assert.Equal(t, "po-2", p.ExtID)
	assertDec(t, "1500.50", p.Amount, "amount")
	assert.Equal(t, "RUB", p.Currency)
	assert.Equal(t, PayoutMethodSBP, p.Method)
	assert.Equal(t, "+79001234567", p.Requisites)
	assert.Equal(t, "PETR PETROV", p.HolderName)
	assert.Equal(t, "sber", p.Bank)
	assert.Equal(t, PayoutStatusCompleted, p.Status)
	assert.Equal(t, "prv-778899", p.ProviderOrderID)
	opAssertTime(t, time.Date(2024, 5, 1, 10, 0, 0, 250_000_000, time.UTC), p.CreatedAt, "created_at")
	opAssertTime(t, time.Date(2024, 5, 1, 10, 7, 45, 0, time.UTC), p.CompletedAt, "completed_at")
}

// ---------------------------------------------------------------------------
// 8. POST /v1/payouts

func TestCreatePayoutRequest(t *testing.T) {
	t.Parallel()
	base := CreatePayoutParams{ExtID: "po-1", Amount: dec("2500.00"), Method: PayoutMethodCard,
		Requisites: "4111111111111111", HolderName: "IVAN IVANOV"}
	tests := []struct {
		name   string
		params func(p *CreatePayoutParams)
		body   string
	}{
		{"required fields only, optional omitted", func(*CreatePayoutParams) {},
			`{"ext_id":"po-1","amount":2500.00,"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV"}`},
		{"bank and notify_url set", func(p *CreatePayoutParams) {
			p.Method, p.Requisites, p.Bank, p.NotifyURL = PayoutMethodSBP, "+79001234567", "sber", "https://shop.example/hooks/payout?x=1"
		}, `{"ext_id":"po-1","amount":2500.00,"method":"sbp","requisites":"+79001234567","holder_name":"IVAN IVANOV","bank":"sber","notify_url":"https://shop.example/hooks/payout?x=1"}`},
		{"only bank set", func(p *CreatePayoutParams) { p.Bank = "tinkoff" },
			`{"ext_id":"po-1","amount":2500.00,"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV","bank":"tinkoff"}`},
		{"only notify_url set", func(p *CreatePayoutParams) { p.NotifyURL = "http://10.0.0.5/cb" },
			`{"ext_id":"po-1","amount":2500.00,"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV","notify_url":"http://10.0.0.5/cb"}`},
		{"integer amount keeps no decimals", func(p *CreatePayoutParams) { p.Amount = dec("2500") },
			`{"ext_id":"po-1","amount":2500,"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV"}`},
		{"amount digits kept as given", func(p *CreatePayoutParams) { p.Amount = dec("1500.50") },
			`{"ext_id":"po-1","amount":1500.50,"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV"}`},
		{"small fractional amount", func(p *CreatePayoutParams) { p.Amount = dec("0.10") },
			`{"ext_id":"po-1","amount":0.10,"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV"}`},
		{"non-ASCII and quotes escaped in JSON", func(p *CreatePayoutParams) { p.ExtID, p.HolderName = `po-"7"`, "ИВАН ИВАНОВ" },
			`{"ext_id":"po-\"7\"","amount":2500.00,"method":"card","requisites":"4111111111111111","holder_name":"ИВАН ИВАНОВ"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := echoClient(t, http.StatusOK, payoutPendingJSON)
			p := base
			tt.params(&p)
			_, err := c.CreatePayout(context.Background(), p)
			require.NoError(t, err)
			assertWire(t, rec.only(t), http.MethodPost, "/v1/payouts", "application/json", tt.body)
		})
	}
}

func TestCreatePayoutDecodesResponse(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusCreated, payoutPendingJSON)
	p, err := c.CreatePayout(context.Background(), CreatePayoutParams{ExtID: "po-1", Amount: dec("2500.00"),
		Method: PayoutMethodCard, Requisites: "4111111111111111", HolderName: "IVAN IVANOV"})
	require.NoError(t, err)
	assertPendingPayout(t, p)
}

// ---------------------------------------------------------------------------
// 9. GET /v1/payouts/{id} and 10. GET /v1/payouts/by-ext-id/{extId}

func TestGetPayoutRequestAndDecode(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, payoutCompletedJSON)
	p, err := c.GetPayout(context.Background(), payoutID)
	require.NoError(t, err)
	assertWire(t, rec.only(t), http.MethodGet, "/v1/payouts/"+payoutID, "", "")
	assertCompletedPayout(t, p)
}

func TestGetPayoutByExtIDRequest(t *testing.T) {
	t.Parallel()
	tests := []struct{ extID, uri string }{
		{"po-2", "/v1/payouts/by-ext-id/po-2"},
		{"a/b?c#d", "/v1/payouts/by-ext-id/a%2Fb%3Fc%23d"},
		{"order 42", "/v1/payouts/by-ext-id/order%2042"},
		{"50%off", "/v1/payouts/by-ext-id/50%25off"},
		{"заказ", "/v1/payouts/by-ext-id/%D0%B7%D0%B0%D0%BA%D0%B0%D0%B7"},
	}
	for _, tt := range tests {
		t.Run(tt.extID, func(t *testing.T) {
			t.Parallel()
			quoted, _ := json.Marshal(tt.extID)
			body := strings.Replace(payoutCompletedJSON, `"ext_id": "po-2"`, `"ext_id": `+string(quoted), 1)
			c, rec := mockClient(t, http.StatusOK, body)
			p, err := c.GetPayoutByExtID(context.Background(), tt.extID)
			require.NoError(t, err)
			assertWire(t, rec.only(t), http.MethodGet, tt.uri, "", "")
			assert.Equal(t, tt.extID, p.ExtID)
			p.ExtID = "po-2"
			assertCompletedPayout(t, p)
		})
	}
}

func TestPayoutDecodingEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, p *Payout)
	}{
		{"unknown status kept as sent", `{"id":"` + payoutID + `","status":"on_hold","amount":10}`,
			func(t *testing.T, p *Payout) { assert.Equal(t, PayoutStatus("on_hold"), p.Status) }},
		{"upper-case status normalised", `{"id":"` + payoutID + `","status":"COMPLETED","amount":10}`,
			func(t *testing.T, p *Payout) { assert.Equal(t, PayoutStatusCompleted, p.Status) }},
		{"mixed-case status normalised", `{"id":"` + payoutID + `","status":"Processing","amount":10}`,
			func(t *testing.T, p *Payout) { assert.Equal(t, PayoutStatusProcessing, p.Status) }},
		{"upper-case method normalised", `{"id":"` + payoutID + `","method":"SBP","amount":10}`,
			func(t *testing.T, p *Payout) { assert.Equal(t, PayoutMethodSBP, p.Method) }},
		{"unknown method kept", `{"id":"` + payoutID + `","method":"swift","amount":10}`,
			func(t *testing.T, p *Payout) { assert.Equal(t, PayoutMethod("swift"), p.Method) }},
		{"unknown fields ignored", `{"id":"` + payoutID + `","ext_id":"po-9","amount":99.90,"fee":{"x":[1,2]},"new_field":"v","status":"failed"}`,
			func(t *testing.T, p *Payout) {
				assert.Equal(t, "po-9", p.ExtID)
				assertDec(t, "99.90", p.Amount, "amount")
				assert.Equal(t, PayoutStatusFailed, p.Status)
			}},
		{"numeric-string amount", `{"id":"` + payoutID + `","amount":"2500.00"}`,
			func(t *testing.T, p *Payout) { assertDec(t, "2500.00", p.Amount, "amount") }},
		{"null completed_at is zero", `{"id":"` + payoutID + `","amount":1,"completed_at":null,"provider_order_id":null}`,
			func(t *testing.T, p *Payout) {
				assert.True(t, p.CompletedAt.IsZero())
				assert.Equal(t, "", p.ProviderOrderID)
			}},
		{"empty completed_at is zero", `{"id":"` + payoutID + `","amount":1,"completed_at":""}`,
			func(t *testing.T, p *Payout) { assert.True(t, p.CompletedAt.IsZero()) }},
		{"offset time converted to UTC", `{"id":"` + payoutID + `","amount":1,"created_at":"2024-05-01T13:00:00+03:00"}`,
			func(t *testing.T, p *Payout) {
				opAssertTime(t, time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), p.CreatedAt, "created_at")
			}},
		{"numeric requisites and provider id kept as written", `{"id":"` + payoutID + `","amount":1,"requisites":79001234567,"provider_order_id":123456}`,
			func(t *testing.T, p *Payout) {
				assert.Equal(t, "79001234567", p.Requisites)
				assert.Equal(t, "123456", p.ProviderOrderID)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, http.StatusOK, tt.body)
			p, err := c.GetPayout(context.Background(), payoutID)
			require.NoError(t, err)
			tt.check(t, p)
		})
	}
}

func TestPayoutDecodingRefusesBadBodies(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not JSON":          `<html>ok</html>`,
		"bad timestamp":     `{"id":"` + payoutID + `","amount":1,"created_at":"yesterday"}`,
		"amount not number": `{"id":"` + payoutID + `","amount":"a lot"}`,
		"huge exponent":     `{"id":"` + payoutID + `","amount":1e999999999}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, http.StatusOK, body)
			p, err := c.GetPayout(context.Background(), payoutID)
			assert.Error(t, err)
			assert.Nil(t, p)
		})
	}
}

// ---------------------------------------------------------------------------
// Errors of operations 8-10.

func TestPayoutErrors(t *testing.T) {
	t.Parallel()
	create := func(c *Client) error {
		_, err := c.CreatePayout(context.Background(), CreatePayoutParams{ExtID: "po-1", Amount: dec("2500.00"),
			Method: PayoutMethodCard, Requisites: "4111111111111111", HolderName: "IVAN IVANOV"})
		return err
	}
	get := func(c *Client) error { _, err := c.GetPayout(context.Background(), payoutID); return err }
	getExt := func(c *Client) error { _, err := c.GetPayoutByExtID(context.Background(), "po-1"); return err }
	list := func(c *Client) error { _, err := c.ListPayouts(context.Background(), ListPayoutsParams{}); return err }

	tests := []struct {
		name      string
		call      func(*Client) error
		status    int
		code      string
		sentinels []string
	}{
		{"create PAY_002", create, 400, "PAY_002", []string{"ErrInvalidParameters"}},
		{"create PAY_003", create, 409, "PAY_003", []string{"ErrDuplicateExtID"}},
		{"create SYS_001 may have created it", create, 500, "SYS_001", []string{"ErrInternal", "ErrUnknownOutcome"}},
		{"get PAY_001 404", get, 404, "PAY_001", []string{"ErrPayoutNotFound"}},
		{"get by ext_id PAY_001 404", getExt, 404, "PAY_001", []string{"ErrPayoutNotFound"}},
		{"get PAY_001 500 is internal", get, 500, "PAY_001", []string{"ErrInternal"}},
		{"get 401", get, 401, "AUTH", []string{"ErrUnauthorized"}},
		{"list 500", list, 500, "SYS_001", []string{"ErrInternal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, tt.status, opErrBody(tt.code, "something went wrong"))
			err := tt.call(c)
			opRequireAPIError(t, err, tt.code, tt.status)
			opAssertOnlySentinels(t, err, tt.sentinels...)
			assert.Equal(t, 1, rec.count())
		})
	}
}

func TestCreatePayoutDuplicateExtID(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusConflict,
		`{"error":"PAY_003","message":"Payout with this ext_id already exists","data":{"ext_id":"po-1"}}`)
	p, err := c.CreatePayout(context.Background(), CreatePayoutParams{ExtID: "po-1", Amount: dec("2500.00"),
		Method: PayoutMethodCard, Requisites: "4111111111111111", HolderName: "IVAN IVANOV"})
	assert.Nil(t, p)
	apiErr := opRequireAPIError(t, err, "PAY_003", http.StatusConflict)
	assert.Equal(t, "po-1", apiErr.ExtID())
	assert.Equal(t, "Payout with this ext_id already exists", apiErr.Message)
	assert.ErrorIs(t, err, ErrDuplicateExtID)
	assert.NotErrorIs(t, err, ErrUnknownOutcome)
	assert.Equal(t, 1, rec.count(), "a first-attempt PAY_003 is not reconciled")
}

// TestPayoutErrorCodeOverDefaultHTTPClient sends 5xx error bodies through a
// real server and the SDK's default http.Client (which has a Timeout), the
// configuration merchants use. The code of the body must survive.
func TestPayoutErrorCodeOverDefaultHTTPClient(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		code string
		call func(*Client) error
	}{
		{"GetPayout PAY_001 500", "PAY_001", func(c *Client) error { _, err := c.GetPayout(context.Background(), payoutID); return err }},
		{"ListPayouts SYS_001", "SYS_001", func(c *Client) error {
			_, err := c.ListPayouts(context.Background(), ListPayoutsParams{})
			return err
		}},
		{"CreatePayout SYS_001", "SYS_001", func(c *Client) error {
			_, err := c.CreatePayout(context.Background(), CreatePayoutParams{ExtID: "po-1", Amount: dec("2500.00"),
				Method: PayoutMethodCard, Requisites: "4111111111111111", HolderName: "IVAN IVANOV"})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, opErrBody(tt.code, "internal"))
			}), WithMaxRetries(0))
			err := tt.call(c)
			opRequireAPIError(t, err, tt.code, http.StatusInternalServerError)
			assert.ErrorIs(t, err, ErrInternal)
		})
	}
}

// ---------------------------------------------------------------------------
// 11. GET /v1/payouts

const payoutListJSON = `{
  "payouts": [
    {"id":"0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2d","ext_id":"po-1","amount":2500.00,"currency":"RUB","method":"card",
     "requisites":"4111111111111111","holder_name":"IVAN IVANOV","bank":"","status":"pending","created_at":"2024-05-01T10:00:00Z"},
    {"id":"1c8e4d3b-2f50-4b6c-9d7e-8f9a0b1c2d3e","ext_id":"po-2","amount":"1500.50","currency":"RUB","method":"sbp",
     "requisites":"+79001234567","holder_name":"PETR PETROV","bank":"sber","status":"completed",
     "provider_order_id":"prv-778899","created_at":"2024-05-01T10:00:00.250Z","completed_at":"2024-05-01T10:07:45Z"}
  ],
  "total": 12,
  "limit": 2,
  "offset": 4
}`

func TestListPayoutsQuery(t *testing.T) {
	t.Parallel()
	msk := time.FixedZone("MSK", 3*60*60)
	tests := []struct {
		name   string
		params ListPayoutsParams
		uri    string
	}{
		{"no filter", ListPayoutsParams{}, "/v1/payouts"},
		{"every filter, keys sorted, non-UTC times in UTC", ListPayoutsParams{
			Status: PayoutStatusPending,
			From:   time.Date(2024, 5, 1, 3, 0, 0, 0, msk),
			To:     time.Date(2024, 5, 31, 23, 59, 59, 0, time.UTC),
			Limit:  50, Offset: 100,
		}, "/v1/payouts?from=2024-05-01T00%3A00%3A00Z&limit=50&offset=100&status=pending&to=2024-05-31T23%3A59%3A59Z"},
		{"status only", ListPayoutsParams{Status: PayoutStatusCancelled}, "/v1/payouts?status=cancelled"},
		{"from only, local zone", ListPayoutsParams{From: time.Date(2024, 1, 1, 0, 0, 0, 0, msk)},
			"/v1/payouts?from=2023-12-31T21%3A00%3A00Z"},
		{"to only", ListPayoutsParams{To: time.Date(2024, 2, 29, 12, 30, 0, 0, time.UTC)},
			"/v1/payouts?to=2024-02-29T12%3A30%3A00Z"},
		{"from equal to to", ListPayoutsParams{From: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 2, 1, 3, 0, 0, 0, msk)},
			"/v1/payouts?from=2024-02-01T00%3A00%3A00Z&to=2024-02-01T00%3A00%3A00Z"},
		{"limit only", ListPayoutsParams{Limit: 1}, "/v1/payouts?limit=1"},
		{"offset only", ListPayoutsParams{Offset: 7}, "/v1/payouts?offset=7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, `{"payouts":[],"total":0,"limit":100,"offset":0}`)
			_, err := c.ListPayouts(context.Background(), tt.params)
			require.NoError(t, err)
			assertWire(t, rec.only(t), http.MethodGet, tt.uri, "", "")
		})
	}
}

func TestListPayoutsDecodesEnvelope(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, payoutListJSON)
	l, err := c.ListPayouts(context.Background(), ListPayoutsParams{Limit: 2, Offset: 4})
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Equal(t, 12, l.Total)
	assert.Equal(t, 2, l.Limit)
	assert.Equal(t, 4, l.Offset)
	require.Len(t, l.Payouts, 2)
	assertPendingPayout(t, &l.Payouts[0])
	second := l.Payouts[1]
	assert.Equal(t, "1c8e4d3b-2f50-4b6c-9d7e-8f9a0b1c2d3e", second.ID)
	second.ID = payoutID
	assertCompletedPayout(t, &second)
}

// ---------------------------------------------------------------------------
// AllPayouts over a real loopback server.

// pagedPayoutServer serves ListPayouts from a fixed list, honouring limit
// and offset, and claiming total (len(items) when total < 0). failAt makes
// the page at that offset answer 500. It records every request URI.
type pagedPayoutServer struct {
	t      *testing.T
	items  []map[string]any
	total  int
	failAt int

	mu   sync.Mutex
	uris []string
}

func newPagedPayoutServer(t *testing.T, n, total int) *pagedPayoutServer {
	s := &pagedPayoutServer{t: t, total: total, failAt: -1}
	for i := range n {
		s.items = append(s.items, map[string]any{
			"id":          fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1),
			"ext_id":      fmt.Sprintf("po-%d", i+1),
			"amount":      json.Number(fmt.Sprintf("%d.50", 100*(i+1))),
			"currency":    "RUB",
			"method":      "card",
			"requisites":  "4111111111111111",
			"holder_name": "IVAN IVANOV",
			"bank":        "",
			"status":      "completed",
			"created_at":  fmt.Sprintf("2024-05-01T10:%02d:00Z", i),
		})
	}
	if s.total < 0 {
		s.total = n
	}
	return s
}

func (s *pagedPayoutServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.uris...)
}

func (s *pagedPayoutServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.uris = append(s.uris, r.URL.RequestURI())
	n := len(s.uris)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if n > 50 { // the client is looping
		s.t.Errorf("too many list requests")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, opErrBody("PAY_002", "stop"))
		return
	}
	if r.Method != http.MethodGet || r.URL.Path != "/v1/payouts" ||
		r.Header.Get("X-Identity") != testKey ||
		r.Header.Get("X-Signature") != wantSignature(r.Method, r.URL.RequestURI(), body) {
		s.t.Errorf("unexpected request %s %s", r.Method, r.URL.RequestURI())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	limit, offset := 100, 0
	if v := q.Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
	}
	if v := q.Get("offset"); v != "" {
		offset, _ = strconv.Atoi(v)
	}
	if offset == s.failAt {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, opErrBody("SYS_001", "database unavailable"))
		return
	}
	page := []map[string]any{}
	if offset < len(s.items) {
		page = s.items[offset:min(offset+limit, len(s.items))]
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"payouts": page, "total": s.total, "limit": limit, "offset": offset})
}

func TestAllPayoutsYieldsEveryPageInOrder(t *testing.T) {
	t.Parallel()
	srv := newPagedPayoutServer(t, 5, -1)
	c, _ := serverClient(t, srv)
	var got []Payout
	for p, err := range c.AllPayouts(context.Background(), ListPayoutsParams{Status: PayoutStatusCompleted, Limit: 2}) {
		require.NoError(t, err)
		got = append(got, p)
	}
	require.Len(t, got, 5)
	for i, p := range got {
		assert.Equal(t, fmt.Sprintf("po-%d", i+1), p.ExtID)
		assertDec(t, fmt.Sprintf("%d.50", 100*(i+1)), p.Amount, "amount")
		opAssertTime(t, time.Date(2024, 5, 1, 10, i, 0, 0, time.UTC), p.CreatedAt, "created_at")
		assert.Equal(t, PayoutStatusCompleted, p.Status)
	}
	assert.Equal(t, []string{
		"/v1/payouts?limit=2&status=completed",
		"/v1/payouts?limit=2&offset=2&status=completed",
		"/v1/payouts?limit=2&offset=4&status=completed",
	}, srv.requests())
}

func TestAllPayoutsStartsAtGivenOffsetWithDefaultLimit(t *testing.T) {
	t.Parallel()
	srv := newPagedPayoutServer(t, 5, -1)
	c, _ := serverClient(t, srv)
	var ext []string
	for p, err := range c.AllPayouts(context.Background(), ListPayoutsParams{Offset: 3}) {
		require.NoError(t, err)
		ext = append(ext, p.ExtID)
	}
	assert.Equal(t, []string{"po-4", "po-5"}, ext)
	assert.Equal(t, []string{"/v1/payouts?offset=3"}, srv.requests())
}

func TestAllPayoutsStopsWhenConsumerBreaks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ take, requests int }{{1, 1}, {2, 1}, {3, 2}} {
		t.Run(strconv.Itoa(tt.take), func(t *testing.T) {
			t.Parallel()
			srv := newPagedPayoutServer(t, 5, -1)
			c, _ := serverClient(t, srv)
			n := 0
			for p, err := range c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 2}) {
				require.NoError(t, err)
				n++
				assert.Equal(t, fmt.Sprintf("po-%d", n), p.ExtID)
				if n == tt.take {
					break
				}
			}
			assert.Equal(t, tt.take, n)
			assert.Len(t, srv.requests(), tt.requests)
		})
	}
}

func TestAllPayoutsYieldsOneErrorAndStops(t *testing.T) {
	t.Parallel()
	srv := newPagedPayoutServer(t, 5, -1)
	srv.failAt = 2
	// An http.Client without Timeout: with one, the error code is lost
	// (see TestPayoutErrorCodeOverDefaultHTTPClient).
	c, _ := serverClient(t, srv, WithMaxRetries(0), WithHTTPClient(&http.Client{}))
	var ext []string
	var errs []error
	for p, err := range c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 2}) {
		if err != nil {
			assert.Equal(t, Payout{}, p, "the error comes with a zero Payout")
			errs = append(errs, err)
			continue // a consumer that keeps going must still see the end
		}
		ext = append(ext, p.ExtID)
	}
	assert.Equal(t, []string{"po-1", "po-2"}, ext)
	require.Len(t, errs, 1)
	opRequireAPIError(t, errs[0], "SYS_001", http.StatusInternalServerError)
	assert.ErrorIs(t, errs[0], ErrInternal)
	assert.Equal(t, []string{"/v1/payouts?limit=2", "/v1/payouts?limit=2&offset=2"}, srv.requests())
}

func TestAllPayoutsValidationErrorYieldedOnce(t *testing.T) {
	t.Parallel()
	srv := newPagedPayoutServer(t, 5, -1)
	c, _ := serverClient(t, srv)
	calls := 0
	for p, err := range c.AllPayouts(context.Background(), ListPayoutsParams{Limit: -1}) {
		calls++
		assert.Equal(t, Payout{}, p)
		var ve *ValidationError
		require.True(t, errors.As(err, &ve), "%v", err)
		assert.Equal(t, "limit", ve.Field)
	}
	assert.Equal(t, 1, calls)
	assert.Empty(t, srv.requests())
}

func TestAllPayoutsStopsOnEmptyPage(t *testing.T) {
	t.Parallel()
	srv := newPagedPayoutServer(t, 5, 10) // total claims 10, only 5 exist
	c, _ := serverClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := 0
	for _, err := range c.AllPayouts(ctx, ListPayoutsParams{Limit: 2}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 5, n)
	assert.Equal(t, []string{
		"/v1/payouts?limit=2",
		"/v1/payouts?limit=2&offset=2",
		"/v1/payouts?limit=2&offset=4",
		"/v1/payouts?limit=2&offset=5",
	}, srv.requests())
}

func TestAllPayoutsEmptyList(t *testing.T) {
	t.Parallel()
	srv := newPagedPayoutServer(t, 0, 0)
	c, _ := serverClient(t, srv)
	for range c.AllPayouts(context.Background(), ListPayoutsParams{}) {
		t.Fatal("nothing to yield")
	}
	assert.Equal(t, []string{"/v1/payouts"}, srv.requests())
}

// ---------------------------------------------------------------------------
// CreatePayout retried after a 5xx: a PAY_003 on the retry is reconciled by
// reading the payout back by ext_id.

func TestCreatePayoutReconcilesDuplicateOnRetry(t *testing.T) {
	t.Parallel()
	params := CreatePayoutParams{ExtID: "po-1", Amount: dec("2500.00"), Method: PayoutMethodCard,
		Requisites: "4111111111111111", HolderName: "IVAN IVANOV"}
	tests := []struct {
		name     string
		readBack func(w http.ResponseWriter)
		check    func(t *testing.T, p *Payout, err error)
	}{
		{"read-back matches: the earlier attempt's payout is returned", func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, payoutPendingJSON)
		}, func(t *testing.T, p *Payout, err error) {
			require.NoError(t, err)
			assertPendingPayout(t, p)
		}},
		{"read-back differs: the PAY_003 error is returned", func(w http.ResponseWriter) {
			// po-1 with another amount, method and requisites
			_, _ = io.WriteString(w, strings.Replace(payoutCompletedJSON, `"po-2"`, `"po-1"`, 1))
		}, func(t *testing.T, p *Payout, err error) {
			assert.Nil(t, p)
			opRequireAPIError(t, err, "PAY_003", http.StatusConflict)
			opAssertOnlySentinels(t, err, "ErrDuplicateExtID")
		}},
		{"read-back about another ext_id: a broken read cannot tell", func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, payoutCompletedJSON)
		}, func(t *testing.T, p *Payout, err error) {
			assert.Nil(t, p)
			opAssertOnlySentinels(t, err, "ErrUnknownOutcome")
			assert.ErrorContains(t, err, `the answer is about ext_id "po-2", not "po-1"`)
		}},
		{"read-back fails: both errors are reported, but not as someone else's", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, opErrBody("PAY_001", "payout not found"))
		}, func(t *testing.T, p *Payout, err error) {
			assert.Nil(t, p)
			opAssertOnlySentinels(t, err, "ErrUnknownOutcome", "ErrPayoutNotFound")
			assert.ErrorContains(t, err, "PAY_003 (HTTP 409): exists; reading it back: paykit: PAY_001 (HTTP 404): payout not found")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []string
			posts := 0
			c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				seen = append(seen, r.Method+" "+r.URL.RequestURI())
				if r.Method == http.MethodPost {
					posts++
				}
				n := posts
				mu.Unlock()
				assert.Equal(t, wantSignature(r.Method, r.URL.RequestURI(), body), r.Header.Get("X-Signature"))
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.Method == http.MethodPost && n == 1:
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = io.WriteString(w, opErrBody("SYS_001", "timeout talking to provider"))
				case r.Method == http.MethodPost:
					w.WriteHeader(http.StatusConflict)
					_, _ = io.WriteString(w, `{"error":"PAY_003","message":"exists","data":{"ext_id":"po-1"}}`)
				default:
					tt.readBack(w)
				}
			}))
			p, err := c.CreatePayout(context.Background(), params)
			tt.check(t, p, err)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, []string{"POST /v1/payouts", "POST /v1/payouts", "GET /v1/payouts/by-ext-id/po-1"}, seen)
		})
	}
}

func TestListPayoutsSendsSubSecondBounds(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, `{"payouts":[],"total":0,"limit":100,"offset":0}`)
	_, err := c.ListPayouts(context.Background(), ListPayoutsParams{
		From: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC),
		To:   time.Date(2026, 11, 22, 15, 0, 0, 700_000_000, time.FixedZone("MSK", 3*3600))})
	require.NoError(t, err)
	assert.Equal(t, "/v1/payouts?from=2026-11-22T11%3A00%3A00Z&to=2026-11-22T12%3A00%3A00.7Z", rec.only(t).URI)
}

// payoutServer lists n payouts with ids po-0…po-(n-1), honouring limit and
// offset unless told to misbehave: ignore offset, echo a wrong offset, or
// leave total out.
type payoutServer struct {
	mu         sync.Mutex
	n          int
	ignoreOff  bool
	noTotal    bool
	echoOffset func(int) int
	pages      int
}

func (s *payoutServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit == 0 {
		limit = 100
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	if s.ignoreOff {
		off = 0
	}
	var items []string
	for i := off; i < off+limit && i < s.n; i++ {
		items = append(items, fmt.Sprintf(`{"id":"po-%d","ext_id":"e-%d","amount":100,"method":"card","requisites":"1","status":"pending"}`, i, i))
	}
	echo := off
	if s.echoOffset != nil {
		echo = s.echoOffset(off)
	}
	total := fmt.Sprintf(`,"total":%d`, s.n)
	if s.noTotal {
		total = ""
	}
	fmt.Fprintf(w, `{"payouts":[%s]%s,"limit":%d,"offset":%d}`, strings.Join(items, ","), total, limit, echo)
	s.pages++
}

func collect(t *testing.T, seq func(func(Payout, error) bool)) ([]string, error) {
	t.Helper()
	var ids []string
	for p, err := range seq {
		if err != nil {
			return ids, err
		}
		ids = append(ids, p.ID)
	}
	return ids, nil
}

func TestAllPayoutsReusableAndConcurrent(t *testing.T) {
	t.Parallel()
	c, _ := serverClient(t, &payoutServer{n: 10})
	seq := c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 3})
	first, err := collect(t, seq)
	require.NoError(t, err)
	second, err := collect(t, seq)
	require.NoError(t, err)
	assert.Len(t, first, 10)
	assert.Equal(t, first, second, "ranging again starts afresh")

	var wg sync.WaitGroup
	counts := make([]int, 4)
	for g := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, err := collect(t, seq)
			assert.NoError(t, err)
			counts[g] = len(ids)
		}()
	}
	wg.Wait()
	assert.Equal(t, []int{10, 10, 10, 10}, counts)
}

func TestAllPayoutsNoticesStuckPaging(t *testing.T) {
	t.Parallel()
	t.Run("offset ignored", func(t *testing.T) {
		t.Parallel()
		srv := &payoutServer{n: 50, ignoreOff: true}
		c, _ := serverClient(t, srv)
		ids, err := collect(t, c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 2}))
		require.ErrorIs(t, err, errPagingStuck)
		assert.Equal(t, []string{"po-0", "po-1"}, ids, "each payout once")
		assert.LessOrEqual(t, srv.pages, 2)
	})
	t.Run("offset echo wrong", func(t *testing.T) {
		t.Parallel()
		srv := &payoutServer{n: 50, echoOffset: func(int) int { return 0 }}
		c, _ := serverClient(t, srv)
		_, err := collect(t, c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 10}))
		require.ErrorIs(t, err, errPagingStuck)
		assert.Equal(t, 2, srv.pages)
	})
	t.Run("no total", func(t *testing.T) {
		t.Parallel()
		c, _ := serverClient(t, &payoutServer{n: 5, noTotal: true})
		_, err := collect(t, c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 2}))
		require.ErrorIs(t, err, errNoTotal)
	})
}

// A service that echoes offset but answers the same payouts in another
// order, with a huge total, would make paging run for billions of pages;
// AllPayouts stops at the first page with nothing new.
func TestAllPayoutsStopsOnAPageWithNothingNew(t *testing.T) {
	t.Parallel()
	var pages atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		order := []string{"po-1", "po-2"}
		n := pages.Add(1)
		if n > 100 { // the test's own bound, so a client that pages on fails instead of running for hours
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"STOP","message":"paged past 100 pages"}`)
			return
		}
		if n%2 == 0 {
			order = []string{"po-2", "po-1"}
		}
		fmt.Fprintf(w, `{"payouts":[{"id":%q,"amount":1},{"id":%q,"amount":1}],"total":4000000000,"limit":2,"offset":%d}`,
			order[0], order[1], off)
	}))
	ids, err := collect(t, c.AllPayouts(ctx, ListPayoutsParams{Limit: 2}))
	require.ErrorIs(t, err, errPagingStuck)
	assert.Equal(t, []string{"po-1", "po-2"}, ids)
	assert.Equal(t, int32(2), pages.Load())
}

func TestAllPayoutsRefusesAPayoutWithoutID(t *testing.T) {
	t.Parallel()
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"payouts":[{"id":"po-1","amount":1},{"id":"","amount":2},{"amount":3}],"total":3,"limit":3,"offset":0}`))
	}))
	ids, err := collect(t, c.AllPayouts(ctx, ListPayoutsParams{}))
	require.ErrorIs(t, err, errNoID)
	assert.Equal(t, []string{"po-1"}, ids, "payouts without an id are not merged into one")
}

// The ids AllPayouts remembers are those of its latest pages: a payout
// listed again within them is not yielded twice; one listed again after
// them is (the bound on its memory).
func TestAllPayoutsRemembersTheLatestPages(t *testing.T) {
	t.Parallel()
	// Page k lists po-k and, on page 3, po-0 again; on page 6, po-1 again
	// (five pages after it was listed).
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		k := off / 2
		extra := fmt.Sprintf("x-%d", k)
		switch k {
		case 3:
			extra = "po-0"
		case 6:
			extra = "po-1"
		}
		fmt.Fprintf(w, `{"payouts":[{"id":"po-%d","amount":1},{"id":%q,"amount":1}],"total":16,"limit":2,"offset":%d}`, k, extra, off)
	}))
	ids, err := collect(t, c.AllPayouts(ctx, ListPayoutsParams{Limit: 2}))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(strings.Join(ids, ","), "po-0,"), "po-0 again within the window: not yielded")
	assert.Equal(t, 2, strings.Count(","+strings.Join(ids, ",")+",", ",po-1,"), "po-1 again after the window: yielded again")
	assert.Len(t, ids, 15)
}
