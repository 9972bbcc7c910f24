package sandbox

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// uiGet fetches a dashboard page and returns its status, headers and body.
func (e *env) uiGet(path string) (int, http.Header, string) {
	e.t.Helper()
	res, err := e.ts.Client().Get(e.ts.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

var tokenRe = regexp.MustCompile(`name="token" value="([0-9a-f]{64})"`)

// pageToken scrapes the form token from a page, as a browser would submit it.
func (e *env) pageToken() string {
	e.t.Helper()
	_, _, body := e.uiGet("/sandbox/ui?refresh=0")
	m := tokenRe.FindStringSubmatch(body)
	if m == nil {
		e.t.Fatalf("no form token in the dashboard:\n%s", body)
	}
	return m[1]
}

// pressPaid presses the I-paid button of a payment's page as a browser
// would: the form token scraped from the page, posted back.
func (e *env) pressPaid(id string) *http.Response {
	e.t.Helper()
	_, _, body := e.uiGet("/pay/" + id)
	m := tokenRe.FindStringSubmatch(body)
	if m == nil {
		e.t.Fatalf("no form token on the payment page:\n%s", body)
	}
	res, err := e.ts.Client().PostForm(e.ts.URL+"/pay/"+id, url.Values{"token": {m[1]}})
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// uiPost posts a dashboard form without following the redirect. hdr adds
// headers; Origin defaults to the sandbox's own, as a browser sends it.
func (e *env) uiPost(path string, form url.Values, hdr map[string]string) (int, string, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.ts.URL)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	c := *e.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func wantIn(t *testing.T, body string, frags ...string) {
	t.Helper()
	for _, f := range frags {
		if !strings.Contains(body, f) {
			t.Fatalf("%q not in page:\n%s", f, body)
		}
	}
}

func wantNotIn(t *testing.T, body string, frags ...string) {
	t.Helper()
	for _, f := range frags {
		if strings.Contains(body, f) {
			t.Fatalf("%q in page:\n%s", f, body)
		}
	}
}

func TestUIPaymentsPage(t *testing.T) {
	e := newEnv(t, Config{})
	card := e.createPayment(`{"ext_id":"<script>alert(1)</script><b>x</b>","amount":1500.50,"method":"CARD"}`)
	num := card.str("requisites", "value")
	sbp := e.createPayment(`{"ext_id":"order-sbp","amount":200,"method":"SBP"}`)
	phone := sbp.str("requisites", "value")

	status, h, body := e.uiGet("/sandbox/ui?refresh=0")
	eq(t, status, 200)
	eq(t, h.Get("Content-Type"), "text/html; charset=utf-8")
	wantIn(t, h.Get("Content-Security-Policy"), "default-src 'none'", "form-action 'self'", "frame-ancestors 'none'")
	// Markup in ext_id is text: escaped, never a live element.
	wantIn(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;")
	wantNotIn(t, body, "<script>alert", "<b>x</b>")
	// Numbers keep only their last four digits.
	wantIn(t, body, "•••• "+num[len(num)-4:], "•••• "+phone[len(phone)-4:], "1,500.50 RUB", "200.00 RUB", "Sberbank")
	wantNotIn(t, body, num, phone, num[:12], phone[:8])
	// Time left comes from the sandbox clock, frozen at base.
	wantIn(t, body, `<span class="time-left">20m 00s</span>`, "2025-03-01 12:00:00 UTC", `data-refresh="0"`)
	// PENDING payments offer no verdict yet.
	wantNotIn(t, body, "/verify")

	e.sb.Advance(5*time.Minute + 30*time.Second)
	_, _, body = e.uiGet("/sandbox/ui?refresh=0")
	wantIn(t, body, `<span class="time-left">14m 30s</span>`, "2025-03-01 12:05:30 UTC")

	e.sb.Advance(15 * time.Minute)
	_, _, body = e.uiGet("/sandbox/ui")
	wantIn(t, body, `<span class="st st-cancelled">CANCELLED</span>`, `data-refresh="5"`)
	wantNotIn(t, body, `class="time-left"`)
}

func TestUIVerifyAndIllegalAction(t *testing.T) {
	hooks := newHookSink(t, 0)
	e := newEnv(t, Config{})
	p := e.createPayment(`{"ext_id":"o-1","amount":1500,"notify_url":"` + hooks.srv.URL + `"}`)
	id := p.str("id")
	// The payer's "I have paid" on the hosted page moves it to PROCESSING.
	e.pressPaid(id).Body.Close()
	_, _, body := e.uiGet("/sandbox/ui?refresh=0")
	wantIn(t, body, `<form method="post" action="/sandbox/ui/payments/`+id+`/verify"`, `value="completed"`, `value="cancelled"`)

	tok := e.pageToken()
	eq(t, tok, web.Token)
	status, loc, _ := e.uiPost("/sandbox/ui/payments/"+id+"/verify",
		form("token", tok, "page", "payments", "refresh", "0", "outcome", "completed"), nil)
	eq(t, status, http.StatusSeeOther)
	eq(t, loc, "/sandbox/ui?refresh=0")
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "COMPLETED")
	wantDec(t, e.balance(DefaultMainTerminalID), "1016.22")

	// The same form again is illegal now: the page says why, with the
	// status the JSON control answers, and nothing changes.
	status, _, body = e.uiPost("/sandbox/ui/payments/"+id+"/verify",
		form("token", tok, "page", "payments", "refresh", "0", "outcome", "cancelled"), nil)
	eq(t, status, http.StatusConflict)
	wantIn(t, body, `role="alert"`, "payment "+id+" is COMPLETED, not PROCESSING", `data-refresh="0"`)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "COMPLETED")

	status, _, body = e.uiPost("/sandbox/ui/payments/nope/verify", form("token", tok, "outcome", "completed"), nil)
	eq(t, status, http.StatusNotFound)
	wantIn(t, body, `payment &#34;nope&#34;`)
	status, _, body = e.uiPost("/sandbox/ui/payments/"+id+"/verify", form("token", tok, "outcome", "maybe"), nil)
	eq(t, status, http.StatusBadRequest)
	wantIn(t, body, "outcome must be")

	// The webhooks page shows the delivery and the merchant's answer.
	e.flush()
	_, _, body = e.uiGet("/sandbox/ui/webhooks?refresh=0")
	wantIn(t, body, "payment "+id, `<span class="st st-completed">COMPLETED</span>`, `<span class="st st-processing">PROCESSING</span>`,
		`<span class="st st-delivered">delivered</span>`, `<span class="answer">200 OK`, hooks.srv.URL)
}

func TestUIDisputeReview(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"d-1","amount":925}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/dispute",
		`{"amount":462.50,"comment":"<img src=x onerror=alert(1)>paid twice","receipt_url":"https://r.example/1"}`), 200, "")
	_, _, body := e.uiGet("/sandbox/ui?refresh=0")
	wantIn(t, body, "&lt;img src=x onerror=alert(1)&gt;paid twice", "462.50 RUB", "/dispute/review", `<span class="st st-dispute">DISPUTE</span>`)
	wantNotIn(t, body, "<img")

	status, loc, _ := e.uiPost("/sandbox/ui/payments/"+id+"/dispute/review",
		form("token", web.Token, "page", "payments", "outcome", "approved"), nil)
	eq(t, status, http.StatusSeeOther)
	eq(t, loc, "/sandbox/ui")
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "COMPLETED")
	wantDec(t, e.balance(DefaultMainTerminalID), "1005.00")
}

func TestUIPayoutsWithdrawalsTerminals(t *testing.T) {
	e := newEnv(t, Config{})
	po := e.do("POST", "/v1/payouts", `{"ext_id":"po-<i>1</i>","amount":5000,"method":"card","requisites":"2200123456789012","holder_name":"Ivan P."}`)
	wantStatus(t, po, 200, "")
	pid := po.str("id")
	_, _, body := e.uiGet("/sandbox/ui/payouts?refresh=0")
	wantIn(t, body, "po-&lt;i&gt;1&lt;/i&gt;", "•••• 9012", "5,000.00 RUB", "Bank card", `aria-current="page"`,
		`value="processing"`, `value="completed"`, `value="failed"`, `value="cancelled"`)
	wantNotIn(t, body, "2200123456789012")
	status, loc, _ := e.uiPost("/sandbox/ui/payouts/"+pid+"/status",
		form("token", web.Token, "page", "payouts", "refresh", "0", "status", "processing"), nil)
	eq(t, status, http.StatusSeeOther)
	eq(t, loc, "/sandbox/ui/payouts?refresh=0")
	eq(t, e.do("GET", "/v1/payouts/"+pid, "").str("status"), "processing")
	_, _, body = e.uiGet("/sandbox/ui/payouts?refresh=0")
	wantNotIn(t, body, `value="processing"`)
	wantIn(t, body, "prv_")
	status, _, body = e.uiPost("/sandbox/ui/payouts/"+pid+"/status", form("token", web.Token, "page", "payouts", "status", "pending"), nil)
	eq(t, status, http.StatusBadRequest)
	wantIn(t, body, "payout status must be", `aria-current="page">Payouts`)

	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":100,"address":"TXyz<b>"}`)
	wantStatus(t, w, 200, "")
	wid := w.str("id")
	_, _, body = e.uiGet("/sandbox/ui/terminals?refresh=0")
	wantIn(t, body, `<td class="num balance">898.50 USDT</td>`, `<td class="num frozen">101.50 USDT</td>`,
		"Merchant 1 (API key pk_s…)", "Reserve terminal")
	wantNotIn(t, body, DefaultAPIKey)
	_, _, body = e.uiGet("/sandbox/ui/withdrawals?refresh=0")
	wantIn(t, body, "TXyz&lt;b&gt;", "100.00 USDT", "1.50 USDT", `name="tx_hash"`)
	status, _, _ = e.uiPost("/sandbox/ui/withdrawals/"+wid+"/status",
		form("token", web.Token, "page", "withdrawals", "status", "completed", "tx_hash", " 0xabc "), nil)
	eq(t, status, http.StatusSeeOther)
	r := e.do("GET", "/v1/withdrawals/"+wid, "")
	eq(t, r.str("status"), "completed")
	eq(t, r.str("tx_hash"), "0xabc")
	_, _, body = e.uiGet("/sandbox/ui/terminals?refresh=0")
	wantIn(t, body, `<td class="num frozen">0.00 USDT</td>`)
}

func TestUIClockFaultsReset(t *testing.T) {
	e := newEnv(t, Config{})
	e.createPayment(`{"ext_id":"c-1","amount":300}`)
	status, loc, _ := e.uiPost("/sandbox/ui/clock/advance", form("token", web.Token, "page", "terminals", "seconds", "1200"), nil)
	eq(t, status, http.StatusSeeOther)
	eq(t, loc, "/sandbox/ui/terminals")
	eq(t, e.sb.Now(), base.Add(20*time.Minute))
	for _, bad := range []string{"-1", "1.5", "999999999999"} {
		status, _, body := e.uiPost("/sandbox/ui/clock/advance", form("token", web.Token, "seconds", bad), nil)
		eq(t, status, http.StatusBadRequest)
		wantIn(t, body, "seconds must")
	}
	eq(t, e.sb.Now(), base.Add(20*time.Minute))

	status, loc, _ = e.uiPost("/sandbox/ui/faults", form("token", web.Token, "page", "faults", "method", "POST",
		"path", "/v1/transfers", "mode", "error_before", "count", "2", "status", "502", "code", "X<1>"), nil)
	eq(t, status, http.StatusSeeOther)
	eq(t, loc, "/sandbox/ui/faults")
	_, _, body := e.uiGet("/sandbox/ui/faults?refresh=0")
	wantIn(t, body, "/v1/transfers", "answers 502 X&lt;1&gt;", `<td class="num">2</td>`)
	wantStatus(t, e.do("POST", "/v1/transfers", `{}`), 502, "X<1>")
	status, _, body = e.uiPost("/sandbox/ui/faults", form("token", web.Token, "page", "faults", "path", "v1", "mode", "error_before"), nil)
	eq(t, status, http.StatusBadRequest)
	wantIn(t, body, "fault path must start with /")
	status, _, _ = e.uiPost("/sandbox/ui/faults", form("token", web.Token, "path", "/v1", "mode", "delay", "delay_ms", "x"), nil)
	eq(t, status, http.StatusBadRequest)

	status, _, _ = e.uiPost("/sandbox/ui/reset", form("token", web.Token), nil)
	eq(t, status, http.StatusSeeOther)
	eq(t, e.sb.Now(), base)
	eq(t, e.sb.Stats(DefaultAPIKey).Payments, 0)
	_, _, body = e.uiGet("/sandbox/ui/faults?refresh=0")
	wantIn(t, body, "None: every request is answered normally.")
}

// A form posted from another site is refused before it acts: without the
// token, with a foreign Origin or Referer, or marked cross-site by the
// browser. So is any request whose Host is not loopback (DNS rebinding).
func TestUICrossSiteRefused(t *testing.T) {
	e := newEnv(t, Config{})
	ok := form("token", web.Token, "seconds", "60")
	for name, c := range map[string]struct {
		form url.Values
		hdr  map[string]string
	}{
		"no token":            {form("seconds", "60"), nil},
		"wrong token":         {form("token", strings.Repeat("0", 64), "seconds", "60"), nil},
		"foreign origin":      {ok, map[string]string{"Origin": "http://127.0.0.1:1"}},
		"null origin":         {ok, map[string]string{"Origin": "null"}},
		"foreign referer":     {ok, map[string]string{"Origin": "", "Referer": "http://evil.example/x"}},
		"cross-site fetch":    {ok, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		"same-site fetch":     {ok, map[string]string{"Sec-Fetch-Site": "same-site"}},
		"rebinding host":      {ok, map[string]string{"Host": "evil.example"}},
		"token in query only": {form("seconds", "60"), map[string]string{"X-Path-Query": "?token=" + web.Token}},
	} {
		path := "/sandbox/ui/clock/advance" + c.hdr["X-Path-Query"]
		req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(c.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.ts.URL)
		for k, v := range c.hdr {
			switch {
			case k == "Host":
				req.Host = v
			case v == "":
				req.Header.Del(k)
			default:
				req.Header.Set(k, v)
			}
		}
		r := e.send(req)
		eq(t, r.status, http.StatusForbidden)
		if name != "rebinding host" && !strings.Contains(r.raw, "cross-site form post refused") {
			t.Errorf("%s: %s", name, r.raw)
		}
	}
	eq(t, e.sb.Now(), base)

	// A non-browser client with the token and no browser headers is let
	// through, like curl against the JSON controls.
	status, _, _ := e.uiPost("/sandbox/ui/clock/advance", ok, map[string]string{"Origin": ""})
	eq(t, status, http.StatusSeeOther)
	status, _, _ = e.uiPost("/sandbox/ui/clock/advance", ok, map[string]string{"Origin": "", "Referer": e.ts.URL + "/sandbox/ui", "Sec-Fetch-Site": "same-origin"})
	eq(t, status, http.StatusSeeOther)
	eq(t, e.sb.Now(), base.Add(2*time.Minute))
}

func TestUIHostGuard(t *testing.T) {
	e := newEnv(t, Config{})
	for _, path := range []string{"/sandbox/ui", "/sandbox/ui/webhooks", "/sandbox/ui/assets/style.css"} {
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		req.Host = "evil.example"
		wantStatus(t, e.send(req), 403, CodeControlForbidden)
	}
	open := newEnv(t, Config{AllowRemote: true, ControlToken: "ctl-token-1-9f3c2a7b1e8d4c6f0a5b9e2d"})
	req, _ := http.NewRequest("GET", open.ts.URL+"/sandbox/ui", nil)
	req.Host = "sandbox.internal:8080"
	req.Header.Set("Authorization", "Bearer ctl-token-1-9f3c2a7b1e8d4c6f0a5b9e2d")
	eq(t, open.send(req).status, 200)
}

func TestUIRoutesAndAssets(t *testing.T) {
	e := newEnv(t, Config{})
	for path, want := range map[string]string{
		"/sandbox/ui/assets/style.css": "text/css; charset=utf-8",
		"/sandbox/ui/assets/ui.js":     "text/javascript; charset=utf-8",
		"/pay/assets/style.css":        "text/css; charset=utf-8",
		"/pay/assets/ui.js":            "text/javascript; charset=utf-8",
	} {
		status, h, body := e.uiGet(path)
		eq(t, status, 200)
		eq(t, h.Get("Content-Type"), want)
		if len(body) < 500 {
			t.Fatalf("%s: %d bytes", path, len(body))
		}
	}
	for _, p := range web.Pages {
		status, _, body := e.uiGet(web.Href(p.Name, 0))
		eq(t, status, 200)
		wantIn(t, body, "<h1>"+p.Title+"</h1>", `aria-current="page">`+p.Title+"</a>", `name="token" value="`+web.Token+`"`)
		// Nothing external: every src and href is a path of the sandbox.
		for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			if !strings.HasPrefix(m[1], "/") && !strings.HasPrefix(m[1], "#") {
				t.Fatalf("%s links %q", p.Name, m[1])
			}
		}
	}
	status, _, _ := e.uiGet("/sandbox/ui/")
	eq(t, status, 200) // via the redirect
	status, _, _ = e.uiGet("/sandbox/ui/nope")
	eq(t, status, 404)
	eq(t, web.PageName("../x"), "payments")
	eq(t, web.Refresh("x"), web.DefaultRefresh)
	eq(t, web.Refresh("-3"), web.DefaultRefresh)
	eq(t, web.Refresh("99999"), 3600)
	eq(t, web.Refresh("0"), 0)
}

func TestMaskNumberAndTimeLeft(t *testing.T) {
	for in, want := range map[string]string{
		"2200123456789012": "•••• 9012", "+79161234567": "•••• 4567", "+992 93 123 45 67": "•••• 4567",
		"123": "•••• •••", "": "••••", "abc": "••••",
	} {
		eq(t, web.MaskNumber(in), want)
	}
	for d, want := range map[time.Duration]string{
		0: "expired", -time.Second: "expired", 1500 * time.Millisecond: "2s", 20 * time.Minute: "20m 00s",
		time.Hour + 5*time.Minute + 59*time.Second: "1h 05m",
	} {
		eq(t, web.TimeLeft(d), want)
	}
	eq(t, mask.Key("pk_sandbox"), "pk_s…")
	eq(t, mask.Key("abcd"), "…")
	for d, want := range map[time.Duration]string{
		0: "<1 ms", 999 * time.Microsecond: "<1 ms", 12 * time.Millisecond: "12 ms", 1540 * time.Millisecond: "1.5 s",
	} {
		eq(t, web.Elapsed(d), want)
	}
}

// The dashboard says on every page whether the autopilot runs, and each
// page's hints match the mode: with it on they name its delays instead of
// telling the operator that things wait for them; with it off they say that
// nothing moves by itself.
func TestDashboardSaysTheAutopilotMode(t *testing.T) {
	fill := func(e *env) {
		e.createPayment(`{"ext_id":"o-1","amount":1500}`)
		wantStatus(t, e.do("POST", "/v1/payouts", `{"ext_id":"po-1","amount":500,"method":"card","requisites":"4111111111111111","holder_name":"IVAN"}`), 200, "")
		wantStatus(t, e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"}`), 200, "")
	}
	page := func(e *env, name string) string {
		_, _, html := e.uiGet("/sandbox/ui/" + name + "?refresh=0")
		return html
	}
	on := newEnv(t, Config{Autopilot: Autopilot{Enabled: true, VerifyDelay: 10 * time.Second, ReviewDelay: 90 * time.Second,
		PayoutDelay: 2 * time.Minute, WithdrawalDelay: time.Hour}})
	fill(on)
	steps := on.sb.AutopilotPending()
	for _, name := range []string{"payments", "payouts", "withdrawals", "terminals", "webhooks", "faults", "testvalues"} {
		html := page(on, name)
		want := fmt.Sprintf(`<strong>Autopilot on:</strong> payments, disputes, payouts and withdrawals move by themselves (%d steps scheduled)`, steps)
		if !strings.Contains(html, want) {
			t.Fatalf("the %s page does not say the autopilot is on:\n%s", name, html)
		}
	}
	for name, want := range map[string]string{
		"payments":    `the autopilot verifies PROCESSING ones 10 s after the confirm and reviews disputes 1 min 30 s after they open, with the outcome the Test values give. A verdict here comes first.`,
		"payouts":     `The autopilot moves each payout pending → processing → its final status, 2 min a step, as the Test values say.`,
		"withdrawals": `The autopilot moves each withdrawal pending → processing → completed or failed, 1 h a step, as the Test values say.`,
		"testvalues":  `The autopilot is on: these values in your requests choose what happens`,
	} {
		html := page(on, name)
		if !strings.Contains(html, want) || strings.Contains(html, "wait for your verdict") || strings.Contains(html, "nothing moves") {
			t.Fatalf("the %s page's texts do not match the autopilot:\n%s", name, html)
		}
	}

	off := newEnv(t, Config{})
	fill(off)
	for name, want := range map[string]string{
		"payments":    `PROCESSING ones and disputes wait for your verdict here.`,
		"payouts":     `A payout moves only when you press a button here (or call its control): nothing moves it by itself.`,
		"withdrawals": `A withdrawal moves only when you press a button here (or call its control): nothing moves it by itself.`,
		"testvalues":  `The autopilot is off`,
	} {
		html := page(off, name)
		if !strings.Contains(html, "Autopilot off: nothing moves by itself but the expiry of unpaid payments.") ||
			!strings.Contains(html, want) || strings.Contains(html, "Autopilot on") {
			t.Fatalf("the %s page's texts do not match a sandbox without the autopilot:\n%s", name, html)
		}
	}

	ignoring := newEnv(t, Config{Autopilot: Autopilot{Enabled: true, IgnoreTestValues: true}})
	fill(ignoring)
	if html := page(ignoring, "testvalues"); !strings.Contains(html, "The autopilot is on, ignoring test values") {
		t.Fatalf("the test values page with IgnoreTestValues:\n%s", html)
	}
	if html := page(ignoring, "payouts"); strings.Contains(html, "as the Test values say") || !strings.Contains(html, "10 s a step. A button") {
		t.Fatalf("the payouts page points at test values the autopilot ignores:\n%s", html)
	}
}
