package api

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
	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Per-route caps on request bodies. A body over its route's cap is refused
// with 400 PAY_002 before it is buffered: the JSON routes carry a few
// hundred bytes, so 64 KiB is generous; bodiless routes (GETs, cancel,
// dispute cancel) get a token allowance for clients that send "{}";
// confirm carries the receipt plus multipart framing.
const (
	// JSONBodyCap is the cap of a route that takes a JSON body.
	JSONBodyCap = 64 << 10
	// NoBodyCap is the cap of a route that takes no body.
	NoBodyCap = 4 << 10
	// ConfirmBodyCap is confirm's cap: a receipt and its framing.
	ConfirmBodyCap = spec.MaxAttachmentSize + 64<<10
)

// DefaultRequestBodyTimeout is how long a request body may take to arrive
// when Config.RequestBodyTimeout is zero.
const DefaultRequestBodyTimeout = 30 * time.Second

// DefaultLargeBodyConcurrency is Config.LargeBodyConcurrency when zero.
const DefaultLargeBodyConcurrency = 4

// v1Handler serves one authenticated endpoint for the merchant of apiKey.
// It returns the success value (answered with 200) or an *Error.
type v1Handler func(r *http.Request, apiKey string, body []byte) (any, *Error)

// Routes registers the merchant API (/v1/) with each route's body cap,
// and the health endpoints. Go 1.22 patterns do the method and wildcard
// matching; {extId...} takes the rest of the path so that an ext_id sent
// with an unescaped slash still arrives whole.
func (a *API) Routes(mux *http.ServeMux) {
	v1 := func(pattern string, limit int64, h v1Handler) {
		a.caps[pattern] = limit
		mux.Handle(pattern, a.authenticated(limit, invalidCodeOf(pattern), h))
	}

	v1("POST /v1/payments", JSONBodyCap, a.createPayment)
	v1("GET /v1/payments/{id}", NoBodyCap, a.getPayment)
	v1("GET /v1/payments/by-ext-id/{extId...}", NoBodyCap, a.getPaymentByExtID)
	v1("POST /v1/payments/{id}/confirm", ConfirmBodyCap, a.confirmPayment)
	v1("POST /v1/payments/{id}/cancel", NoBodyCap, a.cancelPayment)
	v1("POST /v1/payments/{id}/dispute", JSONBodyCap, a.openDispute)
	v1("POST /v1/payments/{id}/dispute/cancel", NoBodyCap, a.cancelDispute)

	v1("POST /v1/payouts", JSONBodyCap, a.createPayout)
	v1("GET /v1/payouts", NoBodyCap, a.listPayouts)
	v1("GET /v1/payouts/{id}", NoBodyCap, a.getPayout)
	v1("GET /v1/payouts/by-ext-id/{extId...}", NoBodyCap, a.getPayoutByExtID)

	v1("GET /v1/terminals", NoBodyCap, a.listTerminals)
	v1("GET /v1/balance", NoBodyCap, a.getBalance)
	v1("GET /v1/banks", NoBodyCap, a.listBanks)
	v1("POST /v1/transfers", JSONBodyCap, a.createTransfer)

	v1("POST /v1/withdrawals", JSONBodyCap, a.createWithdrawal)
	v1("GET /v1/withdrawals/fee", NoBodyCap, a.getWithdrawalFee)
	v1("GET /v1/withdrawals/{id}", NoBodyCap, a.getWithdrawal)

	v1("/v1/", NoBodyCap, func(r *http.Request, _ string, _ []byte) (any, *Error) {
		return nil, NewError(http.StatusNotFound, spec.CodeNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})

	a.healthRoutes(mux)
	a.listenRoutes(mux)
}

// capFor is the body cap of a route pattern; routes outside /v1/ (the
// payment page) take no body worth reading.
func (a *API) capFor(pattern string) int64 {
	if c, ok := a.caps[pattern]; ok {
		return c
	}
	return NoBodyCap
}

// Pipeline is the sandbox's handler around mux (which Routes filled, with
// the sandbox's other routes): it answers the health endpoints first, runs
// what is due, then counts the request by its route, applies an injected
// fault if one matches, dispatches, and records the request. Faults never
// apply to /sandbox/ so that a test cannot lock itself out of the
// controls.
func (a *API) Pipeline(mux *http.ServeMux) http.Handler {
	return &v1Pipeline{a: a, mux: mux}
}

type v1Pipeline struct {
	a   *API
	mux *http.ServeMux
}

func (p *v1Pipeline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := p.a
	if r.URL.Path == HealthzPath || r.URL.Path == ReadyzPath { // no auth, no Host check, no fault, no log
		a.serveHealth(w, r)
		return
	}
	// Steps now due run first, so that a read made after a step's time
	// always sees it done (the timer may not have fired).
	a.b.CatchUp()
	start := time.Now()
	_, pattern := p.mux.Handler(r)
	sw := &v1StatusWriter{ResponseWriter: w}
	defer func() {
		a.b.Served(Served{Method: r.Method, Pattern: pattern, Path: r.URL.EscapedPath(), Status: sw.status,
			Code: sw.code, Fault: sw.fault, Duration: time.Since(start), Merchant: sw.merchant})
	}()
	if strings.HasPrefix(r.URL.Path, "/sandbox/") {
		p.mux.ServeHTTP(sw, r)
		return
	}
	f, hit := a.b.Arrived(r.Method, pattern, r.URL.EscapedPath())
	if !hit {
		p.mux.ServeHTTP(sw, r)
		return
	}
	sw.fault = f.Mode
	if f.Code == "" {
		f.Code = FaultCode(pattern)
	}
	a.serveFault(sw, r, f, a.capFor(pattern), invalidCodeOf(pattern), p.mux)
}

// v1StatusWriter remembers what a handler answered, for the request log.
// It unwraps for http.ResponseController, so hijacking (drop_after) and
// read deadlines still reach the connection.
type v1StatusWriter struct {
	http.ResponseWriter
	status   int
	code     string // error code of an error body
	fault    string // injected fault mode, if any
	merchant string // the API key the request was authenticated with
}

func (w *v1StatusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *v1StatusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *v1StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RecordCode keeps the error code WriteError answers with.
func (w *v1StatusWriter) RecordCode(code string) { w.code = code }

// RecordMerchant keeps the API key the request was authenticated with.
func (w *v1StatusWriter) RecordMerchant(key string) { w.merchant = key }

// authenticated checks X-Identity (an unknown key is refused before a
// byte of the body is read), reads the body under the route's cap and the
// body timeout, checks X-Signature over the exact bytes, and calls h. Any
// failure of authentication is 401 AUTH_001: the spec does not show this
// answer, so this is the sandbox's choice.
func (a *API) authenticated(limit int64, badBody string, h v1Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, body, ok := a.authenticate(w, r, limit, badBody)
		if !ok {
			return
		}
		v, aerr := h(r, key, body)
		if aerr == nil && r.Method == http.MethodGet && a.b.StoreFailed() != nil {
			// A read shows nothing once the store failed: what it read
			// may not be durable. A change's answer is its own section's
			// outcome (Backend: NotKept 503, MaybeKept 500), not the
			// store's state now, which a later section may have failed.
			aerr = StoreUnavailable()
		}
		if aerr != nil {
			WriteError(w, aerr)
			return
		}
		WriteJSON(w, http.StatusOK, v)
	})
}

// authenticate checks X-Identity (an unknown key is refused before a byte
// of the body is read), reads the body under limit and the body timeout,
// and checks X-Signature over the exact bytes; it answers a refusal
// itself and returns false. A store that failed is 503 here too.
func (a *API) authenticate(w http.ResponseWriter, r *http.Request, limit int64, badBody string) (string, []byte, bool) {
	key := r.Header.Get("X-Identity")
	signer, unsigned, aerr := a.identify(r, key)
	if aerr != nil {
		// The body stays unread: close rather than drain it.
		w.Header().Set("Connection", "close")
		WriteError(w, aerr)
		return "", nil, false
	}
	body, aerr := a.readBody(w, r, limit, badBody)
	if aerr != nil {
		WriteError(w, aerr)
		return "", nil, false
	}
	if aerr := verifySignature(signer, r, body); aerr != nil {
		if !unsigned {
			WriteError(w, aerr)
			return "", nil, false
		}
		a.acceptedUnsigned(key, r)
	}
	if mr, ok := w.(interface{ RecordMerchant(string) }); ok {
		mr.RecordMerchant(key) // for the request log: whose request it was
	}
	if a.b.StoreFailed() != nil {
		WriteError(w, StoreUnavailable())
		return "", nil, false
	}
	return key, body, true
}

// acceptedUnsigned warns the operator of a request served without a valid
// signature (its merchant accepts unsigned requests), one line per
// request: the key shown by its start, the path masked.
func (a *API) acceptedUnsigned(key string, r *http.Request) {
	if a.cfg.Logger == nil {
		return
	}
	a.cfg.Logger.Warn("request accepted without a valid signature (the merchant accepts unsigned requests)",
		slog.String("api_key", mask.Key(key)), slog.String("method", r.Method),
		slog.String("path", MaskedPath(r.URL.EscapedPath())))
}

// MaxLoggedPath bounds the length of a path as the logs keep it
// (MaskedPath).
const MaxLoggedPath = 256

// MaskedPath is an escaped request path as the sandbox's logs show it:
// its card and phone numbers masked (mask.Path), then cut at
// MaxLoggedPath bytes, after masking so that no number is cut too short
// to be masked.
func MaskedPath(escaped string) string {
	p := mask.Path(escaped)
	if len(p) > MaxLoggedPath {
		p = p[:MaxLoggedPath] + "..."
	}
	return p
}

// invalidCodeOf is the code a route answers an unreadable body with: each
// operation's own invalid-parameters code (TRF_001, WDR_001), PAY_002 for
// the rest. The spec lists no code for a body that cannot be read at all;
// this is the sandbox's choice.
func invalidCodeOf(pattern string) string {
	switch {
	case strings.HasSuffix(pattern, "/v1/transfers"):
		return spec.CodeTRF001
	case strings.HasSuffix(pattern, "/v1/withdrawals"):
		return spec.CodeWDR001
	}
	return spec.CodePAY002
}

// identify finds the credential of X-Identity. Both headers must be
// present, but for a merchant that accepts unsigned requests.
func (a *API) identify(r *http.Request, key string) (paykit.Signer, bool, *Error) {
	signer, unsigned, known := a.b.Credential(key)
	if key == "" || r.Header.Get("X-Signature") == "" && !unsigned {
		return nil, false, NewError(http.StatusUnauthorized, spec.CodeAUTH001, "missing X-Identity or X-Signature header")
	}
	if !known {
		return nil, false, NewError(http.StatusUnauthorized, spec.CodeAUTH001, "unknown API key or invalid signature")
	}
	return signer, unsigned, nil
}

func verifySignature(signer paykit.Signer, r *http.Request, body []byte) *Error {
	if len(body) == 0 {
		body = nil
	}
	want, err := signer.Sign(r, body)
	if err != nil || subtle.ConstantTimeCompare([]byte(want), []byte(r.Header.Get("X-Signature"))) != 1 {
		// What the sandbox signed, so a developer can compare it with what
		// their signer signed: never the secret or the expected signature.
		// (It tells that the key exists, which a sandbox can afford.)
		sum := sha256.Sum256(body)
		return NewError(http.StatusUnauthorized, spec.CodeAUTH001, fmt.Sprintf(
			"invalid signature: the sandbox signed method %s, request URI %s and a body of %d bytes with SHA-256 %s",
			r.Method, r.URL.RequestURI(), len(body), hex.EncodeToString(sum[:])))
	}
	return nil
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
func (a *API) readBody(w http.ResponseWriter, r *http.Request, limit int64, code string) ([]byte, *Error) {
	// A declared length cannot be exceeded (net/http stops there), so only
	// a large or undeclared (chunked) body takes a slot.
	if limit > largeBody && (r.ContentLength < 0 || r.ContentLength > largeBody) {
		// Wait a quarter of the body timeout: less than a stalled upload
		// may hold the slot, so a flood is refused rather than queued.
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.RequestBodyTimeout/4)
		ok := a.largeBodies.acquire(ctx)
		cancel()
		if !ok {
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "1")
			return nil, NewError(http.StatusServiceUnavailable, spec.CodeSandboxBusy, "too many large request bodies at once; try again")
		}
		defer a.largeBodies.release()
	}
	rc := http.NewResponseController(w)
	// A recorder or HTTP/2 stream without deadlines returns an error here;
	// the http.Server's ReadTimeout still bounds the body there.
	_ = rc.SetReadDeadline(time.Now().Add(a.cfg.RequestBodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		w.Header().Set("Connection", "close")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, Invalid(code, "body", fmt.Sprintf("request body is larger than this route's limit of %d bytes", limit))
		}
		return nil, Invalid(code, "body", "request body could not be read in time or was cut off")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// baseURL is the prefix of payment_url links for a request.
func (a *API) baseURL(r *http.Request) string {
	if a.cfg.BaseURL != "" {
		return strings.TrimRight(a.cfg.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// v1Semaphore is a counting semaphore whose acquire gives up when ctx
// ends.
type v1Semaphore chan struct{}

func (s v1Semaphore) acquire(ctx context.Context) bool {
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s v1Semaphore) release() { <-s }

// Patterns are the route patterns Routes registered under /v1/ (the
// catch-all included), in no order, for the tests that hold the routes
// and openapi.yaml together.
func (a *API) Patterns() []string {
	out := make([]string, 0, len(a.caps))
	for p := range a.caps {
		out = append(out, p)
	}
	return out
}
