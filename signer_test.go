package paykit

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vectors computed outside Go (Python's hmac module) from the canonical
// string METHOD\nREQUEST-URI\nBODY.
func TestHMACSignerVectors(t *testing.T) {
	t.Parallel()
	for _, v := range []struct{ secret, method, target, body, want string }{
		{"sk_test_secret_1a2b3c", "GET", "/v1/payments/6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70", "",
			"a6fad8c0e0ae47d35971b85fbd6f535d5380eb73983b559824cccc46c0249a33"},
		{"sk_test_secret_1a2b3c", "POST", "/v1/payments", `{"ext_id":"order-1001","amount":1500.50}`,
			"019405936dcd5607c28e591efc4699295c8bdd2192e04ff90b5515ebe8746580"},
		{"sk_test_secret_1a2b3c", "GET", "/v1/payouts?limit=10&status=pending", "",
			"02901edab53da0fcd5d1325c4a1bc3d8f4403fcf2726f9303aee9f23138272ef"},
		{"секрет", "GET", "/v1/payments/by-ext-id/a%2Fb%3Fc%23d", "",
			"c33759886105c7ab7eb6eaa2a0157963a8a61a1ab3f602e6b9ccbd3f054b61d4"},
		{"k", "POST", "/v1/transfers", `{"from_terminal_id":"t1","to_terminal_id":"t2","amount":10.00}`,
			"a5ff2659d62baf1b142419c8ff78e800e7c775af60e424a97d7b15dd6f201be1"},
	} {
		req := httptest.NewRequest(v.method, "https://api.example"+v.target, nil)
		var body []byte
		if v.body != "" {
			body = []byte(v.body)
		}
		got, err := HMACSigner(v.secret).Sign(req, body)
		require.NoError(t, err)
		assert.Equal(t, v.want, got, "%s %s", v.method, v.target)
	}
}

func TestHMACSignerConcurrentAndReused(t *testing.T) {
	t.Parallel()
	s := HMACSigner(testSecret)
	req := httptest.NewRequest("POST", "https://x/v1/payments", nil)
	want := wantSignature("POST", "/v1/payments", []byte("{}"))
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got, err := s.Sign(req, []byte("{}"))
				assert.NoError(t, err)
				assert.Equal(t, want, got)
			}
		}()
	}
	wg.Wait()
}

func TestHMACSignerEmptySecretFails(t *testing.T) {
	t.Parallel()
	_, err := HMACSigner("").Sign(httptest.NewRequest("GET", "/", nil), nil)
	require.ErrorIs(t, err, errEmptySecret)

	c, rec := mockClient(t, 200, `{"banks":[]}`)
	c.signer = HMACSigner("")
	_, err = c.ListBanks(ctx)
	require.ErrorContains(t, err, "empty secret")
	assert.Equal(t, 0, rec.count(), "an unsigned request is never sent")
}

func TestHMACSignerHidesSecret(t *testing.T) {
	t.Parallel()
	s := HMACSigner(testSecret)
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(format, s), testSecret, format)
	}
}

func TestCustomSignerReplacesHMAC(t *testing.T) {
	t.Parallel()
	var seen []string
	signer := SignerFunc(func(r *http.Request, body []byte) (string, error) {
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+string(body)+" "+r.Header.Get("X-Identity"))
		return "custom-sig", nil
	})
	c, err := NewClient(testBase, testKey, signer, WithHTTPClient(mockHTTP(t, 200, `{"fee":1.5,"currency":"USDT"}`, nil)))
	require.NoError(t, err)
	_, err = c.GetWithdrawalFee(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"GET /v1/withdrawals/fee  " + testKey}, seen)

	failing := SignerFunc(func(*http.Request, []byte) (string, error) { return "", errors.New("hsm offline") })
	c, err = NewClient(testBase, testKey, failing)
	require.NoError(t, err)
	_, err = c.GetWithdrawalFee(ctx)
	require.ErrorContains(t, err, "hsm offline")

	badSig := SignerFunc(func(*http.Request, []byte) (string, error) { return "a\r\nX-Evil: 1", nil })
	c, err = NewClient(testBase, testKey, badSig)
	require.NoError(t, err)
	_, err = c.GetWithdrawalFee(ctx)
	require.ErrorContains(t, err, "line break")
}

func TestHMACSignerAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop states at random; counted without -race")
	}
	s := HMACSigner("secret")
	req, err := http.NewRequest(http.MethodGet, "https://api.example/v1/payouts?limit=10", nil)
	require.NoError(t, err)
	_, _ = s.Sign(req, nil) // warm the pool
	body := []byte(`{"a":1}`)
	allocs := testing.AllocsPerRun(200, func() { _, _ = s.Sign(req, body) })
	assert.LessOrEqual(t, allocs, 2.0, "the request URI and the returned string")
}
