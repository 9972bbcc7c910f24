package sandbox

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// maxBodyBytes bounds a request body: a 10 MB receipt plus multipart
// framing fits, anything much larger is refused before it is buffered.
const maxBodyBytes = 11 << 20

// apiError is an error answer of the API: HTTP status plus the spec's body.
type apiError struct {
	status int
	code   string
	msg    string
	data   map[string]any
}

func newErr(status int, code, msg string) *apiError {
	return &apiError{status: status, code: code, msg: msg}
}

type errorBody struct {
	Error   string         `json:"error"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"SYS_001","message":"sandbox could not encode the response","data":{}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, e *apiError) {
	data := e.data
	if data == nil {
		data = map[string]any{}
	}
	writeJSON(w, e.status, errorBody{Error: e.code, Message: e.msg, Data: data})
}

// apiHandler serves one authenticated endpoint. It returns the success
// value (answered with 200) or an *apiError.
type apiHandler func(r *http.Request, m *merchant, body []byte) (any, *apiError)

// routes registers every endpoint. Go 1.22 patterns do the method and
// wildcard matching; {extId...} takes the rest of the path so that an
// ext_id sent with an unescaped slash still arrives whole.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	api := func(pattern string, h apiHandler) { mux.Handle(pattern, s.authenticated(h)) }

	api("POST /v1/payments", s.createPayment)
	api("GET /v1/payments/{id}", s.getPayment)
	api("GET /v1/payments/by-ext-id/{extId...}", s.getPaymentByExtID)
	api("POST /v1/payments/{id}/confirm", s.confirmPayment)
	api("POST /v1/payments/{id}/cancel", s.cancelPayment)
	api("POST /v1/payments/{id}/dispute", s.openDispute)
	api("POST /v1/payments/{id}/dispute/cancel", s.cancelDispute)

	api("POST /v1/payouts", s.createPayout)
	api("GET /v1/payouts", s.listPayouts)
	api("GET /v1/payouts/{id}", s.getPayout)
	api("GET /v1/payouts/by-ext-id/{extId...}", s.getPayoutByExtID)

	api("GET /v1/terminals", s.listTerminals)
	api("GET /v1/balance", s.getBalance)
	api("GET /v1/banks", s.listBanks)
	api("POST /v1/transfers", s.createTransfer)

	api("POST /v1/withdrawals", s.createWithdrawal)
	api("GET /v1/withdrawals/fee", s.getWithdrawalFee)
	api("GET /v1/withdrawals/{id}", s.getWithdrawal)

	api("/v1/", func(r *http.Request, _ *merchant, _ []byte) (any, *apiError) {
		return nil, newErr(http.StatusNotFound, "NOT_FOUND", "no such endpoint: "+r.Method+" "+r.URL.Path)
	})

	mux.HandleFunc("GET /pay/{id}", s.getPage)
	mux.HandleFunc("POST /pay/{id}", s.postPage)

	s.controlRoutes(mux)
	s.uiRoutes(mux) // the dashboard at /sandbox/ui and the payment page's assets (ui.go)
	return mux
}

// ServeHTTP counts the request, applies an injected fault if one matches,
// and dispatches. Faults never apply to /sandbox/ so that a test cannot lock
// itself out of the controls.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/sandbox/") {
		s.mux.ServeHTTP(w, r)
		return
	}
	f := s.takeFault(r)
	if f == nil {
		s.mux.ServeHTTP(w, r)
		return
	}
	s.serveFault(w, r, f)
}

// authenticated checks X-Identity and X-Signature, buffers the body (the
// Signer needs its exact bytes), runs lazy expiry and calls h. Any failure of
// authentication is 401 AUTH_001: the spec does not show this answer, so
// this is the sandbox's choice.
func (s *Server) authenticated(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			writeError(w, newErr(http.StatusRequestEntityTooLarge, "PAY_002", "request body too large or unreadable"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		m, aerr := s.authenticate(r, body)
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		v, aerr := h(r, m, body)
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

func (s *Server) authenticate(r *http.Request, body []byte) (*merchant, *apiError) {
	key := r.Header.Get("X-Identity")
	sig := r.Header.Get("X-Signature")
	if key == "" || sig == "" {
		return nil, newErr(http.StatusUnauthorized, "AUTH_001", "missing X-Identity or X-Signature header")
	}
	s.mu.Lock()
	m := s.merchants[key]
	s.mu.Unlock()
	if m == nil {
		return nil, newErr(http.StatusUnauthorized, "AUTH_001", "unknown API key or invalid signature")
	}
	if len(body) == 0 {
		body = nil
	}
	want, err := m.signer.Sign(r, body)
	if err != nil || subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		// Same message as the unknown key, so the answer does not reveal
		// which API keys exist.
		return nil, newErr(http.StatusUnauthorized, "AUTH_001", "unknown API key or invalid signature")
	}
	return m, nil
}

// decodeJSON decodes a request body into v. An empty body decodes as {}.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// amountIn is a money amount in a request: a JSON number or a numeric
// string, null or absent meaning "not given".
type amountIn struct {
	d   decimal.Decimal
	set bool
}

func (a *amountIn) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*a = amountIn{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = strings.TrimSpace(str)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return err
	}
	// Bound the exponent so that "1e999999999" cannot make the sandbox
	// print a gigabyte of zeros.
	if e := d.Exponent(); e < -18 || e > 18 {
		return errors.New("amount out of range")
	}
	*a = amountIn{d: d, set: true}
	return nil
}

// rubNum writes a decimal as a bare JSON number with the scale it carries,
// so a RUB amount goes back exactly as the client wrote it: 1500.50 stays
// 1500.50, 1500 stays 1500.
type rubNum decimal.Decimal

func (n rubNum) MarshalJSON() ([]byte, error) { return scaled(decimal.Decimal(n), 0), nil }

// usdtNum writes a USDT figure as a bare JSON number with at least two
// decimal places (1000.00), more if the value has them.
type usdtNum decimal.Decimal

func (n usdtNum) MarshalJSON() ([]byte, error) { return scaled(decimal.Decimal(n), 2), nil }

func scaled(d decimal.Decimal, minPlaces int32) []byte {
	places := -d.Exponent()
	if places < minPlaces {
		places = minPlaces
	}
	return []byte(d.StringFixed(places))
}

// ts formats a time the way every timestamp of the API is written.
func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

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
