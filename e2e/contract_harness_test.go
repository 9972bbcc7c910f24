package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// docPath is the committed document: the one the contract is about.
const docPath = "../openapi.yaml"

// loadDoc loads and validates the document. Validation is part of every
// contract test: a document kin-openapi rejects proves nothing.
func loadDoc(t testing.TB) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(docPath)
	if err != nil {
		t.Fatalf("loading %s: %v", docPath, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", docPath, err)
	}
	return doc
}

// contract validates every exchange between a client and a served handler
// against the document: requests on the client side, as the client sent
// them (clientTransport), and responses on the server side, as the handler
// wrote them (wrap). It also records which (operation, status, error code)
// triples were seen, so a test can prove it exercised what the document
// promises.
type contract struct {
	t      *testing.T
	doc    *openapi3.T
	router routers.Router
	base   *url.URL // the server's address

	mu        sync.Mutex
	requests  int                 // client-side requests validated
	responses int                 // server-side responses validated
	webhooks  int                 // webhook deliveries validated
	seen      map[string]int      // outcome key -> count, see outcomeKey
	failures  map[string][]string // kind of failure -> masked messages, for invalidRequest tests
}

// newContract builds the validator for a server at baseURL. The router is
// built from a copy of the document whose only server is baseURL, because
// kin-openapi routes by the document's servers and the test server's port
// changes every run.
func newContract(t *testing.T, baseURL string) *contract {
	doc := loadDoc(t)
	routed := *doc
	routed.Servers = openapi3.Servers{{URL: baseURL}}
	r, err := gorillamux.NewRouter(&routed)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	return &contract{t: t, doc: doc, router: r, base: base, seen: map[string]int{}, failures: map[string][]string{}}
}

func (c *contract) options() *openapi3filter.Options {
	return &openapi3filter.Options{
		// An answer with a status the operation does not document is a
		// mismatch, not something to wave through.
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    requireHeaders,
	}
}

// requireHeaders is the check behind the document's security schemes: the
// header must be present and non-empty. Whether the signature is right is
// the server's business, answered by the documented 401.
func requireHeaders(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s := in.SecurityScheme
	if s == nil || s.Type != "apiKey" || s.In != "header" {
		return fmt.Errorf("unexpected security scheme %q", in.SecuritySchemeName)
	}
	if in.RequestValidationInput.Request.Header.Get(s.Name) == "" {
		return fmt.Errorf("header %s is missing", s.Name)
	}
	return nil
}

// ctxKey marks a request that is deliberately outside the document (to make
// the server produce an error the SDK's own validation never lets through).
type ctxKey struct{}

// offContract returns a context whose requests must FAIL request
// validation: the test then proves both that the document rejects what the
// server rejects and that the server's answer is documented.
func offContract(ctx context.Context) context.Context { return context.WithValue(ctx, ctxKey{}, true) }

func isOffContract(ctx context.Context) bool { v, _ := ctx.Value(ctxKey{}).(bool); return v }

// clientTransport validates each request as the client sends it (exact body
// bytes, headers), then passes it on.
func (c *contract) clientTransport(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		body, err := readAndRestore(&req.Body)
		if err != nil {
			return nil, err
		}
		verr := c.validateRequest(req, body)
		switch {
		case isOffContract(req.Context()) && verr == nil:
			c.t.Errorf("%s %s: request was meant to be outside the document but passed validation", req.Method, req.URL.Path)
		case isOffContract(req.Context()):
			c.note("off-contract request rejected", req.Method+" "+req.URL.Path+": "+mask(verr.Error()))
		case verr != nil:
			c.t.Errorf("request %s %s does not match %s: %s", req.Method, req.URL.Path, docPath, mask(verr.Error()))
		}
		c.mu.Lock()
		c.requests++
		c.mu.Unlock()
		return next.RoundTrip(req)
	})
}

func (c *contract) validateRequest(req *http.Request, body []byte) error {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := c.router.FindRoute(r)
	if err != nil {
		return fmt.Errorf("no operation for %s %s: %w", r.Method, r.URL.Path, err)
	}
	return openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route, Options: c.options(),
	})
}

// wrap serves h and validates each response before it is sent: the client
// only sees an answer once it has been checked and counted, so a test that
// reads the counters after its last call sees every exchange.
func (c *contract) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readAndRestore(&r.Body)
		if err != nil {
			http.Error(w, "reading body", http.StatusBadRequest)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		res := rec.Result()
		resBody := rec.Body.Bytes()

		key, verr := c.validateResponse(r, body, res.StatusCode, res.Header, resBody)
		if verr != nil {
			c.t.Errorf("response %d to %s %s does not match %s: %s", res.StatusCode, r.Method, r.URL.Path, docPath, mask(verr.Error()))
		}
		c.mu.Lock()
		c.responses++
		c.seen[key]++
		c.mu.Unlock()

		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		w.Write(resBody)
	})
}

// validateResponse checks one answer and returns its outcome key.
func (c *contract) validateResponse(r *http.Request, reqBody []byte, status int, h http.Header, body []byte) (string, error) {
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	if req.URL.Host == "" { // server side: the URL is the request target only
		// Route by the server's own address, not by the Host header,
		// which a guard test sets to a foreign name.
		u := *req.URL
		u.Scheme, u.Host = c.base.Scheme, c.base.Host
		req.URL = &u
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return "unrouted " + r.Method + " " + r.URL.Path, fmt.Errorf("no operation: %w", err)
	}
	key := outcomeKey(route.Operation, status, body)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: c.options(),
		},
		Status: status, Header: h, Options: c.options(),
	}
	in.SetBodyBytes(body)
	return key, openapi3filter.ValidateResponse(req.Context(), in)
}

// outcomeKey names an answer: "operationId status" plus the error code of an
// error body. The status is written as the document's key for it: "2XX"
// where the document gives a range (SPEC.md shows no success statuses), so
// that it meets the names promised lists.
func outcomeKey(op *openapi3.Operation, status int, body []byte) string {
	st := strconv.Itoa(status)
	if op.Responses.Value(st) == nil && status > 99 && status < 600 && op.Responses.Value(st[:1]+"XX") != nil {
		st = st[:1] + "XX"
	}
	key := op.OperationID + " " + st
	if status >= 400 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			key += " " + e.Error
		}
	}
	return key
}

// validateWebhook checks a notification the sandbox POSTed against the
// document's webhook of that name (payment, payout). Webhooks have no route
// in kin-openapi's routers, so the route is built by hand; its Spec makes
// the validator use JSON Schema 2020-12, as for the paths.
func (c *contract) validateWebhook(name string, r *http.Request, body []byte) error {
	item := c.doc.Webhooks[name]
	if item == nil || item.Post == nil {
		return fmt.Errorf("the document has no POST webhook %q", name)
	}
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	route := &routers.Route{Spec: c.doc, Path: name, PathItem: item, Method: http.MethodPost, Operation: item.Post}
	err := openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
		Request: req, Route: route, Options: c.options(),
	})
	c.mu.Lock()
	c.webhooks++
	c.mu.Unlock()
	return err
}

func (c *contract) note(kind, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures[kind] = append(c.failures[kind], msg)
}

func (c *contract) notes(kind string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.failures[kind])
}

func (c *contract) webhookCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.webhooks
}

func (c *contract) counts() (requests, responses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests, c.responses
}

func (c *contract) seenKeys() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.seen))
	for k, v := range c.seen {
		out[k] = v
	}
	return out
}

// promised lists every outcome the document promises for the operations
// whose path starts with prefix: "operationId status" for successes and for
// errors whose code is not pinned, "operationId status CODE" for each code
// a pinned error response allows.
func promised(doc *openapi3.T, prefix string) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		for _, op := range item.Operations() {
			for status, ref := range op.Responses.Map() {
				codes := errorCodes(ref.Value)
				if len(codes) == 0 {
					out = append(out, op.OperationID+" "+status)
					continue
				}
				for _, code := range codes {
					out = append(out, op.OperationID+" "+status+" "+code)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// errorCodes reads the codes a response pins with const or enum on its
// error property, following the schema's $ref siblings (kin-openapi puts
// them in AllOf).
func errorCodes(r *openapi3.Response) []string {
	mt := r.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	var codes []string
	var walk func(s *openapi3.Schema)
	walk = func(s *openapi3.Schema) {
		if p, ok := s.Properties["error"]; ok && p.Value != nil {
			if p.Value.Const != nil {
				codes = append(codes, fmt.Sprint(p.Value.Const))
			}
			for _, e := range p.Value.Enum {
				codes = append(codes, fmt.Sprint(e))
			}
		}
		for _, sub := range s.AllOf {
			if sub.Value != nil {
				walk(sub.Value)
			}
		}
	}
	walk(mt.Schema.Value)
	return codes
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// readAndRestore reads a body whole and puts an equal reader back.
func readAndRestore(body *io.ReadCloser) ([]byte, error) {
	if *body == nil || *body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(*body)
	(*body).Close()
	if err != nil {
		return nil, err
	}
	*body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

// digitRuns are what card and phone numbers look like; validation errors may
// quote values, and test output must not carry such numbers.
var digitRuns = regexp.MustCompile(`\d{6,}`)

func mask(s string) string {
	return digitRuns.ReplaceAllStringFunc(s, func(d string) string { return strings.Repeat("*", len(d)-4) + d[len(d)-4:] })
}

// raw sends a hand-built request through hc (the recording client).
func raw(ctx context.Context, t *testing.T, hc *http.Client, method, rawURL, contentType string, body []byte, header http.Header) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, rawURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range header {
		if k == "Host" { // net/http sends req.Host, not a Host header
			req.Host = v[0]
			continue
		}
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, redactURL(rawURL), err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<url>"
	}
	return u.Path
}
