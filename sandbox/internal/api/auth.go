package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"html/template"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// loginCookie holds a dashboard login: an HMAC of the control token, so
// the token itself never sits in a browser's cookie jar.
const loginCookie = "paykit_sandbox_session"

// localRequest reports whether r names the sandbox by a loopback Host:
// "localhost", an address in 127.0.0.0/8 or ::1, with or without a port.
// A browser sends the page's host name, so a DNS-rebinding page
// (evil.example resolving to 127.0.0.1) is refused even though it reaches
// the loopback socket. Always true with ControlConfig.AllowRemote.
func (c *ControlServer) localRequest(r *http.Request) bool {
	if c.cfg.AllowRemote {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// Guard admits a request to a control, an inspection endpoint or the
// dashboard, or answers the refusal itself and returns false: 403
// SANDBOX_FORBIDDEN for a webhook delivery or a Host that is not loopback
// (see localRequest), 401 (or a redirect to the login form for a
// dashboard page) without the control token when one is set, 429 for an
// address blocked for its wrong tokens, 415 SANDBOX_UNSUPPORTED_MEDIA_TYPE
// for a POST whose Content-Type is not application/json when requireJSON
// is set. Together they stop a web page the developer visits from driving
// the sandbox: it can neither pass a loopback Host through DNS rebinding
// nor send JSON cross-origin without a CORS preflight, which the sandbox
// never answers.
func (c *ControlServer) Guard(w http.ResponseWriter, r *http.Request, requireJSON bool) bool {
	if r.Header.Get("User-Agent") == webhook.UserAgent {
		// A webhook delivery pointed at the sandbox is never a command,
		// whatever dialled it.
		WriteError(w, NewError(http.StatusForbidden, CodeControlForbidden, "a webhook delivery is not a control request"))
		return false
	}
	if !c.localRequest(r) {
		WriteError(w, NewError(http.StatusForbidden, CodeControlForbidden,
			"the sandbox controls answer only a loopback Host (localhost, 127.0.0.1, [::1]); start it with remote control allowed to change this"))
		return false
	}
	// The dashboard's stylesheet and script are not secret, and the login
	// page needs them.
	public := strings.HasPrefix(r.URL.Path, "/sandbox/ui/assets/")
	if c.cfg.AllowRemote && c.cfg.ControlToken == "" && !public {
		WriteError(w, NewError(http.StatusForbidden, CodeControlForbidden,
			"remote control needs a control token: set Config.ControlToken (-control-token, PAYKIT_SANDBOX_CONTROL_TOKEN)"))
		return false
	}
	if c.cfg.ControlToken != "" && !public {
		switch c.checkToken(w, r) {
		case loginOK:
		case loginBlocked:
			return false
		default:
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/sandbox/ui") {
				http.Redirect(w, r, "/sandbox/login", http.StatusSeeOther)
				return false
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="paykit-sandbox"`)
			WriteError(w, NewError(http.StatusUnauthorized, CodeControlUnauthorized,
				"this sandbox needs its control token: send Authorization: Bearer TOKEN, or log in at /sandbox/login"))
			return false
		}
	}
	if requireJSON && r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			WriteError(w, NewError(http.StatusUnsupportedMediaType, CodeControlMediaType,
				"control requests need Content-Type: application/json"))
			return false
		}
	}
	return true
}

// loginSession is the cookie value a login with the control token sets.
func (c *ControlServer) loginSession() string {
	m := hmac.New(sha256.New, []byte(c.cfg.ControlToken))
	m.Write([]byte("paykit-sandbox dashboard session"))
	return hex.EncodeToString(m.Sum(nil))
}

// loginResult is what checkToken found.
type loginResult int

const (
	loginOK      loginResult = iota
	loginNone                // no credential: nothing to count
	loginWrong               // a wrong bearer token, counted against the address
	loginBlocked             // the address is blocked: already answered 429
)

// checkToken reports whether r carries the control token: as the session
// cookie of a dashboard login, or as a bearer token. Both compare in
// constant time. A bearer token from an address blocked for its wrong
// guesses is not even compared: checkToken answers 429 itself. A session
// cookie is an HMAC nobody guesses, so a wrong one (a stale login) is not
// counted, and a right one passes even from a blocked address (a team
// behind one NAT keeps its dashboard while a colleague's script fails).
func (c *ControlServer) checkToken(w http.ResponseWriter, r *http.Request) loginResult {
	if ck, err := r.Cookie(loginCookie); err == nil && subtle.ConstantTimeCompare([]byte(ck.Value), []byte(c.loginSession())) == 1 {
		return loginOK
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return loginNone
	}
	addr := loginClientAddr(r)
	if wait := c.fails.blocked(addr); wait > 0 {
		loginTooMany(w, wait)
		return loginBlocked
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(c.cfg.ControlToken)) == 1 {
		c.fails.succeed(addr)
		return loginOK
	}
	c.fails.fail(addr, "bearer")
	return loginWrong
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
func (c *ControlServer) LoginRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sandbox/login", func(w http.ResponseWriter, r *http.Request) {
		if !c.localRequest(r) || c.cfg.ControlToken == "" {
			http.Redirect(w, r, "/sandbox/ui", http.StatusSeeOther)
			return
		}
		web.SetHTMLHeaders(w, "same-origin")
		loginTmpl.Execute(w, "")
	})
	mux.HandleFunc("POST /sandbox/login", func(w http.ResponseWriter, r *http.Request) {
		if !c.localRequest(r) || c.cfg.ControlToken == "" || !web.SameOrigin(r) {
			http.Error(w, "sandbox: login refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		tok := ""
		if r.ParseForm() == nil {
			tok = r.PostFormValue("token")
		}
		addr := loginClientAddr(r)
		if wait := c.fails.blocked(addr); wait > 0 {
			secs := loginWaitSeconds(wait)
			web.SetHTMLHeaders(w, "same-origin")
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			w.WriteHeader(http.StatusTooManyRequests)
			loginTmpl.Execute(w, fmt.Sprintf("Too many wrong control tokens from this address: try again in %d s.", secs))
			return
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(c.cfg.ControlToken)) != 1 {
			c.fails.fail(addr, "login")
			web.SetHTMLHeaders(w, "same-origin")
			w.WriteHeader(http.StatusUnauthorized)
			loginTmpl.Execute(w, "That is not this sandbox's control token.")
			return
		}
		c.fails.succeed(addr)
		http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: c.loginSession(), Path: "/sandbox/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, "/sandbox/ui", http.StatusSeeOther)
	})
}

// Wrong control tokens are slowed per client address: the first
// loginFreeFailures of a window cost nothing (a typo, a stale token in a
// script), then each further one blocks the address for twice as long as
// the last, up to loginMaxBlock. During a block every credential from the
// address is answered 429 with Retry-After, the right one included, so
// guessing runs at a few tries per hour however fast the client sends.
const (
	loginFreeFailures = 5
	loginFirstBlock   = time.Second
	loginMaxBlock     = 15 * time.Minute
	// loginForget is how long an address's failures are remembered after
	// its last one (and after its block ends).
	loginForget = time.Hour
	// loginMaxAddrs bounds the table: past it, the entry whose last
	// failure is oldest goes, so a flood from many addresses costs memory
	// once.
	loginMaxAddrs = 4096
)

// loginFailures counts wrong control tokens per client address, on the
// wall clock now.
type loginFailures struct {
	now    func() time.Time
	logger *slog.Logger

	mu    sync.Mutex
	addrs map[string]*loginEntry
}

type loginEntry struct {
	fails int
	last  time.Time // the last failure
	until time.Time // blocked until then
}

func newLoginFailures(now func() time.Time, logger *slog.Logger) *loginFailures {
	return &loginFailures{now: now, logger: logger, addrs: map[string]*loginEntry{}}
}

// loginClientAddr is the address failures are counted under: the peer's
// IP (never a header the client writes), an IPv6 one by its /64, which one
// host or subscriber usually holds whole.
func loginClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// blocked returns how long addr must still wait, or 0.
func (a *loginFailures) blocked(addr string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.addrs[addr]
	if e == nil {
		return 0
	}
	return max(e.until.Sub(a.now()), 0)
}

// fail records a wrong token from addr and logs it (the address, the count
// and the block; never the token).
func (a *loginFailures) fail(addr, via string) {
	now := a.now()
	a.mu.Lock()
	e := a.addrs[addr]
	if e != nil && now.Sub(e.last) > loginForget && !now.Before(e.until.Add(loginForget)) {
		e = nil // an old story: start over
	}
	if e == nil {
		if len(a.addrs) >= loginMaxAddrs {
			a.evictLocked(now)
		}
		e = &loginEntry{}
		a.addrs[addr] = e
	}
	e.fails++
	e.last = now
	var block time.Duration
	if n := e.fails - loginFreeFailures; n > 0 {
		block = loginMaxBlock
		if n <= 20 && loginFirstBlock<<(n-1) < loginMaxBlock {
			block = loginFirstBlock << (n - 1)
		}
		e.until = now.Add(block)
	}
	fails := e.fails
	a.mu.Unlock()
	if a.logger != nil {
		a.logger.LogAttrs(context.Background(), slog.LevelWarn, "wrong control token",
			slog.String("client", addr), slog.String("via", via), slog.Int("failures", fails),
			slog.String("blocked_for", block.String()))
	}
}

// succeed forgets addr's failures: its holder knows the token.
func (a *loginFailures) succeed(addr string) {
	a.mu.Lock()
	delete(a.addrs, addr)
	a.mu.Unlock()
}

// evictLocked drops the forgotten entries, or when none is, the one whose
// last failure is oldest.
func (a *loginFailures) evictLocked(now time.Time) {
	var oldest string
	for k, e := range a.addrs {
		if now.Sub(e.last) > loginForget && !now.Before(e.until.Add(loginForget)) {
			delete(a.addrs, k)
			continue
		}
		if oldest == "" || e.last.Before(a.addrs[oldest].last) {
			oldest = k
		}
	}
	if len(a.addrs) >= loginMaxAddrs {
		delete(a.addrs, oldest)
	}
}

// loginWaitSeconds is a block's rest in whole seconds, rounded up, as
// Retry-After says it.
func loginWaitSeconds(wait time.Duration) int {
	return int((wait + time.Second - 1) / time.Second)
}

// loginTooMany answers a blocked address: 429 with Retry-After.
func loginTooMany(w http.ResponseWriter, wait time.Duration) {
	secs := loginWaitSeconds(wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	WriteError(w, NewError(http.StatusTooManyRequests, CodeControlUnauthorized,
		fmt.Sprintf("too many wrong control tokens from this address: try again in %d s", secs)))
}
