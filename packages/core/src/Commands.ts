/**
 * The write commands of the spec (§4 rows 6, 11 and 13), validated. Writes only work against
 * sandbox connections; `ProviderPort.make` refuses them elsewhere with `SandboxOnly`.
 *
 * @since 0.1.0
 */
import { Either, Option, Schema } from "effect"
import { PackageId } from "./Ids.js"
import { LabTestResult } from "./LabResult.js"
import { InsufficientQuantity, InvalidInput } from "./ProviderError.js"
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
 * @since 0.1.0
 * @category models
 */
export interface TransferLine extends Schema.Schema.Type<typeof TransferLine> {}

const sameUnit = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase()

/**
 * Checks a transfer line against the package it ships, for a state system that ships whole
 * packages only (a Metrc transfer template lists `PackageLabel`s, a BioTrack manifest stop lists
 * barcodes: neither carries a quantity). The line's quantity, in the package's unit, must be all
 * the package holds:
 * - more is `InsufficientQuantity` (422 `insufficient_quantity`);
 * - less is `InvalidInput` at `packages.N.quantity` (400 `invalid_parameter`), telling to split
 *   the part off first (`POST …/packages`) and transfer the new package, rather than ship the
 *   whole package under a line that says otherwise;
 * - a unit that does not convert to the package's is `InvalidInput` at `packages.N.unit_of_measure`.
 *
 * Quantities agree to a millionth (relative), which absorbs unit conversions.
 *
 * @since 0.1.0
 * @category validation
 */
export const wholePackageLine = (options: {
  /** Who ships whole packages only, for the message (a descriptor's `displayName`). */
  readonly provider: string
  /** The line's position in `packages`. */
  readonly index: number
  readonly line: TransferLine
  /** What the package holds now, in its own unit. */
  readonly holds: { readonly tag: string; readonly quantity: number; readonly unit_of_measure: string }
}): Either.Either<void, InvalidInput | InsufficientQuantity> => {
  const { holds, index, line, provider } = options
  const path = `packages.${index}`
  const asked = sameUnit(line.unit_of_measure, holds.unit_of_measure)
    ? Option.some(line.quantity)
    : Units.convert(line.quantity, line.unit_of_measure, holds.unit_of_measure)
  if (Option.isNone(asked)) {
    return Either.left(
      new InvalidInput({
        operation: "create_transfer",
        path: `${path}.unit_of_measure`,
        message: `${path}.unit_of_measure ${line.unit_of_measure} does not convert to ${holds.unit_of_measure}, ` +
          `the unit of package ${holds.tag}`
      })
    )
  }
  const tolerance = Math.max(1e-6, holds.quantity * 1e-6)
  if (asked.value > holds.quantity + tolerance) {
    return Either.left(
      new InsufficientQuantity({
        package_id: line.package_id,
        requested: asked.value,
        available: holds.quantity,
        unit_of_measure: holds.unit_of_measure,
        message: `Package ${holds.tag} holds ${holds.quantity} ${holds.unit_of_measure}; the transfer line asks for ` +
          `${line.quantity} ${line.unit_of_measure}`
      })
    )
  }
  if (asked.value < holds.quantity - tolerance) {
    return Either.left(
      new InvalidInput({
        operation: "create_transfer",
        path: `${path}.quantity`,
        message: `${provider} transfers whole packages only: package ${holds.tag} holds ${holds.quantity} ` +
          `${holds.unit_of_measure}, and a line cannot ship ${line.quantity} ${line.unit_of_measure} of it: split ` +
          `that quantity off first (POST …/packages with source_package_ids [${line.package_id}]) and transfer the ` +
          `new package, or send ${path}.quantity ${holds.quantity} to ship all of it`
      })
    )
  }
  return Either.void
}

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
