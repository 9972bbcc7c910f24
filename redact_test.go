package paykit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paykit-dev/paykit-go/internal/mask"
)

// TestSharedMaskRule: the SDK masks with internal/mask (whose tests cover
// the rules), as the CLI does, so both outputs mask alike.
func TestSharedMaskRule(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "card **** **** **** 9010 refused", mask.Text("card 2200 1234 5678 9010 refused"))
	assert.Equal(t, "****", mask.Value("123"))
}

// Secrets the fmt and slog walk plants in every type; none may show.
const (
	secretToken   = "nt_secret_tok_7f3a"
	secretRotated = "nt_rotated_tok_91b2"
	secretCard    = "2200700012345678"
	secretPhone   = "+79005554433"
	secretHolder  = "Ivan Ivanovich"
	secretAbbrev  = "Ivan I."
)

// leaks returns the secrets (or their hex forms, for %x) found in out.
func leaks(out string) []string {
	var found []string
	for _, s := range []string{secretToken, secretRotated, secretCard, secretPhone, secretHolder, secretAbbrev,
		"22007000123", "7900555", "2200 7000", "Ivan Iv"} {
		for _, form := range []string{s, fmt.Sprintf("%x", s), fmt.Sprintf("%X", s)} {
			if strings.Contains(out, form) {
				found = append(found, form)
			}
		}
	}
	return found
}

// secretValues returns one value of each type that carries a secret,
// with the non-secret substrings that %v must still show.
func secretValues() []struct {
	name  string
	v     any
	shows []string
} {
	payment := Payment{ID: paymentID, ExtID: "order-1001", Amount: dec("1500.50"), Currency: "RUB",
		Status: PaymentStatusPending, Method: MethodCard,
		Requisites: Requisites{Type: RequisitesCard, Value: secretCard, BankName: "Sberbank", Holder: secretAbbrev},
		Dispute:    &Dispute{Amount: decimal.NewNullDecimal(dec("700")), Comment: "paid"}}
	sbp := Requisites{Type: RequisitesSBP, Value: secretPhone, BankName: "T-Bank", Holder: secretAbbrev}
	payout := Payout{ID: payoutID, ExtID: "po-17", Amount: dec("2500"), Method: PayoutMethodSBP,
		Requisites: secretPhone, HolderName: secretHolder, Bank: "sber", Status: PayoutStatusCompleted}
	cardPayout := payout
	cardPayout.Requisites, cardPayout.Method = secretCard, PayoutMethodCard
	h := &WebhookHandler{Token: secretToken, Tokens: []string{secretRotated, ""}, MaxBodyBytes: 4096,
		TokenFor: func(context.Context, string, string) (string, error) { return secretToken, nil }}
	apiErr := &Error{Code: "PAY_002", HTTPStatus: 400, Message: "card " + secretCard + " phone " + secretPhone + " refused",
		Data: json.RawMessage(`{"requisites":"` + secretCard + `","phone":"` + secretPhone + `"}`)}
	return []struct {
		name  string
		v     any
		shows []string
	}{
		{"Payment", payment, []string{paymentID, "order-1001", "5678", "Sberbank"}},
		{"Requisites", sbp, []string{"sbp", "4433", "T-Bank"}},
		{"Payout", payout, []string{payoutID, "po-17", "4433", "sber"}},
		{"card Payout", cardPayout, []string{payoutID, "5678"}},
		{"PayoutList", PayoutList{Payouts: []Payout{payout, cardPayout}, Total: 2}, []string{payoutID}},
		{"CreatePaymentParams", CreatePaymentParams{ExtID: "order-1001", Amount: dec("1500.50"), NotifyURL: "https://shop.example/hook",
			NotificationToken: secretToken}, []string{"order-1001", "shop.example"}},
		{"CreatePayoutParams", CreatePayoutParams{ExtID: "po-17", Amount: dec("2500"), Method: PayoutMethodCard,
			Requisites: secretCard, HolderName: secretHolder}, []string{"po-17", "5678"}},
		{"*WebhookHandler", h, []string{"4096"}},
		{"WebhookHandler", *h, []string{"4096"}},
		{"*Error", apiErr, []string{"PAY_002", "400", "5678", "4433"}},
	}
}

// pointerTo returns a pointer to a copy of v, or v itself if it is one.
func pointerTo(v any) any {
	if reflect.TypeOf(v).Kind() == reflect.Pointer {
		return v
	}
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	return p.Interface()
}

// TestFormatHidesSecrets walks fmt's verbs over every type that carries a
// secret, as a value, a pointer, and nested in a struct field, a slice, a
// map and an interface, and checks that no secret shows while the fields
// that are not secret do.
func TestFormatHidesSecrets(t *testing.T) {
	t.Parallel()
	type holder struct {
		Name  string
		Inner any
	}
	for _, tc := range secretValues() {
		ptr := pointerTo(tc.v)
		shapes := map[string]any{
			"value":          tc.v,
			"pointer":        ptr,
			"struct field":   holder{Name: "x", Inner: tc.v},
			"struct pointer": &holder{Name: "x", Inner: ptr},
			"slice":          []any{tc.v, ptr},
			"map":            map[string]any{"k": tc.v},
		}
		// A typed slice and struct field, not only interfaces.
		switch v := tc.v.(type) {
		case Payment:
			shapes["typed slice"] = []Payment{v}
			shapes["typed field"] = struct{ P Payment }{v}
			shapes["typed pointer field"] = struct{ P *Payment }{&v}
		case Payout:
			shapes["typed slice"] = []Payout{v}
			shapes["typed pointer field"] = struct{ P *Payout }{&v}
		case Requisites:
			shapes["typed slice"] = []Requisites{v}
		case PayoutList:
			shapes["typed pointer field"] = struct{ L *PayoutList }{&v}
		case *WebhookHandler:
			shapes["typed field"] = struct{ H *WebhookHandler }{v}
		case WebhookHandler:
			shapes["typed field"] = struct{ H WebhookHandler }{v}
			shapes["typed slice"] = []WebhookHandler{v}
		case *Error:
			shapes["wrapped"] = fmt.Errorf("creating: %w", v)
			shapes["typed field"] = struct{ E *Error }{v}
		}
		for shape, v := range shapes {
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v", "%-+#v"} {
				out := fmt.Sprintf(verb, v)
				if l := leaks(out); len(l) > 0 {
					t.Errorf("%s %s %s shows %q: %s", tc.name, shape, verb, l, out)
				}
				if verb == "%v" || verb == "%+v" || verb == "%s" {
					for _, want := range tc.shows {
						if !strings.Contains(out, want) && !(shape == "wrapped" && verb != "%v") {
							t.Errorf("%s %s %s does not show %q: %s", tc.name, shape, verb, want, out)
						}
					}
				}
			}
		}
	}
}

// TestFormatShowsAmounts: amounts print as fmt prints a decimal, through
// the redacting methods.
func TestFormatShowsAmounts(t *testing.T) {
	t.Parallel()
	p := Payment{ID: paymentID, Amount: dec("1500.50")}
	assert.Contains(t, fmt.Sprintf("%v", p), "1500.5")
	assert.Contains(t, fmt.Sprintf("%+v", &p), "Amount:1500.5")
	assert.Contains(t, fmt.Sprintf("%#v", p), "paykit.Payment{ID:\""+paymentID+"\"")
	assert.Contains(t, fmt.Sprintf("%#v", Payout{Amount: dec("2500")}), "paykit.Payout{")
	assert.Contains(t, fmt.Sprintf("%v", Payout{Amount: dec("2500")}), "2500")
	assert.Contains(t, fmt.Sprintf("%#v", CreatePayoutParams{Amount: dec("2500")}), "paykit.CreatePayoutParams{")
	// A pointer prints as its value does, as for the other types here.
	assert.True(t, strings.HasPrefix(fmt.Sprintf("%#v", &WebhookHandler{Token: "x"}), `paykit.WebhookHandler{Token:"<redacted>"`))
	assert.Equal(t, "paykit: PAY_004 (HTTP 400): none", fmt.Sprintf("%v", &Error{Code: "PAY_004", HTTPStatus: 400, Message: "none"}))
	assert.Equal(t, `&paykit.Error{Code:"PAY_004", HTTPStatus:400, Message:"none", Data:""}`,
		fmt.Sprintf("%#v", &Error{Code: "PAY_004", HTTPStatus: 400, Message: "none"}))
	var nilErr *Error
	assert.Equal(t, "<nil>", fmt.Sprintf("%v", nilErr))
	var nilPayment *Payment
	assert.Equal(t, "<nil>", fmt.Sprintf("%+v", nilPayment))
	// Unset secrets stay empty rather than looking set.
	assert.Contains(t, fmt.Sprintf("%+v", CreatePaymentParams{}), "NotificationToken:}")
	assert.Contains(t, fmt.Sprintf("%+v", CreatePaymentParams{NotificationToken: "t"}), "NotificationToken:<redacted>}")
}

// TestWebhookHandlerFormatListsEveryField: the view fmt prints has every
// exported field of WebhookHandler, so a new field cannot be forgotten.
func TestWebhookHandlerFormatListsEveryField(t *testing.T) {
	t.Parallel()
	fields := func(t reflect.Type) []string {
		var names []string
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				names = append(names, f.Name+":"+f.Type.String())
			}
		}
		return names
	}
	exported, view := fields(reflect.TypeFor[WebhookHandler]()), fields(reflect.TypeFor[webhookHandlerView]())
	assert.NotEmpty(t, exported)
	assert.Equal(t, exported, view)
}

// TestLogValuesHideSecrets: slog's JSON and text handlers, given each type
// as a value and a pointer, show no secret.
func TestLogValuesHideSecrets(t *testing.T) {
	t.Parallel()
	for _, tc := range secretValues() {
		ptr := pointerTo(tc.v)
		for _, newHandler := range []func(io.Writer) slog.Handler{
			func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
			func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
		} {
			var buf bytes.Buffer
			log := slog.New(newHandler(&buf))
			log.Info("x", "value", tc.v, "pointer", ptr, slog.Group("g", "nested", tc.v))
			if l := leaks(buf.String()); len(l) > 0 {
				t.Errorf("%s: slog shows %q: %s", tc.name, l, buf.String())
			}
		}
	}
}

func TestResourcesMaskNumbersInStructuredLogs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	p := Payment{ID: paymentID, ExtID: "o-1", Amount: dec("1500.50"), Status: PaymentStatusPending, Method: MethodCrossBorder,
		Requisites: Requisites{Type: RequisitesPhone, Value: "+992900112233", BankCode: "eskhata", Country: CountryTJ,
			Currency: "TJS", AmountLocal: dec("180.06")}}
	po := Payout{ID: payoutID, ExtID: "po-1", Amount: dec("2500"), Requisites: "4111111111111111", HolderName: "IVAN IVANOV"}
	log.Info("paid", "payment", p, "payout", po, "pointer", &p)
	out := buf.String()
	assert.NotContains(t, out, "992900112233")
	assert.NotContains(t, out, "4111111111111111")
	assert.NotContains(t, out, "IVAN")
	assert.Contains(t, out, `"value":"+********2233"`)
	assert.Contains(t, out, `"requisites":"************1111"`)
	assert.Contains(t, out, `"amount":"1500.5"`)
	assert.Contains(t, out, `"amount_local":"180.06"`)
	assert.Contains(t, out, `"ext_id":"o-1"`)
}

// An absent card or phone number logs as "" wherever it appears, so that
// it does not look like a present one.
func TestLogValueMasksEmptyValuesAlike(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	l.Info("x", "req", Requisites{}, "params", CreatePayoutParams{}, "payout", Payout{})
	out := buf.String()
	assert.Contains(t, out, `"req":{"type":"","value":""`)
	assert.Contains(t, out, `"requisites":""`)
	assert.NotContains(t, out, "****")
}

// TestWebhookHandlerByValueHidesTokens: a handler held by value in a
// merchant's configuration struct prints without its tokens, through fmt
// and slog's text handler, as a pointer to it does.
func TestWebhookHandlerByValueHidesTokens(t *testing.T) {
	t.Parallel()
	type config struct {
		Addr string
		Hook WebhookHandler
	}
	cfg := config{Addr: ":8080", Hook: WebhookHandler{Token: secretToken, Tokens: []string{secretRotated}, MaxBodyBytes: 4096}}
	outputs := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		outputs[verb] = fmt.Sprintf(verb, cfg)
		outputs[verb+" of a pointer"] = fmt.Sprintf(verb, &cfg)
		outputs[verb+" of the handler"] = fmt.Sprintf(verb, cfg.Hook)
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "cfg", cfg, "hook", cfg.Hook)
	outputs["slog text"] = buf.String()
	for name, out := range outputs {
		assert.Empty(t, leaks(out), "%s: %s", name, out)
		assert.Contains(t, out, "4096", "%s: the settings that are not secret show", name)
	}
	assert.Contains(t, outputs["%+v"], "Token:<redacted> Tokens:[<redacted>]")
	assert.Contains(t, outputs["%#v"], `Hook:paykit.WebhookHandler{Token:"<redacted>", Tokens:[]string{"<redacted>"}`)
}

// TestWebhookHandlerPrintsWhileServing: Format and LogValue copy the
// handler, so it holds no state that serving changes; printing a handler
// while it refuses deliveries (and logs that once) is race-free.
func TestWebhookHandlerPrintsWhileServing(t *testing.T) {
	t.Parallel()
	var logs TestLog
	h := &WebhookHandler{OnPayment: func(context.Context, *Payment) error { return nil }, Logger: logs.Logger()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(`{"id":"`+paymentID+`","requisites":{}}`))
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}()
	for range 50 {
		_ = fmt.Sprintf("%+v", h)
		slog.New(slog.NewTextHandler(io.Discard, nil)).Info("x", "h", h)
	}
	<-done
	assert.Equal(t, 1, strings.Count(logs.String(), "no Token, Tokens or TokenFor"), "logged once: %s", logs.String())
}

// globalHandler is a handler in a global variable, as a merchant's may be.
var globalHandler WebhookHandler

// TestWebhookAlertsGoWithTheirHandler: what a handler has logged once is
// forgotten when the handler is collected, so handlers made per request do
// not pile up.
func TestWebhookAlertsGoWithTheirHandler(t *testing.T) {
	t.Parallel()
	h := &WebhookHandler{Logger: slog.New(slog.DiscardHandler)}
	assert.True(t, h.alertOnce(alertNoToken))
	assert.False(t, h.alertOnce(alertNoToken))
	assert.True(t, h.alertOnce(alertObservePanicked), "another alert of the same handler")
	assert.True(t, (&WebhookHandler{}).alertOnce(alertNoToken), "another handler")
	globalHandler.alertOnce(alertNoToken) // a handler in a global variable (true on the first -count)
	assert.False(t, globalHandler.alertOnce(alertNoToken))
	key := uintptr(unsafe.Pointer(h))
	bits, ok := alerts.Load(key)
	require.True(t, ok)
	h = nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if v, ok := alerts.Load(key); !ok || v != bits { // another handler may have the address now
			break
		}
		require.True(t, time.Now().Before(deadline), "the entry of a collected handler stays")
		runtime.Gosched()
	}
}

// TestScrubSecrets: whole secrets are replaced anywhere; the start of one
// left at a cut ("…") is replaced too, if long enough to say anything.
func TestScrubSecrets(t *testing.T) {
	t.Parallel()
	sec := secrets{apiKey: "pk_live_QZX7w2", signature: "9c4f0e3d2b1a09f8"}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"nothing secret…", "nothing secret…"},
		{"key pk_live_QZX7w2 sig 9c4f0e3d2b1a09f8.", "key [api key] sig [signature]."},
		{"key pk_live_QZX7w2pk_live_QZX7w2", "key [api key][api key]"},
		{`id "pk_live_QZ…"`, `id "[api key]…"`},
		{`id "9c4f0e3d2b…" and "pk_liv…"`, `id "[signature]…" and "[api key]…"`},
		{`id "pk_li…"`, `id "pk_li…"`}, // too short to tell from a word
		{`"pk_live_QZX7w2" cut "9c4f0e…"`, `"[api key]" cut "[signature]…"`},
	} {
		assert.Equal(t, tc.want, sec.scrub(tc.in), "%q", tc.in)
	}
	assert.Equal(t, "a pk_live_QZX7w2", secrets{}.scrub("a pk_live_QZX7w2"), "no secrets, nothing replaced")
}
