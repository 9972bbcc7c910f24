package sandbox

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The payment page is what a payer sees on a phone: viewport meta, one
// column, copy buttons for the number and the amount (hidden until the
// script runs), status in words and colour, nothing fetched from elsewhere.
func TestPaymentPageLooks(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.createPayment(`{"ext_id":"ord-\"<i>7</i>","amount":1500.50,"method":"CARD"}`)
	id, num := p.str("id"), p.str("requisites", "value")
	status, h, body := e.uiGet("/pay/" + id)
	eq(t, status, 200)
	wantIn(t, h.Get("Content-Security-Policy"), "default-src 'none'", "script-src 'self'")
	eq(t, h.Get("Referrer-Policy"), "no-referrer")
	wantIn(t, body,
		`<meta name="viewport" content="width=device-width, initial-scale=1">`,
		`<link rel="stylesheet" href="/pay/assets/style.css">`,
		`<script src="/pay/assets/ui.js" defer></script>`,
		`<strong id="amount">1,500.50 RUB</strong>`,
		`data-copy="1500.50" data-what="Amount" aria-label="Copy the amount" hidden>Copy</button>`,
		`<span id="requisites" class="mono">`+num+`</span>`,
		`data-copy="`+num+`" data-what="Card number" aria-label="Copy the card number" hidden>Copy</button>`,
		`<strong id="status" class="st st-pending">PENDING</strong>`,
		`ord-&#34;&lt;i&gt;7&lt;/i&gt;`,
		`<button type="submit" id="paid">I have paid</button>`,
		`role="status" aria-live="polite"`)
	wantNotIn(t, body, "<i>7")
	for _, m := range regexp.MustCompile(`(?:src|href|action)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		if !strings.HasPrefix(m[1], "/") {
			t.Fatalf("payment page links %q", m[1])
		}
	}

	e.pressPaid(id).Body.Close()
	_, _, body = e.uiGet("/pay/" + id)
	wantIn(t, body, `class="st st-processing">PROCESSING</strong>`, "your transfer is being verified")
	wantNotIn(t, body, "<form", "Pay by")

	if err := e.sb.VerifyPayment(id, OutcomeCompleted); err != nil {
		t.Fatal(err)
	}
	_, _, body = e.uiGet("/pay/" + id)
	wantIn(t, body, `class="st st-completed">COMPLETED</strong>`, "Payment received")

	sbp := e.createPayment(`{"ext_id":"s","amount":300,"method":"SBP"}`)
	wantStatus(t, e.do("POST", "/v1/payments/"+sbp.str("id")+"/cancel", ""), http.StatusOK, "")
	_, _, body = e.uiGet("/pay/" + sbp.str("id"))
	wantIn(t, body, `aria-label="Copy the phone number"`, `class="st st-cancelled">CANCELLED</strong>`, "do not transfer money")
}

// The payer page names the payee (Merchant.Name, escaped: a name is text,
// never markup) and says plainly that it is a test payment with no real
// money; a merchant without a Name is "Sandbox merchant". The dashboard
// heads each merchant's terminals with its name.
func TestPaymentPageNamesTheMerchant(t *testing.T) {
	named := DefaultMerchant("pk_named", "sk_named")
	named.Name = `Shop "<b>Rex</b>" & Co`
	cfg := Config{Merchants: []Merchant{named, DefaultMerchant("pk_plain", "sk_plain")}}
	e := newEnv(t, cfg)
	eq(t, cfg.Merchants[1].Name, "") // the caller's Config is left as it was

	id := e.createPayment(`{"ext_id":"n-1","amount":100}`).str("id")
	_, _, body := e.uiGet("/pay/" + id)
	const escaped = `Shop &#34;&lt;b&gt;Rex&lt;/b&gt;&#34; &amp; Co`
	wantIn(t, body,
		`<p class="payee">To <strong id="merchant">`+escaped+`</strong></p>`,
		`<title>Test payment: 100.00 RUB to `+escaped+` · order n-1</title>`,
		`id="test-payment"><strong>Test payment.</strong> This page belongs to a sandbox: no real money moves here, and none should be sent.</p>`)
	wantNotIn(t, body, "<b>Rex")

	plain := e.as("pk_plain", "sk_plain")
	id = plain.createPayment(`{"ext_id":"n-2","amount":100}`).str("id")
	_, _, body = e.uiGet("/pay/" + id)
	wantIn(t, body, `<strong id="merchant">Sandbox merchant</strong>`, "no real money")

	_, _, body = e.uiGet("/sandbox/ui/terminals?refresh=0")
	wantIn(t, body,
		`<h2><span class="merchant-name">`+escaped+`</span> <small>Merchant 1 (API key pk_n…)</small></h2>`,
		`<h2><span class="merchant-name">Sandbox merchant</span> <small>Merchant 2 (API key pk_p…)</small></h2>`)
	wantNotIn(t, body, "<b>Rex")
}
