package sandbox

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// A delivery can be sent again, from Go, the JSON control and the
// dashboard: the same body and token to the same receiver, as a new
// delivery that names the one it repeats. The dashboard shows the order's
// ext_id and the payload, with the card number masked.
func TestResendWebhook(t *testing.T) {
	hooks := newHookSink(t, 0)
	e := newEnv(t, Config{})
	p := e.createPayment(`{"ext_id":"o-<b>9</b>","amount":1500.50,"method":"CARD","notify_url":"` + hooks.srv.URL +
		`","notification_token":"tok-resend"}`)
	id, num := p.str("id"), p.str("requisites", "value")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), http.StatusOK, "")
	e.flush()
	ds := e.sb.Deliveries()
	eq(t, len(ds), 1)
	eq(t, ds[0].ExtID, "o-<b>9</b>")
	eq(t, ds[0].ResendOf, "")
	first := ds[0].ID

	// Go.
	d, err := e.sb.ResendWebhook(first)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, d.ResendOf, first)
	eq(t, d.ExtID, "o-<b>9</b>")
	eq(t, d.ResourceID, id)
	eq(t, d.ResourceStatus, "CANCELLED")
	if d.ID == first || !strings.HasPrefix(d.ID, "dlv_") {
		t.Fatalf("new delivery id %q", d.ID)
	}
	e.flush()
	eq(t, strings.Join(hooks.statuses(), ","), "CANCELLED,CANCELLED")
	hooks.mu.Lock()
	eq(t, strings.Join(hooks.tokens, ","), "tok-resend,tok-resend")
	eq(t, hooks.bodies[1]["amount"].(interface{ String() string }).String(), "1500.50")
	eq(t, hooks.bodies[1]["ext_id"], any("o-<b>9</b>"))
	hooks.mu.Unlock()
	ds = e.sb.Deliveries()
	eq(t, len(ds), 2)
	eq(t, ds[0].ID, d.ID)
	eq(t, ds[0].State, DeliveryDelivered)
	eq(t, len(ds[0].Attempts), 1)
	eq(t, ds[0].Attempts[0].StatusCode, 200)

	if _, err := e.sb.ResendWebhook("dlv_nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown delivery: %v", err)
	}

	// The JSON control.
	r := e.do("POST", "/sandbox/webhooks/"+first+"/resend", "{}")
	wantStatus(t, r, http.StatusOK, "")
	eq(t, r.str("resend_of"), first)
	eq(t, r.str("ext_id"), "o-<b>9</b>")
	wantStatus(t, e.do("POST", "/sandbox/webhooks/dlv_nope/resend", "{}"), http.StatusNotFound, CodeControlNotFound)
	e.flush()
	eq(t, len(hooks.statuses()), 3)

	// The dashboard: ext_id, payload (escaped, number masked), a resend
	// form with the token; the form is refused without the token.
	_, _, body := e.uiGet("/sandbox/ui/webhooks?refresh=0")
	wantIn(t, body, `<span class="ext-id">o-&lt;b&gt;9&lt;/b&gt;</span>`, `<small class="resent">resent</small>`,
		`<details><summary>JSON, `, `&#34;amount&#34;: 1500.50`, `&#34;ext_id&#34;: &#34;o-\u003cb\u003e9\u003c/b\u003e&#34;`,
		`&#34;value&#34;: &#34;•••• `+num[len(num)-4:]+`&#34;`,
		`<form method="post" action="/sandbox/ui/webhooks/`+first+`/resend" class="resend">`, `>Resend</button>`)
	wantNotIn(t, body, num, "tok-resend", "<b>9")
	status, _, _ := e.uiPost("/sandbox/ui/webhooks/"+first+"/resend", form("page", "webhooks"), nil)
	eq(t, status, http.StatusForbidden)
	status, loc, _ := e.uiPost("/sandbox/ui/webhooks/"+first+"/resend",
		form("token", web.Token, "page", "webhooks", "refresh", "0"), nil)
	eq(t, status, http.StatusSeeOther)
	eq(t, loc, "/sandbox/ui/webhooks?refresh=0")
	e.flush()
	eq(t, len(hooks.statuses()), 4)
	status, _, body = e.uiPost("/sandbox/ui/webhooks/dlv_nope/resend", form("token", web.Token, "page", "webhooks"), nil)
	eq(t, status, http.StatusNotFound)
	wantIn(t, body, `role="alert"`, "webhook delivery")
}

// A payout's payload masks its requisites string too.
func TestPayloadTextMasksPayoutRequisites(t *testing.T) {
	got := web.PayloadText([]byte(`{"id":"x","amount":5000,"requisites":"2200123456789012","holder_name":"Ivan"}`))
	want := "{\n  \"id\": \"x\",\n  \"amount\": 5000,\n  \"requisites\": \"•••• 9012\",\n  \"holder_name\": \"Ivan\"\n}"
	eq(t, got, want)
	eq(t, web.PayloadText([]byte(`not json`)), "(not JSON)")
}
