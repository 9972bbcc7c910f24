package sandbox

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Payout statuses.
const (
	PayoutPending    = ledger.PayoutPending
	PayoutProcessing = ledger.PayoutProcessing
	PayoutCompleted  = ledger.PayoutCompleted
	PayoutFailed     = ledger.PayoutFailed
	PayoutCancelled  = ledger.PayoutCancelled
)

// Payout list limits: the spec's default, and the sandbox's own cap
// (larger limits are lowered to it and the envelope says so).
const (
	defaultPayoutLimit = spec.DefaultPayoutListLimit
	maxPayoutLimit     = 1000
)

type payout = ledger.Payout

type payoutView struct {
	ID              string  `json:"id"`
	ExtID           string  `json:"ext_id"`
	Amount          api.RUB `json:"amount"`
	Currency        string  `json:"currency"`
	Method          string  `json:"method"`
	Requisites      string  `json:"requisites"`
	HolderName      string  `json:"holder_name"`
	Bank            string  `json:"bank"`
	Status          string  `json:"status"`
	ProviderOrderID string  `json:"provider_order_id,omitempty"`
	CreatedAt       string  `json:"created_at"`
	CompletedAt     string  `json:"completed_at,omitempty"`
}

func payoutViewOf(p *payout) payoutView {
	v := payoutView{ID: p.ID, ExtID: p.ExtID, Amount: api.RUB(p.Amount), Currency: "RUB", Method: p.Method,
		Requisites: p.Requisites, HolderName: p.HolderName, Bank: p.Bank, Status: p.Status,
		ProviderOrderID: p.ProviderOrderID, CreatedAt: api.Timestamp(p.CreatedAt)}
	if !p.CompletedAt.IsZero() {
		v.CompletedAt = api.Timestamp(p.CompletedAt)
	}
	return v
}

type createPayoutReq struct {
	ExtID      string     `json:"ext_id"`
	Amount     api.Amount `json:"amount"`
	Method     string     `json:"method"`
	Requisites string     `json:"requisites"`
	HolderName string     `json:"holder_name"`
	Bank       string     `json:"bank"`
	NotifyURL  string     `json:"notify_url"`
}

func (s *Server) createPayout(_ *http.Request, m *merchant, body []byte) (any, *api.Error) {
	var req createPayoutReq
	if err := api.DecodeJSON(body, &req); err != nil {
		return nil, api.Invalid("PAY_002", "body", "request body is not valid JSON: "+err.Error())
	}
	method := req.Method
	switch {
	case strings.TrimSpace(req.ExtID) == "":
		return nil, api.Invalid("PAY_002", "ext_id", "ext_id is required")
	case utf8.RuneCountInString(req.ExtID) > MaxPayoutExtIDLength:
		return nil, api.Invalid("PAY_002", "ext_id", fmt.Sprintf(api.MaxLengthMessageFormat, "ext_id", MaxPayoutExtIDLength))
	case !req.Amount.Set || !req.Amount.D.IsPositive():
		return nil, api.Invalid("PAY_002", "amount", "amount must be positive")
	case !rubPrecise(req.Amount.D):
		return nil, api.Invalid("PAY_002", "amount", rubScaleMessage)
	case !slices.Contains(spec.PayoutMethods, method):
		return nil, api.Invalid("PAY_002", "method", "method must be exactly card or sbp (lower case)")
	case strings.TrimSpace(req.Requisites) == "":
		return nil, api.Invalid("PAY_002", "requisites", "requisites are required")
	case strings.TrimSpace(req.HolderName) == "":
		return nil, api.Invalid("PAY_002", "holder_name", "holder_name is required")
	case req.NotifyURL != "" && !validNotifyURL(req.NotifyURL):
		return nil, api.Invalid("PAY_002", "notify_url", "notify_url must be an absolute http(s) URL")
	}
	if aerr := api.TooLong("PAY_002", "requisites", req.Requisites, MaxRequisitesLength, "holder_name", req.HolderName,
		MaxNameLength, "bank", req.Bank, MaxNameLength, "notify_url", req.NotifyURL, MaxURLLength); aerr != nil {
		return nil, aerr
	}
	s.begin()
	defer s.commit()
	now := s.tickLocked()
	if s.st.payoutByExt(m, req.ExtID) != nil {
		return nil, &api.Error{Status: http.StatusConflict, Code: "PAY_003",
			Message: "a payout with this ext_id already exists", Data: map[string]any{"ext_id": req.ExtID}}
	}
	p := &payout{Merchant: m, ID: uuid.NewString(), ExtID: req.ExtID, Amount: req.Amount.D, Method: method,
		Requisites: req.Requisites, HolderName: req.HolderName, Bank: req.Bank, NotifyURL: req.NotifyURL,
		Status: PayoutPending, CreatedAt: now.Truncate(time.Second)}
	s.st.addPayout(p)
	s.pilot.PayoutEntered(now, p.ID, p.Status, p.Requisites)
	return payoutViewOf(p), nil
}

func payoutNotFound() *api.Error {
	return api.NewError(http.StatusNotFound, "PAY_001", "payout not found")
}

func (s *Server) getPayout(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	p := s.st.payout(r.PathValue("id"))
	if p == nil || p.Merchant != m {
		return nil, payoutNotFound()
	}
	return payoutViewOf(p), nil
}

func (s *Server) getPayoutByExtID(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	p := s.st.payoutByExt(m, r.PathValue("extId"))
	if p == nil {
		return nil, payoutNotFound()
	}
	return payoutViewOf(p), nil
}

type payoutListView struct {
	Payouts []payoutView `json:"payouts"`
	Total   int          `json:"total"`
	Limit   int          `json:"limit"`
	Offset  int          `json:"offset"`
}

// parseBound reads a from/to query value: RFC 3339, or a bare date, which
// means the start of that day for from and its last second for to.
func parseBound(v string, end bool) (time.Time, error) {
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

// listPayouts filters by status and by created_at within [from, to], both
// bounds inclusive, and pages in creation order (oldest first), which stays
// stable while new payouts are added at the end.
func (s *Server) listPayouts(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	q := r.URL.Query()
	var from, to time.Time
	var err error
	if v := q.Get("from"); v != "" {
		if from, err = parseBound(v, false); err != nil {
			return nil, api.Invalid("PAY_002", "from", "from must be an ISO 8601 time")
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = parseBound(v, true); err != nil {
			return nil, api.Invalid("PAY_002", "to", "to must be an ISO 8601 time")
		}
	}
	limit, offset := defaultPayoutLimit, 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, api.Invalid("PAY_002", "limit", "limit must be a non-negative integer")
		}
		if n > 0 {
			limit = min(n, maxPayoutLimit)
		}
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, api.Invalid("PAY_002", "offset", "offset must be a non-negative integer")
		}
		offset = n
	}
	status := q.Get("status")
	switch status {
	case "", PayoutPending, PayoutProcessing, PayoutCompleted, PayoutFailed, PayoutCancelled:
	default:
		return nil, api.Invalid("PAY_002", "status", "status must be exactly pending, processing, completed, failed or cancelled (lower case)")
	}

	s.begin()
	defer s.commit()
	page, total := s.st.listPayouts(m, payoutFilter{status: status, from: from, to: to}, limit, offset)
	out := payoutListView{Payouts: make([]payoutView, 0, len(page)), Total: total, Limit: limit, Offset: offset}
	for _, p := range page {
		out.Payouts = append(out.Payouts, payoutViewOf(p))
	}
	return out, nil
}

// SetPayoutStatus plays the provider's side of a payout: pending may move
// to processing, completed, failed or cancelled, processing to completed,
// failed or cancelled. Entering processing (or completing directly) sets
// provider_order_id; completing sets completed_at. A webhook is sent when
// the payout has a notify_url.
func (s *Server) SetPayoutStatus(id, status string) error {
	_, err := s.setPayoutStatus(id, status)
	return s.orStoreErr(err)
}

func (s *Server) setPayoutStatus(id, status string) (*payoutView, error) {
	s.begin()
	defer s.commit()
	now := s.tickLocked()
	if lerr := ledger.CheckPayoutTarget(status); lerr != nil {
		return nil, controlError(lerr)
	}
	p := s.st.payout(id)
	if p == nil {
		return nil, notFound("payout", id)
	}
	lp := ledger.Payout{ID: p.ID, Status: p.Status, ProviderOrderID: p.ProviderOrderID, CompletedAt: p.CompletedAt}
	if lerr := ledger.MovePayout(&lp, status, now); lerr != nil {
		return nil, controlError(lerr)
	}
	p.Status, p.ProviderOrderID, p.CompletedAt = lp.Status, lp.ProviderOrderID, lp.CompletedAt
	s.st.savePayout(p)
	s.pilot.PayoutEntered(now, p.ID, status, p.Requisites)
	v := payoutViewOf(p)
	if p.NotifyURL != "" {
		s.enqueueLocked(hook{Key: "payout:" + p.ID, Resource: "payout", ID: p.ID, Status: status, At: now},
			p.NotifyURL, "", v)
	}
	return &v, nil
}
