// Exact decimals in JavaScript: JSON.parse turns 1500.50 into the float
// 1500.5 (and 0.1 + 0.2 into 0.30000000000000004), so money must never pass
// through it. parseExact keeps every JSON number as the string of digits the
// server wrote; num marks a decimal string to be written as a bare JSON
// number. lossless-json (pinned in package.json) does the tokenizing; on
// Node 21+ JSON.parse's reviver gets context.source and could do the same.
import { parse, stringify, LosslessNumber } from "lossless-json";

/** T with every number replaced by the decimal string the server sent. */
export type Exact<T> = T extends number
  ? string
  : T extends (infer U)[]
    ? Exact<U>[]
    : T extends object
      ? { [K in keyof T]: Exact<T[K]> }
      : T;

/** Parses JSON text, keeping each number's digits as a string. */
export function parseExact<T>(text: string): Exact<T> {
  return parse(text, null, (digits: string) => digits) as Exact<T>;
}

/**
 * A decimal string to send as a JSON number with exactly these digits
 * ("1500.50" goes out as 1500.50). Typed as number so that it fits the
 * generated request types; stringifyExact writes it.
 */
export function num(decimal: string): number {
  if (!/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(decimal)) {
    throw new Error(`not a decimal: ${JSON.stringify(decimal)}`);
  }
  return new LosslessNumber(decimal) as unknown as number;
}

/** JSON text in which num() values keep their digits. */
export function stringifyExact(body: unknown): string {
  const out = stringify(body);
  if (out === undefined) throw new Error("body is not JSON");
  return out;
}
