package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
)

// sessionCookie holds a dashboard login: an HMAC of the control token, so
// the token itself never sits in a browser's cookie jar.
const sessionCookie = "paykit_sandbox_session"

// session is the cookie value a login with the control token sets.
func (s *Server) session() string {
	m := hmac.New(sha256.New, []byte(s.cfg.ControlToken))
	m.Write([]byte("paykit-sandbox dashboard session"))
	return hex.EncodeToString(m.Sum(nil))
}

// authorized reports whether r carries the control token: as a bearer
// token, or as the session cookie of a dashboard login. Both compare in
// constant time.
func (s *Server) authorized(r *http.Request) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.ControlToken)) == 1 {
		return true
	}
	c, err := r.Cookie(sessionCookie)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session())) == 1
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

// loginRoutes serve the dashboard's login: a form that takes the control
// token and sets an HttpOnly, SameSite=Strict session cookie. Without a
// control token there is nothing to log in to, and the dashboard opens.
func (s *Server) loginRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sandbox/login", func(w http.ResponseWriter, r *http.Request) {
		if !s.localRequest(r) || s.cfg.ControlToken == "" {
			http.Redirect(w, r, "/sandbox/ui", http.StatusSeeOther)
			return
		}
		setHTMLHeaders(w, "same-origin")
		loginTmpl.Execute(w, "")
	})
	mux.HandleFunc("POST /sandbox/login", func(w http.ResponseWriter, r *http.Request) {
		if !s.localRequest(r) || s.cfg.ControlToken == "" || !sameOrigin(r) {
			http.Error(w, "sandbox: login refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		tok := ""
		if r.ParseForm() == nil {
			tok = r.PostFormValue("token")
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.ControlToken)) != 1 {
			setHTMLHeaders(w, "same-origin")
			w.WriteHeader(http.StatusUnauthorized)
			loginTmpl.Execute(w, "That is not this sandbox's control token.")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session(), Path: "/sandbox/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, "/sandbox/ui", http.StatusSeeOther)
	})
}
