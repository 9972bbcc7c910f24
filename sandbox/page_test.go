package sandbox

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
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

func TestPaymentPage(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.createPayment(`{"ext_id":"<script>","amount":1500.50,"method":"SBP"}`)
	id := r.str("id")
	res, err := e.ts.Client().Get(r.str("payment_url"))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	eq(t, res.StatusCode, 200)
	for _, frag := range []string{"1,500.50 RUB", "SBP (Faster Payments)", r.str("requisites", "value"), "Sberbank", `<form method="post" action="/pay/` + id + `">`,
		"Moscow time</strong> <span id=\"time-left\">(in 20 minutes)</span>", "&lt;script&gt;", "PENDING"} {
		if !strings.Contains(html.UnescapeString(string(page)), frag) && !strings.Contains(string(page), frag) {
			t.Fatalf("%q not in page:\n%s", frag, page)
		}
	}
	if strings.Contains(string(page), "<script>") {
		t.Fatal("ext_id not escaped")
	}

	// POST is the I-paid button: confirm, then 303 back to the page.
	res = e.pressPaid(id)
	page, _ = io.ReadAll(res.Body)
	res.Body.Close()
	eq(t, res.StatusCode, 200) // after following the redirect
	eq(t, res.Request.URL.Path, "/pay/"+id)
	if !strings.Contains(string(page), "PROCESSING") || strings.Contains(string(page), "<form") {
		t.Fatalf("page after confirm:\n%s", page)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PROCESSING")
	// Posting again without the page's token is refused; nothing changes.
	res, _ = e.ts.Client().Post(e.ts.URL+"/pay/"+id, "", nil)
	res.Body.Close()
	eq(t, res.StatusCode, 403)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PROCESSING")

	cb := e.createPayment(`{"ext_id":"cb","amount":1000,"method":"CROSS_BORDER","country":"TJ"}`)
	res, _ = e.ts.Client().Get(cb.str("payment_url"))
	page, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "120.00") || !strings.Contains(string(page), "TJS") {
		t.Fatalf("cross-border page:\n%s", page)
	}

	res, _ = e.ts.Client().Get(e.ts.URL + "/pay/nope")
	res.Body.Close()
	eq(t, res.StatusCode, 404)
	// A post for an unknown payment has no valid token either: refused
	// before anything is looked up.
	res, _ = e.ts.Client().PostForm(e.ts.URL+"/pay/nope", url.Values{"token": {web.PageToken("nope")}})
	res.Body.Close()
	eq(t, res.StatusCode, 404)
}

// The I-paid post of the hosted page refuses a cross-site request even
// with the page's token, and any request without it.
func TestPaymentPageRefusesCrossSitePosts(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"o-1","amount":1500}`).str("id")
	post := func(token string, hdr ...string) int {
		req, _ := http.NewRequest("POST", e.ts.URL+"/pay/"+id, strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	eq(t, post(web.PageToken(id), "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
	eq(t, post(""), http.StatusForbidden)
	eq(t, post(web.PageToken("another-payment")), http.StatusForbidden)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PENDING")
	eq(t, post(web.PageToken(id), "Origin", "null", "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
	// The page's no-referrer policy makes a browser send Origin: null;
	// Sec-Fetch-Site and the token decide then.
	eq(t, post(web.PageToken(id), "Origin", "null", "Sec-Fetch-Site", "same-origin"), http.StatusSeeOther)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PROCESSING")
}

// The cross-border page says which amount in which currency to send, big
// and copyable, with the RUB it is worth beside it; times are in Moscow
// time, never an RFC 3339 token.
func TestPaymentPageCrossBorder(t *testing.T) {
	base := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, Config{Now: func() time.Time { return base }})
	p := e.createPayment(`{"ext_id":"cb-1","amount":15000.50,"method":"CROSS_BORDER","country":"KZ"}`)
	eq(t, p.str("requisites", "currency"), "KZT")
	_, _, body := e.uiGet("/pay/" + p.str("id"))
	wantIn(t, body,
		`<strong id="amount">84,002.80 KZT</strong>`,
		`data-copy="84002.80" data-what="Amount"`,
		`Send KZT, not roubles: <span class="nowrap">84,002.80 KZT</span> is the equivalent of <span class="nowrap">15,000.50 RUB</span>.`,
		`<dd id="method">Cross-border transfer</dd>`,
		`Pay by <strong id="pay-by">13:20 Moscow time</strong> <span id="time-left">(in 20 minutes)</span>`,
		`Transfer exactly <strong class="nowrap">84,002.80 KZT</strong>`,
		`<title>Test payment: 84,002.80 KZT to Sandbox merchant · order cb-1</title>`)
	wantNotIn(t, body, "2026-03-02T", "CROSS_BORDER")
	_, _, body = e.uiGet("/sandbox/ui?refresh=0")
	wantIn(t, body, `<td class="num">15,000.50 RUB<br><small class="local">sent as 84,002.80 KZT</small></td>`,
		"<td>Cross-border transfer</td>")

	e.sb.Advance(19*time.Minute + 30*time.Second)
	_, _, body = e.uiGet("/pay/" + p.str("id"))
	wantIn(t, body, `(in less than a minute)`)
}
