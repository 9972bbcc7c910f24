// Compile-time proof that openapi-typescript sees every field of
// openapi.yaml (issue 23 point 1). Each line fails `tsc` when the generated
// type lacks the field, makes an optional field required, or loses an error
// code to a bare string. Keywords written beside a $ref (valid OpenAPI 3.1,
// dropped by openapi-typescript) made all of these fail before.
import type { components, operations } from "./gen/schema.js";

type S = components["schemas"];
type Has<T, K extends PropertyKey> = K extends keyof T ? true : false;
type Optional<T, K extends keyof T> = {} extends Pick<T, K> ? true : false;
type Required<T, K extends keyof T> = {} extends Pick<T, K> ? false : true;
// The error field is the named codes, not any string.
type Codes<T> = T extends { error: infer E } ? (string extends E ? never : E) : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type JSONOf<Op, Status extends PropertyKey> = Op extends {
  responses: { [K in Status]: { content: { "application/json": infer B } } };
}
  ? B
  : never;

type CrossBorder = Extract<S["RequisitesCreated"], { type?: "phone" }>;
type CreatedRequisites = JSONOf<operations["createPayment"], "2XX">["requisites"];

export const paymentHasUsdtRate: Required<S["Payment"], "usdt_rate"> = true;
export const getPaymentHasUsdtRate: Has<JSONOf<operations["getPayment"], "2XX">, "usdt_rate"> = true;
export const createdHasUsdtRate: Has<JSONOf<operations["createPayment"], "2XX">, "usdt_rate"> = true;
export const requisitesBankCode: Has<Extract<CreatedRequisites, { bank_code: string }>, "bank_code"> = true;
export const requisitesBankName: Required<CrossBorder, "bank_name"> = true;
export const requisitesCountry: Same<CrossBorder["country"], "TJ" | "KZ" | "UZ" | "KG"> = true;
export const requisitesCurrency: Required<CrossBorder, "currency"> = true;
export const requisitesAmountLocal: Required<CrossBorder, "amount_local"> = true;
export const confirmHasMessage: Required<JSONOf<operations["confirmPayment"], "2XX">, "message"> = true;
export const errorDataField: Has<NonNullable<S["Error"]["data"]>, "field"> = true;
export const errorDataExtID: Has<NonNullable<S["Error"]["data"]>, "ext_id"> = true;
export const duplicateExtID: Same<NonNullable<S["DuplicateExtIDError"]["data"]>["ext_id"], string> = true;
export const duplicateCode: Same<Codes<S["DuplicateExtIDError"]>, "PAY_003"> = true;
export const transferCodes: Same<Codes<JSONOf<operations["createTransfer"], 400>>, "TRF_001" | "TRF_003"> = true;
export const withdrawalCodes: Same<Codes<JSONOf<operations["createWithdrawal"], 400>>, "WDR_001" | "WDR_002"> = true;
export const createCodes429: Same<Codes<JSONOf<operations["createPayment"], 429>>, "PAY_005"> = true;
export const subtractFeeOptional: Optional<S["CreateWithdrawalRequest"], "subtract_fee_from_amount"> = true;
export const methodOptional: Optional<S["CreatePaymentRequest"], "method"> = true;
export const confirmCodes: Same<Codes<JSONOf<operations["confirmPayment"], 400>>, "PAY_008" | "PAY_002"> = true;
export const createDuplicateExtID: Same<NonNullable<JSONOf<operations["createPayment"], 409>["data"]>["ext_id"], string> = true;
export const errorDataFieldIsString: Same<NonNullable<S["Error"]["data"]["field"]>, string> = true;
