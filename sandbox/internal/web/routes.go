package web

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/control"
	"github.com/paykit-dev/paykit-go/sandbox/internal/guard"
)

// Backend is what the pages read and what their forms do, implemented by
// the application (sandbox/internal/service) with the control verbs the Go
// API and the JSON controls use, so a form can never do something the
// controls cannot.
type Backend interface {
	// Dashboard reads what dashboard page shows, with errMsg at the top.
	Dashboard(page, errMsg string, refresh int) Data
	// PayPage reads the payment page of payment id; false if there is none.
	PayPage(id string) (PayData, bool)
	// PayerPaid presses "I paid" on payment id.
	PayerPaid(id string) error
	// StoreDown tells an error of a store that cannot be used.
	StoreDown(err error) bool
	// ActionError is how a form action's refusal is shown: the status the
	// JSON control answers it with, and its message.
	ActionError(err error) (status int, message string)
	// Invalid is the error of a form field that cannot be read, as the
	// controls name an invalid argument.
	Invalid(msg string) error
	// The form actions are the control verbs, declared once.
	control.Verbs
}

// Routes registers the payment page, the dashboard's pages and assets,
// and one POST route per dashboard action (forms cannot send the JSON the
// controls take). g admits every dashboard request as it admits the JSON
// controls (the loopback Host, the control token); the payment page is
// the payer's and needs neither.
func Routes(mux *http.ServeMux, b Backend, g *guard.Guard) {
	mux.HandleFunc("GET /pay/{id}", func(w http.ResponseWriter, r *http.Request) {
		d, ok := b.PayPage(r.PathValue("id"))
		if !ok {
			http.Error(w, "payment not found", http.StatusNotFound)
			return
		}
		RenderPay(w, d)
	})
	mux.HandleFunc("POST /pay/{id}", func(w http.ResponseWriter, r *http.Request) { postPay(b, w, r) })

	assets := http.FileServerFS(Assets)
	mux.Handle("GET /pay/assets/", http.StripPrefix("/pay/assets", assets))
	mux.Handle("GET /sandbox/ui/assets/", admit(g, false, http.StripPrefix("/sandbox/ui/assets", assets)))

	mux.Handle("GET /sandbox/ui", admit(g, false, page(b, "payments")))
	mux.Handle("GET /sandbox/ui/{$}", admit(g, false, http.RedirectHandler("/sandbox/ui", http.StatusMovedPermanently)))
	for _, p := range Pages {
		mux.Handle("GET /sandbox/ui/"+p.Name, admit(g, false, page(b, p.Name)))
	}

	act := func(pattern string, do func(r *http.Request) error) {
		mux.Handle("POST "+pattern, admit(g, true, action(b, do)))
	}
	act("/sandbox/ui/payments/{id}/verify", func(r *http.Request) error {
		_, err := b.VerifyPayment(r.PathValue("id"), r.PostFormValue("outcome"))
		return err
	})
	act("/sandbox/ui/payments/{id}/dispute/review", func(r *http.Request) error {
		_, err := b.ReviewDispute(r.PathValue("id"), r.PostFormValue("outcome"))
		return err
	})
	act("/sandbox/ui/payouts/{id}/status", func(r *http.Request) error {
		_, err := b.SetPayoutStatus(r.PathValue("id"), r.PostFormValue("status"))
		return err
	})
	act("/sandbox/ui/withdrawals/{id}/status", func(r *http.Request) error {
		_, err := b.SetWithdrawalStatus(r.PathValue("id"), r.PostFormValue("status"), strings.TrimSpace(r.PostFormValue("tx_hash")))
		return err
	})
	act("/sandbox/ui/clock/advance", func(r *http.Request) error {
		secs, err := formInt(b, r, "seconds")
		if err != nil {
			return err
		}
		// Ten years is far beyond any valid_until; the cap keeps the
		// Duration from overflowing.
		if secs < 0 || secs > 10*365*24*3600 {
			return b.Invalid("seconds must be from 0 to 315360000")
		}
		_, err = b.Advance(time.Duration(secs) * time.Second)
		return err
	})
	act("/sandbox/ui/faults", func(r *http.Request) error {
		f := control.Fault{Method: r.PostFormValue("method"), Path: strings.TrimSpace(r.PostFormValue("path")),
			Mode: r.PostFormValue("mode"), Code: strings.TrimSpace(r.PostFormValue("code"))}
		for _, n := range []struct {
			name string
			dst  *int
		}{{"count", &f.Count}, {"status", &f.Status}, {"delay_ms", &f.DelayMS}, {"retry_after_s", &f.RetryAfterS}} {
			v, err := formInt(b, r, n.name)
			if err != nil {
				return err
			}
			*n.dst = int(v)
		}
		return b.InjectFault(f)
	})
	act("/sandbox/ui/webhooks/{id}/resend", func(r *http.Request) error {
		_, err := b.ResendWebhook(r.PathValue("id"))
		return err
	})
	act("/sandbox/ui/reset", func(*http.Request) error {
		return b.Reset()
	})
}

// formInt reads an optional whole number from a form field; empty is 0.
func formInt(b Backend, r *http.Request, name string) (int64, error) {
	v := strings.TrimSpace(r.PostFormValue(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, b.Invalid(name + " must be a whole number")
	}
	return n, nil
}

// admit applies the controls' guard to every dashboard route and, for
// the POST forms, refuses cross-site submissions.
func admit(g *guard.Guard, form bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.Admit(w, r, false) {
			return
		}
		if form {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := r.ParseForm(); err != nil {
				http.Error(w, "sandbox dashboard: unreadable form", http.StatusBadRequest)
				return
			}
			if !guard.SameOrigin(r) || subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(Token)) != 1 {
				http.Error(w, "sandbox dashboard: cross-site form post refused: "+
					"the form must come from a dashboard page of this sandbox", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// action runs one form action and answers like the JSON control would in
// spirit: success is a 303 back to the page the form came from (so a reload
// does not post again); an error re-renders that page with the error at the
// top and the status the JSON control would have answered.
func action(b Backend, do func(r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := PageName(r.PostFormValue("page"))
		refresh := Refresh(r.PostFormValue("refresh"))
		err := do(r)
		if err == nil {
			http.Redirect(w, r, Href(page, refresh), http.StatusSeeOther)
			return
		}
		// No auto-refresh on an error page: its URL is the POST action, and
		// the tester has to read the error first.
		status, msg := b.ActionError(err)
		Render(w, status, b.Dashboard(page, msg, 0))
	})
}

func page(b Backend, name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Render(w, http.StatusOK, b.Dashboard(name, "", Refresh(r.URL.Query().Get("refresh"))))
	})
}

// postPay is the I-paid button: it confirms the payment as
// POST /v1/payments/{id}/confirm would (no receipt) and redirects back to
// the page (303, so a reload does not post again). A payment that is no
// longer PENDING is left alone; the page then shows its status.
//
// Like the dashboard's forms it refuses a cross-site post (Origin,
// Sec-Fetch-Site) and one without the page's form token, so that a page
// elsewhere cannot press I-paid for a payer.
func postPay(b Backend, w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if r.ParseForm() != nil || !PageSameOrigin(r) ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(PageToken(r.PathValue("id")))) != 1 {
		http.Error(w, "payment page: cross-site or stale form refused; reload the page and press the button again",
			http.StatusForbidden)
		return
	}
	id := r.PathValue("id")
	if err := b.PayerPaid(id); err != nil {
		if b.StoreDown(err) {
			http.Error(w, "the sandbox's database cannot be used; try again after it is restarted", http.StatusServiceUnavailable)
			return
		}
		http.Error(w, "payment not found", http.StatusNotFound)
		return
	}
	http.Redirect(w, r, "/pay/"+id, http.StatusSeeOther)
}
