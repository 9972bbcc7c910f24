// Prism against openapi.yaml (issue 23, points 1 and 3), as a team would
// put it in front of the sandbox:
//
//  1. `prism mock` answers from the document alone. With an example on
//     every answer, a create shows a whole payment (requisites with
//     bank_code, payment_url, usdt_rate), and an error answer its code and
//     data, instead of a near-empty body.
//  2. `prism proxy --errors` validates each exchange and forwards it to a
//     sandbox started with -accept-unsigned. Prism re-serialises the JSON
//     body (1500.50 goes out as 1500.5), so the signature over the bytes
//     the client signed cannot match; the sandbox lets the request through
//     for that merchant and logs it.
//
//   node dist/prism-check.js MOCK_URL PROXY_URL   (run.sh starts both)
import { createHmac } from "node:crypto";

const [mockUrl, proxyUrl] = process.argv.slice(2);
const apiKey = process.env.PAYKIT_API_KEY ?? "pk_sandbox";
const secret = process.env.PAYKIT_SECRET ?? "sk_sandbox_secret";

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(what);
}

async function post(base: string, path: string, body: string, extra: Record<string, string> = {}) {
  const signature = createHmac("sha256", secret).update(`POST\n${path}\n${body}`).digest("hex");
  const res = await fetch(base + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Identity": apiKey, "X-Signature": signature, ...extra },
    body,
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${base}${path}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, json, text };
}

async function main(): Promise<void> {
  check(mockUrl && proxyUrl, "usage: prism-check MOCK_URL PROXY_URL");
  const body = '{"ext_id":"order-prism-1","amount":1500.50,"method":"CARD"}';

  // 1. The mock shows real payloads.
  const created = await post(mockUrl, "/v1/payments", body);
  check(created.status === 200, `mock create: HTTP ${created.status} ${created.text}`);
  for (const field of ["id", "payment_url", "valid_until", "usdt_rate"]) {
    check(created.json[field] !== undefined && created.json[field] !== null, `mock create lacks ${field}: ${created.text}`);
  }
  check(created.json.requisites?.bank_code && created.json.requisites?.value, `mock create's requisites: ${created.text}`);
  const dup = await post(mockUrl, "/v1/payments", body, { Prefer: "code=409" });
  check(dup.status === 409 && dup.json.error === "PAY_003" && dup.json.data?.ext_id, `mock 409: HTTP ${dup.status} ${dup.text}`);
  console.log(`prism mock: create answers ${Object.keys(created.json).length} fields, 409 answers ${dup.json.error} with data.ext_id`);

  // 2. Through the validating proxy to a sandbox that accepts unsigned requests.
  const via = await post(proxyUrl, "/v1/payments", body);
  check(via.status === 200 && via.json.status === "PENDING", `through prism proxy: HTTP ${via.status} ${via.text}`);
  // What the proxy did to the digits: the reason signatures cannot survive it.
  check(/"amount":1500\.5[,}]/.test(via.text), `prism proxy kept the digits? ${via.text.slice(0, 120)}`);
  console.log(`prism proxy: a signed create passes through (Prism re-serialised it: amount ${via.json.amount}), status ${via.json.status}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
