/**
 * The write commands of the spec (§4 rows 6, 11 and 13), validated. Writes only work against
 * sandbox connections; `ProviderPort.make` refuses them elsewhere with `SandboxOnly`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PackageId } from "./Ids.js"
import { LabTestResult } from "./LabResult.js"
import { IsoDate, IsoDateTime, PositiveQuantity, Text } from "./Schemas.js"
import * as Units from "./Units.js"

/** A quantity fine enough for its unit (not below its precision; a whole count), reported on `quantity`. */
const quantityFitsUnit = (value: { readonly quantity: number; readonly unit_of_measure: string }) => {
  const problem = Units.quantityProblem(value.quantity, value.unit_of_measure)
  return problem === undefined || { path: ["quantity"], message: `quantity ${problem}` }
}

const uniqueIds = (ids: ReadonlyArray<string>) =>
  new Set(ids).size === ids.length || "must not list the same package twice"

/**
 * Split a quantity off one or more source packages into a new package (`POST …/packages`).
 * With several sources the quantity is drawn from them in the order given.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SplitPackage = Schema.Struct({
  item_name: Text,
  item_category: Text,
  item_strain: Schema.optionalWith(Schema.NullOr(Text), { default: () => null }),
  quantity: PositiveQuantity,
  unit_of_measure: Text,
  source_package_ids: Schema.Array(PackageId).pipe(
    Schema.minItems(1),
    Schema.maxItems(10),
    Schema.filter(uniqueIds)
  )
}).pipe(Schema.filter(quantityFitsUnit)).annotations({
  identifier: "SplitPackage",
  description: "Split a quantity off source packages into a new package"
})

/**
 * @since 0.1.0
 * @category models
 */
export interface SplitPackage extends Schema.Schema.Type<typeof SplitPackage> {}

/**
 * Record a lab result on a package (`POST …/lab_results`). `package_id` is the original source
 * package, not the sample.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordLabResult = Schema.Struct({
  package_id: PackageId,
  lab_name: Text,
  overall_passed: Schema.Boolean,
  results: Schema.Array(LabTestResult).pipe(Schema.minItems(1), Schema.maxItems(200)),
  lab_license: Schema.optionalWith(Schema.NullOr(Text), { default: () => null }),
  test_type: Schema.optionalWith(Text, { default: () => "ComplianceTesting" }),
  test_date: Schema.optionalWith(Schema.NullOr(IsoDate), { default: () => null })
}).annotations({ identifier: "RecordLabResult", description: "Record a lab result on a package" })

/**
 * @since 0.1.0
 * @category models
 */
export interface RecordLabResult extends Schema.Schema.Type<typeof RecordLabResult> {}

/**
 * A package line of a new transfer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransferLine = Schema.Struct({
  package_id: PackageId,
  tag: Text,
  item_name: Text,
  quantity: PositiveQuantity,
  unit_of_measure: Text
}).pipe(Schema.filter(quantityFitsUnit)).annotations({ identifier: "TransferLine" })

/**
 * Create an outgoing transfer (`POST …/transfers`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateTransfer = Schema.Struct({
  transfer_type: Text,
  shipper_facility: Text,
  recipient_facility: Text,
  packages: Schema.Array(TransferLine).pipe(
    Schema.minItems(1),
    Schema.maxItems(100),
    Schema.filter((lines) => uniqueIds(lines.map((l) => l.package_id)))
  ),
  estimated_departure: Schema.optionalWith(Schema.NullOr(IsoDateTime), { default: () => null }),
  estimated_arrival: Schema.optionalWith(Schema.NullOr(IsoDateTime), { default: () => null }),
  transporter: Schema.optionalWith(Schema.NullOr(Text), { default: () => null }),
  driver_name: Schema.optionalWith(Schema.NullOr(Text), { default: () => null }),
  vehicle_info: Schema.optionalWith(Schema.NullOr(Text), { default: () => null })
}).annotations({ identifier: "CreateTransfer", description: "Create an outgoing transfer" })

/**
 * @since 0.1.0
 * @category models
 */
export interface CreateTransfer extends Schema.Schema.Type<typeof CreateTransfer> {}
