package sandbox

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paykit-dev/paykit-go/internal/tokenstrength"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
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

// authResult is what checkAuth found.
type authResult int

const (
	authOK      authResult = iota
	authNone               // no credential: nothing to count
	authWrong              // a wrong bearer token, counted against the address
	authBlocked            // the address is blocked: already answered 429
)

// checkAuth reports whether r carries the control token: as the session
// cookie of a dashboard login, or as a bearer token. Both compare in
// constant time. A bearer token from an address blocked for its wrong
// guesses is not even compared: checkAuth answers 429 itself. A session
// cookie is an HMAC nobody guesses, so a wrong one (a stale login) is not
// counted, and a right one passes even from a blocked address (a team
// behind one NAT keeps its dashboard while a colleague's script fails).
func (s *Server) checkAuth(w http.ResponseWriter, r *http.Request) authResult {
	if c, err := r.Cookie(sessionCookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session())) == 1 {
		return authOK
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return authNone
	}
	addr := clientAddr(r)
	if wait := s.authFails.blocked(addr); wait > 0 {
		tooManyFailures(w, wait)
		return authBlocked
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.ControlToken)) == 1 {
		s.authFails.succeed(addr)
		return authOK
	}
	s.authFails.fail(addr, "bearer")
	return authWrong
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
		web.SetHTMLHeaders(w, "same-origin")
		loginTmpl.Execute(w, "")
	})
	mux.HandleFunc("POST /sandbox/login", func(w http.ResponseWriter, r *http.Request) {
		if !s.localRequest(r) || s.cfg.ControlToken == "" || !web.SameOrigin(r) {
			http.Error(w, "sandbox: login refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		tok := ""
		if r.ParseForm() == nil {
			tok = r.PostFormValue("token")
		}
		addr := clientAddr(r)
		if wait := s.authFails.blocked(addr); wait > 0 {
			secs := int((wait + time.Second - 1) / time.Second)
			web.SetHTMLHeaders(w, "same-origin")
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			w.WriteHeader(http.StatusTooManyRequests)
			loginTmpl.Execute(w, fmt.Sprintf("Too many wrong control tokens from this address: try again in %d s.", secs))
			return
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.ControlToken)) != 1 {
			s.authFails.fail(addr, "login")
			web.SetHTMLHeaders(w, "same-origin")
			w.WriteHeader(http.StatusUnauthorized)
			loginTmpl.Execute(w, "That is not this sandbox's control token.")
			return
		}
		s.authFails.succeed(addr)
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session(), Path: "/sandbox/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, "/sandbox/ui", http.StatusSeeOther)
	})
}

// Wrong control tokens are slowed per client address: the first
// authFreeFailures of a window cost nothing (a typo, a stale token in a
// script), then each further one blocks the address for twice as long as
// the last, up to authMaxBlock. During a block every credential from the
// address is answered 429 with Retry-After, the right one included, so
// guessing runs at a few tries per hour however fast the client sends.
const (
	authFreeFailures = 5
	authFirstBlock   = time.Second
	authMaxBlock     = 15 * time.Minute
	// authForget is how long an address's failures are remembered after
	// its last one (and after its block ends).
	authForget = time.Hour
	// authMaxAddrs bounds the table: past it, the entry whose last failure
	// is oldest goes, so a flood from many addresses costs memory once.
	authMaxAddrs = 4096
)

// authFailures counts wrong control tokens per client address. The clock
// is the real one (an Advance of the sandbox clock must not lift a block);
// tests replace now.
type authFailures struct {
	now    func() time.Time
	logger *slog.Logger

	mu    sync.Mutex
	addrs map[string]*authEntry
}

type authEntry struct {
	fails int
	last  time.Time // the last failure
	until time.Time // blocked until then
}

func newAuthFailures(logger *slog.Logger) *authFailures {
	return &authFailures{now: time.Now, logger: logger, addrs: map[string]*authEntry{}}
}

// clientAddr is the address failures are counted under: the peer's IP
// (never a header the client writes), an IPv6 one by its /64, which one
// host or subscriber usually holds whole.
func clientAddr(r *http.Request) string {
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
func (a *authFailures) blocked(addr string) time.Duration {
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
func (a *authFailures) fail(addr, via string) {
	now := a.now()
	a.mu.Lock()
	e := a.addrs[addr]
	if e != nil && now.Sub(e.last) > authForget && !now.Before(e.until.Add(authForget)) {
		e = nil // an old story: start over
	}
	if e == nil {
		if len(a.addrs) >= authMaxAddrs {
			a.evictLocked(now)
		}
		e = &authEntry{}
		a.addrs[addr] = e
	}
	e.fails++
	e.last = now
	var block time.Duration
	if n := e.fails - authFreeFailures; n > 0 {
		block = authMaxBlock
		if n <= 20 && authFirstBlock<<(n-1) < authMaxBlock {
			block = authFirstBlock << (n - 1)
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
func (a *authFailures) succeed(addr string) {
	a.mu.Lock()
	delete(a.addrs, addr)
	a.mu.Unlock()
}

// evictLocked drops the forgotten entries, or when none is, the one whose
// last failure is oldest.
func (a *authFailures) evictLocked(now time.Time) {
	var oldest string
	for k, e := range a.addrs {
		if now.Sub(e.last) > authForget && !now.Before(e.until.Add(authForget)) {
			delete(a.addrs, k)
			continue
		}
		if oldest == "" || e.last.Before(a.addrs[oldest].last) {
			oldest = k
		}
	}
	if len(a.addrs) >= authMaxAddrs {
		delete(a.addrs, oldest)
	}
}

// tooManyFailures answers a blocked address: 429 with Retry-After in
// whole seconds, rounded up.
func tooManyFailures(w http.ResponseWriter, wait time.Duration) {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	api.WriteError(w, api.NewError(http.StatusTooManyRequests, CodeControlUnauthorized,
		fmt.Sprintf("too many wrong control tokens from this address: try again in %d s", secs)))
}

// checkControlToken refuses a Config.ControlToken that is set but could be
// guessed (see package tokenstrength): with AllowRemote it is all that
// stands between the network and the sandbox's money.
func checkControlToken(tok string) error {
	if tok == "" {
		return nil
	}
	if err := tokenstrength.Check(tok); err != nil {
		return fmt.Errorf("%w: Config.ControlToken: %v", ErrInvalidArgument, err)
	}
	return nil
}
