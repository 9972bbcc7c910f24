// Package web is the sandbox's browser face: the dashboard's and the
// payment page's templates, stylesheet and script, the words they speak,
// the rendering of both from view structs (Data, PayData), and their routes:
// the guards (the control guard of package guard, same origin, form token)
// and the parsing of every form. It never imports the application: what a
// page shows and what a form does come from a Backend, which
// sandbox/internal/service implements with the controls the JSON API and
// the Go API use.
package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/paykit-dev/paykit-go/sandbox/internal/guard"
)

//go:embed ui
var uiFiles embed.FS

// Assets holds the stylesheet and the script, shared by the dashboard and
// the hosted payment page: no CDN, nothing fetched from elsewhere.
var Assets, _ = fs.Sub(uiFiles, "ui/assets")

// Token is the per-process secret every dashboard form carries in a hidden
// field. A page on another origin cannot read it, so it cannot forge a form
// that the sandbox accepts, even when a browser sends no Origin header.
var Token = func() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("sandbox: no randomness for the dashboard token: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}()

// Pages are the dashboard's pages; a form names one in its "page" field
// to come back to it, and only these names are accepted.
var Pages = []struct{ Name, Title string }{
	{"payments", "Payments"},
	{"payouts", "Payouts"},
	{"withdrawals", "Withdrawals"},
	{"terminals", "Terminals"},
	{"webhooks", "Webhooks"},
	{"faults", "Faults"},
	{"testvalues", "Test values"}, // internal/autopilot
}

var funcs = template.FuncMap{
	"statusClass": func(s string) string { return "st st-" + strings.ToLower(s) },
}

// uiTmpl maps a page name to its template: the shared layout plus the
// page's own "content".
var uiTmpl = func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, p := range Pages {
		m[p.Name] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(uiFiles, "ui/layout.html", "ui/"+p.Name+".html"))
	}
	return m
}()

// DefaultRefresh is the auto-refresh period, in seconds, of a dashboard
// page opened without ?refresh=: short enough to watch a webhook go out.
const DefaultRefresh = 5

// PageName is v if it names a dashboard page, else "payments".
func PageName(v string) string {
	for _, p := range Pages {
		if p.Name == v {
			return v
		}
	}
	return "payments"
}

// Refresh parses the auto-refresh period: empty is the default, 0 is off
// (tests, and anyone reading a long list), anything else is clamped.
func Refresh(v string) int {
	if v == "" {
		return DefaultRefresh
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return DefaultRefresh
	}
	return min(n, 3600)
}

// Href is the link to a dashboard page with its auto-refresh period.
func Href(page string, refresh int) string {
	u := "/sandbox/ui"
	if page != "payments" {
		u += "/" + page
	}
	if refresh != DefaultRefresh {
		u += "?refresh=" + strconv.Itoa(refresh)
	}
	return u
}

// PageToken is the form token of one payment's page: a keyed hash of its
// id under the per-process Token, so a page on another site, which can
// read neither, cannot forge the I-paid post.
func PageToken(id string) string {
	m := hmac.New(sha256.New, []byte(Token))
	m.Write([]byte("pay:" + id))
	return hex.EncodeToString(m.Sum(nil))
}

// PageSameOrigin is guard.SameOrigin for the payment page, whose no-referrer
// policy makes a browser send "Origin: null" on its own form: then the
// browser's Sec-Fetch-Site must say same-origin (and the token still
// decides).
func PageSameOrigin(r *http.Request) bool {
	if r.Header.Get("Origin") == "null" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	return guard.SameOrigin(r)
}

// pageTmpl is the hosted payment page: one column for a phone, the
// sandbox's own stylesheet and copy-button script, every value escaped by
// html/template. It works without JavaScript; only the copy buttons need it.
var pageTmpl = template.Must(template.ParseFS(uiFiles, "ui/pay.html"))

// Render writes the dashboard page d.Page with status, after the HTML
// headers every page carries.
func Render(w http.ResponseWriter, status int, d Data) {
	guard.SetHTMLHeaders(w, "same-origin") // the forms' Referer check needs it
	w.WriteHeader(status)
	uiTmpl[d.Page].Execute(w, d)
}

// RenderPay writes the payment page.
func RenderPay(w http.ResponseWriter, d PayData) {
	guard.SetHTMLHeaders(w, "no-referrer") // the payer's page names no one it came from
	pageTmpl.Execute(w, d)
}
