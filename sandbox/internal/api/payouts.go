package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// MaxPayoutLimit is the sandbox's own cap on a payout list's limit:
// larger limits are lowered to it and the envelope says so.
const MaxPayoutLimit = 1000

// PayoutBody is a payout on the wire: the answer of the payout endpoints
// and the body of a payout webhook.
type PayoutBody struct {
	// ID is the service's id.
	ID string `json:"id"`
	// ExtID is the merchant's payout id.
	ExtID string `json:"ext_id"`
	// Amount is in RUB.
	Amount RUB `json:"amount"`
	// Currency is always RUB.
	Currency string `json:"currency"`
	// Method is card or sbp.
	Method string `json:"method"`
	// Requisites is the card or phone number paid to.
	Requisites string `json:"requisites"`
	// HolderName is the receiver's name.
	HolderName string `json:"holder_name"`
	// Bank is the receiver's bank, as given.
	Bank string `json:"bank"`
	// Status is lower case, as the spec writes it.
	Status string `json:"status"`
	// ProviderOrderID is the provider's reference, once it has one.
	ProviderOrderID string `json:"provider_order_id,omitempty"`
	// CreatedAt is when it was created.
	CreatedAt string `json:"created_at"`
	// CompletedAt is when it was paid, once it was.
	CompletedAt string `json:"completed_at,omitempty"`
}

// PayoutView renders a payout.
func PayoutView(p *ledger.Payout) PayoutBody {
	v := PayoutBody{ID: p.ID, ExtID: p.ExtID, Amount: RUB(p.Amount), Currency: "RUB", Method: p.Method,
		Requisites: p.Requisites, HolderName: p.HolderName, Bank: p.Bank, Status: p.Status,
		ProviderOrderID: p.ProviderOrderID, CreatedAt: Timestamp(p.CreatedAt)}
	if !p.CompletedAt.IsZero() {
		v.CompletedAt = Timestamp(p.CompletedAt)
	}
	return v
}

type payoutCreateReq struct {
	ExtID      string `json:"ext_id"`
	Amount     Amount `json:"amount"`
	Method     string `json:"method"`
	Requisites string `json:"requisites"`
	HolderName string `json:"holder_name"`
	Bank       string `json:"bank"`
	NotifyURL  string `json:"notify_url"`
}

// payoutNewOf checks a create payout body field by field.
func payoutNewOf(body []byte) (NewPayout, *Error) {
	var req payoutCreateReq
	if err := decodeJSON(body, &req, false); err != nil {
		return NewPayout{}, Invalid(spec.CodePAY002, "body", "request body is not valid JSON: "+err.Error())
	}
	bad := func(field, msg string) (NewPayout, *Error) { return NewPayout{}, Invalid(spec.CodePAY002, field, msg) }
	switch {
	case strings.TrimSpace(req.ExtID) == "":
		return bad("ext_id", "ext_id is required")
	case utf8.RuneCountInString(req.ExtID) > MaxPayoutExtIDLength:
		return bad("ext_id", fmt.Sprintf(MaxLengthMessageFormat, "ext_id", MaxPayoutExtIDLength))
	case !req.Amount.Set || !req.Amount.D.IsPositive():
		return bad("amount", "amount must be positive")
	case !rubPrecise(req.Amount.D):
		return bad("amount", rubScaleMessage)
	case !slices.Contains(spec.PayoutMethods, req.Method):
		return bad("method", "method must be exactly card or sbp (lower case)")
	case strings.TrimSpace(req.Requisites) == "":
		return bad("requisites", "requisites are required")
	case strings.TrimSpace(req.HolderName) == "":
		return bad("holder_name", "holder_name is required")
	case req.NotifyURL != "" && !ValidURL(req.NotifyURL):
		return bad("notify_url", "notify_url must be an absolute http(s) URL")
	}
	if aerr := tooLong(spec.CodePAY002, capped{"requisites", req.Requisites, MaxRequisitesLength},
		capped{"holder_name", req.HolderName, MaxNameLength}, capped{"bank", req.Bank, MaxNameLength},
		capped{"notify_url", req.NotifyURL, MaxURLLength}); aerr != nil {
		return NewPayout{}, aerr
	}
	return NewPayout{ExtID: req.ExtID, Amount: req.Amount.D, Method: req.Method, Requisites: req.Requisites,
		HolderName: req.HolderName, Bank: req.Bank, NotifyURL: req.NotifyURL}, nil
}

func (a *API) createPayout(_ *http.Request, key string, body []byte) (any, *Error) {
	in, aerr := payoutNewOf(body)
	if aerr != nil {
		return nil, aerr
	}
	p, lerr := a.b.CreatePayout(key, in)
	if lerr != nil {
		return nil, alreadyExists(lerr, in.ExtID)
	}
	return PayoutView(&p), nil
}

func (a *API) getPayout(r *http.Request, key string, _ []byte) (any, *Error) {
	p, lerr := a.b.Payout(key, r.PathValue("id"))
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return PayoutView(&p), nil
}

func (a *API) getPayoutByExtID(r *http.Request, key string, _ []byte) (any, *Error) {
	p, lerr := a.b.PayoutByExtID(key, r.PathValue("extId"))
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return PayoutView(&p), nil
}

type payoutListBody struct {
	Payouts []PayoutBody `json:"payouts"`
	Total   int          `json:"total"`
	Limit   int          `json:"limit"`
	Offset  int          `json:"offset"`
}

// payoutBound reads a from/to query value: RFC 3339, or a bare date, which
// means the start of that day for from and its last second for to.
func payoutBound(v string, end bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return time.Time{}, err
	}
	if end {
		t = t.Add(24*time.Hour - time.Second)
	}
	return t, nil
}

// payoutQueryOf checks a payout list's query: status, created_at within
// [from, to] (both bounds inclusive), limit and offset.
func payoutQueryOf(r *http.Request) (PayoutQuery, *Error) {
	q := r.URL.Query()
	out := PayoutQuery{Limit: spec.DefaultPayoutListLimit}
	var err error
	if v := q.Get("from"); v != "" {
		if out.From, err = payoutBound(v, false); err != nil {
			return out, Invalid(spec.CodePAY002, "from", "from must be an ISO 8601 time")
		}
	}
	if v := q.Get("to"); v != "" {
		if out.To, err = payoutBound(v, true); err != nil {
			return out, Invalid(spec.CodePAY002, "to", "to must be an ISO 8601 time")
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return out, Invalid(spec.CodePAY002, "limit", "limit must be a non-negative integer")
		}
		if n > 0 {
			out.Limit = min(n, MaxPayoutLimit)
		}
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return out, Invalid(spec.CodePAY002, "offset", "offset must be a non-negative integer")
		}
		out.Offset = n
	}
	out.Status = q.Get("status")
	switch out.Status {
	case "", ledger.PayoutPending, ledger.PayoutProcessing, ledger.PayoutCompleted, ledger.PayoutFailed, ledger.PayoutCancelled:
	default:
		return out, Invalid(spec.CodePAY002, "status", "status must be exactly pending, processing, completed, failed or cancelled (lower case)")
	}
	return out, nil
}

// listPayouts pages in creation order (oldest first), which stays stable
// while new payouts are added at the end.
func (a *API) listPayouts(r *http.Request, key string, _ []byte) (any, *Error) {
	q, aerr := payoutQueryOf(r)
	if aerr != nil {
		return nil, aerr
	}
	page, total := a.b.Payouts(key, q)
	out := payoutListBody{Payouts: make([]PayoutBody, 0, len(page)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range page {
		out.Payouts = append(out.Payouts, PayoutView(&page[i]))
	}
	return out, nil
}
