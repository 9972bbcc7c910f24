package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/control"
	"github.com/paykit-dev/paykit-go/sandbox/internal/guard"
)

// fakeBackend records what the routes ask of it, so the tests see that
// web parses the forms and guards the posts itself.
type fakeBackend struct {
	calls    []string
	advanced time.Duration
	fault    control.Fault
}

var errInvalid = errors.New("invalid argument")

func (b *fakeBackend) Dashboard(page, errMsg string, refresh int) Data {
	b.calls = append(b.calls, "dashboard "+page+" "+errMsg)
	return Data{Page: page, Error: errMsg, Token: Token}
}
func (b *fakeBackend) PayPage(string) (PayData, bool) { return PayData{}, false }
func (b *fakeBackend) PayerPaid(id string) error      { b.calls = append(b.calls, "paid "+id); return nil }
func (b *fakeBackend) StoreDown(error) bool           { return false }
func (b *fakeBackend) ActionError(err error) (int, string) {
	if errors.Is(err, errInvalid) {
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusTeapot, err.Error()
}
func (b *fakeBackend) Invalid(msg string) error { return errors.Join(errInvalid, errors.New(msg)) }
func (b *fakeBackend) VerifyPayment(id, outcome string) (any, error) {
	b.calls = append(b.calls, "verify "+id+" "+outcome)
	return nil, nil
}
func (b *fakeBackend) ReviewDispute(string, string) (any, error)               { return nil, nil }
func (b *fakeBackend) SetPayoutStatus(string, string) (any, error)             { return nil, nil }
func (b *fakeBackend) SetWithdrawalStatus(string, string, string) (any, error) { return nil, nil }
func (b *fakeBackend) Advance(d time.Duration) (time.Time, error) {
	b.advanced = d
	b.calls = append(b.calls, "advance")
	return time.Time{}, nil
}
func (b *fakeBackend) InjectFault(f control.Fault) error { b.fault = f; return nil }
func (b *fakeBackend) ResendWebhook(string) (any, error) { return nil, nil }
func (b *fakeBackend) Reset() error                      { return nil }

func post(t *testing.T, b Backend, path string, form url.Values, origin string) *httptest.ResponseRecorder {
	t.Helper()
	mux := http.NewServeMux()
	Routes(mux, b, guard.New(guard.Config{})) // the loopback Host passes
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080"+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

// TestFormsParsedBeforeTheBackend protects the parsing web owns: the
// clock's range and whole numbers, the fault's fields, and the 303 back to
// the page a form came from.
func TestFormsParsedBeforeTheBackend(t *testing.T) {
	b := &fakeBackend{}
	w := post(t, b, "/sandbox/ui/clock/advance", url.Values{"token": {Token}, "seconds": {" 90 "}, "page": {"payouts"}, "refresh": {"0"}}, "")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != Href("payouts", 0) || b.advanced != 90*time.Second {
		t.Fatalf("advance: %d %q %v", w.Code, w.Header().Get("Location"), b.advanced)
	}
	for _, secs := range []string{"-1", "315360001", "1.5"} {
		b = &fakeBackend{}
		w = post(t, b, "/sandbox/ui/clock/advance", url.Values{"token": {Token}, "seconds": {secs}, "page": {"faults"}}, "")
		if w.Code != http.StatusBadRequest || len(b.calls) != 1 || !strings.HasPrefix(b.calls[0], "dashboard faults ") || b.advanced != 0 {
			t.Fatalf("seconds %q: %d %v", secs, w.Code, b.calls)
		}
	}
	b = &fakeBackend{}
	w = post(t, b, "/sandbox/ui/faults", url.Values{"token": {Token}, "method": {"POST"}, "path": {" /v1/payouts "},
		"mode": {"error_before"}, "code": {" X "}, "count": {"2"}, "status": {"502"}, "delay_ms": {""}, "retry_after_s": {"7"}}, "")
	want := control.Fault{Method: "POST", Path: "/v1/payouts", Mode: "error_before", Code: "X", Count: 2, Status: 502, RetryAfterS: 7}
	if w.Code != http.StatusSeeOther || b.fault != want {
		t.Fatalf("fault: %d %+v", w.Code, b.fault)
	}
}

// TestCrossSitePostNeverReachesTheBackend protects the guards web owns:
// a post from another origin or without the token changes nothing.
func TestCrossSitePostNeverReachesTheBackend(t *testing.T) {
	for _, c := range []struct {
		name, path, origin string
		form               url.Values
	}{
		{"dashboard other origin", "/sandbox/ui/payments/p1/verify", "http://evil.example", url.Values{"token": {Token}, "outcome": {"approved"}}},
		{"dashboard no token", "/sandbox/ui/payments/p1/verify", "", url.Values{"outcome": {"approved"}}},
		{"payer page wrong token", "/pay/p1", "", url.Values{"token": {PageToken("p2")}}},
	} {
		b := &fakeBackend{}
		w := post(t, b, c.path, c.form, c.origin)
		if w.Code != http.StatusForbidden || len(b.calls) != 0 {
			t.Fatalf("%s: %d %v", c.name, w.Code, b.calls)
		}
	}
	b := &fakeBackend{}
	if w := post(t, b, "/pay/p1", url.Values{"token": {PageToken("p1")}}, ""); w.Code != http.StatusSeeOther || len(b.calls) != 1 || b.calls[0] != "paid p1" {
		t.Fatalf("payer page: %d %v", w.Code, b.calls)
	}
}
