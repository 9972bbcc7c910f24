package paykit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
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
	// ID is the service's UUID of the payout, the key of GetPayout.
	ID string `json:"id"`
	// ExtID is the merchant's payout id, unique per merchant: what makes
	// CreatePayout safe to retry.
	ExtID string `json:"ext_id"`
	// Amount is in RUB, exactly as the service wrote it.
	Amount decimal.Decimal `json:"amount"`
	// Currency is "RUB" for every payout of this API.
	Currency string `json:"currency"`
	// Method is how the money travels: to a card or through SBP.
	Method PayoutMethod `json:"method"`
	// Requisites is the recipient's card or phone number. Treat it as
	// sensitive: the SDK never logs it.
	Requisites string `json:"requisites"`
	// HolderName is the recipient's full name as given at creation.
	// Personal data: the SDK's log output leaves it out.
	HolderName string `json:"holder_name"`
	// Bank is the bank code given at creation, "" when none was.
	Bank string `json:"bank"`
	// Status is kept as sent, unknown values included; the SDK enforces no
	// transitions. completed, failed and cancelled are final. It is "" when
	// the answer carried none (null or missing), which WaitPayout waits on.
	Status PayoutStatus `json:"status"`
	// ProviderOrderID is set once the payout is processing.
	ProviderOrderID string `json:"provider_order_id"`
	// CreatedAt is the service's creation time, in UTC; the From and To of
	// ListPayoutsParams filter on it.
	CreatedAt time.Time `json:"created_at"`
	// CompletedAt is the zero time until the payout is completed.
	CompletedAt time.Time `json:"completed_at"`
	// Reconciled is true when CreatePayout's own answer was lost or
	// unusable and reading the payout back showed the call had taken
	// effect. Never set by decoding JSON.
	Reconciled bool `json:"-"`
}

func (p *Payout) reconciled() *bool { return &p.Reconciled }

func (p *Payout) facts() facts {
	return facts{id: p.ID, extID: p.ExtID, status: string(p.Status), amount: p.Amount}
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
	Amount          wireDec    `json:"amount"`
	Requisites      flexString `json:"requisites"`
	ProviderOrderID flexString `json:"provider_order_id"`
	CreatedAt       apiTime    `json:"created_at"`
	CompletedAt     apiTime    `json:"completed_at"`
}

// decode sets *p from the wire payout and checks its amount.
func (w *payoutWire) decode(p *Payout) error {
	*p = Payout(w.plainPayout)
	p.Amount = decimal.Decimal(w.Amount)
	p.Requisites, p.ProviderOrderID = string(w.Requisites), string(w.ProviderOrderID)
	p.CreatedAt, p.CompletedAt = time.Time(w.CreatedAt), time.Time(w.CompletedAt)
	return nil
}

// CreatePayoutParams are the inputs of CreatePayout. Bank and NotifyURL are
// optional and not sent when empty. The spec gives no length or format
// bounds for ext_id, requisites or holder name, so the SDK checks only that
// they are present.
type CreatePayoutParams struct {
	// ExtID is the merchant's unique payout id; it makes CreatePayout safe
	// to retry.
	ExtID string
	// Amount is in RUB, positive, with at most two decimals; the spec
	// gives no upper bound, so the service's refusal is the only one.
	Amount decimal.Decimal
	// Method is PayoutMethodCard or PayoutMethodSBP, and decides what
	// Requisites must hold.
	Method PayoutMethod
	// Requisites is the card number (PayoutMethodCard) or phone number
	// (PayoutMethodSBP).
	Requisites string
	// HolderName is the recipient's full name; the SDK only requires it
	// to be present, since the spec gives no format.
	HolderName string
	// Bank is a bank code, for SBP.
	Bank string
	// NotifyURL receives a webhook on each status change of the payout.
	// Payout notifications carry no token: see WebhookHandler for how they
	// are verified.
	NotifyURL string
}

type createPayoutBody struct {
	ExtID      string       `json:"ext_id"`
	Amount     json.Number  `json:"amount"`
	Method     PayoutMethod `json:"method"`
	Requisites string       `json:"requisites"`
	HolderName string       `json:"holder_name"`
	Bank       string       `json:"bank,omitempty"`
	NotifyURL  string       `json:"notify_url,omitempty"`
}

// CreatePayout orders a RUB payout. Like CreatePayment it is retried on
// transport errors and 5xx; a PAY_003 on a retry after an attempt that may
// have got through, or a 2xx that is not the payout params describe, is
// settled by reading the payout back by ext_id: it is returned, Reconciled,
// when its amount, method, requisites, holder name and bank all match, so
// a lost answer turns into neither a second payout nor a false failure.
// Amounts compare by value, the method and bank code without regard to
// case; a phone number (SBP) in any of its Russian forms ("+7 912
// 345-67-89", "8 912 3456789", "79123456789" and "9123456789" are one
// number); a card number by its digits, or a masked one by the digits it
// shows, which settle the create's own answer but not a read-back; the
// holder name without regard to case, spacing, Unicode form or ё against
// е. A bank the call did not send is not compared. Only when a field
// provably differs is it someone else's: ErrDuplicateExtID. One that
// cannot be compared (missing from the payout, a number in a form that
// does not map, a masked card read back) leaves the outcome unknown.
//
// When the call fails after an attempt may have reached the service, the
// error matches ErrUnknownOutcome beside its cause: read the payout back
// with GetPayoutByExtID before ordering it again.
func (c *Client) CreatePayout(ctx context.Context, params CreatePayoutParams) (*Payout, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	in := createPayoutBody{ExtID: params.ExtID, Amount: amount(params.Amount), Method: params.Method,
		Requisites: params.Requisites, HolderName: params.HolderName, Bank: params.Bank, NotifyURL: params.NotifyURL}
	return send(ctx, c, &call{op: opCreatePayout, path: "/v1/payouts", in: in, extID: params.ExtID},
		func(_ context.Context, got *Payout, from seenIn) (sameness, error) {
			return payoutMatches(params, got, from)
		})
}

// payoutMatches compares a payout, created or read back (from), with
// params: the amount by value, the method and bank code without regard to
// case, the requisites as the method makes them a phone number (samePhone)
// or a card number (sameCard), the holder name as sameName compares names.
// A field missing from the payout cannot be compared; a bank the call did
// not send is not compared at all (the service may choose one).
func payoutMatches(params CreatePayoutParams, got *Payout, from seenIn) (sameness, error) {
	var v comparison
	v.add(sameAmount("payout", got.Amount, params.Amount))
	v.add(sameCode("payout's method", string(got.Method), string(params.Method)))
	if params.Method == PayoutMethodSBP {
		v.add(samePhone("payout's requisites", got.Requisites, params.Requisites))
	} else {
		v.add(sameCard("payout's requisites", got.Requisites, params.Requisites, from))
	}
	v.add(sameName("payout's holder name", got.HolderName, params.HolderName))
	if params.Bank != "" {
		v.add(sameCode("payout's bank", got.Bank, params.Bank))
	}
	return v.result()
}

// GetPayout returns the payout with the given id (a UUID). A missing payout
// is ErrPayoutNotFound; an answer about another payout is an error.
func (c *Client) GetPayout(ctx context.Context, id string) (*Payout, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	return send[Payout](ctx, c, &call{op: opGetPayout, path: "/v1/payouts/" + id, id: id}, nil)
}

// GetPayoutByExtID returns the payout with the merchant's ext_id, which is
// path-escaped.
func (c *Client) GetPayoutByExtID(ctx context.Context, extID string) (*Payout, error) {
	if err := checkExtID(extID, 0); err != nil {
		return nil, err
	}
	return send[Payout](ctx, c, &call{op: opGetPayoutByExtID, path: "/v1/payouts/by-ext-id/" + pathSegment(extID), extID: extID}, nil)
}

// PayoutList is one page of payouts.
type PayoutList struct {
	// Payouts is this page, in the service's order (which the spec does
	// not state).
	Payouts []Payout `json:"payouts"`
	// Total counts all payouts matching the filter, on every page.
	Total int `json:"total"`
	// Limit is the page size the service used, which may be less than the
	// one asked for when the service caps it.
	Limit int `json:"limit"`
	// Offset is the position of this page's first payout among all
	// matching ones.
	Offset int `json:"offset"`
}

// UnmarshalJSON decodes a page in one pass: Payout.UnmarshalJSON per item
// would scan each a second time.
func (l *PayoutList) UnmarshalJSON(b []byte) error {
	var page payoutPage
	if err := json.Unmarshal(b, &page); err != nil {
		return err
	}
	return page.decode(l)
}

// payoutPage is a page as sent; AllPayouts tells an absent Total or
// Offset from 0.
type payoutPage struct {
	Payouts []payoutWire `json:"payouts"`
	Total   *int         `json:"total"`
	Limit   int          `json:"limit"`
	Offset  *int         `json:"offset"`
}

func (page *payoutPage) decode(l *PayoutList) error {
	*l = PayoutList{Limit: page.Limit}
	if page.Total != nil {
		l.Total = *page.Total
	}
	if page.Offset != nil {
		l.Offset = *page.Offset
	}
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
	// Status keeps only payouts in this status. A status filter over
	// payouts that change while you page can miss some; see AllPayouts.
	Status PayoutStatus
	// From and To bound the creation time; sent as RFC 3339 in UTC with
	// their sub-second digits (none when zero), so the window is exactly
	// the one given. Whether the service treats them as inclusive is not
	// in the spec.
	From, To time.Time
	// Limit is the page size, sent as given: the spec shows no maximum, so
	// the SDK caps nothing and the service may answer fewer (PayoutList.Limit
	// says how many it used).
	Limit int
	// Offset is how many matching payouts to skip; AllPayouts starts here.
	Offset int
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
		q.Set("from", p.From.UTC().Format(time.RFC3339Nano))
	}
	if !p.To.IsZero() {
		q.Set("to", p.To.UTC().Format(time.RFC3339Nano))
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q, nil
}

// ListPayouts returns one page of payouts. The SDK sends Limit as given (it
// sets no maximum of its own, since the spec shows none); a service may
// answer fewer payouts than asked, and the envelope says how many match.
func (c *Client) ListPayouts(ctx context.Context, params ListPayoutsParams) (*PayoutList, error) {
	l := new(PayoutList)
	if _, err := c.listPayouts(ctx, params, l); err != nil {
		return nil, err
	}
	return l, nil
}

// listPayouts reads one page into l and returns its envelope as sent.
func (c *Client) listPayouts(ctx context.Context, params ListPayoutsParams, l *PayoutList) (*payoutPage, error) {
	q, err := params.query()
	if err != nil {
		return nil, err
	}
	page, err := send[payoutPage](ctx, c, &call{op: opListPayouts, path: "/v1/payouts", query: q}, nil)
	if err != nil {
		return nil, err
	}
	if err := page.decode(l); err != nil {
		return nil, fmt.Errorf("paykit: %s: decoding response: %w", opListPayouts.name, err)
	}
	return page, nil
}

// Errors that end an AllPayouts iteration that would otherwise page
// forever, stop silently after one page, or merge payouts into one.
var (
	errPagingStuck = errors.New("paykit: AllPayouts: the service answered a page with no payout not already seen (does it ignore offset?)")
	errNoTotal     = errors.New("paykit: AllPayouts: the payout list has no total, so paging cannot know when to stop")
	errNoID        = errors.New("paykit: AllPayouts: the service listed a payout without an id")
)

// allPayoutsWindow is how many pages' ids AllPayouts remembers: enough for
// the shifts of a changing list, and a bound on its memory.
const allPayoutsWindow = 4

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
// The sequence can be ranged over again, and from several goroutines at
// once: each range starts from params afresh.
//
// A page may be shorter than Limit: the next starts after the payouts
// received. Offset paging over a changing set shifts items between pages
// (newest first, new payouts push older ones onto the next page again), so
// AllPayouts remembers the ids of the latest four pages (400 at the
// default limit; its memory stays flat, as BenchmarkAllPayoutsMillion
// shows) and does not yield a payout listed again within them. A payout
// moving the other way (an oldest-first list losing items, a status filter
// whose matches change) can be missed: to enumerate a fixed set, bound the
// window with To (and From) in the past.
//
// A non-empty page with no payout not already seen (a service that ignores
// offset) ends the iteration with an error, and so do an envelope whose
// offset is not the one asked for or that has no total, and a payout
// without an id.
func (c *Client) AllPayouts(ctx context.Context, params ListPayoutsParams) iter.Seq2[Payout, error] {
	return func(yield func(Payout, error) bool) {
		p := params                           // each range pages from the caller's params afresh
		seen := make(map[string]int)          // id -> the latest page that listed it
		var recent [allPayoutsWindow][]string // the ids of the latest pages, a ring
		var page PayoutList
		for n := allPayoutsWindow; ; n++ {
			env, err := c.listPayouts(ctx, p, &page)
			switch {
			case err != nil:
			case env.Total == nil:
				err = errNoTotal
			case env.Offset != nil && *env.Offset != p.Offset:
				err = errPagingStuck
			}
			if err != nil {
				yield(Payout{}, err)
				return
			}
			// Forget the page leaving the window, unless a later one listed
			// the same payout again.
			ids := &recent[n%allPayoutsWindow]
			for _, id := range *ids {
				if seen[id] == n-allPayoutsWindow {
					delete(seen, id)
				}
			}
			*ids = (*ids)[:0]
			fresh := 0
			for _, po := range page.Payouts {
				if po.ID == "" {
					yield(Payout{}, errNoID)
					return
				}
				*ids = append(*ids, po.ID)
				_, dup := seen[po.ID]
				seen[po.ID] = n
				if dup {
					continue
				}
				fresh++
				if !yield(po, nil) {
					return
				}
			}
			if len(page.Payouts) > 0 && fresh == 0 {
				yield(Payout{}, errPagingStuck)
				return
			}
			p.Offset += len(page.Payouts)
			if len(page.Payouts) == 0 || p.Offset >= page.Total {
				return
			}
		}
	}
}
