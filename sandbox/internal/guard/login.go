package guard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// SessionCookie holds a dashboard login: an HMAC of the control token, so
// the token itself never sits in a browser's cookie jar.
const SessionCookie = "paykit_sandbox_session"

// Session is the value of the cookie a login with the control token sets.
func (g *Guard) Session() string {
	m := hmac.New(sha256.New, []byte(g.cfg.ControlToken))
	m.Write([]byte("paykit-sandbox dashboard session"))
	return hex.EncodeToString(m.Sum(nil))
}

// tokenResult is what checkToken found.
type tokenResult int

const (
	tokenOK        tokenResult = iota
	tokenNone                  // no credential: nothing to count
	tokenWrong                 // a wrong bearer token, counted against the address
	tokenThrottled             // a wrong token from a blocked address: already answered 429
)

// checkToken reports whether r carries the control token: as the session
// cookie of a dashboard login, or as a bearer token, each compared in
// constant time and first, before any throttling: the right token always
// passes, from any address, however many wrong ones came from it (behind
// a reverse proxy, a NAT or one IPv6 /64 a stranger's guesses share the
// operator's address). Only a wrong bearer token is throttled: from an
// address blocked for its wrong guesses it is answered 429 (checkToken
// answers it itself), else counted. A session cookie is an HMAC nobody
// guesses, so a wrong one (a stale login) is not counted.
func (g *Guard) checkToken(w http.ResponseWriter, r *http.Request) tokenResult {
	if ck, err := r.Cookie(SessionCookie); err == nil && subtle.ConstantTimeCompare([]byte(ck.Value), []byte(g.Session())) == 1 {
		return tokenOK
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return tokenNone
	}
	if g.right(strings.TrimSpace(tok)) {
		return tokenOK
	}
	addr := clientAddr(r)
	if wait := g.fails.blocked(addr); wait > 0 {
		secs := waitSeconds(wait)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		g.cfg.Refuse(w, http.StatusTooManyRequests, CodeUnauthorized,
			fmt.Sprintf("too many wrong control tokens from this address: try again in %d s", secs))
		return tokenThrottled
	}
	g.fails.fail(addr, "bearer")
	return tokenWrong
}

// right compares tok with the control token in constant time.
func (g *Guard) right(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(g.cfg.ControlToken)) == 1
}

var loginTmpl = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>paykit sandbox: log in</title><link rel="stylesheet" href="/sandbox/ui/assets/style.css"></head>
<body><main class="login"><h1>paykit sandbox</h1>
<p>This sandbox is shared: enter its control token to open the dashboard.</p>
{{if .}}<p class="error" role="alert">{{.}}</p>{{end}}
<form method="post" action="/sandbox/login">
<label for="token">Control token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit" id="login">Log in</button>
</form></main></body></html>`))

// LoginRoutes serve the dashboard's login: a form that takes the control
// token and sets an HttpOnly, SameSite=Strict session cookie. Without a
// control token there is nothing to log in to, and the dashboard opens.
func (g *Guard) LoginRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sandbox/login", func(w http.ResponseWriter, r *http.Request) {
		if !g.Local(r) || g.cfg.ControlToken == "" {
			http.Redirect(w, r, "/sandbox/ui", http.StatusSeeOther)
			return
		}
		SetHTMLHeaders(w, "same-origin")
		loginTmpl.Execute(w, "")
	})
	mux.HandleFunc("POST /sandbox/login", func(w http.ResponseWriter, r *http.Request) {
		if !g.Local(r) || g.cfg.ControlToken == "" || !SameOrigin(r) {
			http.Error(w, "sandbox: login refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		tok := ""
		if r.ParseForm() == nil {
			tok = r.PostFormValue("token")
		}
		// The right token first, as for a bearer token: a blocked
		// address throttles guesses, never the operator's login.
		if !g.right(tok) {
			addr := clientAddr(r)
			SetHTMLHeaders(w, "same-origin")
			if wait := g.fails.blocked(addr); wait > 0 {
				secs := waitSeconds(wait)
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				w.WriteHeader(http.StatusTooManyRequests)
				loginTmpl.Execute(w, fmt.Sprintf("Too many wrong control tokens from this address: try again in %d s.", secs))
				return
			}
			g.fails.fail(addr, "login")
			w.WriteHeader(http.StatusUnauthorized)
			loginTmpl.Execute(w, "That is not this sandbox's control token.")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: g.Session(), Path: "/sandbox/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, "/sandbox/ui", http.StatusSeeOther)
	})
}
