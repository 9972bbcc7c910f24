// Package guard admits the requests that drive or read the sandbox from
// outside the merchant API: the /sandbox/ controls, the inspection views
// and the dashboard. It holds the loopback-Host rule (DNS rebinding), the
// control token (a bearer token, or the session cookie of the dashboard's
// login page, which it serves too), the throttling of wrong tokens, the
// JSON rule of a control POST, and the same-origin and HTML-header rules
// the sandbox's pages share.
//
// It is a leaf: it imports nothing of the sandbox, so both package api
// (the controls) and package web (the dashboard) use it without either
// importing the other. How a refusal is written is the caller's
// (Config.Refuse): the controls answer in the API's error body.
package guard

import (
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// The error codes of the guard's refusals. Package api re-exports them as
// its CodeControl* constants, and package sandbox as its own.
const (
	// CodeForbidden (403) refuses a webhook delivery, or a request whose
	// Host is not loopback while remote control is off, or remote control
	// without a control token.
	CodeForbidden = "SANDBOX_FORBIDDEN"
	// CodeMediaType (415) refuses a control POST without Content-Type:
	// application/json: a web page can send text/plain or a form
	// cross-origin without a preflight, but not JSON.
	CodeMediaType = "SANDBOX_UNSUPPORTED_MEDIA_TYPE"
	// CodeUnauthorized (401, and 429 for a wrong token from an address
	// throttled for its wrong tokens) refuses a request without the
	// control token.
	CodeUnauthorized = "SANDBOX_UNAUTHORIZED"
)

// Config is what the guard takes from the sandbox's configuration.
type Config struct {
	// AllowRemote lifts the loopback Host check (and then requires
	// ControlToken).
	AllowRemote bool
	// ControlToken, when set, is required on every control, inspection
	// and dashboard request.
	ControlToken string
	// Logger receives a line per wrong control token counted (the client
	// address, never the token); nil logs nothing.
	Logger *slog.Logger
	// Now is the wall clock of the throttling; nil is time.Now. It is
	// never the sandbox clock: an Advance must not lift a block.
	Now func() time.Time
	// Refuse writes a refusal of a JSON route: status, code and message.
	// Package api writes its error body with it; nil writes the code and
	// message as plain text. The guard sets its headers (Retry-After,
	// WWW-Authenticate) before calling it.
	Refuse func(w http.ResponseWriter, status int, code, msg string)
	// DeliveryAgent is the User-Agent of the sandbox's own webhook
	// deliveries: one pointed at the sandbox is never a command, whatever
	// dialled it. Empty checks nothing.
	DeliveryAgent string
}

// Guard admits the control, inspection and dashboard requests and serves
// the dashboard's login. One Guard serves all of them, so a wrong token
// counts the same wherever it is tried.
type Guard struct {
	cfg   Config
	fails *failures
}

// New returns the guard of cfg.
func New(cfg Config) *Guard {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.Refuse == nil {
		cfg.Refuse = func(w http.ResponseWriter, status int, code, msg string) {
			http.Error(w, code+": "+msg, status)
		}
	}
	return &Guard{cfg: cfg, fails: newFailures(now, cfg.Logger)}
}

// Local reports whether r names the sandbox by a loopback Host:
// "localhost", an address in 127.0.0.0/8 or ::1, with or without a port.
// A browser sends the page's host name, so a DNS-rebinding page
// (evil.example resolving to 127.0.0.1) is refused even though it reaches
// the loopback socket. Always true with Config.AllowRemote.
func (g *Guard) Local(r *http.Request) bool {
	if g.cfg.AllowRemote {
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

// Admit admits a request to a control, an inspection endpoint or the
// dashboard, or answers the refusal itself and returns false: 403
// CodeForbidden for a webhook delivery or a Host that is not loopback
// (see Local), 401 (or a redirect to the login form for a dashboard page)
// without the control token when one is set, 429 for a wrong token from an
// address throttled for its wrong tokens (the right token always passes),
// 415 CodeMediaType for a POST whose Content-Type is not application/json
// when requireJSON is set. Together they stop a web page the developer
// visits from driving the sandbox: it can neither pass a loopback Host
// through DNS rebinding nor send JSON cross-origin without a CORS
// preflight, which the sandbox never answers.
func (g *Guard) Admit(w http.ResponseWriter, r *http.Request, requireJSON bool) bool {
	if g.cfg.DeliveryAgent != "" && r.Header.Get("User-Agent") == g.cfg.DeliveryAgent {
		g.cfg.Refuse(w, http.StatusForbidden, CodeForbidden, "a webhook delivery is not a control request")
		return false
	}
	if !g.Local(r) {
		g.cfg.Refuse(w, http.StatusForbidden, CodeForbidden,
			"the sandbox controls answer only a loopback Host (localhost, 127.0.0.1, [::1]); start it with remote control allowed to change this")
		return false
	}
	// The dashboard's stylesheet and script are not secret, and the login
	// page needs them.
	public := strings.HasPrefix(r.URL.Path, "/sandbox/ui/assets/")
	if g.cfg.AllowRemote && g.cfg.ControlToken == "" && !public {
		g.cfg.Refuse(w, http.StatusForbidden, CodeForbidden,
			"remote control needs a control token: set Config.ControlToken (-control-token, PAYKIT_SANDBOX_CONTROL_TOKEN)")
		return false
	}
	if g.cfg.ControlToken != "" && !public {
		switch g.checkToken(w, r) {
		case tokenOK:
		case tokenThrottled:
			return false
		default:
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/sandbox/ui") {
				http.Redirect(w, r, "/sandbox/login", http.StatusSeeOther)
				return false
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="paykit-sandbox"`)
			g.cfg.Refuse(w, http.StatusUnauthorized, CodeUnauthorized,
				"this sandbox needs its control token: send Authorization: Bearer TOKEN, or log in at /sandbox/login")
			return false
		}
	}
	if requireJSON && r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			g.cfg.Refuse(w, http.StatusUnsupportedMediaType, CodeMediaType,
				"control requests need Content-Type: application/json")
			return false
		}
	}
	return true
}

// CSP is the Content-Security-Policy of every HTML page the sandbox
// serves: only its own stylesheet and script, forms only to itself, never
// framed (no clickjacking of the action buttons).
const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// SetHTMLHeaders sets the headers of every HTML page the sandbox serves
// (the login page here, the dashboard and the payment page in package
// web): never cached, scripts and styles only from the sandbox itself
// (CSP), no type sniffing, and the given referrer policy.
func SetHTMLHeaders(w http.ResponseWriter, referrerPolicy string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", referrerPolicy)
}

// SameOrigin tells a form posted by a page of this sandbox from one posted
// by another site. Browsers send Sec-Fetch-Site and Origin on every POST;
// Referer is the fallback for old ones. A request with none of them comes
// from a non-browser client, which the form's token alone has to convince.
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
