/**
 * `sync_inventory_qa_sample` (samples sent to labs) and the answer of `inventory_qa_check`
 * (the sample's result panels, keyed by numeric `type`).
 */
import { Schema } from "effect"
import { Barcode, Code, IdString, OptionalNumber, OptionalText, StringNumber, syncColumns } from "./Common.js"

/** `result`: 0 pending, 1 passed, -1 failed, 2 rejected (the lab refused the sample: it reads as failed). */
export const SampleResult = Code.pipe(
  Schema.filter((n) => n === 0 || n === 1 || n === -1 || n === 2 || `expected a result of 0, 1, -1 or 2, got ${n}`)
)

/** One `inventory_qa_sample` row. */
export const QaSample = Schema.Struct({
  inventoryid: Barcode,
  parentid: Barcode,
  inventorytype: Schema.optionalWith(Schema.NullOr(Code), { default: () => null }),
  lab_license: IdString,
  location: IdString,
  quantity: OptionalNumber,
  result: SampleResult,
  sample_use: Schema.optionalWith(Schema.NullOr(Code), { default: () => null }),
  strain: OptionalText,
  ...syncColumns
})
/** A QA sample row. */
export type QaSample = typeof QaSample.Type

/** One result panel: `type` 1..8 plus its measured values by name (strings, numbers or null). */
export const Panel = Schema.Struct(
  { type: Code.pipe(Schema.filter((n) => (n >= 1 && n <= 8) || `expected a panel type 1 to 8, got ${n}`)) },
  Schema.Record({ key: Schema.String, value: Schema.NullOr(StringNumber) })
)
/** A result panel. */
export type Panel = typeof Panel.Type

/** The `data` of an `inventory_qa_check` answer. */
export const QaCheck = Schema.Struct({
  sample_id: Barcode,
  parent_id: Barcode,
  barcode_id: Schema.optional(Barcode),
  lab_license: IdString,
  inventorytype: Schema.optionalWith(Schema.NullOr(Code), { default: () => null }),
  result: SampleResult,
  use: Schema.optionalWith(Schema.NullOr(Code), { default: () => null }),
  transactionid: Schema.optional(IdString),
  transactionid_original: Schema.optional(IdString),
  test: Schema.optionalWith(Schema.Array(Panel), { default: () => [] })
})
/** A QA check answer. */
export type QaCheck = typeof QaCheck.Type

/** The whole `inventory_qa_check` answer. */
export const QaCheckResult = Schema.Struct({
  success: Schema.Union(Schema.Literal(1), Schema.Literal("1")),
  data: QaCheck
})
