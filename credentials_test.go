package paykit_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

const (
	credKey    = "pk_live_cred_check_7c1e"
	credSecret = "sk_live_cred_secret_9d2f"
)

// wireRequest is what one request carried.
type wireRequest struct {
	Method, URI, Identity, Signature string
}

// wireLog records requests reaching a test server.
type wireLog struct {
	mu   sync.Mutex
	reqs []wireRequest
}

func (l *wireLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, wireRequest{Method: r.Method, URI: r.URL.RequestURI(),
		Identity: r.Header.Get("X-Identity"), Signature: r.Header.Get("X-Signature")})
}

func (l *wireLog) all() []wireRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wireRequest(nil), l.reqs...)
}

// hmacHex is the documented HMACSigner output, computed independently.
func hmacHex(secret, method, uri string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(method + "\n" + uri + "\n"))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// statusServer answers every request with status and body and logs it.
func statusServer(t *testing.T, status int, body string) (*httptest.Server, *wireLog) {
	t.Helper()
	log := &wireLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

func TestCheckCredentialsOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	newClient := func(t *testing.T, url string) *paykit.Client {
		c, err := paykit.NewClient(url, credKey, paykit.HMACSigner(credSecret),
			paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond))
		require.NoError(t, err)
		return c
	}

	t.Run("accepted: one signed GET /v1/balance, body not needed", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{"balance":1.00,"balance_frozen":0,"currency":"USDT"}`, ``} {
			srv, log := statusServer(t, http.StatusOK, body)
			require.NoError(t, newClient(t, srv.URL).CheckCredentials(ctx), "body %q", body)
			reqs := log.all()
			require.Len(t, reqs, 1)
			assert.Equal(t, "GET", reqs[0].Method)
			assert.Equal(t, "/v1/balance", reqs[0].URI)
			assert.Equal(t, credKey, reqs[0].Identity)
			assert.Equal(t, hmacHex(credSecret, "GET", "/v1/balance", nil), reqs[0].Signature)
		}
	})

	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run("refused "+http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			srv, log := statusServer(t, status, `{"error":"AUTH_001","message":"bad signature","data":{}}`)
			err := newClient(t, srv.URL).CheckCredentials(ctx)
			require.Error(t, err)
			assert.ErrorIs(t, err, paykit.ErrUnauthorized)
			var apiErr *paykit.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.HTTPStatus)
			msg := err.Error()
			for _, hint := range []string{"API key", "signing secret", "signing scheme", "Signer"} {
				assert.Contains(t, msg, hint)
			}
			assert.NotContains(t, msg, credKey)
			assert.NotContains(t, msg, credSecret)
			assert.NotContains(t, msg, log.all()[0].Signature)
			assert.Len(t, log.all(), 1, "a refusal is not retried")
		})
	}

	t.Run("a 5xx is not a verdict on the credentials", func(t *testing.T) {
		t.Parallel()
		srv, log := statusServer(t, http.StatusInternalServerError, `{"error":"SYS_001","message":"down","data":{}}`)
		err := newClient(t, srv.URL).CheckCredentials(ctx)
		require.Error(t, err)
		assert.ErrorIs(t, err, paykit.ErrInternal)
		assert.NotErrorIs(t, err, paykit.ErrUnauthorized)
		assert.NotContains(t, err.Error(), "signing scheme")
		assert.Len(t, log.all(), 1+paykit.DefaultMaxRetries, "retried like any read")
	})

	t.Run("no server is not a verdict either", func(t *testing.T) {
		t.Parallel()
		srv, _ := statusServer(t, http.StatusOK, ``)
		url := srv.URL
		srv.Close()
		c, err := paykit.NewClient(url, credKey, paykit.HMACSigner(credSecret), paykit.WithMaxRetries(0))
		require.NoError(t, err)
		err = c.CheckCredentials(ctx)
		require.Error(t, err)
		assert.NotErrorIs(t, err, paykit.ErrUnauthorized)
	})
}

func TestCheckCredentialsAgainstSandbox(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Config{})
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	ctx := context.Background()

	hmacHexSigner := func(secret string) paykit.Signer {
		return paykit.SignerFunc(func(r *http.Request, body []byte) (string, error) {
			return hmacHex(secret, r.Method, r.URL.RequestURI(), body), nil
		})
	}
	otherScheme := paykit.SignerFunc(func(r *http.Request, body []byte) (string, error) {
		// Upper-case hex: a plausible scheme the sandbox does not accept.
		return strings.ToUpper(hmacHex(sandbox.DefaultSecret, r.Method, r.URL.RequestURI(), body)), nil
	})
	for _, tc := range []struct {
		name   string
		key    string
		signer paykit.Signer
		ok     bool
	}{
		{"right credentials", sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret), true},
		{"right credentials through a SignerFunc", sandbox.DefaultAPIKey, hmacHexSigner(sandbox.DefaultSecret), true},
		{"wrong key", "pk_sandbox_wrong", paykit.HMACSigner(sandbox.DefaultSecret), false},
		{"wrong secret", sandbox.DefaultAPIKey, paykit.HMACSigner("sk_wrong_secret_value"), false},
		{"wrong signing scheme", sandbox.DefaultAPIKey, otherScheme, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := paykit.NewClient(srv.URL, tc.key, tc.signer)
			require.NoError(t, err)
			err = c.CheckCredentials(ctx)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, paykit.ErrUnauthorized), "%v", err)
			assert.Contains(t, err.Error(), "signing scheme")
			assert.NotContains(t, err.Error(), "sk_wrong_secret_value")
			assert.NotContains(t, err.Error(), sandbox.DefaultSecret)
		})
	}
	assert.Equal(t, sandbox.Stats{}, sb.Stats(sandbox.DefaultAPIKey), "a check creates nothing")
}
