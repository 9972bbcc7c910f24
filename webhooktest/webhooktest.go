// Package webhooktest builds the webhook notifications the payment service
// sends, for a receiver's unit test: NewRequest turns a *paykit.Payment,
// *paykit.Payout or *paykit.Withdrawal into the POST its notify_url would
// get, which a test hands to its handler's ServeHTTP (or sends to a
// running receiver):
//
//	req, err := webhooktest.NewRequest("/paykit/webhook", "tok", &paykit.Payment{ID: "…", Status: paykit.PaymentStatusCompleted, …})
//	rec := httptest.NewRecorder()
//	handler.ServeHTTP(rec, req)
//
// The body is byte for byte what the service writes for the resource's
// current state (the sandbox is the reference: its deliveries are the
// test of this package), so a receiver that parses it in a test parses the
// real thing.
package webhooktest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// NewRequest builds the notification the service sends to target for
// resource, a *paykit.Payment, *paykit.Payout or *paykit.Withdrawal in the
// state to announce: a POST with Content-Type application/json, the
// resource as the service writes it in the body (amounts with the decimal
// places the service gave them, times in UTC to the second), and token in
// X-Notification-Token when token is not "".
//
// The service sends a payment's NotificationToken; it sends no token for
// a payout (the API has none) and does not deliver withdrawals to a
// notify_url at all (the sandbox's listen feed carries them, with its
// session's token): pass "" to build exactly what a payout's notify_url
// gets, or the listen session's token to build what `paykit listen`
// forwards. No User-Agent is set: the service's own is not part of the
// contract.
//
// target is an absolute http(s) URL (the request can then be sent with an
// http.Client) or a path such as "/paykit/webhook" (for a handler's
// ServeHTTP, like httptest.NewRequest). A nil or unsupported resource, a
// bad target, or a token with a control character or a space is an error,
// and nothing is built.
func NewRequest(target, token string, resource any) (*http.Request, error) {
	u, err := url.Parse(target)
	switch {
	case target == "" || err != nil:
		return nil, fmt.Errorf("webhooktest: the target %q is not a URL or a path", target)
	case u.Scheme != "" && (u.Scheme != "http" && u.Scheme != "https" || u.Host == ""):
		return nil, fmt.Errorf("webhooktest: the target must be an http(s) URL or a path, not a %q URL", u.Scheme)
	case u.Scheme == "" && !strings.HasPrefix(target, "/"):
		return nil, fmt.Errorf("webhooktest: the target %q is neither an http(s) URL nor a path beginning with /", target)
	}
	for _, c := range []byte(token) {
		if c <= ' ' || c == 0x7f {
			// A header value cannot carry it as the service would send it;
			// the token itself is a secret and is not repeated here.
			return nil, errors.New("webhooktest: the token contains a space or a control character")
		}
	}
	b, err := body(resource)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("webhooktest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Notification-Token", token)
	}
	return req, nil
}

// body is the body NewRequest sends for resource: the resource as the
// service writes it in a notification (and in a GET's answer).
func body(resource any) ([]byte, error) {
	var v any
	switch r := resource.(type) {
	case *paykit.Payment:
		if r == nil {
			return nil, errors.New("webhooktest: the payment is nil")
		}
		v = paymentBody(r)
	case *paykit.Payout:
		if r == nil {
			return nil, errors.New("webhooktest: the payout is nil")
		}
		v = payoutBody(r)
	case *paykit.Withdrawal:
		if r == nil {
			return nil, errors.New("webhooktest: the withdrawal is nil")
		}
		v = withdrawalBody(r)
	default:
		return nil, fmt.Errorf("webhooktest: %T is not a *paykit.Payment, *paykit.Payout or *paykit.Withdrawal", resource)
	}
	return json.Marshal(v)
}

// number is a JSON number written as given.
type number string

func (n number) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// scaled writes d with the decimal places it carries, and at least
// minPlaces: the service writes an amount as it was given (1500.50 stays
// 1500.50) and a USDT figure with at least two places.
func scaled(d decimal.Decimal, minPlaces int32) number {
	return number(d.StringFixed(max(-d.Exponent(), minPlaces)))
}

// stamp writes a time as the service does: RFC 3339, UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// The bodies below list the members in the service's order; a member the
// service leaves out when empty has omitempty, one it writes as null is a
// pointer.

type requisites struct {
	Type   string `json:"type"`
	Value  string `json:"value"`
	Bank   string `json:"bank"`
	Holder string `json:"holder"`
}

type payment struct {
	ID         string     `json:"id"`
	ExtID      string     `json:"ext_id"`
	Amount     number     `json:"amount"`
	Currency   string     `json:"currency"`
	Status     string     `json:"status"`
	Method     string     `json:"method"`
	Requisites requisites `json:"requisites"`
	PaymentURL *string    `json:"payment_url"`
	ValidUntil string     `json:"valid_until"`
	CreatedAt  string     `json:"created_at"`
	USDTRate   number     `json:"usdt_rate"`
}

// paymentBody is p as a notification (and GET) writes it: the requisites'
// bank is the bank's name, or its code for CROSS_BORDER.
func paymentBody(p *paykit.Payment) payment {
	bank := p.Requisites.BankName
	if p.Method == paykit.MethodCrossBorder {
		bank = p.Requisites.BankCode
	}
	v := payment{ID: p.ID, ExtID: p.ExtID, Amount: scaled(p.Amount, 0), Currency: p.Currency, Status: string(p.Status),
		Method: string(p.Method), ValidUntil: stamp(p.ValidUntil), CreatedAt: stamp(p.CreatedAt), USDTRate: scaled(p.USDTRate, 0),
		Requisites: requisites{Type: string(p.Requisites.Type), Value: p.Requisites.Value, Bank: bank, Holder: p.Requisites.Holder}}
	if p.PaymentURL != "" {
		u := p.PaymentURL
		v.PaymentURL = &u
	}
	return v
}

type payout struct {
	ID              string `json:"id"`
	ExtID           string `json:"ext_id"`
	Amount          number `json:"amount"`
	Currency        string `json:"currency"`
	Method          string `json:"method"`
	Requisites      string `json:"requisites"`
	HolderName      string `json:"holder_name"`
	Bank            string `json:"bank"`
	Status          string `json:"status"`
	ProviderOrderID string `json:"provider_order_id,omitempty"`
	CreatedAt       string `json:"created_at"`
	CompletedAt     string `json:"completed_at,omitempty"`
}

func payoutBody(p *paykit.Payout) payout {
	v := payout{ID: p.ID, ExtID: p.ExtID, Amount: scaled(p.Amount, 0), Currency: p.Currency, Method: string(p.Method),
		Requisites: p.Requisites, HolderName: p.HolderName, Bank: p.Bank, Status: string(p.Status),
		ProviderOrderID: p.ProviderOrderID, CreatedAt: stamp(p.CreatedAt)}
	if !p.CompletedAt.IsZero() {
		v.CompletedAt = stamp(p.CompletedAt)
	}
	return v
}

type withdrawal struct {
	ID        string  `json:"id"`
	Amount    number  `json:"amount"`
	Fee       number  `json:"fee"`
	Currency  string  `json:"currency"`
	Address   string  `json:"address"`
	TxHash    *string `json:"tx_hash"`
	Status    string  `json:"status"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

func withdrawalBody(w *paykit.Withdrawal) withdrawal {
	v := withdrawal{ID: w.ID, Amount: scaled(w.Amount, 2), Fee: scaled(w.Fee, 2), Currency: w.Currency, Address: w.Address,
		Status: string(w.Status), CreatedAt: stamp(w.CreatedAt), UpdatedAt: stamp(w.UpdatedAt)}
	if w.TxHash != "" {
		h := w.TxHash
		v.TxHash = &h
	}
	return v
}
