package paykit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
)

func TestMaskDigits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		// Card and phone numbers, however written.
		{"2200123456789010", "************9010"},
		{"card2200123456789010", "card************9010"},
		{"card2200123456789010refused", "card************9010refused"},
		{"2200-1234-5678-9010", "****-****-****-9010"},
		{"2200 1234 5678 9010", "**** **** **** 9010"},
		{"2200.1234.5678.9010", "****.****.****.9010"},
		{"+7 912 345-67-89", "+* *** ***-67-89"},
		{"+79123456789", "+*******6789"},
		{"8 (912) 345-67-89", "* (***) ***-67-89"},
		{"+7(912)3456789", "+*(***)***6789"},
		{"tel:+7-912-345-67-89.", "tel:+*-***-***-67-89."},
		{"phone +992 93 123 4567 refused", "phone +*** ** *** 4567 refused"},
		{"1234567890", "******7890"},
		{"card 2200123456789010.5", "card ************9010.5"},
		{"pk_live_1234567890abc", "pk_live_******7890abc"},
		{"a 2200 1234 5678 9010 and +79001234567", "a **** **** **** 9010 and +*******4567"},
		{"id 12345678-1234-4234-8234-123456789012 phone 89123456789", "id 12345678-1234-4234-8234-123456789012 phone *******6789"},
		{"on 2026-11-22 2200123456789010", "on 2026-11-22 ************9010"},
		// Commas, slashes, underscores and double spaces join too.
		{"2200  1234 5678 9010", "****  **** **** 9010"},
		{"2200  1234  5678  9010", "****  ****  ****  9010"},
		{"2200,1234,5678,9010", "****,****,****,9010"},
		{"2200/1234/5678/9010", "****/****/****/9010"},
		{"2200_1234_5678_9010", "****_****_****_9010"},
		{"22001234, 56789010", "********, ****9010"},
		// Separators that do not join: other characters.
		{"2200;1234;5678;9010", "2200;1234;5678;9010"},
		// Amounts with thousands commas and dates in other orders stay readable.
		{"1,500.50 RUB", "1,500.50 RUB"},
		{"total 1,234,567,890.50", "total 1,234,567,890.50"},
		{"on 22/11/2026", "on 22/11/2026"},
		{"at 22/11/2026 03:10", "at 22/11/2026 03:10"},
		{"at 2026/11/22 03:10:00", "at 2026/11/22 03:10:00"},
		{"at 22.11.2026 03:10", "at 22.11.2026 03:10"},
		// Readable: UUIDs, hashes, ext_ids, amounts, dates, addresses.
		{"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70", "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"},
		{"payment 12345678-1234-4234-8234-123456789012 not found", "payment 12345678-1234-4234-8234-123456789012 not found"},
		{"(12345678-1234-4234-8234-123456789012)", "(12345678-1234-4234-8234-123456789012)"},
		{"tx 0xabc1234567890123", "tx 0xabc1234567890123"},
		{"tx a1b2c3d4e5f60718293a4b5c6d7e8f9012345678901234567890abcdef123456", "tx a1b2c3d4e5f60718293a4b5c6d7e8f9012345678901234567890abcdef123456"},
		{"ext_id order-1001 exists", "ext_id order-1001 exists"},
		{"po-17", "po-17"},
		{"inv-2026-0001", "inv-2026-0001"},
		{"amount 12345678.90 over 300000", "amount 12345678.90 over 300000"},
		{"1500.50", "1500.50"},
		{"at 2026-11-22 03:10:00", "at 2026-11-22 03:10:00"},
		{"at 2026-11-22T03:10:00.123Z", "at 2026-11-22T03:10:00.123Z"},
		{"dial tcp 192.168.100.200:443", "dial tcp 192.168.100.200:443"},
		{"123456789", "123456789"},
		{"HTTP 500", "HTTP 500"},
		{"", ""},
		{"no digits", "no digits"},
	} {
		assert.Equal(t, tc.want, maskDigits(tc.in), "maskDigits(%q)", tc.in)
	}
}

// TestMaskDigitsLeavesNoLongRun: whatever the input, no ten digits in a
// row survive outside UUIDs and hashes.
func TestMaskDigitsLeavesNoLongRun(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		strings.Repeat("1234567890", 50),
		strings.Repeat("12 ", 200),
		"id" + strings.Repeat("9", 64),
		strings.Repeat("12-", 100),
		"+" + strings.Repeat("(1)", 40),
	} {
		out := maskDigits(in)
		digits := 0
		for i := range len(out) {
			if isDigit(out[i]) {
				digits++
			}
		}
		assert.LessOrEqual(t, digits, 4, "%q → %q", in, out)
	}
}

// FuzzMaskDigits: masking never panics, keeps the length, only turns
// digits into '*', and leaves no number of ten digits or more behind.
func FuzzMaskDigits(f *testing.F) {
	for _, s := range []string{"+7 912 345-67-89", "card2200123456789010", "2026-11-22 2200123456789010",
		"12345678-1234-4234-8234-123456789012", "0xabc1234567890123", "192.168.0.1", "1.5", "((1))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := maskDigits(in)
		if len(out) != len(in) {
			t.Fatalf("length %d → %d", len(in), len(out))
		}
		for i := range len(in) {
			if in[i] != out[i] && !(isDigit(in[i]) && out[i] == '*') {
				t.Fatalf("byte %d: %q → %q", i, in[i], out[i])
			}
		}
		if again := maskDigits(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
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
	assert.Contains(t, fmt.Sprintf("%#v", &WebhookHandler{Token: "x"}), `&paykit.WebhookHandler{Token:"<redacted>"`)
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
	assert.Equal(t, "****", maskTail("123"))
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
