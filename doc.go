// Package paykit is a typed Go client for the merchant API of the payment
// acceptance, payout and withdrawal service: RUB payments, RUB payouts, and
// USDT balances, transfers and TRC-20 withdrawals on the merchant's terminals.
//
// Money is decimal.Decimal throughout, never float64. Every method takes a
// context, validates its input before any network call, and returns either a
// typed resource or an error that can be inspected with errors.Is against the
// sentinels of this package (ErrDuplicateExtID, ErrInsufficientFunds, …) or
// with errors.As against *Error and *ValidationError.
//
// See the README for the retry and idempotency guarantees of each operation.
package paykit
