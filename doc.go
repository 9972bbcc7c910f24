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
//	c, err := paykit.NewClient(baseURL, apiKey, paykit.HMACSigner(secret))
//	if err != nil {
//		return err
//	}
//	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{
//		ExtID:  "order-1001",                         // your order id: what makes a retry safe
//		Amount: decimal.RequireFromString("1500.50"), // RUB, never float64
//	})
//	if errors.Is(err, paykit.ErrUnknownOutcome) {
//		// The answer was lost: the payment may exist. Read it back by ext_id
//		// (c.GetPaymentByExtID) before creating it again.
//		return err
//	}
//	if err != nil {
//		return err
//	}
//	// Send the payer to p.PaymentURL, or show p.Requisites, before p.ValidUntil.
//	fmt.Println(p.ExtID, p.Status, p.Amount.StringFixed(2), p.Currency) // order-1001 PENDING 1500.50 RUB
//
// Example_firstCall runs it against the sandbox, the in-process stand-in for
// the service (package sandbox; sandbox/sandboxtest for tests).
//
// Before going live, call [Client.CheckCredentials] once at startup: it tells
// whether the service accepts the API key and the signing scheme.
//
// The retry and idempotency guarantees of each operation are in the
// repository's docs/calls.md (the README has the short version).
//
// Every answer is checked by the operation it answers, not call by call: a
// write's 2xx must carry what makes it the resource (id, ext_id, amount,
// status as the operation's answer has them), be about what was asked (the
// id in the path, the ext_id in the body) and match the request (amount and
// method of a create, the target state of a change). Anything else is read
// back, or for a money move reported as ErrUnknownOutcome: never returned as
// the result. [Client.Do] reaches any /v1/ path with the same error mapping,
// and [Client.WaitPayment] and [Client.WaitPayout] poll until a resource
// settles, the safety net for a lost webhook.
//
// # What the spec does not say
//
// The service's specification marks 19 points "not shown". For each, the
// SDK makes the choice that fails safe; here is that choice, and the test
// that holds it.
//
// Dispute-open response: the spec leaves requisites, payment_url,
// valid_until and usdt_rate out of it. [Client.OpenDispute] decodes what
// arrives and leaves the rest at zero values (empty Requisites, zero
// ValidUntil and USDTRate); read the whole payment with [Client.GetPayment].
// A retry settled by reading the payment back (DIS_002) returns it with
// Dispute nil: nothing in a result is made from the call's params.
// Tests: TestCancelAndDisputeOperations,
// TestOpenDisputeRetryFindingItOpenCarriesOnlyWhatWasRead.
//
// Payout ext_id, requisites and holder_name: no format or length is given,
// so the SDK requires only that each is present and not blank, sets no
// length limit, and path-escapes the ext_id in [Client.GetPayoutByExtID], so
// any characters round-trip. A refusal by the service is ErrInvalidParameters.
// Tests: TestCreatePayoutValidation, TestIntegrationPayoutExtIDsAndLimits.
//
// Timeout cancellation, its condition and moment: the SDK never expires a
// payment by its own clock, which may differ from the service's. Take
// Payment.ValidUntil as the deadline the service announced; after it, the
// service may cancel the payment at any moment (the sandbox does once its
// clock reaches valid_until). A late [Client.ConfirmPayment] then fails with
// ErrPaymentNotConfirmable (PAY_008) and the payment reads CANCELLED; a payer
// who paid anyway is handled with [Client.OpenDispute].
// Test: TestUnsaidValidityAndTimeout.
//
// Payout transitions: the SDK enforces none. Whatever status a read or a
// webhook carries is returned, an unknown one kept as sent. Treat completed,
// failed and cancelled as final and pending and processing as in flight; the
// sandbox moves pending to processing, completed, failed or cancelled, and
// processing to one of the three final states.
// Test: TestUnsaidPayoutAndWithdrawalTransitions.
//
// Withdrawal transitions: likewise not enforced. Treat completed and failed
// as final; the sandbox moves pending to processing, completed or failed,
// and processing to completed or failed (failed returns the frozen amount to
// the terminal's balance). Test: TestUnsaidPayoutAndWithdrawalTransitions.
//
// Success HTTP status codes: any 2xx is a success. A 2xx without a resource
// the SDK can decode (empty, null, 204, a proxy's HTML page, truncated JSON)
// is never taken for one: a read returns an error; a create or state change
// reads the resource back ([Client.GetPaymentByExtID],
// [Client.GetPayoutByExtID], [Client.GetPayment]) and returns it, marked
// Reconciled, when it shows the operation applied; [Client.CreateTransfer] and
// [Client.CreateWithdrawal] return an error matching ErrUnknownOutcome.
// Test: TestUnsaidSuccessStatusCodes.
//
// Payout list ordering and from/to bounds: the SDK sends From and To exactly
// as given (RFC 3339 in UTC, fractional seconds kept) and assumes neither
// bound is exclusive: when you chain windows, dedupe by payout id at the
// seams (the sandbox counts both bounds in). [Client.AllPayouts] never yields
// the same payout twice, whichever order the service lists in, even when
// payouts are created while it pages. Offset paging over a set that changes
// can still miss an item: with a Status filter, a payout that leaves that
// status during the iteration shifts later ones back a place. To see every
// payout, page over a closed time window (To in the past) without a Status
// filter, or filter on a final status, and check statuses on your side.
// Tests: TestUnsaidPayoutListOrderingNoDuplicates, TestUnsaidFromToSentAsGiven.
//
// Signature inputs and algorithm: [HMACSigner] is the SDK's default guess
// (lowercase hex HMAC-SHA256 over method, request URI and body); any other
// scheme plugs in as a [Signer] or [SignerFunc], signed anew for every
// attempt. [Client.CheckCredentials] tells at startup whether the service
// agrees. Tests: TestHMACSignerVectors, TestCustomSignerReplacesHMAC,
// TestCheckCredentialsAgainstSandbox.
//
// Response to a missing or invalid key or signature: any 401 or 403,
// whatever its body, is an *Error matching ErrUnauthorized and is never
// retried; from CheckCredentials its text says what to check. Tests:
// TestUnauthorizedWhateverTheBody, TestIntegrationAuth,
// TestCheckCredentialsOverHTTP.
//
// Webhook event kinds and payload: [WebhookHandler] relies on as little as
// possible. It tells a payment from a payout by the fields present, and with
// Client set it acts on the API's own copy, read back by id, so only the id
// in the body has to be right. Tests: TestWebhookKindRules,
// TestWebhookFetchBackPayment.
//
// Webhook triggers, retries and expected answer: the handler answers 200
// once the callback succeeded, 500 when it failed (so a sender that retries
// will), 400 for a body it cannot use, 401 for an unverified notification
// and 405 for a method other than POST. Deliveries may repeat or be missed:
// make callbacks idempotent (dedupe by id and status) and poll with
// [Client.GetPayment] what matters before a deadline. Tests:
// TestWebhookCallbackError, TestWebhookOnlyPost, TestWebhookDedupeExample,
// TestIntegrationWebhooks.
//
// Error message texts: the SDK never decides anything by a message. Meaning
// comes from the code and the HTTP status (PAY_001 is told apart by status
// alone), PAY_003's ext_id from the error's data ([Error.ExtID]); the
// message is only shown, with card and phone numbers masked. Tests:
// TestPAY001ToldApartByStatusNotText, TestDuplicateExtIDFromData.
//
// Errors of the terminals, balance, banks, withdrawal-fee and payout-list
// operations: any non-2xx is an *Error with its code and status; 401 and
// 403 match ErrUnauthorized, 5xx (after the read's retries) ErrInternal, and
// an unknown code stays readable in Error.Code. Tests:
// TestTerminalAndBalanceErrors, TestListBanksErrors, TestWithdrawalErrors,
// TestPayoutErrors.
//
// PAY_005 threshold and window: the SDK does not guess them. PAY_005 is
// ErrTooManySameAmount and is never retried, since the same amount at once
// would be refused again: vary the amount, or wait until pending payments of
// that amount end (the sandbox counts PENDING payments only, 5 by default).
// Tests: TestRetryableByClass, TestIntegrationSameAmountLimitFollowsExpiry.
//
// Rate limits: the SDK throttles nothing itself. A 429 without an API code
// is taken for a rate limiter: reads are retried with backoff that honours
// Retry-After (up to 60 s; longer is returned at once), and other calls are
// not re-sent on it. A Retry-After, in seconds or as a date, is read as at
// most a day, and no pause of [Client.WaitPayment] is longer. Tests:
// TestRetryableByClass, TestBackoffBoundsAndRetryAfter,
// TestCheckRetryStopsForContextAndRetryAfter,
// TestWaitersHonourAFarRetryAfterWithoutSpinning.
//
// Maximum payout list limit: the SDK sends ListPayoutsParams.Limit as given
// (zero: not sent, the service's default of 100 applies) and caps nothing;
// PayoutList.Limit reports what the service used. When a page holds fewer
// payouts than asked, [Client.AllPayouts] goes on from offset plus the
// page's length until Total. Test: TestUnsaidPayoutListLimit.
//
// Amount bounds of payouts, withdrawals and transfers: the SDK requires a
// positive amount and sets no upper bound; the service's refusal arrives as
// ErrInvalidParameters or ErrInsufficientFunds. Nor does the spec give any
// amount's scale: the SDK refuses, before sending, a RUB amount (payments,
// payouts, dispute amounts) with more than two decimals and a USDT amount
// (transfers, withdrawals) with more than six (TRC-20 USDT's own), a
// *ValidationError on "amount". The value counts, not its writing: 1500.500
// is two decimals, while 1500.505 and 300.00000000000004 (a float sum's
// residue) are amounts no payer or chain can move. The sandbox refuses them
// too; openapi.yaml marks the rule as the SDK's and the sandbox's. Amounts
// in answers are decoded whatever their scale. Tests:
// TestCreatePayoutValidation, TestCreateTransferValidation,
// TestCreateWithdrawalValidation, TestAmountScale.
//
// Validity span of a payment: Payment.ValidUntil, as the service sends it,
// is the authority; the SDK assumes no span. The sandbox's 20 minutes
// (sandbox.Config.PaymentTTL) is the sandbox's choice, not the service's.
// Test: TestUnsaidValidityAndTimeout.
//
// Versioning policy: every path the SDK sends starts with /v1 (after the
// base URL's own path, if any), fixed in this release. A service that has
// dropped /v1 answers 404, which surfaces as an *Error with HTTPStatus 404,
// not retried and never an unknown outcome. Another API version would come
// with a new SDK release (see CHANGELOG.md). Test: TestUnsaidVersioning.
package paykit
