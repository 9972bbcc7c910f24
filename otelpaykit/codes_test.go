package otelpaykit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paykit "github.com/paykit-dev/paykit-go"
)

// A server that puts the API key, a card number or a long free text in the
// "error" field gets none of it into a span, its status or a metric label:
// the core replaces a code not shaped like an API code with a fixed word,
// which also keeps the label's cardinality bounded.
func TestHostileErrorCodesNeverReachTelemetry(t *testing.T) {
	t.Parallel()
	const key = "pk_live_SECRETKEY42"
	hostile := []string{key, "4111111111111111", strings.Repeat("Z", 200), "card 2200 1234 5678 9012"}
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":%q,"message":"x"}`, hostile[n%len(hostile)])
		n++
	}))
	t.Cleanup(srv.Close)
	r := newRig(t)
	c, err := paykit.NewClient(srv.URL, key, paykit.HMACSigner("s"), WithTelemetry(r.tp, r.mp), paykit.WithMaxRetries(0))
	require.NoError(t, err)
	for range hostile {
		_, err := c.GetBalance(context.Background())
		require.Error(t, err)
	}

	var dump strings.Builder
	for _, s := range r.ended() {
		fmt.Fprintf(&dump, "%s %v %v %v\n", s.Name(), s.Status(), s.Attributes(), s.Events())
	}
	fmt.Fprintf(&dump, "%+v", r.metrics(t))
	out := dump.String()
	for _, secret := range append(hostile, "SECRETKEY", "1111", "ZZZZ") {
		assert.NotContains(t, out, secret)
	}
	assert.Contains(t, out, "INVALID_CODE", "the fixed word stands in")
}
