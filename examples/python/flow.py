#!/usr/bin/env python3
"""The whole merchant flow against the paykit sandbox, from Python, without the SDK.

Standard library only. It signs every /v1 request the way paykit.HMACSigner
does, parses every amount as a Decimal, and checks each answer; any mismatch
exits non-zero.

    PAYKIT_BASE_URL  default http://127.0.0.1:8080
    PAYKIT_API_KEY   default pk_sandbox
    PAYKIT_SECRET    default sk_sandbox_secret

Start the sandbox first (go run ./cmd/paykit-sandbox), or use run.sh, which
builds and starts it on a free port, runs this script and stops it.
The routes are those of openapi.yaml at the repository root, which the
sandbox also serves at GET /openapi.yaml.
"""

import hashlib
import hmac
import json
import os
import re
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from decimal import ROUND_HALF_UP, Decimal

BASE_URL = os.environ.get("PAYKIT_BASE_URL", "http://127.0.0.1:8080").rstrip("/")
API_KEY = os.environ.get("PAYKIT_API_KEY", "pk_sandbox")
SECRET = os.environ.get("PAYKIT_SECRET", "sk_sandbox_secret")

# The smallest body the sandbox takes as an image: the PNG signature and an
# IHDR chunk header.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"

CENT = Decimal("0.01")


class Mismatch(Exception):
    """An answer that is not what the API promises."""


def check(cond, what):
    if not cond:
        raise Mismatch(what)


def sign(secret, method, request_uri, body):
    """paykit.HMACSigner: lowercase hex HMAC-SHA256 over METHOD \\n URI \\n body."""
    msg = method.encode() + b"\n" + request_uri.encode() + b"\n" + body
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()


_DEC = re.compile(r'"@@dec:([-+0-9.eE]+)@@"')


def dumps(obj):
    """JSON with Decimals written as bare numbers (1500.50, not "1500.50" or 1500.5)."""
    def enc(o):
        if isinstance(o, Decimal):
            return "@@dec:%s@@" % o
        raise TypeError(type(o).__name__)
    return _DEC.sub(r"\1", json.dumps(obj, default=enc, separators=(",", ":"))).encode()


def call(method, path, body=None, content_type=None, signed=True, secret=None):
    """One request; returns (HTTP status, decoded JSON or raw bytes)."""
    data = b""
    if isinstance(body, (dict, list)):
        data, content_type = dumps(body), "application/json"
    elif isinstance(body, bytes):
        data = body
    # No body at all rather than an empty one: urllib would add a form
    # Content-Type to it. http.client still sends Content-Length: 0 on a POST.
    req = urllib.request.Request(BASE_URL + path, data=data or None, method=method)
    if content_type:
        req.add_header("Content-Type", content_type)
    req.add_header("Accept", "application/json")
    if signed:
        # The URI signed is the path and query exactly as sent.
        req.add_header("X-Identity", API_KEY)
        req.add_header("X-Signature", sign(secret or SECRET, method, path, data))
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            status, raw, ctype = res.status, res.read(), res.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        status, raw, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
    if ctype.startswith("application/json"):
        # Amounts are JSON numbers: parse them as decimals, never floats.
        return status, json.loads(raw, parse_float=Decimal)
    return status, raw


def ok(method, path, body=None, content_type=None):
    status, out = call(method, path, body, content_type)
    check(status == 200, "%s %s: HTTP %d %s" % (method, path, status, out))
    return out


def control(path, body):
    """A /sandbox/ control: unsigned, and it needs Content-Type: application/json."""
    return ok("POST", path, body)


def expect_error(status_want, code_want, method, path, body=None, content_type=None, **kw):
    status, out = call(method, path, body, content_type, **kw)
    check(status == status_want, "%s %s: HTTP %d, want %d" % (method, path, status, status_want))
    check(isinstance(out, dict) and set(out) >= {"error", "message", "data"},
          "%s %s: not an error body" % (method, path))
    if code_want:
        check(out["error"] == code_want, "%s %s: error %s, want %s" % (method, path, out["error"], code_want))
    return out


def multipart(field, filename, content_type, content):
    boundary = "paykit" + secrets.token_hex(8)
    body = (
        ("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
         "Content-Type: %s\r\n\r\n" % (boundary, field, filename, content_type)).encode()
        + content + ("\r\n--%s--\r\n" % boundary).encode()
    )
    return body, "multipart/form-data; boundary=" + boundary


def masked(s):
    return "****" + s[-4:] if len(s) > 4 else "****"


def terminal(terminals, tid):
    return next(t for t in terminals if t["id"] == tid)


def main():
    run = time.strftime("%Y%m%d%H%M%S") + "-" + secrets.token_hex(3)
    print("paykit flow from Python against", BASE_URL)

    status, doc = call("GET", "/openapi.yaml", signed=False)
    check(status == 200 and doc.startswith(b"openapi: 3.1"), "GET /openapi.yaml: not the OpenAPI 3.1 document")
    print("0. GET /openapi.yaml: %d bytes of OpenAPI 3.1" % len(doc))

    banks = ok("GET", "/v1/banks")["banks"]
    check(any(b["code"] == "sber" and b["is_active"] for b in banks), "bank sber missing or inactive")
    terminals = ok("GET", "/v1/terminals")["terminals"]
    check(len(terminals) >= 2, "need two terminals")
    main_id, reserve_id = terminals[0]["id"], terminals[1]["id"]
    balance0 = ok("GET", "/v1/balance")
    check(isinstance(balance0["balance"], Decimal), "balance is not a JSON number with decimals")
    print("1. %d banks; terminals %s, %s; total balance %s USDT" % (len(banks), main_id, reserve_id, balance0["balance"]))

    # Create, read back by id and by ext_id.
    ext_id = "py-" + run
    amount = Decimal("1500.50")
    p = ok("POST", "/v1/payments", {"ext_id": ext_id, "amount": amount, "method": "CARD", "bank": "sber"})
    check(p["status"] == "PENDING", "create: status %s" % p["status"])
    check(p["amount"] == amount and str(p["amount"]) == "1500.50", "create: amount %s" % p["amount"])
    check(p["requisites"]["type"] == "card" and p["requisites"]["bank_code"] == "sber", "create: requisites")
    rate = p["usdt_rate"]
    print("2. created %s: %s %s, pay to card %s at %s, rate %s" % (
        ext_id, p["amount"], p["currency"], masked(p["requisites"]["value"]), p["requisites"]["bank"], rate))
    got = ok("GET", "/v1/payments/" + p["id"])
    check(got["id"] == p["id"] and got["amount"] == amount, "get: wrong payment")
    got = ok("GET", "/v1/payments/by-ext-id/" + urllib.parse.quote(ext_id, safe=""))
    check(got["id"] == p["id"], "by-ext-id: wrong payment")
    print("3. read back by id and by ext_id")

    # Confirm with a receipt (multipart/form-data only), then verify.
    body, ctype = multipart("attachment", "receipt.png", "image/png", PNG)
    c = ok("POST", "/v1/payments/%s/confirm" % p["id"], body, ctype)
    check(c["status"] == "PROCESSING" and c["message"], "confirm: status %s" % c["status"])
    v = control("/sandbox/payments/%s/verify" % p["id"], {"outcome": "completed"})
    check(v["status"] == "COMPLETED", "verify: status %s" % v["status"])
    credit = (amount / rate).quantize(CENT, rounding=ROUND_HALF_UP)
    balance1 = ok("GET", "/v1/balance")
    check(balance1["balance"] == balance0["balance"] + credit,
          "balance %s, want %s + %s" % (balance1["balance"], balance0["balance"], credit))
    print("4. confirmed with a %d-byte PNG, verified: COMPLETED; balance %s -> %s USDT (+%s)" % (
        len(PNG), balance0["balance"], balance1["balance"], credit))

    # Cancel another payment, open and cancel a dispute: lower-case statuses.
    q = ok("POST", "/v1/payments", {"ext_id": ext_id + "-b", "amount": Decimal("2500.00"), "method": "SBP"})
    q = ok("POST", "/v1/payments/%s/cancel" % q["id"])
    check(q["status"] == "CANCELLED", "cancel: status %s" % q["status"])
    d = ok("POST", "/v1/payments/%s/dispute" % q["id"], {"amount": Decimal("2400.00"), "comment": "paid less"})
    check(d["status"] == "dispute" and d["dispute"]["amount"] == Decimal("2400.00"), "dispute: %s" % d["status"])
    d = ok("POST", "/v1/payments/%s/dispute/cancel" % q["id"])
    check(d["status"] == "cancelled_appeal", "dispute cancel: %s" % d["status"])
    check(ok("GET", "/v1/payments/" + q["id"])["status"] == "CANCELLED_APPEAL", "get after dispute cancel")
    print("5. cancelled, disputed (status 'dispute'), dispute cancelled ('cancelled_appeal'; GET says CANCELLED_APPEAL)")

    # Payouts.
    po = ok("POST", "/v1/payouts", {"ext_id": "po-" + run, "amount": Decimal("2500.00"), "method": "card",
                                     "requisites": "2200000000000004", "holder_name": "Ivan Petrov"})
    check(po["status"] == "pending" and po["bank"] == "" and po["amount"] == Decimal("2500.00"), "payout: status %s, bank %r" % (po["status"], po["bank"]))
    check(ok("GET", "/v1/payouts/" + po["id"])["ext_id"] == "po-" + run, "payout get")
    control("/sandbox/payouts/%s/status" % po["id"], {"status": "completed"})
    lst = ok("GET", "/v1/payouts?status=completed&limit=100")
    check(any(x["id"] == po["id"] and x.get("completed_at") for x in lst["payouts"]), "payout not listed as completed")
    check(lst["total"] >= 1 and lst["limit"] == 100, "payout list envelope")
    print("6. payout %s to card %s: pending -> completed; listed (total %d)" % (
        po["ext_id"], masked(po["requisites"]), lst["total"]))

    # Transfer and withdrawal with the fee.
    before = ok("GET", "/v1/terminals")["terminals"]
    tr = ok("POST", "/v1/transfers", {"from_terminal_id": main_id, "to_terminal_id": reserve_id, "amount": Decimal("10.00")})
    check(tr["success"] is True and tr["amount"] == Decimal("10.00"), "transfer: %s" % tr)
    fee = ok("GET", "/v1/withdrawals/fee")["fee"]
    w = ok("POST", "/v1/withdrawals", {"terminal_id": reserve_id, "amount": Decimal("5.00"),
                                       "address": "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", "subtract_fee_from_amount": True})
    check(w["status"] == "pending" and w["tx_hash"] is None and w["fee"] == fee, "withdrawal: %s" % w)
    after = ok("GET", "/v1/terminals")["terminals"]
    r0, r1 = terminal(before, reserve_id), terminal(after, reserve_id)
    check(r1["balance"] == r0["balance"] + Decimal("10.00") - Decimal("5.00"), "reserve balance %s" % r1["balance"])
    check(r1["balance_frozen"] == r0["balance_frozen"] + Decimal("5.00"), "reserve frozen %s" % r1["balance_frozen"])
    check(terminal(after, main_id)["balance"] == terminal(before, main_id)["balance"] - Decimal("10.00"), "main balance")
    control("/sandbox/withdrawals/%s/status" % w["id"], {"status": "completed"})
    w = ok("GET", "/v1/withdrawals/" + w["id"])
    check(w["status"] == "completed" and w["tx_hash"], "withdrawal not settled")
    print("7. transferred 10.00 USDT; withdrew 5.00 (fee %s, wallet gets %s); settled" % (fee, Decimal("5.00") - fee))

    # Errors.
    e = expect_error(409, "PAY_003", "POST", "/v1/payments", {"ext_id": ext_id, "amount": amount})
    check(e["data"].get("ext_id") == ext_id, "PAY_003 without data.ext_id")
    expect_error(400, "PAY_002", "POST", "/v1/payments", {"ext_id": ext_id + "-small", "amount": Decimal("50")})
    expect_error(404, "PAY_006", "GET", "/v1/payments/00000000-0000-4000-8000-000000000000")
    expect_error(401, None, "GET", "/v1/balance", secret="not-the-secret")
    # A control without the JSON content type is refused: a web page could
    # send text/plain cross-origin, so the sandbox never acts on it.
    expect_error(415, "SANDBOX_UNSUPPORTED_MEDIA_TYPE", "POST", "/sandbox/clock/advance",
                 b'{"seconds":1}', "text/plain", signed=False)
    print("8. errors: PAY_003 (data.ext_id), PAY_002, PAY_006, 401 on a wrong signature, 415 on a text/plain control")

    # What the sandbox saw and holds.
    status, reqs = call("GET", "/sandbox/requests", signed=False)
    check(status == 200 and any(r["route"] == "/v1/payments" for r in reqs["requests"]), "/sandbox/requests")
    status, state = call("GET", "/sandbox/state", signed=False)
    check(status == 200, "/sandbox/state: HTTP %d" % status)
    snap = terminal(state["merchants"][0]["terminals"], main_id)
    check(snap["balance"] == terminal(ok("GET", "/v1/terminals")["terminals"], main_id)["balance"],
          "/sandbox/state and /v1/terminals disagree")
    print("9. /sandbox/requests lists %d requests; /sandbox/state agrees with /v1/terminals (%s USDT)" % (
        len(reqs["requests"]), snap["balance"]))
    print("flow OK")


if __name__ == "__main__":
    try:
        main()
    except Mismatch as e:
        print("MISMATCH:", e, file=sys.stderr)
        sys.exit(1)
    except (urllib.error.URLError, OSError) as e:
        print("cannot reach the sandbox at %s: %s" % (BASE_URL, e), file=sys.stderr)
        sys.exit(2)
