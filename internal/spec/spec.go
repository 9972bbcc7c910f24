// Package spec holds what SPEC.md fixes and both sides of the API check:
// the limits of the request fields and the table of error codes, written
// once. The SDK validates with them and re-exports what is public under its
// own names; the sandbox enforces and answers with them.
//
// It imports nothing but the standard library, so that anything in the
// module may import it: amounts are plain integers here, and each side
// turns them into its own decimal type.
package spec

// Limits of the request fields (SPEC.md, "Limits" and the endpoints'
// tables).
const (
	// MinPaymentAmount and MaxPaymentAmount bound a payment's amount, in
	// RUB, both inclusive.
	MinPaymentAmount = 100
	MaxPaymentAmount = 300000
	// MaxExtIDLength is the longest payment ext_id, in characters (Unicode
	// code points, not bytes). The spec gives no bound for a payout's.
	MaxExtIDLength = 255
	// MaxAttachmentSize is the largest receipt a confirm carries: the
	// spec's 10 MB, in decimal bytes.
	MaxAttachmentSize = 10_000_000
	// DefaultPayoutListLimit is the payout list's limit when none is sent.
	DefaultPayoutListLimit = 100
)

// Scales of money: the most decimals an amount may have. The spec is
// silent; these are the SDK's and the sandbox's rule (DESIGN.md, fourth
// round), the scale each currency can move at: kopecks for RUB, TRC-20
// USDT's six decimals.
const (
	// RUBScale applies to payments, payouts and dispute amounts.
	RUBScale = 2
	// USDTScale applies to transfers and withdrawals.
	USDTScale = 6
)

// The payment methods (SPEC.md, create payment), by name, for the code
// that treats one of them apart.
const (
	// MethodCard is the method of a create that names none.
	MethodCard = "CARD"
	// MethodSBP is the spec's SBP.
	MethodSBP = "SBP"
	// MethodSIM is the spec's SIM.
	MethodSIM = "SIM"
	// MethodCrossBorder's requisites are a foreign bank's, and its RUB
	// amount is also given in the local currency.
	MethodCrossBorder = "CROSS_BORDER"
)

// PaymentMethods are the payment methods a create may name.
var PaymentMethods = []string{MethodCard, MethodSBP, MethodSIM, MethodCrossBorder}

// Countries are the countries of a CROSS_BORDER payment.
var Countries = []string{"TJ", "KZ", "UZ", "KG"}

// PayoutMethods are the payout methods.
var PayoutMethods = []string{"card", "sbp"}

// ErrorCode is a row of SPEC.md's table of error codes.
type ErrorCode struct {
	// Code is what the error body's "error" field carries, such as "PAY_003".
	Code string
	// HTTPStatus is the status the code is answered with.
	HTTPStatus int
	// Meaning is the table's description.
	Meaning string
	// RaisedBy names the operations that answer it, in the spec's words.
	RaisedBy []string
}

// ErrorCodes is SPEC.md's table, in its order. PAY_001 has two rows: it
// means "internal error" with 500 and "payout not found" with 404.
var ErrorCodes = []ErrorCode{
	{CodePAY001, 500, "Internal error", []string{"create payment", "confirm payment"}},
	{CodePAY001, 404, "Payout not found", []string{"get payout by id", "get payout by ext id"}},
	{CodePAY002, 400, "Invalid parameters (ext_id, amount, method)", []string{"create payment", "create payout", "open dispute"}},
	{CodePAY003, 409, "A payment (or payout) with this ext_id already exists", []string{"create payment", "create payout"}},
	{CodePAY004, 503, "No requisites available", []string{"create payment"}},
	{CodePAY005, 429, "Too many payments with the same amount", []string{"create payment"}},
	{CodePAY006, 404, "Payment not found", []string{"get payment", "confirm", "cancel", "open dispute", "cancel dispute"}},
	{CodePAY007, 400, "Payment cannot be cancelled (status is not PENDING)", []string{"cancel payment"}},
	{CodePAY008, 400, "Payment cannot be confirmed (status is not PENDING)", []string{"confirm payment"}},
	{CodeDIS001, 400, "A dispute can be opened only when status is CANCELLED or CANCELLED_APPEAL", []string{"open dispute"}},
	{CodeDIS002, 409, "A dispute already exists", []string{"open dispute"}},
	{CodeDIS003, 400, "Only a dispute in status DISPUTE can be cancelled", []string{"cancel dispute"}},
	{CodeSYS001, 500, "Internal error", []string{"create payout", "cancel dispute"}},
	{CodeWDR001, 400, "Invalid parameters", []string{"create withdrawal"}},
	{CodeWDR002, 400, "Insufficient funds", []string{"create withdrawal"}},
	{CodeWDR003, 404, "Withdrawal not found", []string{"get withdrawal"}},
	{CodeTRF001, 400, "Invalid parameters", []string{"create transfer"}},
	{CodeTRF002, 404, "Terminal not found", []string{"create transfer"}},
	{CodeTRF003, 400, "Insufficient funds on the source terminal", []string{"create transfer"}},
}

// IsCode reports whether code is one of the table's codes (exact case).
func IsCode(code string) bool { return codes[code] }

var codes = func() map[string]bool {
	m := make(map[string]bool, len(ErrorCodes))
	for _, c := range ErrorCodes {
		m[c.Code] = true
	}
	return m
}()

// The codes of ErrorCodes, by name, so that both sides answer and compare
// them without a string literal that a typo could change.
const (
	// CodePAY001 is an internal error of create and confirm payment (500),
	// and "payout not found" of the payout reads (404).
	CodePAY001 = "PAY_001"
	// CodePAY002 is invalid parameters of payments, payouts and disputes.
	CodePAY002 = "PAY_002"
	// CodePAY003 is an ext_id already used by a payment or payout.
	CodePAY003 = "PAY_003"
	// CodePAY004 is no requisites available.
	CodePAY004 = "PAY_004"
	// CodePAY005 is too many pending payments with the same amount.
	CodePAY005 = "PAY_005"
	// CodePAY006 is payment not found.
	CodePAY006 = "PAY_006"
	// CodePAY007 is a cancel of a payment that is not PENDING.
	CodePAY007 = "PAY_007"
	// CodePAY008 is a confirm of a payment that is not PENDING.
	CodePAY008 = "PAY_008"
	// CodeDIS001 is a dispute opened from a status that allows none.
	CodeDIS001 = "DIS_001"
	// CodeDIS002 is a second dispute of one payment.
	CodeDIS002 = "DIS_002"
	// CodeDIS003 is a cancel of a dispute that is not open.
	CodeDIS003 = "DIS_003"
	// CodeSYS001 is an internal error of create payout and cancel dispute.
	CodeSYS001 = "SYS_001"
	// CodeWDR001 is invalid parameters of a withdrawal.
	CodeWDR001 = "WDR_001"
	// CodeWDR002 is insufficient funds for a withdrawal.
	CodeWDR002 = "WDR_002"
	// CodeWDR003 is withdrawal not found.
	CodeWDR003 = "WDR_003"
	// CodeTRF001 is invalid parameters of a transfer.
	CodeTRF001 = "TRF_001"
	// CodeTRF002 is a transfer's terminal not found.
	CodeTRF002 = "TRF_002"
	// CodeTRF003 is insufficient funds on a transfer's source terminal.
	CodeTRF003 = "TRF_003"
)

// The codes the sandbox answers that the spec's table does not list
// (openapi.yaml documents them as the sandbox's behaviour). The SDK's
// Observer passes AUTH_001, SANDBOX_STORE and SANDBOX_BUSY through as they
// are, and NOT_FOUND as "OTHER" (the root's observedCode).
const (
	// CodeAUTH001 is a request whose X-Identity or X-Signature is missing
	// or wrong (401).
	CodeAUTH001 = "AUTH_001"
	// CodeSandboxStore is every answer once the sandbox's database failed:
	// 503 when the change was not kept, 500 when it was committed and the
	// sync that would make it durable failed (it may or may not be kept).
	CodeSandboxStore = "SANDBOX_STORE"
	// CodeSandboxBusy is a large body refused while too many are read at
	// once (503).
	CodeSandboxBusy = "SANDBOX_BUSY"
	// CodeNotFound is a /v1/ path no endpoint serves (404).
	CodeNotFound = "NOT_FOUND"
)

// SandboxCodes are the codes above, outside ErrorCodes, that the merchant
// API of the sandbox answers.
var SandboxCodes = []string{CodeAUTH001, CodeSandboxStore, CodeSandboxBusy, CodeNotFound}
