// Package sandbox is a stateful implementation of the whole merchant API
// of SPEC.md (in memory, or in an SQLite file with Config.DBPath), served
// from the server side as an http.Handler:
// the stand-in for the real service in the SDK's integration tests, in the
// examples, and for merchants developing offline.
//
//	sb := sandbox.New(sandbox.Config{})
//	defer sb.Close()
//	ts := httptest.NewServer(sb)
//	defer ts.Close()
//	c, _ := paykit.NewClient(ts.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
//
// The binary cmd/paykit-sandbox serves the same handler on loopback;
// sandbox/README.md is the operator's manual (flags, -db, the container).
//
// # Merchants, credentials and terminals
//
// A zero Config serves one merchant, DefaultMerchant(DefaultAPIKey,
// DefaultSecret): key "pk_sandbox", secret "sk_sandbox_secret", terminals
// "term_sandbox_main" (1000.00 USDT) and "term_sandbox_reserve" (0.00),
// each with a withdrawal fee of 1.50 USDT. Terminal ids are per merchant.
//
// Every /v1/ request needs X-Identity (an API key) and X-Signature: the
// merchant's Signer (Merchant.Signer, by default paykit.HMACSigner of its
// Secret) over the request URI as sent (r.URL.RequestURI()) and the exact
// body bytes, compared in constant time; an unknown key is refused before a
// byte of the body is read. A missing or unknown key or a wrong signature
// answers 401 AUTH_001. Every resource is scoped to its merchant: another
// merchant's payment id answers PAY_006, like an unknown one.
//
// # Wire format
//
// Field names, shapes, status casing, error codes and HTTP statuses follow
// SPEC.md. Successful calls answer 200. Error bodies are always
// {"error":CODE,"message":TEXT,"data":{...}}; validation errors put the
// offending field in data.field, PAY_003 puts data.ext_id. Amounts are
// written as bare JSON numbers: RUB amounts exactly as the client sent them
// (1500.50 stays 1500.50), USDT figures with at least two decimals
// (1000.00). Request amounts must be JSON numbers, as the spec types them:
// a numeric string is refused like any invalid amount. Timestamps are RFC
// 3339 in UTC, to the second. An unknown /v1/ path answers 404 NOT_FOUND
// (after authentication). Each route caps its body: 64 KiB for the JSON
// routes, 4 KiB for the bodiless ones (GETs, cancel, dispute cancel),
// 10,000,000 bytes plus 64 KiB of multipart framing for confirm. A body
// over its cap, or one that does not arrive within
// Config.RequestBodyTimeout, answers 400 with data.field "body" and the
// operation's invalid-parameters code (PAY_002; TRF_001 for transfers,
// WDR_001 for withdrawals; the spec never uses 413). A body over 1 MB that
// finds LargeBodyConcurrency others being read answers 503 SANDBOX_BUSY.
//
// Free text has caps the spec does not state (refused with the operation's
// invalid-parameters code, the message naming the cap): payout ext_id 255
// characters (MaxPayoutExtIDLength), holder_name, a payout's bank and
// client_id 255, notification_token 255, requisites 64, a dispute's comment
// 1000, notify_url and receipt_url 2048, a withdrawal's address 128, and a
// tx_hash given through a control 128.
//
// # Payments
//
// Create validates amount (100 to 300000 RUB, at most two decimals), ext_id
// (1 to 255 characters, not all blank), method (CARD by default; otherwise
// exactly CARD, SBP, SIM or CROSS_BORDER, upper case as the spec writes
// them) and country (exactly TJ, KZ, UZ or KG, and only with CROSS_BORDER),
// all PAY_002. A duplicate ext_id is PAY_003 (409). Once
// MaxSamePendingAmount (default 5) PENDING payments of one merchant share
// an amount (1500.5 equals 1500.50), the next create with that amount
// answers PAY_005 (429) until one of them leaves PENDING.
//
// Banks come from GET /v1/banks (Config.Banks, by default DefaultBanks:
// sber, tinkoff, vtb, alfa, raif and gazprom, which is inactive, then three
// each of TJ, KZ, UZ and KG). When bank is omitted the sandbox picks the
// first active bank of the country (for CROSS_BORDER without country or
// bank: TJ). A bank that is inactive, unknown, or of another country than
// the method and country ask for answers PAY_004 (503): no requisites fit.
//
// Requisites: CARD gets type "card" and a 16-digit card number, SBP and SIM
// get types "sbp" and "sim" with a Russian phone number, CROSS_BORDER gets
// type "phone" with a phone number of the country. In the create response
// non-cross-border requisites carry bank (the bank's name) and bank_code;
// cross-border ones carry bank (the code), bank_name, country, currency
// (TJS, KZT, UZS, KGS) and amount_local = amount × local rate, rounded half
// away from zero to 2 places. Confirm, get and cancel responses carry only
// type, value, bank and holder. usdt_rate (Config.USDTRate, default 92.50
// RUB per USDT) is fixed at creation and returned by create and get. The
// default local rates per RUB: TJ 0.12, KZ 5.60, UZ 140.50, KG 0.96.
//
// payment_url is BaseURL + "/pay/" + id (BaseURL empty: the scheme and Host
// of the create request). valid_until is created_at + PaymentTTL (default
// 20 minutes). A PENDING payment whose valid_until is not after the sandbox
// clock becomes CANCELLED (with a webhook): on time with the real clock,
// even if nobody touches it; with an injected clock on Advance (and
// whenever a request or control looks).
//
// Confirm takes only multipart/form-data (with a boundary); any other
// content type, or none, is PAY_002 and changes nothing. Its optional
// "attachment" part must be an image, told by its bytes as the SDK does
// (its part's Content-Type is not trusted either way), of at most
// 10,000,000 bytes (the spec's 10 MB, the SDK's MaxAttachmentSize);
// otherwise PAY_002 (400). A form without that part is "no file", which the
// spec allows. Confirm needs PENDING (PAY_008), cancel needs PENDING
// (PAY_007). A dispute opens from CANCELLED or CANCELLED_APPEAL (DIS_001
// otherwise, DIS_002 while one is open); its optional amount, what the
// payer paid, obeys the payment amount bounds (100 to 300000 RUB) and
// receipt_url must be an http(s) URL (PAY_002). Dispute cancel needs
// DISPUTE (DIS_003). PAY_001 (500) and SYS_001 are produced only by fault
// injection.
//
// A payment completes through VerifyPayment(id, "completed") or
// ReviewDispute(id, "approved"). It then credits amount / usdt_rate USDT
// (the amount an approved dispute named, if it named one), rounded half up
// to 2 places, to the terminal that served it: the merchant's first active
// terminal at creation time (no active terminal: PAY_004).
//
// # Payouts, terminals, transfers, withdrawals
//
// Payouts need a positive amount with at most two decimals, method exactly
// card or sbp (lower case), non-empty ext_id, requisites and holder_name
// (PAY_002); a duplicate ext_id is PAY_003. An unknown payout is PAY_001
// with 404. The list is in creation order, oldest first (stable for offset
// paging); status must be exactly one of the spec's lower-case values (else
// PAY_002); from and to filter created_at and are both inclusive (RFC 3339,
// or a bare date meaning the whole day); limit defaults to 100 and is
// capped at 1000 (the envelope reports the limit used; limit=0 means the
// default). A bad limit, offset, from, to or status is PAY_002. Payouts
// move only through SetPayoutStatus.
//
// GET /v1/balance sums all terminals. Transfers are atomic and free:
// TRF_001 for a missing terminal id, the same id twice, an amount that is
// not positive or has more than 6 decimal places (TRC-20 USDT's precision);
// TRF_002 for a terminal the merchant does not have; TRF_003 when the
// source holds less than the amount.
//
// Withdrawals freeze amount + fee on the terminal (available balance down,
// balance_frozen up). With subtract_fee_from_amount only the amount is
// frozen and the wallet receives amount - fee (the amount must exceed the
// fee). In both cases the response's amount is the requested amount and fee
// the terminal's withdrawal_fee. WDR_001 covers a missing, unknown or
// inactive terminal, a non-positive amount, an amount with more than 6
// decimal places and an empty address; WDR_002 a balance below the frozen
// sum; WDR_003 an unknown withdrawal. GET /v1/withdrawals/fee answers the
// fee of the merchant's first active terminal.
//
// # Webhooks
//
// Every status change of a payment or payout created with notify_url
// (creation itself is not a change and sends nothing) POSTs the resource
// exactly as GET returns it, Content-Type application/json, with
// X-Notification-Token for payments created with notification_token. A
// transport error or non-2xx answer is retried after WebhookRetryWait
// (default 1s), doubling each time, up to WebhookMaxAttempts (default 5)
// attempts; a 3xx answer is a failed attempt (redirects are not followed).
// Deliveries of one resource are sequential and in order (FlushWebhooks
// waits for them). Every delivery and attempt is kept in a bounded log
// (Deliveries, GET /sandbox/webhooks), the notify_url's user information
// and query values masked.
//
// Deliveries share a bounded pool (WebhookConcurrency, WebhookPerReceiver;
// the backlog is State.Webhooks): none is dropped, and the API only
// enqueues, never waiting for a receiver. They cannot be turned against the
// sandbox: the default client never dials an address it listens on
// (ListenAddrs), and the controls refuse the deliveries' User-Agent and
// unknown fields, so a notify_url at /sandbox/reset resets nothing.
// Receivers on loopback and private addresses stay reachable.
//
// Config.WebhookFaults makes deliveries arrive twice, late or out of order
// on purpose, replayably by seed. GET /sandbox/listen is a merchant's live
// feed (Server-Sent Events) of every notification of its resources, those
// without a notify_url included, signed as /v1 is; GET
// /sandbox/requests?follow=1 streams the request log (Remote.Listen,
// Remote.FollowRequests; sandbox/README.md has both).
//
// # Hosted payment page
//
// GET /pay/{id} (no authentication) renders the amount, requisites, status
// and time left, with a plain form whose button POSTs to /pay/{id}; that
// confirms a PENDING payment (-> PROCESSING) and redirects (303) back. The
// post must carry the page's form token and come from the page itself
// (Sec-Fetch-Site, Origin): another site cannot press I-paid for a payer.
// It speaks the payer's words (sandbox/README.md), with the deadline in
// Moscow time; the dashboard stays in UTC like the API.
//
// # Controls
//
// The Go methods VerifyPayment, ReviewDispute, SetPayoutStatus,
// SetWithdrawalStatus, Advance, InjectFault and Reset drive what the real
// service does on its own (their godoc gives the transitions). Their errors
// wrap ErrNotFound, ErrWrongState or ErrInvalidArgument. The same controls
// are unsigned JSON POSTs (the binary binds to loopback), answering the
// changed resource or {}; unknown id: 404 SANDBOX_NOT_FOUND, wrong
// transition: 409 SANDBOX_CONFLICT, bad body or value: 400 SANDBOX_INVALID.
//
// Every /sandbox/ endpoint answers only a loopback Host (localhost,
// 127.0.0.0/8, [::1], any port), else 403 SANDBOX_FORBIDDEN, and every
// control POST needs Content-Type: application/json, else 415
// SANDBOX_UNSUPPORTED_MEDIA_TYPE: no web page can drive them, through DNS
// rebinding or a cross-origin form. Config.AllowRemote lifts the Host check
// and requires Config.ControlToken, sent as Authorization: Bearer TOKEN
// (else 401 SANDBOX_UNAUTHORIZED) or through the dashboard's login form;
// wrong tokens are answered 429, the right one always passes
// (sandbox/README.md has the detail). The controls:
//
//	POST /sandbox/payments/{id}/verify          {"outcome":"completed"} or {"outcome":"cancelled"}
//	POST /sandbox/payments/{id}/dispute/review  {"outcome":"approved"} or {"outcome":"rejected"}
//	POST /sandbox/payouts/{id}/status           {"status":"processing"} (completed, failed, cancelled)
//	POST /sandbox/withdrawals/{id}/status       {"status":"completed","tx_hash":"..."} (processing, failed)
//	POST /sandbox/clock/advance                 {"seconds":3600}, answers {"now":...}
//	POST /sandbox/faults                        {"method":"POST","path":"/v1/transfers","mode":"drop_after","count":1}
//	POST /sandbox/webhooks/flush                {}, answers once every queued webhook has ended
//	POST /sandbox/webhooks/{id}/resend          {}, answers the new delivery
//	POST /sandbox/reset                         {}
//
// From a shell every control needs the JSON header:
//
//	curl -X POST http://127.0.0.1:8080/sandbox/payments/$ID/verify -H 'Content-Type: application/json' -d '{"outcome":"completed"}'
//
// # Inspecting and observing
//
// Terminals, Stats, RequestCount (retries and faulted attempts included),
// Deliveries and Now read the sandbox without a signed request. The
// delivery log holds no notification token and survives Reset (deliveries
// queued before it are still made).
//
// With Config.Logger set, the sandbox logs one line per request (route,
// status, error code, fault, duration) and one per webhook delivery attempt
// (resource, id, announced status, target host, attempt, answer or error,
// duration), never a secret, a body or a query.
// Three JSON views answer GETs under the same guard as the controls:
//
//	GET /sandbox/requests   {"requests":[...]}   the latest DefaultRequestLogSize requests, newest first (Requests)
//	GET /sandbox/webhooks   {"deliveries":[...]} the latest deliveries with every attempt (Deliveries)
//	GET /sandbox/state      terminals with balances, payments, payouts and withdrawals counted by status (State)
//
// A RequestRecord holds no header, body or query (its path's long digit
// runs masked); counters are per route template (RequestCount), so memory
// stays bounded whatever paths clients send.
//
// GET /sandbox/ui is a dashboard of the same state and controls, under the
// same guard (no JavaScript needed, forms safe from cross-site posts), with
// the newest 500 of each resource and every delivery's payload (numbers
// masked) and a Resend button (ResendWebhook).
//
// # Leniencies and choices where the spec is silent
//
// Where the spec is silent the sandbox chooses; the choices an integration
// could trip on, with their reasons:
//
//   - 401 AUTH_001 for authentication failures, 200 for every success, and
//     HMACSigner's signature unless Merchant.Signer: the spec shows none.
//   - Unknown JSON fields are ignored, and an empty create body decodes as
//     {} (failing on the first required field), as most services do.
//   - RUB amounts have at most 2 decimal places, USDT amounts at most 6 (no
//     bank or chain moves less; 1500.500 is 1500.50 and passes); amounts
//     are echoed with the scale sent and bounded (40 characters, exponent
//     within ±18) before any arithmetic. Payouts, transfers and withdrawals
//     take any positive amount (the spec gives no bounds).
//   - Payment ext_id is counted in characters, not bytes; the caps on free
//     text, the payout ext_id's included, bound memory rather than rules.
//   - bank is a filter in the spec: an unknown, inactive or foreign bank is
//     PAY_004 (no requisites), not PAY_002.
//   - The spec shows none of these, so they are the sandbox's: PAY_005's
//     threshold and window, the validity span (valid_until is the
//     authority), the payout list's cap, order, bounds and errors, the
//     payout and withdrawal transitions, the withdrawal's freeze, and which
//     terminal's fee GET /v1/withdrawals/fee answers.
//   - The withdrawal address format is not checked (a TRC-20 check would
//     refuse test addresses typed by hand); transfers accept an inactive
//     terminal on either side (the money is still the merchant's).
//   - GET /v1/banks adds "country" to each bank ("RU" for Russian ones),
//     which the spec's Bank record lacks: clients ignore unknown fields.
//   - No rate limits; reads of terminals, balance, banks and the fee fail
//     only with AUTH_001 and injected faults; a body on a bodiless route is
//     ignored up to its 4 KiB cap.
//
// # Faults
//
// A Fault (InjectFault, POST /sandbox/faults) applies to the next Count
// requests matching Method and Path, before authentication; /sandbox/ is
// never faulted. Its modes are error_before, retry_after, delay (a client
// that goes away meanwhile has nothing applied) and drop_after (processed
// fully, then the connection closed unanswered): see their constants.
//
// # Autopilot and test values
//
// With Config.Autopilot enabled (flag -autopilot) the sandbox moves
// everything along by itself, the way the service would (Autopilot lists
// the steps and their delays). Delays run on the sandbox clock: with an
// injected Config.Now, Advance runs every step due before it returns, so
// tests never sleep; with the real clock a read made after a step's time
// sees it done. The autopilot acts only through the controls, so a step
// made moot by a control call, an expiry or a Reset does nothing, and a
// resource moved to processing by hand is still finished. After a restart
// on a file, what is in flight is scheduled a full delay from then.
// AutopilotPending (GET /sandbox/state's autopilot.pending_steps) counts
// the steps not yet run.
//
// Outcomes are chosen by test values in the requests, like a provider's
// test card numbers, so a test in any language reaches every branch without
// the controls. They apply only with the autopilot on (and not
// Autopilot.IgnoreTestValues); TestValues is the same table in Go, and the
// dashboard shows it at /sandbox/ui/testvalues:
//
//   - payment amount, any other kopecks (e.g. 1500.00): after the merchant confirms: verified, COMPLETED, terminal credited.
//   - payment amount, kopecks .11 (e.g. 1500.11): the payer presses "I paid" by itself (PROCESSING), then verified, COMPLETED.
//   - payment amount, kopecks .12 (e.g. 1500.12): after the merchant confirms: transfer not found, CANCELLED.
//   - payment amount, kopecks .13 (e.g. 1500.13): after the merchant confirms: stays PROCESSING (never verified).
//   - payment amount, exactly 404.04 (e.g. 404.04): create answers 503 PAY_004 (no requisites available).
//   - dispute comment, any other comment, or none (e.g. receipt attached): reviewed: approved, COMPLETED, terminal credited.
//   - dispute comment, contains "reject" (any case) (e.g. please reject): reviewed: rejected, CANCELLED.
//   - payout requisites, any other requisites (e.g. 4111111111111111): pending → processing → completed.
//   - payout requisites, ends in 0002 (e.g. 4000000000000002): pending → processing → failed.
//   - payout requisites, ends in 0003 (e.g. 4000000000000003): pending → processing → cancelled.
//   - withdrawal address, any other address (e.g. TXYZsandboxAddress): pending → processing → completed, with a generated tx_hash.
//   - withdrawal address, ends in FAIL (any case) (e.g. TXYZsandboxFAIL): pending → processing → failed, amount and fee back on the balance.
//
// # Persistence
//
// Without Config.DBPath the state lives in memory, gone with the Server.
// With it (the binary's -db) every merchant's state lives in that SQLite
// file and survives restarts. A program that sets it imports the SQLite
// store, a database/sql driver (else Open names the missing import;
// package sandbox and sandboxtest never compile SQLite):
//
//	import _ "github.com/paykit-dev/paykit-go/sandbox/sqlite"
//
// The rules are those in memory, and, in short (sandbox/README.md has the
// detail, docs/layout.md how the group commit keeps them):
//
//   - A 2xx (a nil error from a Go control) means the change is on disk,
//     fsynced, with its webhooks, which go out only then, at least once.
//   - 503 SANDBOX_STORE means not kept, now or after a restart: ask again.
//     500 SANDBOX_STORE means it may or may not be kept (a failed fsync):
//     read it back after the restart first (the SDK's unknown outcome).
//   - After a failed commit or fsync (a full disk, a damaged file), or once
//     the file or its -wal file is removed or replaced, requests answer 503
//     SANDBOX_STORE, Go controls ErrStore and /readyz 503 until a restart,
//     which resumes from the last commit; no read shows what was not kept.
//   - A file that is not SQLite, is damaged, another program's or newer
//     (SchemaVersion) is refused at start, never reset; an older one is
//     migrated; one another sandbox holds is refused, not shared.
//   - A restart serves the file's balances, not the configured ones (POST
//     /sandbox/reset applies those), and resumes expiry, the autopilot and
//     owed webhooks. A kill may lose request log lines (and counters) of
//     the 200 ms before the last change and after it, never a resource.
//
// # Health
//
// GET /healthz (HealthzPath) and GET /readyz (ReadyzPath) answer without
// credentials and for any Host, since probes come from outside; /readyz's
// reason for a 503 goes to the log only. They bypass faults and stay out of
// the request log, so a probe every few seconds neither trips a fault nor
// pushes real requests out.
package sandbox
