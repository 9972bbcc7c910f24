package sandbox

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// The dashboard at /sandbox/ui is the browser face of the controls: the
// people who test a checkout (QA, product, frontend) see what their test
// created and press the outcome the real service would decide, without
// writing curl. Everything it shows is read under s.mu and every action
// calls the same method the JSON controls call, so the dashboard can never
// do something the controls cannot.

//go:embed ui
var uiFiles embed.FS

// uiAssets holds the stylesheet and the script, shared by the dashboard and
// the hosted payment page: no CDN, nothing fetched from elsewhere.
var uiAssets, _ = fs.Sub(uiFiles, "ui/assets")

// uiCSP is the Content-Security-Policy of every HTML page the sandbox
// serves: only its own stylesheet and script, forms only to itself, never
// framed (no clickjacking of the action buttons).
const uiCSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// uiToken is the per-process secret every dashboard form carries in a hidden
// field. A page on another origin cannot read it, so it cannot forge a form
// that the sandbox accepts, even when a browser sends no Origin header.
var uiToken = func() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("sandbox: no randomness for the dashboard token: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}()

// uiPages are the dashboard's pages; a form names one in its "page" field
// to come back to it, and only these names are accepted.
var uiPages = []struct{ Name, Title string }{
	{"payments", "Payments"},
	{"payouts", "Payouts"},
	{"withdrawals", "Withdrawals"},
	{"terminals", "Terminals"},
	{"webhooks", "Webhooks"},
	{"faults", "Faults"},
	{"testvalues", "Test values"}, // testvalues.go, autopilot.go
}

var uiFuncs = template.FuncMap{
	"statusClass": func(s string) string { return "st st-" + strings.ToLower(s) },
}

// uiTmpl maps a page name to its template: the shared layout plus the
// page's own "content".
var uiTmpl = func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, p := range uiPages {
		m[p.Name] = template.Must(template.New("layout.html").Funcs(uiFuncs).
			ParseFS(uiFiles, "ui/layout.html", "ui/"+p.Name+".html"))
	}
	return m
}()

// uiDefaultRefresh is the auto-refresh period, in seconds, of a dashboard
// page opened without ?refresh=: short enough to watch a webhook go out.
const uiDefaultRefresh = 5

// uiRoutes registers the dashboard: GET pages, GET assets, and one POST
// route per action (forms cannot send the JSON the controls take).
func (s *Server) uiRoutes(mux *http.ServeMux) {
	assets := http.FileServerFS(uiAssets)
	mux.Handle("GET /pay/assets/", http.StripPrefix("/pay/assets", assets))
	mux.Handle("GET /sandbox/ui/assets/", s.uiGuard(false, http.StripPrefix("/sandbox/ui/assets", assets)))

	mux.Handle("GET /sandbox/ui", s.uiGuard(false, s.uiPage("payments")))
	mux.Handle("GET /sandbox/ui/{$}", s.uiGuard(false, http.RedirectHandler("/sandbox/ui", http.StatusMovedPermanently)))
	for _, p := range uiPages {
		mux.Handle("GET /sandbox/ui/"+p.Name, s.uiGuard(false, s.uiPage(p.Name)))
	}

	mux.Handle("POST /sandbox/ui/payments/{id}/verify", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.verifyPayment(r.PathValue("id"), r.PostFormValue("outcome"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/payments/{id}/dispute/review", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.reviewDispute(r.PathValue("id"), r.PostFormValue("outcome"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/payouts/{id}/status", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.setPayoutStatus(r.PathValue("id"), r.PostFormValue("status"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/withdrawals/{id}/status", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.setWithdrawalStatus(r.PathValue("id"), r.PostFormValue("status"), strings.TrimSpace(r.PostFormValue("tx_hash")))
		return err
	})))
	mux.Handle("POST /sandbox/ui/clock/advance", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		secs, err := formInt(r, "seconds")
		if err != nil {
			return err
		}
		// Ten years is far beyond any valid_until; the cap keeps the
		// Duration from overflowing.
		if secs < 0 || secs > 10*365*24*3600 {
			return fmt.Errorf("%w: seconds must be from 0 to 315360000", ErrInvalidArgument)
		}
		s.Advance(time.Duration(secs) * time.Second)
		return nil
	})))
	mux.Handle("POST /sandbox/ui/faults", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		f := Fault{Method: r.PostFormValue("method"), Path: strings.TrimSpace(r.PostFormValue("path")),
			Mode: r.PostFormValue("mode"), Code: strings.TrimSpace(r.PostFormValue("code"))}
		for _, n := range []struct {
			name string
			dst  *int
		}{{"count", &f.Count}, {"status", &f.Status}, {"delay_ms", &f.DelayMS}, {"retry_after_s", &f.RetryAfterS}} {
			v, err := formInt(r, n.name)
			if err != nil {
				return err
			}
			*n.dst = int(v)
		}
		return s.InjectFault(f)
	})))
	mux.Handle("POST /sandbox/ui/webhooks/{id}/resend", s.uiGuard(true, s.uiAction(func(r *http.Request) error {
		_, err := s.ResendWebhook(r.PathValue("id"))
		return err
	})))
	mux.Handle("POST /sandbox/ui/reset", s.uiGuard(true, s.uiAction(func(*http.Request) error {
		s.Reset()
		return nil
	})))
}

// formInt reads an optional whole number from a form field; empty is 0.
func formInt(r *http.Request, name string) (int64, error) {
	v := strings.TrimSpace(r.PostFormValue(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s must be a whole number", ErrInvalidArgument, name)
	}
	return n, nil
}

// uiGuard applies the loopback-Host rule of the JSON controls to every
// dashboard route and, for the POST forms, refuses cross-site submissions.
func (s *Server) uiGuard(form bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.guardControl(w, r, false) {
			return
		}
		if form {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := r.ParseForm(); err != nil {
				http.Error(w, "sandbox dashboard: unreadable form", http.StatusBadRequest)
				return
			}
			if !sameOrigin(r) || subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(uiToken)) != 1 {
				http.Error(w, "sandbox dashboard: cross-site form post refused: "+
					"the form must come from a dashboard page of this sandbox", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin tells a form posted by a page of this sandbox from one posted
// by another site. Browsers send Sec-Fetch-Site and Origin on every POST;
// Referer is the fallback for old ones. A request with none of them comes
// from a non-browser client, which the token alone has to convince.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	for _, h := range []string{"Origin", "Referer"} {
		v := r.Header.Get(h)
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
	}
	return true
}

// uiAction runs one form action and answers like the JSON control would in
// spirit: success is a 303 back to the page the form came from (so a reload
// does not post again); an error re-renders that page with the error at the
// top and the status the JSON control would have answered.
func (s *Server) uiAction(do func(r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := uiPageName(r.PostFormValue("page"))
		refresh := uiRefresh(r.PostFormValue("refresh"))
		err := do(r)
		if err == nil {
			http.Redirect(w, r, uiHref(page, refresh), http.StatusSeeOther)
			return
		}
		status := http.StatusBadRequest
		switch {
		case errors.Is(err, ErrNotFound):
			status = http.StatusNotFound
		case errors.Is(err, ErrWrongState):
			status = http.StatusConflict
		}
		// No auto-refresh on an error page: its URL is the POST action, and
		// the tester has to read the error first.
		s.renderUI(w, page, status, err.Error(), 0)
	})
}

func uiPageName(v string) string {
	for _, p := range uiPages {
		if p.Name == v {
			return v
		}
	}
	return "payments"
}

// uiRefresh parses the auto-refresh period: empty is the default, 0 is off
// (tests, and anyone reading a long list), anything else is clamped.
func uiRefresh(v string) int {
	if v == "" {
		return uiDefaultRefresh
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return uiDefaultRefresh
	}
	return min(n, 3600)
}

func uiHref(page string, refresh int) string {
	u := "/sandbox/ui"
	if page != "payments" {
		u += "/" + page
	}
	if refresh != uiDefaultRefresh {
		u += "?refresh=" + strconv.Itoa(refresh)
	}
	return u
}

func (s *Server) uiPage(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderUI(w, name, http.StatusOK, "", uiRefresh(r.URL.Query().Get("refresh")))
	})
}

// uiNavItem is one link of the navigation bar.
type uiNavItem struct {
	Title, Href string
	Current     bool
}

// uiData is everything a dashboard page shows; each page fills its part.
type uiData struct {
	Title      string
	Page       string
	Nav        []uiNavItem
	Now        string
	Token      string
	Refresh    int
	RefreshArg string // the refresh value the forms carry back
	// RefreshOffHref and RefreshOnHref are absolute links to this page,
	// never relative: an error page's own URL is a POST-only action.
	RefreshOffHref, RefreshOnHref string
	Error                         string
	// Unsigned names the merchants that accept unsigned requests (a banner
	// says so).
	Unsigned []string

	Payments    []uiPayment
	Payouts     []uiPayout
	Withdrawals []uiWithdrawal
	Merchants   []uiMerchant
	Deliveries  []uiDelivery
	Faults      []uiFault
	// TestValueGroups fill the test values page.
	TestValueGroups []uiTestValueGroup
	// Autopilot is the autopilot's mode for every page's texts; nil when
	// it is off.
	Autopilot *uiAutopilot
	// Backlog is how many webhooks wait to be delivered (State.Webhooks).
	Backlog int
}

// uiAutopilot is what the pages say of a running autopilot: its delays,
// as a person reads them, and whether test values choose outcomes.
type uiAutopilot struct {
	Steps                              int // scheduled and not yet run
	Verify, Review, Payout, Withdrawal string
	IgnoreTestValues                   bool
}

// uiTestValueGroup is the test values of one resource and field, in
// TestValues order.
type uiTestValueGroup struct {
	Title string
	Rows  []TestValue
}

// uiTestValueGroups groups TestValues by resource and field for the page:
// a list a phone can read, where a five-column table could not.
func uiTestValueGroups() []uiTestValueGroup {
	plural := map[string]string{"payment": "Payments", "dispute": "Disputes", "payout": "Payouts", "withdrawal": "Withdrawals"}
	var out []uiTestValueGroup
	for _, v := range TestValues {
		title := plural[v.Resource] + ": the " + v.Field
		if len(out) == 0 || out[len(out)-1].Title != title {
			out = append(out, uiTestValueGroup{Title: title})
		}
		out[len(out)-1].Rows = append(out[len(out)-1].Rows, v)
	}
	return out
}

type uiPayment struct {
	ID, ShortID, ExtID, Amount, Method, Status string
	AmountLocal                                string // what a CROSS_BORDER payer sends: "84,002.80 KZT"
	ReqLabel, ReqMasked, Bank                  string
	Created, CreatedTime                       string
	ValidUntil, ValidUntilTime, TimeLeft       string
	Expired                                    bool
	Dispute                                    *uiDispute
	CanVerify, CanReview                       bool
}

type uiDispute struct {
	Amount, Comment, ReceiptURL, Created, CreatedTime string
}

type uiPayout struct {
	ID, ShortID, ExtID, Amount, Method, ReqMasked, Holder, Bank, Status string
	ProviderOrderID, Created, CreatedTime, Completed                    string
	Moves                                                               []string
}

type uiWithdrawal struct {
	ID, ShortID, Terminal, Amount, Fee, Address, TxHash, Status string
	Created, CreatedTime, Updated                               string
	Moves                                                       []string
}

type uiMerchant struct {
	Name      string // Merchant.Name
	Label     string
	Terminals []uiTerminal
}

type uiTerminal struct {
	ID, Name, Balance, Frozen, Fee string
	Active                         bool
}

type uiDelivery struct {
	ID, ExtID, ResendOf             string
	Resource, Status, Target, State string
	Payload                         string // indented JSON, card and phone numbers masked
	PayloadSize                     int
	Attempts                        []uiAttempt
}

type uiAttempt struct {
	At, Answer string
	OK         bool
}

type uiFault struct {
	Method, Path, Mode, Detail string
	Count                      int
}

// renderUI reads the state the page needs under s.mu (after lazy expiry, so
// what is due shows as CANCELLED) and renders it. Rendering happens after
// the lock is released.
func (s *Server) renderUI(w http.ResponseWriter, page string, status int, errMsg string, refresh int) {
	d := uiData{Page: page, Token: uiToken, Refresh: refresh, RefreshArg: strconv.Itoa(refresh), Error: errMsg,
		Unsigned:       s.unsignedMerchants(),
		RefreshOffHref: uiHref(page, 0), RefreshOnHref: uiHref(page, uiDefaultRefresh)}
	for _, p := range uiPages {
		if p.Name == page {
			d.Title = p.Title
		}
		d.Nav = append(d.Nav, uiNavItem{Title: p.Title, Href: uiHref(p.Name, refresh), Current: p.Name == page})
	}
	s.begin()
	now := s.tickLocked()
	d.Now = now.Format("2006-01-02 15:04:05 UTC")
	d.Backlog = s.hooks.backlog()
	if p := s.pilot; p != nil {
		d.Autopilot = &uiAutopilot{Steps: p.pending(), Verify: uiDelay(p.cfg.VerifyDelay), Review: uiDelay(p.cfg.ReviewDelay),
			Payout: uiDelay(p.cfg.PayoutDelay), Withdrawal: uiDelay(p.cfg.WithdrawalDelay), IgnoreTestValues: p.cfg.IgnoreTestValues}
	}
	switch page {
	case "payments":
		d.Payments = s.uiPaymentsLocked(now)
	case "payouts":
		d.Payouts = s.uiPayoutsLocked()
	case "withdrawals":
		d.Withdrawals = s.uiWithdrawalsLocked()
	case "terminals":
		d.Merchants = s.uiMerchantsLocked()
	case "faults":
		d.Faults = s.uiFaultsLocked()
	case "testvalues":
		d.TestValueGroups = uiTestValueGroups()
	}
	s.commit()
	if page == "webhooks" {
		d.Deliveries = s.uiDeliveries()
	}
	setHTMLHeaders(w, "same-origin") // the forms' Referer check needs it
	w.WriteHeader(status)
	uiTmpl[page].Execute(w, d)
}

func (s *Server) uiPaymentsLocked(now time.Time) []uiPayment {
	ps := s.st.recentPayments(uiListLimit) // newest first
	out := make([]uiPayment, 0, len(ps))
	for _, p := range ps {
		v := uiPayment{ID: p.id, ShortID: shortID(p.id), ExtID: p.extID, Amount: moneyText(p.amount, "RUB"), Method: methodText(p.method),
			Status: p.status, ReqLabel: reqLabel(p.reqType), ReqMasked: maskNumber(p.reqValue), Bank: p.bank.Name,
			Created: uiTime(p.createdAt), CreatedTime: clockTime(p.createdAt),
			ValidUntil: uiTime(p.validUntil), ValidUntilTime: clockTime(p.validUntil),
			CanVerify: p.status == statusProcessing, CanReview: p.status == statusDispute}
		if p.status == statusPending {
			v.TimeLeft = timeLeft(p.validUntil.Sub(now))
		}
		if p.method == methodCrossBorder {
			v.AmountLocal = moneyText(p.amountLoc, p.currency)
		}
		if d := p.dispute; d != nil {
			v.Dispute = &uiDispute{Comment: d.comment, ReceiptURL: d.receiptURL, Created: uiTime(d.createdAt),
				CreatedTime: clockTime(d.createdAt)}
			if d.amount != nil {
				v.Dispute.Amount = moneyText(*d.amount, "RUB")
			}
		}
		out = append(out, v)
	}
	return out
}

func (s *Server) uiPayoutsLocked() []uiPayout {
	var out []uiPayout
	for _, p := range s.st.recentPayouts(uiListLimit) { // newest first
		v := uiPayout{ID: p.id, ShortID: shortID(p.id), ExtID: p.extID, Amount: moneyText(p.amount, "RUB"), Method: methodText(p.method),
			ReqMasked: maskNumber(p.requisites), Holder: p.holderName, Bank: p.bank, Status: p.status,
			ProviderOrderID: p.providerOrderID, Created: uiTime(p.createdAt), CreatedTime: clockTime(p.createdAt), Moves: payoutMoves[p.status]}
		if !p.completedAt.IsZero() {
			v.Completed = uiTime(p.completedAt)
		}
		out = append(out, v)
	}
	return out
}

func (s *Server) uiWithdrawalsLocked() []uiWithdrawal {
	ws := s.st.recentWithdrawals(uiListLimit) // newest first
	out := make([]uiWithdrawal, 0, len(ws))
	for _, w := range ws {
		out = append(out, uiWithdrawal{ID: w.id, ShortID: shortID(w.id), Terminal: w.terminal.id, Amount: moneyText(w.amount, "USDT"),
			Fee: moneyText(w.fee, "USDT"), Address: w.address, TxHash: w.txHash, Status: w.status,
			Created: uiTime(w.createdAt), CreatedTime: clockTime(w.createdAt), Updated: uiTime(w.updatedAt), Moves: ledger.WithdrawalMoves(w.status)})
	}
	return out
}

func (s *Server) uiMerchantsLocked() []uiMerchant {
	out := make([]uiMerchant, 0, len(s.cfg.Merchants))
	for i, mc := range s.cfg.Merchants {
		m := s.merchants[mc.APIKey]
		um := uiMerchant{Name: mc.Name, Label: merchantLabel(i, mc.APIKey)}
		for _, t := range m.terminals {
			um.Terminals = append(um.Terminals, uiTerminal{ID: t.id, Name: t.name,
				Balance: moneyText(t.Available, ""), Frozen: moneyText(t.Frozen, ""),
				Fee: moneyText(t.fee, ""), Active: t.active})
		}
		out = append(out, um)
	}
	return out
}

func (s *Server) uiFaultsLocked() []uiFault {
	out := make([]uiFault, 0, len(s.faults))
	for _, f := range s.faults {
		v := uiFault{Method: f.Method, Path: f.Path, Mode: f.Mode, Count: f.Count}
		if v.Method == "" {
			v.Method = "any"
		}
		switch f.Mode {
		case FaultErrorBefore:
			v.Detail = fmt.Sprintf("answers %d %s", f.Status, uiFaultCode(f))
		case FaultRetryAfter:
			v.Detail = fmt.Sprintf("answers 503 %s, Retry-After %ds", uiFaultCode(f), f.RetryAfterS)
		case FaultDelay:
			v.Detail = fmt.Sprintf("waits %d ms, then processes", f.DelayMS)
		case FaultDropAfter:
			v.Detail = "processes, then drops the connection"
		}
		out = append(out, v)
	}
	return out
}

// uiDeliveries reads the webhook log (newest first, tokens never recorded)
// and says in words what each attempt got back.
func (s *Server) uiDeliveries() []uiDelivery {
	ds, bodies := s.Deliveries(), s.hooks.bodies()
	out := make([]uiDelivery, 0, len(ds))
	for _, d := range ds {
		v := uiDelivery{ID: d.ID, ExtID: d.ExtID, ResendOf: d.ResendOf, Resource: d.Resource + " " + d.ResourceID,
			Status: d.ResourceStatus, Target: d.URL, State: d.State}
		if b, ok := bodies[d.ID]; ok {
			v.Payload, v.PayloadSize = payloadText(b), len(b)
		}
		for _, a := range d.Attempts {
			ua := uiAttempt{At: uiTime(a.At), OK: a.StatusCode >= 200 && a.StatusCode < 300}
			switch {
			case a.StatusCode != 0:
				ua.Answer = fmt.Sprintf("%d %s", a.StatusCode, http.StatusText(a.StatusCode))
			case a.Error != "":
				ua.Answer = "no answer: " + a.Error
			default:
				ua.Answer = "no answer"
			}
			ua.Answer += " in " + elapsed(a.Duration)
			v.Attempts = append(v.Attempts, ua)
		}
		out = append(out, v)
	}
	return out
}

// payloadText is a webhook body as the dashboard shows it: indented, keys
// in the order sent and numbers as sent (1500.50 stays 1500.50), with the
// payer's card or phone number masked like everywhere else on the
// dashboard (requisites.value of a payment, requisites of a payout).
func payloadText(body []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return "(not JSON)"
	}
	out := buf.String()
	var v struct {
		Requisites json.RawMessage `json:"requisites"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Requisites) == 0 {
		return out
	}
	var num string
	var obj struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(v.Requisites, &num) != nil && json.Unmarshal(v.Requisites, &obj) == nil {
		num = obj.Value
	}
	if num == "" {
		return out
	}
	q, _ := json.Marshal(num)
	m, _ := json.Marshal(maskNumber(num))
	return strings.ReplaceAll(out, string(q), string(m))
}

// elapsed is an attempt's duration as a person reads it: "2 ms", "<1 ms",
// "1.5 s".
func elapsed(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1 ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

func reqLabel(reqType string) string {
	if reqType == "card" {
		return "Card"
	}
	return "Phone"
}

// maskNumber hides a card or phone number but its last four digits: enough
// to tell two payments apart, not enough to leak a number from a screenshot
// of the dashboard.
func maskNumber(v string) string {
	var ds []byte
	for i := 0; i < len(v); i++ {
		if v[i] >= '0' && v[i] <= '9' {
			ds = append(ds, v[i])
		}
	}
	if len(ds) == 0 {
		return "••••"
	}
	if len(ds) <= 4 {
		return "•••• " + strings.Repeat("•", len(ds))
	}
	return "•••• " + string(ds[len(ds)-4:])
}

// unsignedMerchants names the merchants that accept unsigned requests, as
// the dashboard's merchant list labels them, for its banner.
func (s *Server) unsignedMerchants() []string {
	var out []string
	for i, m := range s.cfg.Merchants {
		if m.AcceptUnsigned {
			out = append(out, merchantLabel(i, m.APIKey))
		}
	}
	return out
}

// merchantLabel names the i-th merchant (from 0) without its API key:
// "Merchant 1 (API key pk_s…)".
func merchantLabel(i int, apiKey string) string {
	return fmt.Sprintf("Merchant %d (API key %s)", i+1, maskKey(apiKey))
}

// maskKey shows the start of an API key, which tells merchants apart
// without putting the key on the screen.
func maskKey(k string) string {
	r := []rune(k)
	if len(r) <= 4 {
		return "…"
	}
	return string(r[:4]) + "…"
}

func uiTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

// clockTime is the short form a table cell shows; the full uiTime goes in
// its title.
func clockTime(t time.Time) string { return t.UTC().Format("15:04:05") }

// shortID is the start of a UUID: enough to tell rows apart at a glance;
// the whole id is in the cell's title and the row's id attribute.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// timeLeft formats the time until valid_until the way a tester reads it
// from across the room: "19m 58s", "1h 05m", or "expired".
func timeLeft(d time.Duration) string {
	if d <= 0 {
		return "expired"
	}
	d = d.Round(time.Second)
	h, m, sec := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

// setHTMLHeaders sets the headers of every HTML page the sandbox serves:
// never cached, scripts and styles only from the sandbox itself (uiCSP),
// no type sniffing, and the given referrer policy.
func setHTMLHeaders(w http.ResponseWriter, referrerPolicy string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", referrerPolicy)
}

// uiDelay writes an autopilot delay the way a person says it: "10 s",
// "2 min", "1 h 30 min".
func uiDelay(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", d/time.Second)
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d < time.Hour && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%d h %d min", d/time.Hour, d%time.Hour/time.Minute)
}

// uiFaultCode names the code a fault answers with: its own, or the one
// its route gives.
func uiFaultCode(f *Fault) string {
	if f.Code != "" {
		return f.Code
	}
	return "with the route's internal error code"
}
