package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Payment statuses, upper case as the spec writes them (the ledger's).
const (
	statusPending         = ledger.PaymentPending
	statusProcessing      = ledger.PaymentProcessing
	statusCompleted       = ledger.PaymentCompleted
	statusCancelled       = ledger.PaymentCancelled
	statusDispute         = ledger.PaymentDispute
	statusCancelledAppeal = ledger.PaymentCancelledAppeal
)

const (
	methodCard        = "CARD"
	methodSBP         = "SBP"
	methodSIM         = "SIM"
	methodCrossBorder = "CROSS_BORDER"
)

// Limits of the spec.
var (
	minPaymentAmount = decimal.NewFromInt(spec.MinPaymentAmount)
	maxPaymentAmount = decimal.NewFromInt(spec.MaxPaymentAmount)
)

const (
	maxExtIDLen      = spec.MaxExtIDLength
	maxReceiptBytes  = spec.MaxAttachmentSize // the SDK's MaxAttachmentSize
	confirmedMessage = "Payment confirmation received, the transfer is awaiting verification"
)

type payment = ledger.Payment

type dispute = ledger.Dispute

type requisitesView struct {
	Type        string   `json:"type"`
	Value       string   `json:"value"`
	Bank        string   `json:"bank"`
	BankCode    string   `json:"bank_code,omitempty"`
	BankName    string   `json:"bank_name,omitempty"`
	Holder      string   `json:"holder"`
	Country     string   `json:"country,omitempty"`
	Currency    string   `json:"currency,omitempty"`
	AmountLocal *api.RUB `json:"amount_local,omitempty"`
}

type paymentView struct {
	ID         string         `json:"id"`
	ExtID      string         `json:"ext_id"`
	Amount     api.RUB        `json:"amount"`
	Currency   string         `json:"currency"`
	Status     string         `json:"status"`
	Method     string         `json:"method"`
	Requisites requisitesView `json:"requisites"`
	PaymentURL *string        `json:"payment_url"`
	ValidUntil string         `json:"valid_until"`
	CreatedAt  string         `json:"created_at"`
	USDTRate   *api.RUB       `json:"usdt_rate,omitempty"`
	Message    string         `json:"message,omitempty"`
}

type disputeView struct {
	Amount     *api.RUB `json:"amount"`
	ReceiptURL string   `json:"receipt_url"`
	Comment    string   `json:"comment"`
	CreatedAt  string   `json:"created_at"`
}

type disputeOpenView struct {
	ID        string      `json:"id"`
	ExtID     string      `json:"ext_id"`
	Amount    api.RUB     `json:"amount"`
	Currency  string      `json:"currency"`
	Status    string      `json:"status"`
	Method    string      `json:"method"`
	Dispute   disputeView `json:"dispute"`
	CreatedAt string      `json:"created_at"`
}

type disputeCancelView struct {
	ID     string `json:"id"`
	ExtID  string `json:"ext_id"`
	Status string `json:"status"`
}

// view renders a payment. full selects the create response's requisites
// (bank_code, or bank_name/country/currency/amount_local for CROSS_BORDER);
// otherwise requisites carry type, value, bank and holder only.
func paymentViewOf(p *payment, full, withRate bool) paymentView {
	v := paymentView{
		ID: p.ID, ExtID: p.ExtID, Amount: api.RUB(p.Amount), Currency: "RUB", Status: p.Status,
		Method: p.Method, ValidUntil: api.Timestamp(p.ValidUntil), CreatedAt: api.Timestamp(p.CreatedAt),
		Requisites: requisitesView{Type: p.ReqType, Value: p.ReqValue, Holder: p.Holder},
	}
	if p.PaymentURL != "" {
		u := p.PaymentURL
		v.PaymentURL = &u
	}
	if withRate {
		r := api.RUB(p.USDTRate)
		v.USDTRate = &r
	}
	if p.Method == methodCrossBorder {
		v.Requisites.Bank = p.Bank.Code
		if full {
			al := api.RUB(p.AmountLocal)
			v.Requisites.BankName = p.Bank.Name
			v.Requisites.Country = p.Country
			v.Requisites.Currency = p.Currency
			v.Requisites.AmountLocal = &al
		}
	} else {
		v.Requisites.Bank = p.Bank.Name
		if full {
			v.Requisites.BankCode = p.Bank.Code
		}
	}
	return v
}

// getView is what GET returns and what a payment webhook carries.
func getView(p *payment) paymentView { return paymentViewOf(p, false, true) }

func disputeOpenViewOf(p *payment) disputeOpenView {
	d := p.Dispute
	dv := disputeView{ReceiptURL: d.ReceiptURL, Comment: d.Comment, CreatedAt: api.Timestamp(d.CreatedAt)}
	if d.Amount != nil {
		a := api.RUB(*d.Amount)
		dv.Amount = &a
	}
	return disputeOpenView{ID: p.ID, ExtID: p.ExtID, Amount: api.RUB(p.Amount), Currency: "RUB",
		Status: "dispute", Method: p.Method, Dispute: dv, CreatedAt: api.Timestamp(p.CreatedAt)}
}

// amountKey groups equal amounts (1500.5 and 1500.50) for PAY_005.
func amountKey(d decimal.Decimal) string { return d.String() }

// tickLocked returns the sandbox time and expires what is due.
func (s *Server) tickLocked() time.Time {
	now := s.nowLocked()
	s.expireDueLocked(now)
	return now
}

// movePaymentLocked moves p by event through the ledger's rule
// (ledger.MovePayment, the payment state machine), and on success runs
// apply (what the move records beside the status: a receipt, a dispute),
// keeps the money it credited and the payment, tells the autopilot and
// queues the webhook: the one way a payment changes status, so the
// same-amount counter, the credit and the webhook can never be forgotten.
// A refusal changes nothing.
func (s *Server) movePaymentLocked(p *payment, event ledger.PaymentEvent, apply func()) *ledger.Error {
	was := p.Status
	bal := p.Terminal.Balance
	credited, lerr := ledger.MovePayment(p, &bal, event)
	if lerr != nil {
		return lerr
	}
	if apply != nil {
		apply()
	}
	if !credited.IsZero() {
		p.Terminal.Balance = bal
		s.st.saveTerminal(p.Merchant, p.Terminal)
	}
	status := p.Status
	s.st.savePayment(p, was)
	if s.pilot != nil {
		comment := ""
		if p.Dispute != nil {
			comment = p.Dispute.Comment
		}
		s.pilot.PaymentEntered(s.nowLocked(), p.ID, status, p.Amount, comment)
	}
	if p.NotifyURL != "" {
		s.enqueueLocked(hook{Key: "payment:" + p.ID, Resource: "payment", ID: p.ID, Status: status, At: s.nowLocked()},
			p.NotifyURL, p.Token, getView(p))
	}
	return nil
}

type createPaymentReq struct {
	ExtID             string     `json:"ext_id"`
	Amount            api.Amount `json:"amount"`
	Method            string     `json:"method"`
	Bank              string     `json:"bank"`
	Country           string     `json:"country"`
	ClientID          string     `json:"client_id"`
	NotifyURL         string     `json:"notify_url"`
	NotificationToken string     `json:"notification_token"`
}

func validNotifyURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (s *Server) createPayment(r *http.Request, m *merchant, body []byte) (any, *api.Error) {
	var req createPaymentReq
	if err := api.DecodeJSON(body, &req); err != nil {
		return nil, api.Invalid("PAY_002", "body", "request body is not valid JSON: "+err.Error())
	}
	if strings.TrimSpace(req.ExtID) == "" {
		// Blank is no order id, as for payouts: no merchant could find
		// the payment by it.
		return nil, api.Invalid("PAY_002", "ext_id", "ext_id is required")
	}
	if n := utf8.RuneCountInString(req.ExtID); n > maxExtIDLen {
		return nil, api.Invalid("PAY_002", "ext_id", fmt.Sprintf("ext_id must be 1 to %d characters", maxExtIDLen))
	}
	if !req.Amount.Set {
		return nil, api.Invalid("PAY_002", "amount", "amount is required")
	}
	amt := req.Amount.D
	if amt.LessThan(minPaymentAmount) || amt.GreaterThan(maxPaymentAmount) {
		return nil, api.Invalid("PAY_002", "amount", "amount must be "+paymentAmountRange)
	}
	if !rubPrecise(amt) {
		return nil, api.Invalid("PAY_002", "amount", rubScaleMessage)
	}
	method := req.Method
	if method == "" {
		method = methodCard
	}
	if !slices.Contains(spec.PaymentMethods, method) {
		return nil, api.Invalid("PAY_002", "method", "method must be exactly SBP, CARD, SIM or CROSS_BORDER (upper case)")
	}
	country := req.Country
	if country != "" {
		if method != methodCrossBorder {
			return nil, api.Invalid("PAY_002", "country", "country is only for CROSS_BORDER payments")
		}
		if _, ok := countries[country]; !ok {
			return nil, api.Invalid("PAY_002", "country", "country must be exactly TJ, KZ, UZ or KG (upper case)")
		}
	}
	if req.NotifyURL != "" && !validNotifyURL(req.NotifyURL) {
		return nil, api.Invalid("PAY_002", "notify_url", "notify_url must be an absolute http(s) URL")
	}
	if aerr := api.TooLong("PAY_002", "client_id", req.ClientID, MaxNameLength, "notification_token", req.NotificationToken,
		MaxTokenLength, "notify_url", req.NotifyURL, MaxURLLength); aerr != nil {
		return nil, aerr
	}

	s.begin()
	defer s.commit()
	now := s.tickLocked()
	if s.st.paymentByExt(m, req.ExtID) != nil {
		return nil, &api.Error{Status: http.StatusConflict, Code: "PAY_003",
			Message: "a payment with this ext_id already exists", Data: map[string]any{"ext_id": req.ExtID}}
	}
	b, country, aerr := pickBank(s.banks, method, req.Bank, country)
	if aerr != nil {
		return nil, aerr
	}
	var term *terminal
	for _, t := range m.Terminals {
		if t.Active {
			term = t
			break
		}
	}
	if term == nil {
		return nil, api.NewError(http.StatusServiceUnavailable, "PAY_004", "no requisites available: the merchant has no active terminal")
	}
	if aerr := s.refuseCreate(amt); aerr != nil { // test value 404.04 (testvalues.go)
		return nil, aerr
	}
	if s.st.pendingWithAmount(m, amountKey(amt)) >= s.cfg.MaxSamePendingAmount {
		return nil, api.NewError(http.StatusTooManyRequests, "PAY_005", "too many pending payments with the same amount")
	}

	p := &payment{
		Merchant: m, Terminal: term, ID: uuid.NewString(), ExtID: req.ExtID, Amount: amt, Method: method,
		Bank: ledger.Bank(b), Holder: holders[rand.IntN(len(holders))], ClientID: req.ClientID,
		NotifyURL: req.NotifyURL, Token: req.NotificationToken, Status: statusPending,
		CreatedAt: now.Truncate(time.Second), USDTRate: s.cfg.USDTRate,
	}
	p.ValidUntil = p.CreatedAt.Add(s.cfg.PaymentTTL)
	p.PaymentURL = s.baseURL(r) + "/pay/" + p.ID
	switch method {
	case methodCard:
		p.ReqType, p.ReqValue = "card", cardNumber()
	case methodSBP:
		p.ReqType, p.ReqValue = "sbp", digits("+79", 9)
	case methodSIM:
		p.ReqType, p.ReqValue = "sim", digits("+79", 9)
	case methodCrossBorder:
		c := countries[country]
		p.ReqType, p.ReqValue = "phone", digits(c.prefix, c.digits)
		p.Country, p.Currency = country, c.currency
		p.AmountLocal = amt.Mul(s.rates[country]).Round(2)
	}
	s.st.addPayment(p)
	s.armExpiryLocked(now)
	s.pilot.PaymentCreated(now, p.ID, amt)
	return paymentViewOf(p, true, true), nil
}

// pickBank applies the bank and country filters of a create request. A
// code that is unknown, inactive, or of the wrong country leaves no
// requisites to offer, hence PAY_004 rather than PAY_002.
func pickBank(banks []bank, method, code, country string) (bank, string, *api.Error) {
	none := func(why string) (bank, string, *api.Error) {
		return bank{}, "", api.NewError(http.StatusServiceUnavailable, "PAY_004", "no requisites available: "+why)
	}
	want := "RU"
	if method == methodCrossBorder {
		want = country
	}
	if code == "" {
		if want == "" {
			want = countryOrder[0]
		}
		b, ok := firstActiveBank(banks, want)
		if !ok {
			return none("no active bank")
		}
		return b, want, nil
	}
	b, ok := findBank(banks, code)
	if !ok {
		return none("unknown bank " + strconv.Quote(code))
	}
	if !b.IsActive {
		return none("bank " + code + " is not active")
	}
	if method == methodCrossBorder && b.Country == "RU" || want != "" && b.Country != want {
		return none("bank " + code + " does not serve this method or country")
	}
	return b, b.Country, nil
}

var holders = []string{"Ivan P.", "Anna S.", "Olga K.", "Dmitry V.", "Elena M.", "Sergey N."}

// digits returns prefix followed by n random decimal digits.
func digits(prefix string, n int) string {
	b := []byte(prefix)
	for range n {
		b = append(b, byte('0'+rand.IntN(10)))
	}
	return string(b)
}

// cardNumber returns a random 16-digit card number (Mir range 2200) with a
// valid Luhn check digit, so that client-side card validators accept it.
func cardNumber() string {
	b := []byte(digits("2200", 11))
	sum := 0
	for i := len(b) - 1; i >= 0; i-- {
		d := int(b[i] - '0')
		if (len(b)-1-i)%2 == 0 { // these digits are doubled once the check digit is appended
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return string(append(b, byte('0'+(10-sum%10)%10)))
}

// lookupPayment finds a payment of m by id; another merchant's payment is
// not found, exactly like a missing one.
func (s *Server) lookupPayment(m *merchant, id string) (*payment, *api.Error) {
	p := s.st.payment(id)
	if p == nil || p.Merchant != m {
		return nil, api.NewError(http.StatusNotFound, "PAY_006", "payment not found")
	}
	return p, nil
}

func (s *Server) getPayment(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	s.tickLocked()
	p, aerr := s.lookupPayment(m, r.PathValue("id"))
	if aerr != nil {
		return nil, aerr
	}
	return getView(p), nil
}

func (s *Server) getPaymentByExtID(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	s.tickLocked()
	p := s.st.paymentByExt(m, r.PathValue("extId"))
	if p == nil {
		return nil, api.NewError(http.StatusNotFound, "PAY_006", "payment not found")
	}
	return getView(p), nil
}

// rubDecimals is the scale of RUB: kopecks. No bank moves a fraction of
// a kopeck, so a finer amount is refused, not rounded.
const rubDecimals = spec.RUBScale

// Messages that name the spec's limits.
var (
	// rubScaleMessage is the PAY_002 message of a finer RUB amount.
	rubScaleMessage    = fmt.Sprintf("RUB amounts have at most %d decimal places (kopecks)", spec.RUBScale)
	paymentAmountRange = fmt.Sprintf("from %d to %d RUB", spec.MinPaymentAmount, spec.MaxPaymentAmount)
	receiptSizeMessage = fmt.Sprintf("attachment is larger than %d MB (%d bytes)", spec.MaxAttachmentSize/1_000_000, spec.MaxAttachmentSize)
)

// rubPrecise reports whether d has at most rubDecimals decimal places
// (trailing zeros do not count: 1500.500 is 1500.50).
func rubPrecise(d decimal.Decimal) bool {
	return d.Equal(d.Truncate(rubDecimals))
}

// isImage reports whether data is an image by its leading bytes, as the
// SDK's check before it sends a receipt: what http.DetectContentType calls
// image/*, and HEIC/HEIF (what phones save), an ISO-BMFF "ftyp" box with a
// HEIF brand, which it does not know.
func isImage(data []byte) bool {
	if strings.HasPrefix(http.DetectContentType(data), "image/") {
		return true
	}
	if len(data) >= 12 && string(data[4:8]) == "ftyp" {
		switch string(data[8:12]) {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return true
		}
	}
	return false
}

// receiptSize checks a confirm body and returns the size of its optional
// attachment part. The spec's content type is multipart/form-data, so
// anything else (JSON, no Content-Type, an empty body without a
// multipart type) is PAY_002; a form without an attachment part is "no
// file", which the spec allows.
func receiptSize(r *http.Request, body []byte) (int, *api.Error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return 0, api.Invalid("PAY_002", "content_type", "confirm takes multipart/form-data (with an optional attachment part)")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	size := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return size, nil
		}
		if err != nil {
			return 0, api.Invalid("PAY_002", "attachment", "malformed multipart body")
		}
		if part.FormName() != "attachment" {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, maxReceiptBytes+1))
		if err != nil {
			return 0, api.Invalid("PAY_002", "attachment", "malformed multipart body")
		}
		if len(data) > maxReceiptBytes {
			return 0, api.Invalid("PAY_002", "attachment", receiptSizeMessage)
		}
		// The bytes decide, as in the SDK: a part labelled image/png that
		// holds a PDF is no image, and an image sent as
		// application/octet-stream is one.
		if len(data) > 0 && !isImage(data) {
			return 0, api.Invalid("PAY_002", "attachment", "attachment must be an image (PNG, JPEG, GIF, WebP, BMP or HEIC, told by its bytes)")
		}
		size = len(data)
	}
}

func (s *Server) confirmPayment(r *http.Request, m *merchant, body []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	s.tickLocked()
	p, aerr := s.lookupPayment(m, r.PathValue("id"))
	if aerr != nil {
		return nil, aerr
	}
	size, aerr := receiptSize(r, body)
	if aerr != nil {
		return nil, aerr
	}
	if lerr := s.confirmLocked(p, size); lerr != nil {
		return nil, api.FromLedger(lerr)
	}
	v := paymentViewOf(p, false, false)
	v.Message = confirmedMessage
	return v, nil
}

// confirmLocked is the payer's "I paid" (the API's confirm, the payer
// page), keeping the size of the receipt sent with it.
func (s *Server) confirmLocked(p *payment, receipt int) *ledger.Error {
	return s.movePaymentLocked(p, ledger.Confirm, func() { p.Receipt = receipt })
}

func (s *Server) cancelPayment(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	s.tickLocked()
	p, aerr := s.lookupPayment(m, r.PathValue("id"))
	if aerr != nil {
		return nil, aerr
	}
	if lerr := s.movePaymentLocked(p, ledger.Cancel, nil); lerr != nil {
		return nil, api.FromLedger(lerr)
	}
	return paymentViewOf(p, false, false), nil
}

type openDisputeReq struct {
	Amount     api.Amount `json:"amount"`
	ReceiptURL string     `json:"receipt_url"`
	Comment    string     `json:"comment"`
}

func (s *Server) openDispute(r *http.Request, m *merchant, body []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	now := s.tickLocked()
	p, aerr := s.lookupPayment(m, r.PathValue("id"))
	if aerr != nil {
		return nil, aerr
	}
	var req openDisputeReq
	if err := api.DecodeJSON(body, &req); err != nil {
		return nil, api.Invalid("PAY_002", "body", "request body is not valid JSON: "+err.Error())
	}
	if req.Amount.Set && (req.Amount.D.LessThan(minPaymentAmount) || req.Amount.D.GreaterThan(maxPaymentAmount)) {
		// What a payer paid is a payment amount: the same bounds, or an
		// approved dispute could credit any sum.
		return nil, api.Invalid("PAY_002", "amount", "dispute amount must be "+paymentAmountRange)
	}
	if req.Amount.Set && !rubPrecise(req.Amount.D) {
		return nil, api.Invalid("PAY_002", "amount", rubScaleMessage)
	}
	if aerr := api.TooLong("PAY_002", "comment", req.Comment, MaxCommentLength, "receipt_url", req.ReceiptURL, MaxURLLength); aerr != nil {
		return nil, aerr
	}
	if req.ReceiptURL != "" && !validNotifyURL(req.ReceiptURL) {
		return nil, api.Invalid("PAY_002", "receipt_url", "receipt_url must be an absolute http(s) URL")
	}
	d := &dispute{ReceiptURL: req.ReceiptURL, Comment: req.Comment, CreatedAt: now.Truncate(time.Second)}
	if req.Amount.Set {
		a := req.Amount.D
		d.Amount = &a
	}
	if lerr := s.movePaymentLocked(p, ledger.OpenDispute, func() { p.Dispute = d }); lerr != nil {
		return nil, api.FromLedger(lerr)
	}
	return disputeOpenViewOf(p), nil
}

func (s *Server) cancelDispute(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	s.tickLocked()
	p, aerr := s.lookupPayment(m, r.PathValue("id"))
	if aerr != nil {
		return nil, aerr
	}
	if lerr := s.movePaymentLocked(p, ledger.CancelDispute, nil); lerr != nil {
		return nil, api.FromLedger(lerr)
	}
	return disputeCancelView{ID: p.ID, ExtID: p.ExtID, Status: "cancelled_appeal"}, nil
}

// Outcomes accepted by VerifyPayment and ReviewDispute.
const (
	OutcomeCompleted = ledger.OutcomeCompleted
	OutcomeCancelled = ledger.OutcomeCancelled
	OutcomeApproved  = ledger.OutcomeApproved
	OutcomeRejected  = ledger.OutcomeRejected
)

// VerifyPayment plays the service's verification of a PROCESSING payment:
// "completed" completes it and credits amount/usdt_rate USDT to its
// terminal, "cancelled" cancels it (transfer not found).
func (s *Server) VerifyPayment(id, outcome string) error {
	_, err := s.verifyPayment(id, outcome)
	return s.orStoreErr(err)
}

func (s *Server) verifyPayment(id, outcome string) (*paymentView, error) {
	event, lerr := ledger.VerifyEvent(outcome)
	return s.controlPayment(id, event, lerr)
}

// ReviewDispute plays the review of an open dispute: "approved" completes
// the payment and credits its terminal (with the dispute's amount when one
// was given, else the payment's), "rejected" cancels it again.
func (s *Server) ReviewDispute(id, outcome string) error {
	_, err := s.reviewDispute(id, outcome)
	return s.orStoreErr(err)
}

func (s *Server) reviewDispute(id, outcome string) (*paymentView, error) {
	event, lerr := ledger.ReviewEvent(outcome)
	return s.controlPayment(id, event, lerr)
}

// controlPayment moves payment id by a control's event (or refuses the
// control's bad outcome, outcomeErr), in the controls' error form.
func (s *Server) controlPayment(id string, event ledger.PaymentEvent, outcomeErr *ledger.Error) (*paymentView, error) {
	s.begin()
	defer s.commit()
	s.tickLocked()
	if outcomeErr != nil {
		return nil, controlError(outcomeErr)
	}
	p := s.st.payment(id)
	if p == nil {
		return nil, notFound("payment", id)
	}
	if lerr := s.movePaymentLocked(p, event, nil); lerr != nil {
		return nil, controlError(lerr)
	}
	v := getView(p)
	return &v, nil
}
