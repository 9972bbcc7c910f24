package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// Per-route caps on request bodies. A body over its route's cap is refused
// with 400 PAY_002 before it is buffered: the JSON routes carry a few
// hundred bytes, so 64 KiB is generous; bodiless routes (GETs, cancel,
// dispute cancel) get a token allowance for clients that send "{}";
// confirm carries the receipt plus multipart framing.
const (
	jsonBodyCap    = 64 << 10
	noBodyCap      = 4 << 10
	confirmBodyCap = maxReceiptBytes + 64<<10
)

// DefaultRequestBodyTimeout is how long a request body may take to arrive
// when Config.RequestBodyTimeout is zero.
const DefaultRequestBodyTimeout = 30 * time.Second

// apiHandler serves one authenticated endpoint. It returns the success
// value (answered with 200) or an *api.Error.
type apiHandler func(r *http.Request, m *merchant, body []byte) (any, *api.Error)

// routes registers every endpoint with its body cap. Go 1.22 patterns do
// the method and wildcard matching; {extId...} takes the rest of the path
// so that an ext_id sent with an unescaped slash still arrives whole.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	s.caps = map[string]int64{}
	v1 := func(pattern string, limit int64, h apiHandler) {
		s.caps[pattern] = limit
		mux.Handle(pattern, s.authenticated(limit, invalidCodeOf(pattern), h))
	}

	v1("POST /v1/payments", jsonBodyCap, s.createPayment)
	v1("GET /v1/payments/{id}", noBodyCap, s.getPayment)
	v1("GET /v1/payments/by-ext-id/{extId...}", noBodyCap, s.getPaymentByExtID)
	v1("POST /v1/payments/{id}/confirm", confirmBodyCap, s.confirmPayment)
	v1("POST /v1/payments/{id}/cancel", noBodyCap, s.cancelPayment)
	v1("POST /v1/payments/{id}/dispute", jsonBodyCap, s.openDispute)
	v1("POST /v1/payments/{id}/dispute/cancel", noBodyCap, s.cancelDispute)

	v1("POST /v1/payouts", jsonBodyCap, s.createPayout)
	v1("GET /v1/payouts", noBodyCap, s.listPayouts)
	v1("GET /v1/payouts/{id}", noBodyCap, s.getPayout)
	v1("GET /v1/payouts/by-ext-id/{extId...}", noBodyCap, s.getPayoutByExtID)

	v1("GET /v1/terminals", noBodyCap, s.listTerminals)
	v1("GET /v1/balance", noBodyCap, s.getBalance)
	v1("GET /v1/banks", noBodyCap, s.listBanks)
	v1("POST /v1/transfers", jsonBodyCap, s.createTransfer)

	v1("POST /v1/withdrawals", jsonBodyCap, s.createWithdrawal)
	v1("GET /v1/withdrawals/fee", noBodyCap, s.getWithdrawalFee)
	v1("GET /v1/withdrawals/{id}", noBodyCap, s.getWithdrawal)

	v1("/v1/", noBodyCap, func(r *http.Request, _ *merchant, _ []byte) (any, *api.Error) {
		return nil, api.NewError(http.StatusNotFound, "NOT_FOUND", "no such endpoint: "+r.Method+" "+r.URL.Path)
	})

	s.ctl.ControlRoutes(mux) // the /sandbox/ controls (controls.go's controlBackend)
	s.ctl.LoginRoutes(mux)
	web.Routes(mux, webBackend{s}) // the payment page and the dashboard at /sandbox/ui (ui.go)
	s.ctl.InspectionRoutes(mux)
	api.OpenAPIRoutes(mux, openapiYAML)
	s.healthRoutes(mux)
	return mux
}

// ServeHTTP answers the health endpoints first (health.go), runs the
// autopilot steps now due, then counts the request by its route, applies an
// injected fault if one matches, dispatches, and records the request (the
// ring behind GET /sandbox/requests and, with Config.Logger, one log line).
// Faults never apply to /sandbox/ so that a test cannot lock itself out of
// the controls.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.self.Learn(r)          // even a probe names an address webhooks must not dial
	if s.serveHealth(w, r) { // /healthz, /readyz: no auth, no Host check, no fault, no log (health.go)
		return
	}
	if s.pilot != nil {
		// Autopilot steps now due run first, so that a read made after a
		// step's time always sees it done (the timer may not have fired).
		s.pilot.RunDue(s.Now())
	}
	start := time.Now()
	_, pattern := s.mux.Handler(r)
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.recordRequest(r, pattern, sw, time.Since(start)) }()
	if strings.HasPrefix(r.URL.Path, "/sandbox/") {
		s.mux.ServeHTTP(sw, r)
		return
	}
	f := s.takeFault(r, pattern)
	if f == nil {
		s.mux.ServeHTTP(sw, r)
		return
	}
	sw.fault = f.Mode
	s.serveFault(sw, r, f, s.capFor(pattern))
}

// capFor is the body cap of a route pattern; routes outside /v1/ (the
// payment page) take no body worth reading.
func (s *Server) capFor(pattern string) int64 {
	if c, ok := s.caps[pattern]; ok {
		return c
	}
	return noBodyCap
}

// statusWriter remembers what a handler answered, for the request log. It
// unwraps for http.ResponseController, so hijacking (drop_after) and read
// deadlines still reach the connection.
type statusWriter struct {
	http.ResponseWriter
	status int
	code   string // error code of an error body
	fault  string // injected fault mode, if any
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RecordCode keeps the error code api.WriteError answers with.
func (w *statusWriter) RecordCode(code string) { w.code = code }

// authenticated checks X-Identity (an unknown key is refused before a
// byte of the body is read), reads the body under the route's cap and the
// body timeout, checks X-Signature over the exact bytes, and calls h. Any
// failure of authentication is 401 AUTH_001: the spec does not show this
// answer, so this is the sandbox's choice.
func (s *Server) authenticated(limit int64, badBody string, h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, cred, aerr := s.identify(r)
		if aerr != nil {
			// The body stays unread: close rather than drain it.
			w.Header().Set("Connection", "close")
			api.WriteError(w, aerr)
			return
		}
		body, aerr := s.readBody(w, r, limit, badBody)
		if aerr != nil {
			api.WriteError(w, aerr)
			return
		}
		if aerr := verifySignature(cred.signer, r, body); aerr != nil {
			if !cred.unsigned {
				api.WriteError(w, aerr)
				return
			}
			if l := s.cfg.Logger; l != nil {
				l.Warn("request accepted without a valid signature (the merchant accepts unsigned requests)",
					slog.String("api_key", maskKey(m.APIKey)), slog.String("method", r.Method),
					slog.String("path", maskPath(r.URL.EscapedPath())))
			}
		}
		if s.storeFailed() != nil {
			api.WriteError(w, api.StoreUnavailable())
			return
		}
		v, aerr := h(r, m, body)
		if s.storeFailed() != nil { // this request's commit failed: nothing it did is kept
			aerr = api.StoreUnavailable()
		}
		if aerr != nil {
			api.WriteError(w, aerr)
			return
		}
		api.WriteJSON(w, http.StatusOK, v)
	})
}

// invalidCodeOf is the code a route answers an unreadable body with: each
// operation's own invalid-parameters code (TRF_001, WDR_001), PAY_002 for
// the rest. The spec lists no code for a body that cannot be read at all;
// this is the sandbox's choice.
func invalidCodeOf(pattern string) string {
	switch {
	case strings.HasSuffix(pattern, "/v1/transfers"):
		return "TRF_001"
	case strings.HasSuffix(pattern, "/v1/withdrawals"):
		return "WDR_001"
	}
	return "PAY_002"
}

// largeBody is the size above which a body takes a slot of
// Config.LargeBodyConcurrency while it is read.
const largeBody = 1 << 20

// readBody reads the whole body under limit and Config.RequestBodyTimeout,
// and leaves a re-readable copy in r.Body. A body over the cap, cut off
// or too slow is 400 with code (the route's invalid-parameters code, not
// 413, which the spec never uses). A route that takes large bodies
// (confirm's receipt) reads at most Config.LargeBodyConcurrency of them at
// once, so that a flood of 10 MB uploads (with a bad signature, say) cannot
// pin memory; one that finds no slot within a quarter of the body timeout
// is 503.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64, code string) ([]byte, *api.Error) {
	// A declared length cannot be exceeded (net/http stops there), so only
	// a large or undeclared (chunked) body takes a slot.
	if limit > largeBody && (r.ContentLength < 0 || r.ContentLength > largeBody) {
		// Wait a quarter of the body timeout: less than a stalled upload
		// may hold the slot, so a flood is refused rather than queued.
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestBodyTimeout/4)
		ok := s.largeBodies.acquire(ctx)
		cancel()
		if !ok {
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "1")
			return nil, api.NewError(http.StatusServiceUnavailable, "SANDBOX_BUSY", "too many large request bodies at once; try again")
		}
		defer s.largeBodies.release()
	}
	rc := http.NewResponseController(w)
	// A recorder or HTTP/2 stream without deadlines returns an error here;
	// the http.Server's ReadTimeout still bounds the body there.
	_ = rc.SetReadDeadline(time.Now().Add(s.cfg.RequestBodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		w.Header().Set("Connection", "close")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, api.Invalid(code, "body", fmt.Sprintf("request body is larger than this route's limit of %d bytes", limit))
		}
		return nil, api.Invalid(code, "body", "request body could not be read in time or was cut off")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// identify finds the merchant of X-Identity. Both headers must be present.
func (s *Server) identify(r *http.Request) (*merchant, credential, *api.Error) {
	key := r.Header.Get("X-Identity")
	cred, known := s.creds[key] // fixed at Open: read without the lock
	if key == "" || r.Header.Get("X-Signature") == "" && !cred.unsigned {
		return nil, cred, api.NewError(http.StatusUnauthorized, "AUTH_001", "missing X-Identity or X-Signature header")
	}
	if !known {
		return nil, cred, api.NewError(http.StatusUnauthorized, "AUTH_001", "unknown API key or invalid signature")
	}
	s.lock()
	m := s.merchants[key]
	s.unlock()
	return m, cred, nil
}

// credential is how one merchant's requests are authenticated: fixed by
// the configuration, never reset or stored.
type credential struct {
	signer   paykit.Signer // Merchant.Signer, or HMACSigner(Merchant.Secret)
	unsigned bool          // Merchant.AcceptUnsigned
}

func verifySignature(signer paykit.Signer, r *http.Request, body []byte) *api.Error {
	if len(body) == 0 {
		body = nil
	}
	want, err := signer.Sign(r, body)
	if err != nil || subtle.ConstantTimeCompare([]byte(want), []byte(r.Header.Get("X-Signature"))) != 1 {
		// What the sandbox signed, so a developer can compare it with what
		// their signer signed: never the secret or the expected signature.
		// (It tells that the key exists, which a sandbox can afford.)
		sum := sha256.Sum256(body)
		return api.NewError(http.StatusUnauthorized, "AUTH_001", fmt.Sprintf(
			"invalid signature: the sandbox signed method %s, request URI %s and a body of %d bytes with SHA-256 %s",
			r.Method, r.URL.RequestURI(), len(body), hex.EncodeToString(sum[:])))
	}
	return nil
}

// baseURL is the prefix of payment_url links for a request.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimRight(s.cfg.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// semaphore is a counting semaphore whose acquire gives up when ctx ends.
type semaphore chan struct{}

func (s semaphore) acquire(ctx context.Context) bool {
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s semaphore) release() { <-s }
