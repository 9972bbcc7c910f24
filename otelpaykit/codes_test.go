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
	for i, secret := range append(hostile, "SECRETKEY", "1111", "ZZZZ") {
		// Not assert.NotContains, which would print the key and the dump.
		assert.False(t, strings.Contains(out, secret), "hostile value %d reached telemetry", i)
	}
	assert.Contains(t, out, "INVALID_CODE", "the fixed word stands in")
}

// A server that answers each call with a fresh, well-formed error code
// cannot grow the attempt metric's label set: 300 codes are one "OTHER"
// series beside the spec's own codes.
func TestInventedErrorCodesKeepMetricLabelsBounded(t *testing.T) {
	t.Parallel()
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++ // the client below makes one call at a time
		code := fmt.Sprintf("NEW_%d", n)
		if n == 1 {
			code = "PAY_006"
		}
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":%q,"message":"x"}`, code)
	}))
	t.Cleanup(srv.Close)
	r := newRig(t)
	c, err := paykit.NewClient(srv.URL, "pk_test_key", paykit.HMACSigner("s"), WithTelemetry(r.tp, r.mp), paykit.WithMaxRetries(0))
	require.NoError(t, err)
	for range 300 {
		_, err := c.GetBalance(context.Background())
		require.Error(t, err)
	}

	errTypes := map[any]uint64{}
	for _, p := range hist(t, r.metrics(t), "http.client.request.duration") {
		errTypes[p.Attrs["error.type"]] += p.Count
	}
	assert.Equal(t, map[any]uint64{"PAY_006": 1, "OTHER": 299}, errTypes)
	spanTypes := map[any]int{}
	for _, s := range r.ended() {
		spanTypes[attrMap(s.Attributes())["error.type"]]++
	}
	assert.Equal(t, map[any]int{"PAY_006": 2, "OTHER": 598}, spanTypes, "attempt and call spans alike")
}
