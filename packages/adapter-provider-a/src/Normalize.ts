/**
 * The embedding API: provider_a JSON in, core objects out, with no HTTP. Each function takes the
 * provider's JSON for one object (any key casing) and a context, and either returns the core
 * object (`normalizeSync`, throwing `ProviderInvalidResponse`) or an Effect (`normalize`).
 *
 * @example
 * ```ts
 * import { normalizeSync } from "@tracebridge/adapter-provider-a"
 * const pkg = normalizeSync.package(metrcPackageJson, { facility_id: "fac_…", state: "CO" })
 * ```
 *
 * @since 0.1.0
 */
import * as Core from "@tracebridge/core"
import type { Effect } from "effect"
import { Either, Schema } from "effect"
import { checkCore, decodeWire, mapWire } from "./internal/decode.js"
import type { MapContext } from "./internal/mappers/context.js"
import { toItem, toLocation, toPatient, toStrain } from "./internal/mappers/toCatalog.js"
import { toFacility } from "./internal/mappers/toFacility.js"
import { toHarvest } from "./internal/mappers/toHarvest.js"
import { toLabResults } from "./internal/mappers/toLabResults.js"
import { toPackage } from "./internal/mappers/toPackage.js"
import { toPlant } from "./internal/mappers/toPlant.js"
import { toSale, toSalesDelivery } from "./internal/mappers/toSale.js"
import type { TransferSource } from "./internal/mappers/toTransfer.js"
import { toTransfer } from "./internal/mappers/toTransfer.js"
import { ItemV2, LocationV2, PatientV2, StrainV2 } from "./internal/wire/Catalog.js"
import { FacilityV2 } from "./internal/wire/Facility.js"
import { HarvestV2 } from "./internal/wire/Harvest.js"
import { LabTestResultRow } from "./internal/wire/LabTest.js"
import { PackageV2 } from "./internal/wire/Package.js"
import { PlantV2 } from "./internal/wire/Plant.js"
import { SalesDeliveryV2, SalesReceipt } from "./internal/wire/Sale.js"
import { DeliveryPackage, TransferRow } from "./internal/wire/Transfer.js"

/**
 * The context of a mapping: the facility the object belongs to, and the state (for local times
 * without an offset; UTC when absent).
 *
 * @since 0.1.0
 * @category models
 */
export type Context = MapContext & CheckOption

/**
 * `checkOutput: true` also validates the mapped core object against its core schema (exact
 * fields), failing with `ProviderInvalidResponse` when it does not conform. Off by default: the
 * provider's input is always validated, and the mappers' output conforms by construction.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckOption {
  readonly checkOutput?: boolean | undefined
}

/**
 * A transfer as the embedding API takes it: a row of `/transfers/v2/incoming|outgoing|rejected`
 * (or several rows of one transfer, one per delivery), each optionally carrying the packages of its
 * delivery under `Packages` (as `/transfers/v2/deliveries/{id}/packages` returns them).
 *
 * @since 0.1.0
 * @category models
 */
export type TransferContext = Context & { readonly source?: TransferSource }

const TransferInput = Schema.Union(
  Schema.Struct({
    ...TransferRow.fields,
    Packages: Schema.optionalWith(Schema.Array(DeliveryPackage), { default: () => [] })
  }),
  Schema.Array(
    Schema.Struct({
      ...TransferRow.fields,
      Packages: Schema.optionalWith(Schema.Array(DeliveryPackage), { default: () => [] })
    })
  )
)

const pipeline = <W, WI, C, A>(
  operation: string,
  wire: Schema.Schema<W, WI>,
  map: (w: W, ctx: C) => A,
  core: Schema.Schema<any, any>
) => {
  const decode = decodeWire(wire, operation)
  const check = checkCore(core, operation)
  return (raw: unknown, ctx: C & CheckOption): Either.Either<A, Core.ProviderError.ProviderInvalidResponse> => {
    const mapped = Either.flatMap(decode(raw), mapWire(operation, (x: W) => map(x, ctx)))
    // The wire input is validated above; the mappers are typed and pure (their output is held to
    // the core schemas by the tests), so the output is checked again only when asked.
    return ctx.checkOutput === true ? Either.flatMap(mapped, check) : mapped
  }
}

const pipelines = {
  facility: pipeline(
    "facilities.normalize",
    FacilityV2,
    (w, ctx: { readonly state: string; readonly today?: string } & CheckOption) => toFacility(w, ctx),
    Core.Facility.Facility
  ),
  package: pipeline("packages.normalize", PackageV2, (w, ctx: Context) => toPackage(w, ctx), Core.Package.Package),
  plant: pipeline("plants.normalize", PlantV2, (w, ctx: Context) => toPlant(w, ctx), Core.Plant.Plant),
  harvest: pipeline("harvests.normalize", HarvestV2, (w, ctx: Context) => toHarvest(w, ctx), Core.Harvest.Harvest),
  labResults: pipeline(
    "lab_results.normalize",
    Schema.Array(LabTestResultRow),
    (rows, ctx: Context) => toLabResults(rows, ctx),
    Schema.Array(Core.LabResult.LabResult)
  ),
  transfer: pipeline("transfers.normalize", TransferInput, (input, ctx: TransferContext) => {
    const rows = Array.isArray(input) ? input : [input]
    return toTransfer(rows, rows.flatMap((r) => r.Packages), { ...ctx, source: ctx.source ?? "incoming" })
  }, Core.Transfer.Transfer),
  sale: pipeline("sales.normalize", SalesReceipt, (w, ctx: Context) => toSale(w, ctx), Core.Sale.Sale),
  salesDelivery: pipeline(
    "sales_deliveries.normalize",
    SalesDeliveryV2,
    (w, ctx: Context) => toSalesDelivery(w, ctx),
    Core.SalesDelivery.SalesDelivery
  ),
  item: pipeline("items.normalize", ItemV2, (w, ctx: Context) => toItem(w, ctx), Core.Item.Item),
  strain: pipeline("strains.normalize", StrainV2, (w, ctx: Context) => toStrain(w, ctx), Core.Strain.Strain),
  location: pipeline(
    "locations.normalize",
    LocationV2,
    (w, ctx: Context) => toLocation(w, ctx),
    Core.Location.Location
  ),
  patient: pipeline("patients.normalize", PatientV2, (w, ctx: Context) => toPatient(w, ctx), Core.Patient.Patient)
}

type Invalid = Core.ProviderError.ProviderInvalidResponse

/** A pipeline that throws its `ProviderInvalidResponse`. */
const syncOf = <C, A>(run: (raw: unknown, ctx: C) => Either.Either<A, Invalid>) => (raw: unknown, ctx: C): A =>
  Either.getOrThrowWith(run(raw, ctx), (e) => e)

/** A pipeline as an Effect that fails with its `ProviderInvalidResponse`. */
const effectOf =
  <C, A>(run: (raw: unknown, ctx: C) => Either.Either<A, Invalid>) =>
  (raw: unknown, ctx: C): Effect.Effect<A, Invalid> => run(raw, ctx)

/**
 * The synchronous form: returns the core object or throws `ProviderInvalidResponse`.
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalizeSync = {
  facility: syncOf(pipelines.facility),
  package: syncOf(pipelines.package),
  plant: syncOf(pipelines.plant),
  harvest: syncOf(pipelines.harvest),
  labResults: syncOf(pipelines.labResults),
  transfer: syncOf(pipelines.transfer),
  sale: syncOf(pipelines.sale),
  salesDelivery: syncOf(pipelines.salesDelivery),
  item: syncOf(pipelines.item),
  strain: syncOf(pipelines.strain),
  location: syncOf(pipelines.location),
  patient: syncOf(pipelines.patient)
}

/**
 * The Effect form: succeeds with the core object or fails with `ProviderInvalidResponse`.
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalize = {
  facility: effectOf(pipelines.facility),
  package: effectOf(pipelines.package),
  plant: effectOf(pipelines.plant),
  harvest: effectOf(pipelines.harvest),
  labResults: effectOf(pipelines.labResults),
  transfer: effectOf(pipelines.transfer),
  sale: effectOf(pipelines.sale),
  salesDelivery: effectOf(pipelines.salesDelivery),
  item: effectOf(pipelines.item),
  strain: effectOf(pipelines.strain),
  location: effectOf(pipelines.location),
  patient: effectOf(pipelines.patient)
}
