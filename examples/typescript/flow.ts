// The merchant flow from TypeScript against the paykit sandbox: types
// generated from openapi.yaml by openapi-typescript, calls through
// openapi-fetch, every /v1 request signed as docs/other-languages.md
// says (lowercase hex HMAC-SHA256 of METHOD "\n" REQUEST_URI "\n" BODY), and
// every amount kept exact with exact.ts. Any mismatch exits non-zero.
//
//   PAYKIT_BASE_URL (default http://127.0.0.1:8080), PAYKIT_API_KEY
//   (pk_sandbox), PAYKIT_SECRET (sk_sandbox_secret). run.sh starts the
//   sandbox binary and runs this.
import { createHmac, randomBytes } from "node:crypto";
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./gen/schema.js";
import { num, parseExact, stringifyExact, type Exact } from "./exact.js";

type S = components["schemas"];
const baseUrl = (process.env.PAYKIT_BASE_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
const apiKey = process.env.PAYKIT_API_KEY ?? "pk_sandbox";
const secret = process.env.PAYKIT_SECRET ?? "sk_sandbox_secret";

/** HMACSigner: lowercase hex HMAC-SHA256 over METHOD \n REQUEST_URI \n BODY. */
export function sign(key: string, method: string, requestURI: string, body: Uint8Array): string {
  return createHmac("sha256", key)
    .update(`${method}\n${requestURI}\n`)
    .update(body)
    .digest("hex");
}

// Signs the exact bytes that go out: the body is read back from the Request
// (a multipart body too, boundary and all) and the URI is the escaped path
// and query as sent.
const signing: Middleware = {
  async onRequest({ request }) {
    const url = new URL(request.url);
    if (!url.pathname.startsWith("/v1/")) return request;
    const body = new Uint8Array(await request.clone().arrayBuffer());
    request.headers.set("X-Identity", apiKey);
    request.headers.set("X-Signature", sign(secret, request.method, url.pathname + url.search, body));
    return request;
  },
};

const api = createClient<paths>({ baseUrl, bodySerializer: stringifyExact });
api.use(signing);

class Mismatch extends Error {}
function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Mismatch(what);
}

/** The answer's JSON with its numbers exact; throws on an error answer. */
function ok<T>(what: string, r: { data?: unknown; error?: unknown; response: Response }): Exact<T> {
  check(r.response.ok && typeof r.data === "string", `${what}: HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
  return parseExact<T>(r.data);
}

async function control(path: string, body: unknown): Promise<unknown> {
  const res = await fetch(baseUrl + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  check(res.ok, `${path}: HTTP ${res.status} ${text}`);
  return parseExact<unknown>(text);
}

// The smallest body the sandbox takes as an image: the PNG signature and an IHDR chunk header.
const PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
  0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89,
]);

async function main(): Promise<void> {
  const run = `ts-${Date.now()}-${randomBytes(3).toString("hex")}`;
  console.log(`paykit flow from TypeScript against ${baseUrl}`);

  const terminals = ok<{ terminals: S["Terminal"][] }>("terminals", await api.GET("/v1/terminals", { parseAs: "text" })).terminals;
  check(terminals.length >= 2, "need two terminals");
  const [main, reserve] = terminals;

  // 1. create: 1500.50 goes out and comes back with both decimals.
  const created = ok<S["PaymentCreated"]>(
    "create",
    await api.POST("/v1/payments", {
      body: { ext_id: `${run}-pay`, amount: num("1500.50"), method: "CARD" },
      parseAs: "text",
    }),
  );
  check(created.amount === "1500.50", `create: amount ${created.amount}, want 1500.50`);
  check(created.status === "PENDING", `create: status ${created.status}`);
  check(/^[0-9]+(\.[0-9]+)?$/.test(created.usdt_rate), `create: usdt_rate ${created.usdt_rate}`);
  check("bank_code" in created.requisites && created.requisites.bank_code !== "", "create: requisites.bank_code missing");
  console.log(`1. created ${created.id}: ${created.amount} RUB at ${created.usdt_rate} RUB/USDT`);

  // 2. confirm with a receipt, multipart/form-data.
  const form = new FormData();
  form.append("attachment", new Blob([PNG], { type: "image/png" }), "receipt.png");
  const confirmed = ok<S["PaymentConfirmed"]>(
    "confirm",
    await api.POST("/v1/payments/{id}/confirm", {
      params: { path: { id: created.id } },
      // openapi-fetch would JSON-encode; hand the FormData to fetch as it is.
      body: form as never,
      bodySerializer: (b: unknown) => b as FormData,
      parseAs: "text",
    }),
  );
  check(confirmed.status === "PROCESSING" && confirmed.message !== "", `confirm: ${confirmed.status} ${confirmed.message}`);
  console.log(`2. confirmed: ${confirmed.message}`);

  await control(`/sandbox/payments/${created.id}/verify`, { outcome: "completed" });

  // 3. get: COMPLETED, the amount still exact.
  const got = ok<S["Payment"]>(
    "get",
    await api.GET("/v1/payments/{id}", { params: { path: { id: created.id } }, parseAs: "text" }),
  );
  check(got.status === "COMPLETED" && got.amount === "1500.50", `get: ${got.status} ${got.amount}`);
  console.log(`3. get: ${got.status}, ${got.amount} RUB`);

  // 4. payout.
  const payout = ok<S["Payout"]>(
    "payout",
    await api.POST("/v1/payouts", {
      body: { ext_id: `${run}-po`, amount: num("2500.05"), method: "sbp", requisites: "+79001234567", holder_name: "IVAN PETROV", bank: "sber" },
      parseAs: "text",
    }),
  );
  check(payout.status === "pending" && payout.amount === "2500.05", `payout: ${payout.status} ${payout.amount}`);
  console.log(`4. payout ${payout.id}: ${payout.amount} RUB, ${payout.status}`);

  // 5. transfer 0.10 USDT between the merchant's terminals.
  const transfer = ok<S["Transfer"]>(
    "transfer",
    await api.POST("/v1/transfers", {
      body: { from_terminal_id: main.id, to_terminal_id: reserve.id, amount: num("0.10") },
      parseAs: "text",
    }),
  );
  check(transfer.success === true && transfer.amount === "0.10", `transfer: ${transfer.success} ${transfer.amount}`);
  console.log(`5. transfer: ${transfer.amount} USDT ${main.id} -> ${reserve.id}`);

  // 6. withdrawal, fee subtracted; subtract_fee_from_amount is optional in the types.
  const withdrawal = ok<S["Withdrawal"]>(
    "withdrawal",
    await api.POST("/v1/withdrawals", {
      body: { terminal_id: main.id, amount: num("5.00"), address: "TXYZ1234567890abcdefghijklmnopqrs", subtract_fee_from_amount: true },
      parseAs: "text",
    }),
  );
  check(withdrawal.status === "pending" && withdrawal.tx_hash === null, `withdrawal: ${withdrawal.status} ${withdrawal.tx_hash}`);
  check(withdrawal.amount === "5.00" || withdrawal.amount === "5", `withdrawal: amount ${withdrawal.amount}`);
  console.log(`6. withdrawal ${withdrawal.id}: ${withdrawal.amount} USDT, fee ${withdrawal.fee}`);

  // A wrong signature is refused before anything is created.
  const bad = await fetch(`${baseUrl}/v1/balance`, { headers: { "X-Identity": apiKey, "X-Signature": "00" } });
  check(bad.status === 401, `wrong signature: HTTP ${bad.status}`);
  console.log("flow OK");
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
