// Package web is the sandbox's browser face: the dashboard's and the
// payment page's templates, stylesheet and script, the words they speak,
// the rendering of both from view structs (Data, PayData), and their routes:
// the guards (loopback Host through the Backend, same origin, form token)
// and the parsing of every form. It never imports package sandbox: what a
// page shows and what a form does come from a Backend, which package
// sandbox implements with the controls the JSON API and the Go API use.
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
	"net/url"
	"strconv"
	"strings"
)

//go:embed ui
var uiFiles embed.FS

// Assets holds the stylesheet and the script, shared by the dashboard and
// the hosted payment page: no CDN, nothing fetched from elsewhere.
var Assets, _ = fs.Sub(uiFiles, "ui/assets")

// CSP is the Content-Security-Policy of every HTML page the sandbox
// serves: only its own stylesheet and script, forms only to itself, never
// framed (no clickjacking of the action buttons).
const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

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

// SameOrigin tells a form posted by a page of this sandbox from one posted
// by another site. Browsers send Sec-Fetch-Site and Origin on every POST;
// Referer is the fallback for old ones. A request with none of them comes
// from a non-browser client, which the token alone has to convince.
func SameOrigin(r *http.Request) bool {
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

// SetHTMLHeaders sets the headers of every HTML page the sandbox serves:
// never cached, scripts and styles only from the sandbox itself (CSP),
// no type sniffing, and the given referrer policy.
func SetHTMLHeaders(w http.ResponseWriter, referrerPolicy string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", referrerPolicy)
}

// PageToken is the form token of one payment's page: a keyed hash of its
// id under the per-process Token, so a page on another site, which can
// read neither, cannot forge the I-paid post.
func PageToken(id string) string {
	m := hmac.New(sha256.New, []byte(Token))
	m.Write([]byte("pay:" + id))
	return hex.EncodeToString(m.Sum(nil))
}

// PageSameOrigin is SameOrigin for the payment page, whose no-referrer
// policy makes a browser send "Origin: null" on its own form: then the
// browser's Sec-Fetch-Site must say same-origin (and the token still
// decides).
func PageSameOrigin(r *http.Request) bool {
	if r.Header.Get("Origin") == "null" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	return SameOrigin(r)
}

// pageTmpl is the hosted payment page: one column for a phone, the
// sandbox's own stylesheet and copy-button script, every value escaped by
// html/template. It works without JavaScript; only the copy buttons need it.
var pageTmpl = template.Must(template.ParseFS(uiFiles, "ui/pay.html"))

// Render writes the dashboard page d.Page with status, after the HTML
// headers every page carries.
func Render(w http.ResponseWriter, status int, d Data) {
	SetHTMLHeaders(w, "same-origin") // the forms' Referer check needs it
	w.WriteHeader(status)
	uiTmpl[d.Page].Execute(w, d)
}

// RenderPay writes the payment page.
func RenderPay(w http.ResponseWriter, d PayData) {
	SetHTMLHeaders(w, "no-referrer") // the payer's page names no one it came from
	pageTmpl.Execute(w, d)
}
