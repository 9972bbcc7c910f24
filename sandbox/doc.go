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
// The binary cmd/paykit-sandbox serves the same handler on loopback.
//
// # Merchants, credentials and terminals
//
// A zero Config serves one merchant, DefaultMerchant(DefaultAPIKey,
// DefaultSecret): API key "pk_sandbox", secret "sk_sandbox_secret", and two
// active terminals, "term_sandbox_main" with 1000.00 USDT and
// "term_sandbox_reserve" with 0.00 USDT, both with a withdrawal fee of
// 1.50 USDT. Terminal ids are scoped to their merchant.
//
// Every /v1/ request needs X-Identity (an API key) and X-Signature. A
// missing or unknown key is refused before a byte of the body is read;
// otherwise the body is read (under the route's cap, see below) and the
// sandbox computes the signature with the merchant's Signer over the
// incoming request (r.URL.RequestURI(), the escaped path and query as sent)
// and the exact body bytes, and compares in constant time; Merchant.Signer
// nil means paykit.HMACSigner(Merchant.Secret). A missing or unknown key or
// a wrong signature answers 401 with {"error":"AUTH_001","message":...,
// "data":{}} (the spec does not show this answer; this is the sandbox's
// choice). Every resource is scoped to its merchant: another merchant's
// payment id answers PAY_006, exactly like an unknown one.
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
// WDR_001 for withdrawals; the spec never uses 413). At most
// LargeBodyConcurrency bodies over 1 MB are read at once (default 4); one
// more waits a quarter of the body timeout, then answers 503 SANDBOX_BUSY.
//
// Free text has caps the spec does not state (refused with the operation's
// invalid-parameters code, the message naming the cap): payout ext_id 255
// characters (MaxPayoutExtIDLength), holder_name, a payout's bank and
// client_id 255, notification_token 255, requisites 64, a dispute's
// comment 1000, notify_url and receipt_url 2048, a withdrawal's address
// 128, and a tx_hash given through a control 128.
//
// # Payments
//
// Create validates amount (100 to 300000 RUB, at most two decimals),
// ext_id (1 to 255 characters, not all blank), method (CARD by default; otherwise exactly CARD, SBP, SIM or
// CROSS_BORDER, upper case as the spec writes them) and country (exactly
// TJ, KZ, UZ or KG, and only with CROSS_BORDER), all PAY_002.
// A duplicate ext_id is PAY_003 (409). Once MaxSamePendingAmount (default
// 5) PENDING payments of one merchant share an amount (1500.5 equals
// 1500.50), the next create with that amount answers PAY_005 (429) until one
// of them leaves PENDING.
//
// Banks come from GET /v1/banks (Config.Banks replaces the list; by
// default DefaultBanks): sber, tinkoff, vtb, alfa, raif and gazprom
// (Russian; gazprom is inactive), eskhata, amonatbonk, dushanbecity (TJ),
// kaspi, halyk, jusan (KZ), kapitalbank, hamkorbank, ipakyuli (UZ), mbank,
// optima, demir (KG). Each bank object carries an extra "country" field
// ("RU" for Russian banks). When bank is omitted the sandbox picks the first
// active bank of the country (for CROSS_BORDER without country or bank:
// TJ). A bank that is inactive, unknown, or of another country than the
// method and country ask for answers PAY_004 (503): no requisites fit.
//
// Requisites: CARD gets type "card" and a 16-digit card number, SBP and SIM
// get types "sbp" and "sim" with a Russian phone number, CROSS_BORDER gets
// type "phone" with a phone number of the country. In the create response
// non-cross-border requisites carry bank (the bank's name) and bank_code;
// cross-border ones carry bank (the code), bank_name, country, currency
// (TJS, KZT, UZS, KGS) and amount_local = amount × local rate, rounded half
// away from zero to 2 places. Confirm, get and cancel responses carry only
// type, value, bank and holder. usdt_rate (Config.USDTRate, default 92.50
// RUB per USDT) is fixed at creation and returned by create and get.
// Default local rates per RUB: TJ 0.12, KZ 5.60, UZ 140.50, KG 0.96.
//
// payment_url is BaseURL + "/pay/" + id (BaseURL empty: the scheme and Host
// of the create request). valid_until is created_at + PaymentTTL (default
// 20 minutes). A PENDING payment whose valid_until is not after the sandbox
// clock becomes CANCELLED (with a webhook). With the real clock (Config.Now
// nil) one timer fires at the earliest valid_until, so a payment nobody
// touches expires on time and its webhook goes out; with an injected clock
// expiry happens on Advance (and whenever a request or control looks).
//
// Confirm takes only multipart/form-data (with a boundary); any other
// content type, or none, is PAY_002 and changes nothing. Its optional
// "attachment" part must be an image, told by its bytes as the SDK does
// (its part's Content-Type is not trusted either way), of at most 10 MB, that is 10,000,000 bytes, the spec's limit and the SDK's
// MaxAttachmentSize; otherwise PAY_002 (400). A form without that part is
// "no file", which the spec allows. Confirm needs PENDING (PAY_008),
// cancel needs PENDING (PAY_007). A dispute opens from CANCELLED
// or CANCELLED_APPEAL (DIS_001 otherwise, DIS_002 while one is open); its
// optional amount, what the payer paid, obeys the payment amount bounds
// (100 to 300000 RUB) and receipt_url must be an http(s) URL (PAY_002).
// Dispute cancel needs DISPUTE (DIS_003). PAY_001 (500) and SYS_001 are
// produced only by fault injection.
//
// A payment completes through VerifyPayment(id, "completed") or
// ReviewDispute(id, "approved"). It then credits amount / usdt_rate USDT,
// rounded half up to 2 places, to the terminal that served it: the
// merchant's first active terminal at creation time (no active terminal:
// PAY_004). An approved dispute that named an amount credits that amount
// instead of the payment's.
//
// # Payouts, terminals, transfers, withdrawals
//
// Payouts need a positive amount with at most two decimals, method exactly card or sbp (lower case),
// non-empty ext_id, requisites and holder_name (PAY_002); a duplicate
// ext_id is PAY_003. An unknown payout is PAY_001 with 404. The list is in
// creation order, oldest first (stable for offset paging); status must be
// exactly one of the spec's lower-case values (else PAY_002); from and to
// filter created_at and are both inclusive (RFC 3339, or a bare date
// meaning the whole day); limit defaults to 100 and is capped at 1000 (the
// envelope reports the limit used). Payouts move only through
// SetPayoutStatus.
//
// GET /v1/balance sums all terminals. Transfers are atomic and free:
// TRF_001 for a missing terminal id, the same id twice, an amount that is
// not positive or has more than 6 decimal places (TRC-20 USDT's precision:
// a smaller unit cannot move on chain, so it must not become dust in a
// balance); TRF_002 for a terminal the merchant does not have; TRF_003
// when the source holds less than the amount.
//
// Withdrawals freeze amount + fee on the terminal (available balance down,
// balance_frozen up). With subtract_fee_from_amount only the amount is
// frozen and the wallet receives amount - fee (the amount must exceed the
// fee). In both cases the response's amount is the requested amount and fee
// the terminal's withdrawal_fee. WDR_001 covers a missing, unknown or
// inactive terminal, a non-positive amount, an amount with more than 6
// decimal places and an empty address (the address format is not checked); WDR_002 a balance below the frozen sum;
// WDR_003 an unknown withdrawal. GET /v1/withdrawals/fee answers the fee of
// the merchant's first active terminal.
//
// # Webhooks
//
// Every status change of a payment or payout created with notify_url
// (creation itself is not a change and sends nothing) POSTs the resource
// exactly as GET returns it, Content-Type application/json, with
// X-Notification-Token for payments created with notification_token.
// A transport error or non-2xx answer is retried after WebhookRetryWait
// (default 1s), doubling each time, up to WebhookMaxAttempts (default 5)
// attempts. Deliveries of one resource are sequential and in order.
// FlushWebhooks waits for all queued deliveries; Close stops them. Every
// delivery and attempt is kept in a bounded log (Deliveries,
// GET /sandbox/webhooks), with the user information and every query value
// of the notify_url masked.
//
// Deliveries are bounded and cannot be turned against the sandbox: at most
// WebhookConcurrency attempts in flight (default 32), at most
// WebhookPerReceiver to one host:port (default 4), the rest waiting their
// turn (none is dropped; the API only enqueues, so its latency never
// depends on a receiver). A waiting delivery, queued or between retries,
// is its payload and a timer, not a goroutine: thousands of them to a
// receiver that hangs cost a few goroutines. How many wait is the backlog
// (State.Webhooks, GET /sandbox/state, the dashboard). A 3xx answer is a failed attempt: redirects are
// not followed. The default client never dials an address the sandbox
// listens on (Config.ListenAddrs and every address a request arrived on),
// checked on the address actually dialled, and uses no proxy; and the
// controls refuse a request with the deliveries' User-Agent or with
// unknown fields, so a notify_url pointing at /sandbox/reset resets
// nothing. Receivers on loopback and private addresses stay reachable.
//
// Config.WebhookFaults (the binary's -webhook-faults
// duplicate=0.1,reorder=0.1,delay=2s,seed=42) makes deliveries arrive
// twice, held back behind the resource's next notification, or late on the
// sandbox clock, at the rates given; the same seed and the same
// notifications replay the same faults. State.Webhooks.Faults, GET
// /sandbox/state and the dashboard show them with the seed in use.
//
// GET /sandbox/listen is a merchant's live feed (Server-Sent Events) of
// every notification of its resources, those without a notify_url
// included, signed as /v1 is (no control token); Remote.Listen follows it,
// reconnecting and resuming from the last position (see Remote.Listen and
// sandbox/README.md for the events). GET /sandbox/requests?follow=1
// streams the request log the same way (Remote.FollowRequests).
//
// # Hosted payment page
//
// GET /pay/{id} (no authentication) renders the amount, requisites, status
// and time left, with a plain form whose button POSTs to /pay/{id}; that
// confirms a PENDING payment (-> PROCESSING) and redirects (303) back. The
// post must carry the page's form token and come from the page itself
// (Sec-Fetch-Site, Origin): another site cannot press I-paid for a payer.
// It speaks the payer's words, not the wire's: amounts with two decimals
// and thousands separators ("12,500.50 RUB"; the copy button copies
// "12500.50"), the method named ("Bank card"), a CROSS_BORDER payment's
// amount in the currency to send with its RUB equivalent, and the deadline
// as "Pay by 13:20 Moscow time (in 19 minutes)": Moscow time (UTC+3 all
// year) because the payers pay from Russian banks; the dashboard stays in
// UTC like the API.
//
// # Controls
//
// The Go methods VerifyPayment, ReviewDispute, SetPayoutStatus,
// SetWithdrawalStatus, Advance, InjectFault and Reset drive what the real
// service does on its own. Their errors wrap ErrNotFound, ErrWrongState or
// ErrInvalidArgument. The same controls are unsigned JSON POSTs (the binary
// binds to loopback), answering the changed resource or {}; unknown id:
// 404 SANDBOX_NOT_FOUND, wrong transition: 409 SANDBOX_CONFLICT, bad body
// or value: 400 SANDBOX_INVALID.
//
// Because they are unauthenticated, every /sandbox/ endpoint answers only a
// request whose Host is loopback (localhost, 127.0.0.0/8, [::1], any port),
// else 403 SANDBOX_FORBIDDEN, and every control POST needs Content-Type:
// application/json, else 415 SANDBOX_UNSUPPORTED_MEDIA_TYPE. A web page
// the developer visits can therefore neither reach them through DNS
// rebinding (its Host is its own name) nor with a cross-origin text/plain
// or form POST (JSON needs a CORS preflight, which the sandbox never
// grants). The guard stops browsers, not programs: any client on the
// network can send a loopback Host, which is why the binary binds to
// loopback and warns when told otherwise. Config.AllowRemote (the binary's
// -allow-remote) lifts the Host check, for a sandbox a team shares or a
// container reached by name, and requires Config.ControlToken (the binary
// refuses to start remote without -control-token or
// PAYKIT_SANDBOX_CONTROL_TOKEN). With a token, every control and
// inspection request carries Authorization: Bearer TOKEN (else 401
// SANDBOX_UNAUTHORIZED), and the dashboard sends the browser to a login
// form (/sandbox/login) that sets an HttpOnly, SameSite=Strict session
// cookie holding an HMAC of the token, never the token. A token that could
// be guessed (under 128 bits of estimated entropy) is refused at start, and
// wrong ones are throttled per client address: after five, the address's
// wrong tokens are answered 429 with a Retry-After that doubles with each
// further failure (up to 15 minutes), and each counted failure is logged
// without the token. The right token always passes, so guesses from behind
// the same reverse proxy or NAT never lock its holder out.
// Loopback-only sandboxes need no token. The controls:
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
// POST /sandbox/clock/advance clamps the total offset at 100 years, so two
// huge advances cannot overflow and make the clock run backwards.
//
// Payouts go pending -> processing (sets provider_order_id) -> completed
// (sets completed_at), failed or cancelled; pending may also jump to any of
// those. Withdrawals go pending -> processing -> completed (settles the
// frozen sum, records tx_hash, random if none is given) or failed (releases
// it to the balance); pending may also jump to completed or failed.
//
// # Inspecting state from tests
//
// Terminals(apiKey) snapshots a merchant's balances, Stats(apiKey) counts
// what it created, RequestCount(method, pattern) counts requests that
// reached the sandbox (retries and faulted attempts included), Deliveries
// lists the latest webhook deliveries (newest first, at most
// DefaultDeliveryLogSize) with every attempt's answer, and Now reads the
// sandbox clock. They need no signed request. The delivery log never holds
// a notification token, masks a password in a notify_url, and survives
// Reset (deliveries queued before a Reset are still made).
//
// # Observing a running sandbox
//
// With Config.Logger set (the binary logs to stderr, -log-format text or
// json), the sandbox writes one line per request (method, route template,
// status, duration, error code, fault) and one per webhook delivery
// attempt (resource, its id and announced status, target host, attempt
// number, response status or error, duration). No line carries an API
// key, signature, notification token, body, query or card or phone
// number. A nil Logger is silent, which keeps tests quiet.
//
// Three JSON views answer GETs under the same Host guard as the controls
// (the curl examples carry the JSON header for uniformity; a GET does not
// need it):
//
//	GET /sandbox/requests   {"requests":[...]}   the latest DefaultRequestLogSize requests, newest first (Requests)
//	GET /sandbox/webhooks   {"deliveries":[...]} the latest deliveries with every attempt (Deliveries)
//	GET /sandbox/state      terminals with balances, payments, payouts and withdrawals counted by status (State)
//
// In a browser, GET /sandbox/ui is a dashboard of the same state and
// controls (server-rendered, no JavaScript needed), under the same Host
// guard, with its forms protected against cross-site submission.
// Its webhook list shows each delivery's ext_id and payload (card and
// phone numbers masked) and a Resend button (ResendWebhook).
//
// A request record holds method, route, path (long digit runs masked,
// UUIDs kept), status, error code, fault and duration: no header, body or
// query. Request counters (RequestCount) are kept per route template, so
// memory stays bounded however many distinct paths clients send.
//
// # Leniencies and choices where the spec is silent
//
// Where the spec is silent the sandbox makes a choice, and a few
// leniencies remain; each is listed here with its reason, so that an
// integration that passes here is not surprised by the service.
//
//   - Authentication failures answer 401 AUTH_001 (the spec shows no
//     answer); the signature algorithm is the SDK's HMACSigner unless
//     Merchant.Signer says otherwise (the spec does not publish it).
//   - Every success answers 200 (the spec shows no success statuses).
//   - Unknown JSON fields in a request are ignored and an empty create body
//     decodes as {} (so it fails on the first required field): the spec
//     does not say, and ignoring unknown fields is what most services do.
//   - RUB amounts (payments, payouts, dispute amounts) have at most 2
//     decimal places, USDT amounts (transfers, withdrawals) at most 6: the
//     spec does not give their precision, and no bank or chain moves less
//     (PAY_002, TRF_001, WDR_001; 1500.500 is 1500.50 and passes). Amounts
//     are echoed with the scale sent, and bounded (at most 40 characters,
//     exponent within ±18) before any arithmetic.
//   - Payment ext_id is 1 to 255 characters (the spec's limit, counted in
//     characters, not bytes). Payout ext_id has no limit in the spec; the
//     sandbox refuses an empty or all-blank one and one over 255 characters
//     (MaxPayoutExtIDLength, as for payments; the message names the cap), a
//     bound for memory rather than a rule.
//   - bank is matched exactly against the codes of GET /v1/banks; an
//     unknown, inactive or foreign bank is PAY_004 (no requisites), not
//     PAY_002, because the spec calls bank a filter.
//   - The PAY_005 threshold (MaxSamePendingAmount, default 5 PENDING
//     payments of one amount) and window (while they stay PENDING) are the
//     sandbox's: the spec shows neither.
//   - The validity span (PaymentTTL, default 20 minutes) is the sandbox's;
//     valid_until is the authority.
//   - Payout list: limit defaults to 100 (the spec) and is capped at 1000
//     (the spec gives no maximum; the envelope reports the limit used);
//     limit=0 means the default. The order is creation order, oldest
//     first, and from and to are both inclusive (the spec does not say).
//     Errors of the list (bad limit, offset, from, to, status) are PAY_002:
//     the spec shows none.
//   - Payout and withdrawal transitions (the spec shows none) are those of
//     SetPayoutStatus and SetWithdrawalStatus above.
//   - Fees: transfers are free (the spec); a withdrawal charges its
//     terminal's withdrawal_fee, and GET /v1/withdrawals/fee answers the fee
//     of the first active terminal (the spec has one fee per terminal and
//     one "current fee", and does not say how they relate).
//   - A withdrawal freezes amount + fee, or the amount alone with
//     subtract_fee_from_amount (which then needs amount > fee); completion
//     settles the frozen sum, failure releases it to the balance. The spec
//     says only that "the amount is frozen".
//   - Amount bounds of payouts, transfers and withdrawals: any positive
//     amount (the spec gives none), USDT at most 6 decimal places.
//   - The withdrawal address format is not checked (a TRC-20 check would
//     refuse test addresses people type by hand).
//   - Transfers accept an inactive terminal on either side: the money is
//     still the merchant's and the spec does not forbid it.
//   - GET /v1/banks adds a "country" field to each bank, which the spec's
//     Bank record does not have; clients should ignore unknown fields.
//   - No rate limits (the spec shows none).
//   - Errors of terminals, balance, banks and fee reads: only AUTH_001 and
//     injected faults (the spec shows none).
//   - A body on a bodiless route is accepted and ignored up to 4 KiB.
//
// # Faults
//
// A Fault applies to the next Count (default 1) requests matching Method
// ("" any) and Path (exact escaped path, {name} segments match any one
// segment), before authentication; /sandbox/ is never faulted. Modes:
// error_before answers Status (default 500) with error code Code (default:
// the spec's internal error of the route, PAY_001 for create and confirm
// payment, SYS_001 elsewhere) without processing; retry_after answers 503 with Retry-After
// RetryAfterS seconds (default 1), code Code, without processing; delay
// reads the body, waits DelayMS, then processes, unless the client went
// away meanwhile, in which case nothing is applied; drop_after processes
// the request fully and then closes the connection without an answer.
//
// # Autopilot and test values
//
// With Config.Autopilot enabled (flag -autopilot) the sandbox moves
// everything along by itself, the way the service would: a confirmed
// payment is verified after VerifyDelay, an opened dispute is reviewed
// after ReviewDelay, a payout goes pending -> processing -> a final status
// and a withdrawal pending -> processing -> completed (with a generated
// tx_hash) or failed, each step after PayoutDelay or WithdrawalDelay. A
// payment nobody pays expires at valid_until, with or without the
// autopilot: that is expiry's own timer, not the autopilot's. Delays run on
// the sandbox clock: with an injected Config.Now, Advance runs every step
// that falls due before it returns, so tests never sleep; with the real
// clock one timer fires at the earliest step, and every request first runs
// what is due, so a read made after a step's time sees it done. The
// autopilot acts only through the controls (VerifyPayment, ReviewDispute,
// SetPayoutStatus, SetWithdrawalStatus, and the payment page's I-paid), so
// a control call, an expiry or a Reset made before a step simply leaves
// that step nothing to do; a payout or withdrawal moved to processing by
// hand is still finished by the autopilot. Steps live in memory: when a
// Server starts over state already in flight (a restart on a Config.DBPath
// file), each such resource is scheduled a full delay from then.
// AutopilotPending counts the steps not yet run, and GET /sandbox/state
// reports it as autopilot.pending_steps.
//
// Outcomes are chosen by test values in the requests, like a provider's
// test card numbers, so a test in any language reaches every branch
// without the controls. They apply only with the autopilot on (and not
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
// Without Config.DBPath the state lives in Go maps and is gone with the
// Server, which is what tests want. With it (the binary's -db PATH, or
// PAYKIT_SANDBOX_DB, or "db" in -config) every merchant's state lives in
// that SQLite file (modernc.org/sqlite: pure Go, the binary stays CGO-free
// and static) and survives restarts. A program that sets DBPath imports
// the store for its side effect, as a database/sql driver is imported:
//
//	import _ "github.com/paykit-dev/paykit-go/sandbox/sqlite"
//
// (paykit-sandbox and paykit sandbox do); without it Open refuses a DBPath
// with an error naming that import. Package sandbox and sandboxtest never
// import SQLite, so tests that keep the sandbox in memory never compile it.
// What the file keeps: payments with their disputes,
// payouts, withdrawals, terminals and balances, transfer counters, the
// webhook outbox, the clock offset of Advance, armed faults, the request
// counters, the request log (the newest DefaultRequestLogSize lines) and
// the delivery log (the newest DefaultDeliveryLogSize deliveries, plus
// every delivery still owed, however old). A file the sandbox creates is
// readable by its owner only: it holds notification tokens.
//
// The API, the controls, the dashboard and the autopilot change the
// sandbox through the same rules, in memory as on a file, and the whole
// sandbox suite runs on files too in CI; docs/layout.md says how the
// sandbox is built.
//
// With DBPath, memory does not grow with stored resources: the file holds
// them, and memory holds only the merchants and terminals (as configured),
// the resources one request is working on, the bounded logs, the webhooks
// being delivered or waiting for a retry, and the autopilot's steps of
// resources still in flight. The dashboard lists the newest 500 payments,
// payouts and withdrawals.
//
// Durable before the answer: every request, control or timer that changes
// state is committed together with its webhooks' outbox rows, or not at
// all, and on disk (the -wal file fsynced, not only written) before its
// answer is written: an acknowledged change survives power loss, not only
// a killed process. Concurrent clients share each fsync (group commit, see
// docs/layout.md; BENCHMARKS.md has the binary's figures). Webhooks are
// handed to delivery only once their change is on disk, so no receiver
// hears of a change the file may not keep. Reads cost no fsync; a read
// waits for one only when it reads a change not yet synced. Diagnostics
// (request log lines, request counters, a delivery's attempts) ride along
// with the next commit, or are written at Close, so a GET never writes to
// the file itself; the request lines and counters only with the first
// commit after 64 commits or 200 ms since they were last written, so a
// kill loses those of at most that interval before the last change and
// those after it, never a resource. A delivery's end is committed when it
// ends (not fsynced for itself: the next change's fsync covers it), so a
// kill loses none, and a power cut only those since the last fsync. A
// webhook whose delivery had not been
// recorded as ended at a kill, or that Close cut short, is sent again at
// the next start: delivery is at least once.
//
// If a commit fails (disk full, the file damaged underneath, or the file
// or its -wal file removed or replaced while the sandbox runs: every
// change and every /readyz probe checks that their names still reach the
// files it opened, and the commits of a removed -wal file are copied into
// the database when that is seen), the Server stops trusting its
// memory: every API request that arrives afterwards answers 503
// SANDBOX_STORE, Go controls return ErrStore and GET /readyz answers 503,
// until it is restarted, which resumes from the last committed state. The
// change that failed is visible nowhere (State, the dashboard and
// Terminals show the last commit), and so is any later one.
//
// A 503 SANDBOX_STORE always means "not kept": the change is nowhere, now
// or after a restart, and may be asked again. Whatever the order of the
// failures, each change is answered what is true of it: the changes
// committed before a failed commit (in the -wal file, waiting for their
// fsync) still get their fsync and their 2xx; a failed fsync of the -wal
// file leaves the disk's content unknown (the kernel may have dropped the
// pages, or written some), so every change it covered answers 500
// SANDBOX_STORE, "may or may not be kept", never 503, and its webhooks are
// not sent then (one that is in the file is sent at the next start). A
// client that gets the 500 reads the resource back after the restart
// before asking again; the SDK calls it an unknown outcome.
//
// At start the file is checked before anything is written to it, and
// refused with an error that names it, never reset: a file that is not
// SQLite or is damaged (PRAGMA quick_check, which reads the whole file, so
// a large file takes a while to open), an SQLite file of another program
// (its application_id), or one of a newer SchemaVersion (user_version).
// One of an older version is migrated in place. The file is opened with
// locking_mode=EXCLUSIVE and written at once, so it stays locked while the
// Server runs: a second sandbox on the same file is refused, not shared.
// The binary exits non-zero on every such refusal.
//
// After a restart on a file, its stored terminals and balances are served
// (the banner prints them), not the configured start: a configuration whose
// terminals differ from the start the file was made with is logged as
// ignored, and POST /sandbox/reset (or a new file) applies it. Expiry of
// stored PENDING payments resumes at their valid_until, the autopilot
// reschedules what is in flight, and the outbox is delivered.
//
// # Health
//
// GET /healthz answers 200 {"status":"ok"} while the process serves, and
// GET /readyz 200 {"status":"ready"} when the sandbox can serve requests
// (503 {"status":"unavailable"} otherwise, the reason in the log only).
// Both answer without credentials and for any Host, since probes come from
// outside; they bypass faults and stay out of the request log, so a probe
// every few seconds neither trips a fault nor pushes real requests out.
package sandbox
