package e2e

// What a payer and an operator read (issue 23, point 7): amounts with two
// decimals and thousands separators, methods in words, the cross-border
// page's currency, the pay-by time in words, and the webhook list's ext_id,
// payload and resend button; at 390 px (a phone) and 1280 px, with no
// horizontal scrolling on the phone. -update writes the screenshots to
// docs/.

import (
	"bytes"
	"context"
	"fmt"
	imgpng "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// shoot opens url at the given width, waits for sel, checks that nothing
// scrolls sideways, and screenshots the whole page (its height, capped so
// a long list cannot make a huge image). With -update it writes
// ../docs/<name>.
func shoot(t *testing.T, ctx context.Context, url, sel string, width int64, name string, then ...chromedp.Action) {
	t.Helper()
	run(t, ctx, emulation.SetDeviceMetricsOverride(width, 860, 1, false),
		chromedp.Navigate(url), chromedp.WaitVisible(sel, chromedp.ByQuery))
	run(t, ctx, then...)
	var sw, sh int64
	run(t, ctx, chromedp.Evaluate(`document.documentElement.scrollWidth`, &sw),
		chromedp.Evaluate(`document.documentElement.scrollHeight`, &sh))
	if sw > width {
		t.Fatalf("%s at %d px scrolls sideways: scrollWidth %d", url, width, sw)
	}
	h := min(max(sh, 600), 1800)
	var shot []byte
	run(t, ctx, emulation.SetDeviceMetricsOverride(width, h, 1, false),
		chromedp.Evaluate(`window.scrollTo(0, 0)`, nil), chromedp.CaptureScreenshot(&shot))
	img, err := imgpng.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("%s: screenshot is not a PNG: %v", name, err)
	}
	if b := img.Bounds(); int64(b.Dx()) != width || int64(b.Dy()) != h {
		t.Fatalf("%s: screenshot is %v, want %dx%d", name, b, width, h)
	}
	if len(shot) >= maxScreenshotBytes {
		t.Fatalf("%s: screenshot is %d bytes, over the %d limit", name, len(shot), maxScreenshotBytes)
	}
	t.Logf("%s: %dx%d, %d bytes", name, width, h, len(shot))
	if !update() {
		checkCommittedShot(t, name, width)
		return
	}
	path := filepath.Join("..", "docs", name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// docsShots are the screenshots in docs/ and the width each is taken at:
// every page the issue names, and the dashboard's Test values page, at a
// phone's 390 px and a desktop's 1280 px.
var docsShots = map[string]int{
	"pay-card-390.png": 390, "pay-card-1280.png": 1280,
	"pay-cross-border-390.png": 390, "pay-cross-border-1280.png": 1280,
	"dashboard-390.png": 390, "dashboard.png": 1280,
	"webhooks-390.png": 390, "webhooks-1280.png": 1280,
	"testvalues-390.png": 390, "testvalues-1280.png": 1280,
}

// checkCommittedShot fails when docs/<name> is missing, is not a PNG, or
// was taken at another width than the test renders: the sandbox's
// README.md must show what the browser tests check. (Pixels are not compared: fonts differ
// between machines.)
func checkCommittedShot(t *testing.T, name string, width int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", name))
	if err != nil {
		t.Fatalf("%s is not committed (go test -run TestBrowser -update writes it): %v", name, err)
	}
	cfg, err := imgpng.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("docs/%s is not a PNG: %v", name, err)
	}
	if int64(cfg.Width) != width {
		t.Fatalf("docs/%s is %d px wide, the test renders it at %d (go test -run TestBrowser -update)", name, cfg.Width, width)
	}
}

// TestDocsScreenshots runs without a browser: every screenshot of docs/
// is committed at its width, none is over the size limit, and the sandbox's
// README.md links each one.
func TestDocsScreenshots(t *testing.T) {
	readme, err := os.ReadFile("../sandbox/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, width := range docsShots {
		checkCommittedShot(t, name, int64(width))
		if fi, err := os.Stat(filepath.Join("..", "docs", name)); err != nil || fi.Size() >= maxScreenshotBytes {
			t.Errorf("docs/%s: %v, over %d bytes", name, err, maxScreenshotBytes)
		}
		if !strings.Contains(string(readme), "(../docs/"+name+")") {
			t.Errorf("sandbox/README.md does not link docs/%s", name)
		}
	}
	files, err := filepath.Glob("../docs/*.png")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := docsShots[filepath.Base(f)]; !ok {
			t.Errorf("docs/%s is not checked by any test: add it to docsShots or remove it", filepath.Base(f))
		}
	}
}

// bodyText is the page's visible text.
func bodyText(t *testing.T, ctx context.Context) string {
	t.Helper()
	var s string
	run(t, ctx, chromedp.Evaluate(`document.body.innerText`, &s))
	return s
}

func TestBrowserPagesInWords(t *testing.T) {
	ctx := newBrowser(t)
	base := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) // 13:00 Moscow time
	m := newMerchant(t)
	w := newWorld(t, sandbox.Config{Now: func() time.Time { return base }})
	card := w.pay(t, paykit.CreatePaymentParams{ExtID: "order-2041", Amount: decimal.RequireFromString("12500.50"),
		Method: paykit.MethodCard, NotifyURL: m.srv.URL + "/paykit/webhook", NotificationToken: "tok-words"})
	w.sb.Advance(time.Minute)
	cross := w.pay(t, paykit.CreatePaymentParams{ExtID: "order-2042", Amount: decimal.RequireFromString("15000.50"),
		Method: paykit.MethodCrossBorder, Country: paykit.CountryKZ})
	sbp := w.pay(t, paykit.CreatePaymentParams{ExtID: "order-2043", Amount: decimal.RequireFromString("980"),
		Method: paykit.MethodSBP})
	w.pay(t, paykit.CreatePaymentParams{ExtID: "order-2044", Amount: decimal.RequireFromString("750"), Method: paykit.MethodSIM})
	_, err := w.client.ConfirmPayment(context.Background(), sbp.ID, nil)
	mustNil(t, err)
	w.sb.Advance(40 * time.Second)

	// The card page: 18 min 20 s left, so "in 19 minutes", by 13:20 Moscow.
	for _, width := range []int64{390, 1280} {
		shoot(t, ctx, card.PaymentURL, "#paid", width, fmt.Sprintf("pay-card-%d.png", width))
		for sel, want := range map[string]string{
			"#amount": "12,500.50 RUB", "#method": "Bank card", "#pay-by": "13:20 Moscow time",
			"#time-left": "(in 19 minutes)", "#instruction strong": "12,500.50 RUB",
		} {
			if got := textOf(t, ctx, sel); got != want {
				t.Fatalf("card page at %d px: %s is %q, want %q", width, sel, got, want)
			}
		}
		var copyAmount string
		run(t, ctx, chromedp.AttributeValue(`button[data-what="Amount"]`, "data-copy", &copyAmount, nil, chromedp.ByQuery))
		if copyAmount != "12500.50" {
			t.Fatalf("the amount's copy button copies %q", copyAmount)
		}
		if txt := bodyText(t, ctx); strings.Contains(txt, "2026-03-02T") || strings.Contains(txt, "CARD") {
			t.Fatalf("card page shows a wire token:\n%s", txt)
		}
	}

	// The cross-border page: what to send is in tenge, the roubles beside.
	for _, width := range []int64{390, 1280} {
		shoot(t, ctx, cross.PaymentURL, "#paid", width, fmt.Sprintf("pay-cross-border-%d.png", width))
		for sel, want := range map[string]string{
			"#amount": "84,002.80 KZT", "#method": "Cross-border transfer", "#amount-local": "84,002.80 KZT",
			"#amount-rub":         "Send KZT, not roubles: 84,002.80 KZT is the equivalent of 15,000.50 RUB.",
			"#instruction strong": "84,002.80 KZT", "#pay-by": "13:21 Moscow time", "#time-left": "(in 20 minutes)",
		} {
			if got := textOf(t, ctx, sel); got != want {
				t.Fatalf("cross-border page at %d px: %s is %q, want %q", width, sel, got, want)
			}
		}
		if txt := bodyText(t, ctx); strings.Contains(txt, "CROSS_BORDER") {
			t.Fatalf("cross-border page shows the enum:\n%s", txt)
		}
	}

	// The dashboard: amounts and methods in words, no sideways scroll of
	// the page itself on a phone (the table scrolls in its own box).
	shoot(t, ctx, w.ts.URL+"/sandbox/ui?refresh=0", "#pay-"+sbp.ID, 390, "dashboard-390.png")
	for sel, want := range map[string]string{
		"#pay-" + card.ID + " td.num":           "12,500.50 RUB",
		"#pay-" + card.ID + " td:nth-child(3)":  "Bank card",
		"#pay-" + cross.ID + " td:nth-child(3)": "Cross-border transfer",
		"#pay-" + sbp.ID + " td:nth-child(3)":   "SBP (Faster Payments)",
		"#pay-" + cross.ID + " td.num .local":   "sent as 84,002.80 KZT",
	} {
		if got := textOf(t, ctx, sel); got != want {
			t.Fatalf("dashboard: %s is %q, want %q", sel, got, want)
		}
	}

	// The webhook list: ext_id, the payload on demand, and Resend.
	mustNil(t, w.sb.VerifyPayment(sbp.ID, sandbox.OutcomeCompleted)) // no notify_url: no webhook
	_, err = w.client.CancelPayment(context.Background(), card.ID)
	mustNil(t, err)
	w.flush(t)
	if got := strings.Join(m.statuses(), ","); got != "CANCELLED" {
		t.Fatalf("merchant got %s", got)
	}
	first := `#deliveries tbody tr:first-child`
	run(t, ctx, emulation.SetDeviceMetricsOverride(1280, 860, 1, false),
		chromedp.Navigate(w.ts.URL+"/sandbox/ui/webhooks?refresh=0"), chromedp.WaitVisible(first, chromedp.ByQuery))
	if got := textOf(t, ctx, first+" .ext-id"); got != "order-2041" {
		t.Fatalf("delivery ext_id %q", got)
	}
	run(t, ctx, chromedp.Click(first+" details summary", chromedp.ByQuery))
	payload := textOf(t, ctx, first+" details pre")
	num := card.Requisites.Value
	for _, want := range []string{`"ext_id": "order-2041"`, `"amount": 12500.50`, `"status": "CANCELLED"`, `"value": "•••• ` + num[len(num)-4:] + `"`} {
		if !strings.Contains(payload, want) {
			t.Fatalf("payload lacks %s:\n%s", want, payload)
		}
	}
	if strings.Contains(payload, num) {
		t.Fatal("the payload shows the whole card number")
	}
	run(t, ctx, chromedp.Click(first+` form.resend button`, chromedp.ByQuery),
		chromedp.WaitVisible(first+" .resent", chromedp.ByQuery))
	var loc string
	run(t, ctx, chromedp.Location(&loc))
	if loc != w.ts.URL+"/sandbox/ui/webhooks?refresh=0" {
		t.Fatalf("after Resend the browser is at %s", loc)
	}
	w.flush(t)
	if got := strings.Join(m.statuses(), ","); got != "CANCELLED,CANCELLED" {
		t.Fatalf("after Resend the merchant got %s", got)
	}
	m.mu.Lock()
	tokens := strings.Join(m.tokens, ",")
	m.mu.Unlock()
	if tokens != "tok-words,tok-words" {
		t.Fatalf("tokens %s", tokens)
	}
	for _, width := range []int64{390, 1280} {
		shoot(t, ctx, w.ts.URL+"/sandbox/ui/webhooks?refresh=0", first, width, fmt.Sprintf("webhooks-%d.png", width),
			chromedp.Click(first+" details summary", chromedp.ByQuery), chromedp.WaitVisible(first+" details pre", chromedp.ByQuery))
		// On a phone each delivery is a card: its order, answer and
		// payload show without scrolling the list sideways.
		var sideways bool
		run(t, ctx, chromedp.Evaluate(`(() => { const b = document.querySelector("#deliveries").closest(".scroll");
			return b.scrollWidth > b.clientWidth; })()`, &sideways))
		if sideways && width == 390 {
			t.Fatalf("the webhook list scrolls sideways at %d px", width)
		}
	}
	var page string
	run(t, ctx, chromedp.OuterHTML("html", &page, chromedp.ByQuery))
	if strings.Contains(page, "tok-words") || strings.Contains(page, num) {
		t.Fatal("a token or card number is on the webhooks page")
	}
}

// The dashboard's Test values page lists every row of sandbox.TestValues,
// says whether the autopilot is on, and fits a phone: the table scrolls in
// its own region, the page never sideways.
func TestBrowserTestValuesPage(t *testing.T) {
	ctx := newBrowser(t)
	w := newWorld(t, sandbox.Config{Autopilot: sandbox.Autopilot{Enabled: true}})
	for _, width := range []int64{390, 1280} {
		shoot(t, ctx, w.ts.URL+"/sandbox/ui/testvalues?refresh=0", "#testvalues", width, fmt.Sprintf("testvalues-%d.png", width))
		var rows int
		run(t, ctx, chromedp.Evaluate(`document.querySelectorAll("#testvalues li").length`, &rows))
		if rows != len(sandbox.TestValues) {
			t.Fatalf("%d rows at %d px, want %d", rows, width, len(sandbox.TestValues))
		}
		if got := textOf(t, ctx, "#autopilot-state"); !strings.HasPrefix(got, "The autopilot is on") {
			t.Fatalf("autopilot state: %q", got)
		}
		txt := bodyText(t, ctx)
		for _, v := range sandbox.TestValues {
			if !strings.Contains(txt, v.Example) {
				t.Fatalf("example %q not on the page at %d px", v.Example, width)
			}
		}
	}
}
