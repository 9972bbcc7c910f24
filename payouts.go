package paykit

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// PayoutMethod is how a payout reaches the recipient.
type PayoutMethod string

// Payout methods.
const (
	PayoutMethodCard PayoutMethod = "card"
	PayoutMethodSBP  PayoutMethod = "sbp"
)

var payoutMethods = []PayoutMethod{PayoutMethodCard, PayoutMethodSBP}

// UnmarshalJSON keeps an unknown method as sent.
func (m *PayoutMethod) UnmarshalJSON(b []byte) (err error) {
	*m, err = decodeEnum(b, payoutMethods...)
	return err
}

// PayoutStatus is the state of a payout.
type PayoutStatus string

// Payout statuses.
const (
	PayoutStatusPending    PayoutStatus = "pending"
	PayoutStatusProcessing PayoutStatus = "processing"
	PayoutStatusCompleted  PayoutStatus = "completed"
	PayoutStatusFailed     PayoutStatus = "failed"
	PayoutStatusCancelled  PayoutStatus = "cancelled"
)

var payoutStatuses = []PayoutStatus{PayoutStatusPending, PayoutStatusProcessing, PayoutStatusCompleted,
	PayoutStatusFailed, PayoutStatusCancelled}

// UnmarshalJSON normalises known statuses and keeps an unknown one as sent.
func (s *PayoutStatus) UnmarshalJSON(b []byte) (err error) {
	*s, err = decodeEnum(b, payoutStatuses...)
	return err
}

// Payout is a RUB payout from the merchant to a card or through SBP.
type Payout struct {
	ID       string          `json:"id"`
	ExtID    string          `json:"ext_id"`
	Amount   decimal.Decimal `json:"amount"`
	Currency string          `json:"currency"`
	Method   PayoutMethod    `json:"method"`
	// Requisites is the recipient's card or phone number. Treat it as
	// sensitive: the SDK never logs it.
	Requisites string `json:"requisites"`
	HolderName string `json:"holder_name"`
	// Bank is the bank code given at creation, "" when none was.
	Bank   string       `json:"bank"`
	Status PayoutStatus `json:"status"`
	// ProviderOrderID is set once the payout is processing.
	ProviderOrderID string    `json:"provider_order_id"`
	CreatedAt       time.Time `json:"created_at"`
	// CompletedAt is the zero time until the payout is completed.
	CompletedAt time.Time `json:"completed_at"`
}

// UnmarshalJSON decodes a payout leniently.
func (p *Payout) UnmarshalJSON(b []byte) error {
	w := payoutWire{plainPayout: plainPayout(*p)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return w.decode(p)
}

// plainPayout is Payout without its UnmarshalJSON method.
type plainPayout Payout

// payoutWire is a payout as sent: the leniently decoded fields have wire
// types and shadow Payout's own; the others decode into plainPayout.
type payoutWire struct {
	plainPayout
	Requisites      flexString `json:"requisites"`
	ProviderOrderID flexString `json:"provider_order_id"`
	CreatedAt       apiTime    `json:"created_at"`
	CompletedAt     apiTime    `json:"completed_at"`
}

// decode sets *p from the wire payout and checks its amount.
func (w *payoutWire) decode(p *Payout) error {
	*p = Payout(w.plainPayout)
	p.Requisites, p.ProviderOrderID = string(w.Requisites), string(w.ProviderOrderID)
	p.CreatedAt, p.CompletedAt = time.Time(w.CreatedAt), time.Time(w.CompletedAt)
	return checkAmounts(p.Amount)
}

// LogValue implements slog.LogValuer: the payout with the card or phone
// number masked and without the recipient's name.
func (p Payout) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", p.ID),
		slog.String("ext_id", p.ExtID),
		slog.String("amount", p.Amount.String()),
		slog.String("currency", p.Currency),
		slog.String("status", string(p.Status)),
		slog.String("method", string(p.Method)),
		slog.String("requisites", maskTail(p.Requisites)),
		slog.String("bank", p.Bank),
	)
}

// CreatePayoutParams are the inputs of CreatePayout. Bank and NotifyURL are
// optional and not sent when empty. The spec gives no length or format
// bounds for ext_id, requisites or holder name, so the SDK checks only that
// they are present.
type CreatePayoutParams struct {
	// ExtID is the merchant's unique payout id; it makes CreatePayout safe
	// to retry.
	ExtID  string
	Amount decimal.Decimal
	Method PayoutMethod
	// Requisites is the card number (PayoutMethodCard) or phone number
	// (PayoutMethodSBP).
	Requisites string
	HolderName string
	// Bank is a bank code, for SBP.
	Bank      string
	NotifyURL string
}

func (p CreatePayoutParams) validate() error {
	if p.Method != PayoutMethodCard && p.Method != PayoutMethodSBP {
		return invalid("method", "must be card or sbp")
	}
	return firstError(
		checkExtID(p.ExtID, 0),
		checkPositive("amount", p.Amount),
		checkRequired("requisites", p.Requisites),
		checkRequired("holder_name", p.HolderName),
		checkURL("notify_url", p.NotifyURL))
}

type createPayoutBody struct {
	ExtID      string       `json:"ext_id"`
	Amount     amount       `json:"amount"`
	Method     PayoutMethod `json:"method"`
	Requisites string       `json:"requisites"`
	HolderName string       `json:"holder_name"`
	Bank       string       `json:"bank,omitempty"`
	NotifyURL  string       `json:"notify_url,omitempty"`
}

// CreatePayout orders a RUB payout. Like CreatePayment it is retried on
// transport errors and 5xx, and a PAY_003 on a retried attempt is reconciled
// by reading the payout back by ext_id: it is returned when its amount,
// method and requisites match params, so a lost answer never turns into a
// second payout nor into a false failure.
func (c *Client) CreatePayout(ctx context.Context, params CreatePayoutParams) (*Payout, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	return createByExtID(ctx, c, opCreatePayout, "/v1/payouts",
		createPayoutBody{ExtID: params.ExtID, Amount: amount(params.Amount), Method: params.Method,
			Requisites: params.Requisites, HolderName: params.HolderName, Bank: params.Bank, NotifyURL: params.NotifyURL},
		func(ctx context.Context) (*Payout, error) { return c.GetPayoutByExtID(ctx, params.ExtID) },
		func(got *Payout) bool {
			return got.Amount.Equal(params.Amount) && got.Method == params.Method && got.Requisites == params.Requisites
		})
}

// GetPayout returns the payout with the given id (a UUID). A missing payout
// is ErrPayoutNotFound.
func (c *Client) GetPayout(ctx context.Context, id string) (*Payout, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	return c.getPayout(ctx, opGetPayout, "/v1/payouts/"+id)
}

// GetPayoutByExtID returns the payout with the merchant's ext_id, which is
// path-escaped.
func (c *Client) GetPayoutByExtID(ctx context.Context, extID string) (*Payout, error) {
	if err := checkExtID(extID, 0); err != nil {
		return nil, err
	}
	return c.getPayout(ctx, opGetPayoutByExtID, "/v1/payouts/by-ext-id/"+pathSegment(extID))
}

func (c *Client) getPayout(ctx context.Context, op *operation, path string) (*Payout, error) {
	p := new(Payout)
	if err := c.do(ctx, request{op: op, path: path, out: p}); err != nil {
		return nil, err
	}
	return p, nil
}

// PayoutList is one page of payouts.
type PayoutList struct {
	Payouts []Payout `json:"payouts"`
	// Total counts all payouts matching the filter, on every page.
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// UnmarshalJSON decodes a page in one pass into wire payouts: letting
// encoding/json run Payout.UnmarshalJSON would scan every item a second time.
func (l *PayoutList) UnmarshalJSON(b []byte) error {
	var page struct {
		Payouts []payoutWire `json:"payouts"`
		Total   int          `json:"total"`
		Limit   int          `json:"limit"`
		Offset  int          `json:"offset"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return err
	}
	*l = PayoutList{Total: page.Total, Limit: page.Limit, Offset: page.Offset}
	if page.Payouts != nil {
		l.Payouts = make([]Payout, len(page.Payouts))
	}
	for i := range page.Payouts {
		if err := page.Payouts[i].decode(&l.Payouts[i]); err != nil {
			return err
		}
	}
	return nil
}

// ListPayoutsParams filter and page ListPayouts. Zero fields are not sent:
// the service then applies no filter, its default limit (100) and offset 0.
type ListPayoutsParams struct {
	Status PayoutStatus
	// From and To bound the creation time; sent as RFC 3339 in UTC.
	From, To time.Time
	Limit    int
	Offset   int
}

func (p ListPayoutsParams) query() (url.Values, error) {
	switch {
	case p.Limit < 0:
		return nil, invalid("limit", "must not be negative")
	case p.Offset < 0:
		return nil, invalid("offset", "must not be negative")
	case !p.From.IsZero() && !p.To.IsZero() && p.To.Before(p.From):
		return nil, invalid("to", "is before from")
	case p.Status != "" && !slices.Contains(payoutStatuses, p.Status):
		return nil, invalid("status", "is not a payout status")
	}
	q := url.Values{}
	if p.Status != "" {
		q.Set("status", string(p.Status))
	}
	if !p.From.IsZero() {
		q.Set("from", p.From.UTC().Format(time.RFC3339))
	}
	if !p.To.IsZero() {
		q.Set("to", p.To.UTC().Format(time.RFC3339))
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q, nil
}

// ListPayouts returns one page of payouts.
func (c *Client) ListPayouts(ctx context.Context, params ListPayoutsParams) (*PayoutList, error) {
	q, err := params.query()
	if err != nil {
		return nil, err
	}
	l := new(PayoutList)
	if err := c.do(ctx, request{op: opListPayouts, path: "/v1/payouts", query: q, out: l}); err != nil {
		return nil, err
	}
	return l, nil
}

// AllPayouts iterates over every payout matching params, fetching pages of
// params.Limit (the service's default when zero) from params.Offset until
// the reported total is reached or a page comes back empty:
//
//	for p, err := range c.AllPayouts(ctx, paykit.ListPayoutsParams{Status: paykit.PayoutStatusCompleted}) {
//		if err != nil { return err }
//		…
//	}
//
// An error is yielded once, with a zero Payout, and ends the iteration.
// Offset paging can skip or repeat an item if payouts are created during
// the iteration and the service orders newest first; filter by To to page
// over a fixed window.
func (c *Client) AllPayouts(ctx context.Context, params ListPayoutsParams) iter.Seq2[Payout, error] {
	return func(yield func(Payout, error) bool) {
		for {
			page, err := c.ListPayouts(ctx, params)
			if err != nil {
				yield(Payout{}, err)
				return
			}
			for _, p := range page.Payouts {
				if !yield(p, nil) {
					return
				}
			}
			params.Offset += len(page.Payouts)
			if len(page.Payouts) == 0 || params.Offset >= page.Total {
				return
			}
		}
	}
}
