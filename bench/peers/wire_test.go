package peers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// seen is one request as the server received it.
type seen struct {
	method, uri string
	header      http.Header
	body        string
}

// TestPairsSendTheSameRequests: each raw call puts on the wire what its SDK
// does (method, request URI, every header, body), so a pair compares like
// with like, and every call of every side decodes the resource.
func TestPairsSendTheSameRequests(t *testing.T) {
	var mu sync.Mutex
	var got []seen
	srv := newServer(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, seen{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(b)})
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	pairs := newPairs(t, srv.URL)
	wantURI := map[string]string{
		"paykit-go": "/v1/payments/" + paymentID,
		"stripe-go": "/v1/payment_intents/" + paymentIntentID,
		"go-github": "/repos/octocat/Hello-World/issues/1347",
	}
	ctx := context.Background()
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			if err := p.sdk(ctx); err != nil {
				t.Fatalf("SDK: %v", err)
			}
			if err := p.raw(ctx); err != nil {
				t.Fatalf("raw: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 2 {
				t.Fatalf("server saw %d requests, want 2", len(got))
			}
			sdk, raw := got[0], got[1]
			if sdk.method != http.MethodGet || sdk.uri != wantURI[p.name] {
				t.Errorf("SDK sent %s %s, want GET %s", sdk.method, sdk.uri, wantURI[p.name])
			}
			if fmt.Sprint(sdk) != fmt.Sprint(raw) {
				t.Errorf("requests differ:\n SDK %v\n raw %v", sdk, raw)
			}
		})
	}
}

// The raw sides decode what the SDKs decode.
func TestRawSidesDecodeTheBody(t *testing.T) {
	srv := newServer(t, nil)
	raw := &rawClient{base: srv.URL, hc: &http.Client{Transport: leanTransport(t)}}
	ctx := context.Background()
	p, err := raw.getPayment(ctx, paymentID)
	if err != nil || p.Amount.String() != "1500.5" || p.Requisites.BankCode != "sber" || p.CreatedAt.Nanosecond() != 250_000_000 {
		t.Errorf("payment: %v %+v", err, p)
	}
	pi, err := raw.getPaymentIntent(ctx, paymentIntentID)
	if err != nil || pi.Amount != 2000 || pi.Metadata["order_id"] != "6735" || pi.PaymentMethodOptions.Card.RequestThreeDSecure != "automatic" ||
		len(pi.PaymentMethodTypes) != 2 || pi.Customer != nil {
		t.Errorf("payment intent: %v %+v", err, pi)
	}
	is, err := raw.getIssue(ctx, issueOwner, issueRepo, issueNumber)
	if err != nil || is.User.Login != "octocat" || len(is.Assignees) != 1 || is.Labels[0].Name != "bug" ||
		is.Reactions.PlusOne != 3 || is.ClosedAt != nil || is.CreatedAt.Year() != 2011 {
		t.Errorf("issue: %v %+v", err, is)
	}
}
