package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// The example prints the spans of every step, the webhook's with the
// read-back under it, and the metrics, and nothing secret.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	s := out.String()
	for _, want := range []string{
		" banks\n",
		"step: payment created, PENDING",
		"step: payment confirmed, PROCESSING",
		"step: webhook handled, COMPLETED",
		"step: payment read, COMPLETED",
		`"Name": "paykit.ListBanks"`,
		`"Name": "GET /v1/banks"`,
		`"Name": "paykit.CreatePayment"`,
		`"Name": "POST /v1/payments"`,
		`"Name": "paykit.ConfirmPayment"`,
		`"Name": "POST /v1/payments/{id}/confirm"`,
		`"Name": "paykit.Webhook"`,
		`"Name": "paykit.GetPayment"`,
		`"Name": "http.client.request.duration"`,
		`"Name": "paykit.client.call.duration"`,
		`"Name": "paykit.webhook.deliveries"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the output has no %q", want) // not the whole output: it is long
		}
	}
	for _, secret := range []string{sandbox.DefaultAPIKey, sandbox.DefaultSecret, "1500.5", "order-"} {
		if strings.Contains(s, secret) {
			t.Errorf("the output contains %q", secret)
		}
	}
}
