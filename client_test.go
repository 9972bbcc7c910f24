package paykit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewClientRefusesBadConfiguration(t *testing.T) {
	t.Parallel()
	s := HMACSigner(testSecret)
	cases := []struct {
		name, base, key string
		signer          Signer
		opts            []Option
		want            string
	}{
		{"empty key", testBase, " ", s, nil, "empty API key"},
		{"key with newline", testBase, "k\nX: y", s, nil, "line break"},
		{"nil signer", testBase, testKey, nil, nil, "nil Signer"},
		{"malformed URL", "https://exa mple.com/%zz", testKey, s, nil, "malformed base URL"},
		{"relative URL", "/v1", testKey, s, nil, "absolute"},
		{"ftp", "ftp://api.example", testKey, s, nil, "absolute"},
		{"no host", "https://", testKey, s, nil, "no host"},
		{"credentials in URL", "https://user:pw@api.example", testKey, s, nil, "credentials"},
		{"query", "https://api.example?x=1", testKey, s, nil, "query"},
		{"plain http to a remote host", "http://api.example", testKey, s, nil, "loopback"},
		{"plain http to a private address", "http://10.0.0.5:8080", testKey, s, nil, "loopback"},
		{"negative retries", testBase, testKey, s, []Option{WithMaxRetries(-1)}, "negative"},
		{"retry wait min > max", testBase, testKey, s, []Option{WithRetryWait(time.Second, time.Millisecond)}, "min <= max"},
		{"retry wait zero", testBase, testKey, s, []Option{WithRetryWait(0, time.Second)}, "min <= max"},
		{"nil logger", testBase, testKey, s, []Option{WithLogger(nil)}, "WithLogger(nil)"},
		{"nil http client", testBase, testKey, s, []Option{WithHTTPClient(nil)}, "WithHTTPClient(nil)"},
		{"user agent newline", testBase, testKey, s, []Option{WithUserAgent("a\r\nb")}, "line break"},
	}
	for _, tc := range cases {
		c, err := NewClient(tc.base, tc.key, tc.signer, tc.opts...)
		assert.Nil(t, c, tc.name)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		assert.NotContains(t, err.Error(), "pw", tc.name)
	}
}

func TestNewClientAcceptsLoopbackAndInsecureOptIn(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9", "http://127.0.0.2",
		"https://api.example", "https://api.example/prefix/"} {
		_, err := NewClient(base, testKey, HMACSigner(testSecret))
		assert.NoError(t, err, base)
	}
	_, err := NewClient("http://sandbox.internal:8080", testKey, HMACSigner(testSecret), WithInsecureHTTP(), nil)
	assert.NoError(t, err)
}

func TestBasePathPrefixAndUserAgent(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	c, err := NewClient("https://gw.example/merchant%20api/", testKey, HMACSigner(testSecret),
		WithHTTPClient(mockHTTP(t, 200, `{"banks":[]}`, rec)), WithUserAgent(" shop/1.2 "))
	require.NoError(t, err)
	_, err = c.ListBanks(ctx)
	require.NoError(t, err)
	got := rec.only(t)
	assert.Equal(t, "/merchant%20api/v1/banks", got.URI)
	assert.Equal(t, wantSignature("GET", "/merchant%20api/v1/banks", nil), got.Signature)
	assert.True(t, strings.HasPrefix(got.UserAgent, "shop/1.2 paykit-go/"+Version+" go"), got.UserAgent)
}

func TestClientHidesAPIKey(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, 200, `{}`)
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, c)
		assert.NotContains(t, out, testKey, format)
		assert.Contains(t, out, testBase, format)
	}
}

func TestRedirectsAreNeverFollowed(t *testing.T) {
	t.Parallel()
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		w.Write([]byte(`{"banks":[]}`))
	}))
	defer other.Close()
	userClient := &http.Client{}
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}), WithHTTPClient(userClient))
	_, err := c.ListBanks(ctx)
	var apiErr *Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTemporaryRedirect, apiErr.HTTPStatus)
	_, err = c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, int32(0), leaked.Load(), "X-Identity must never reach another host")
	assert.Nil(t, userClient.CheckRedirect, "the merchant's client is left untouched")
	assert.Nil(t, userClient.Transport)
}

func TestClientIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Signature") != wantSignature(r.Method, r.URL.RequestURI(), nil) {
			w.WriteHeader(401)
			return
		}
		w.Write([]byte(`{"balance":"10.50","balance_frozen":0,"currency":"USDT"}`))
	}))
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				b, err := c.GetBalance(ctx)
				if assert.NoError(t, err) {
					assertDec(t, "10.50", b.Balance, "balance")
				}
			}
		}()
	}
	wg.Wait()
}

func TestDoEscapeHatch(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []captured
	rec := &recorder{}
	var posts atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cp := rec.record(r)
		mu.Lock()
		got = append(got, cp)
		mu.Unlock()
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/payouts":
			w.Write([]byte(`{"payouts":[],"total":0,"limit":5,"offset":0,"cursor":"abc"}`))
		case r.Method == http.MethodPost && r.URL.Path == "/v1/refunds":
			posts.Add(1)
			w.WriteHeader(502)
		case r.Method == http.MethodPost:
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"r-1","amount":12.340}`))
		default:
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"PAY_006","message":"not found"}`))
		}
	}), WithMaxRetries(3))

	var raw json.RawMessage
	require.NoError(t, c.Do(ctx, "GET", "/v1/payouts?status=completed&limit=5", nil, &raw))
	assert.JSONEq(t, `{"payouts":[],"total":0,"limit":5,"offset":0,"cursor":"abc"}`, string(raw))
	g := rec.all()[0]
	assert.Equal(t, "GET", g.Method)
	assert.Equal(t, "/v1/payouts?limit=5&status=completed", g.URI)
	assert.Equal(t, testKey, g.Identity)
	assert.Equal(t, wantSignature("GET", g.URI, nil), g.Signature)
	assert.Empty(t, g.Body)

	var m struct {
		ID     string      `json:"id"`
		Amount json.Number `json:"amount"`
	}
	body := map[string]any{"amount": json.Number("12.340"), "note": "x"}
	require.NoError(t, c.Do(ctx, "POST", "/v1/things", body, &m))
	assert.Equal(t, json.Number("12.340"), m.Amount, "digits as answered")
	assert.Equal(t, "r-1", m.ID)
	p := rec.all()[1]
	assert.Equal(t, `{"amount":12.340,"note":"x"}`, string(p.Body))
	assert.Equal(t, "application/json", p.ContentType)
	assert.Equal(t, wantSignature("POST", "/v1/things", p.Body), p.Signature)

	require.NoError(t, c.Do(ctx, "POST", "/v1/things", nil, nil), "nil out discards the answer")

	err := c.Do(ctx, "GET", "/v1/payments/"+paymentID, nil, &raw)
	require.ErrorIs(t, err, ErrPaymentNotFound, "errors map as for typed methods")

	err = c.Do(ctx, "POST", "/v1/refunds", map[string]int{"x": 1}, nil)
	require.ErrorIs(t, err, ErrUnknownOutcome, "a non-GET is a money move")
	assert.Equal(t, int32(1), posts.Load(), "never re-sent")
	assert.Contains(t, err.Error(), "read the resource with a GET")

	before := len(rec.all())
	for _, bad := range []struct{ method, path string }{
		{"GET", "/v2/payments"}, {"GET", "https://evil.example/v1/x"}, {"get", "/v1/banks"}, {"", "/v1/banks"},
		{"GET", "/v1/../admin"}, {"GET", "/v1/a b"}, {"G ET", "/v1/banks"},
	} {
		err := c.Do(ctx, bad.method, bad.path, nil, nil)
		require.ErrorIs(t, err, ErrInvalidParameters, bad)
	}
	require.ErrorIs(t, c.Do(ctx, "GET", "/v1/banks", map[string]int{}, nil), ErrInvalidParameters)
	assert.Len(t, rec.all(), before, "nothing sent for bad input")
}

func TestDoRouteNamesNoID(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/v1/payments/{param}/confirm", doRoute("/v1/payments/"+paymentID+"/confirm"))
	assert.Equal(t, "/v1/payouts/by-ext-id/{param}", doRoute("/v1/payouts/by-ext-id/order-1"))
}

// Do cannot decode into a value that is not a non-nil pointer; a POST sent
// anyway would end as an unknown outcome. It is refused before sending.
func TestDoRefusesAnOutItCannotDecodeInto(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, `{"id":"r-1"}`)
	var m map[string]any
	var nilPtr *map[string]any
	for name, out := range map[string]any{"struct value": struct{ ID string }{}, "map value": m,
		"nil pointer": nilPtr, "string": "x"} {
		err := c.Do(ctx, "POST", "/v1/things", map[string]int{"x": 1}, out)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, name)
		assert.Equal(t, "out", ve.Field, name)
		assert.NotErrorIs(t, err, ErrUnknownOutcome, name)
	}
	assert.Equal(t, 0, rec.count(), "nothing sent")
}

// A key with a control byte fails every attempt inside net/http, which a
// money move would report as an unknown outcome: NewClient refuses it.
func TestNewClientRefusesAKeyWithAControlByte(t *testing.T) {
	t.Parallel()
	for i, key := range []string{"pk_live_SECRET\x00", "pk_live\x7fSECRET", "pk_live_SECRET\t", "\x1bpk_live_SECRET"} {
		c, err := NewClient(testBase, key, HMACSigner(testSecret))
		assert.Nil(t, c)
		// Failures name the key by its index: printing it, or an error
		// that holds it, would put the key in the test output.
		require.Error(t, err, "key %d", i)
		require.True(t, strings.Contains(err.Error(), "control character"), "key %d: the error does not say why", i)
		assert.False(t, strings.Contains(err.Error(), "SECRET"), "key %d: the error shows the key", i)
	}
}
