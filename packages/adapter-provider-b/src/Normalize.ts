/**
 * The embedding API: BioTrack rows in, core objects out, without the port or any I/O. Each
 * function takes the provider's row(s) for one object and `{ facility_id }` (the Tracebridge
 * facility id the object belongs to); composite objects take the rows they are made of.
 *
 * `normalize.<kind>` returns an Effect that fails with `ProviderInvalidResponse` naming the
 * offending field; `normalizeSync.<kind>` returns the object or throws that error.
 *
 * @example
 * ```ts
 * import { Normalize } from "@tracebridge/adapter-provider-b"
 *
 * const pkg = Normalize.normalizeSync.package(
 *   { id: "1000000000000001", inventorytype: "28", remaining_quantity: "3.50", location: "900001",
 *     deleted: "0", sessiontime: 1700000000, transactionid: "1" },
 *   { facility_id: "fac_…" }
 * )
 * pkg.quantity // 3.5
 * ```
 *
 * @since 0.1.0
 */
import type {
  Facility,
  Harvest,
  Item,
  LabResult,
  Location,
  Package,
  Plant,
  Sale,
  Strain,
  Transfer
} from "@tracebridge/core"
import { Ids, ProviderError, ProviderName } from "@tracebridge/core"
import type { ParseResult } from "effect"
import { Effect, Either, Schema } from "effect"
import { toFacility } from "./internal/mappers/toFacility.js"
import { toHarvest } from "./internal/mappers/toHarvest.js"
import { toItem } from "./internal/mappers/toItem.js"
import { toLabResult } from "./internal/mappers/toLabResult.js"
import { toLocation } from "./internal/mappers/toLocation.js"
import { toPackage } from "./internal/mappers/toPackage.js"
import { toPlant } from "./internal/mappers/toPlant.js"
import { toSale } from "./internal/mappers/toSale.js"
import { toStrain } from "./internal/mappers/toStrain.js"
import { toTransfer } from "./internal/mappers/toTransfer.js"
import { Inventory } from "./internal/wire/Inventory.js"
import { Manifest, ManifestStop, ManifestStopItem, TransferLine } from "./internal/wire/Manifest.js"
import { Plant as PlantRow, PlantDerivative } from "./internal/wire/Plant.js"
import { QaCheck, QaSample } from "./internal/wire/QaSample.js"
import { Room } from "./internal/wire/Room.js"
import { Sale as SaleRow } from "./internal/wire/Sale.js"
import { Vendor } from "./internal/wire/Vendor.js"

/**
 * The options every function takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The Tracebridge id of the facility the object belongs to. */
  readonly facility_id: string
}

const rows = <A, I>(row: Schema.Schema<A, I>) => Schema.Array(row)
const optionalRows = <A, I>(row: Schema.Schema<A, I>) => Schema.optionalWith(Schema.Array(row), { default: () => [] })

/** What each kind takes. */
const inputs = {
  facility: Vendor,
  package: Schema.Union(
    Inventory,
    Schema.Struct({
      inventory: Inventory,
      plant_derivative: optionalRows(PlantDerivative),
      inventory_qa_sample: optionalRows(QaSample),
      inventory_qa_check: optionalRows(QaCheck)
    })
  ),
  plant: Schema.Union(
    PlantRow,
    Schema.Struct({ plant: PlantRow, plant_room: optionalRows(Room), plant_derivative: optionalRows(PlantDerivative) })
  ),
  harvest: Schema.Union(
    rows(PlantDerivative),
    Schema.Struct({ plant_derivative: rows(PlantDerivative), plant: optionalRows(PlantRow) })
  ),
  labResult: Schema.Struct({ sample: QaSample, check: QaCheck, vendor: optionalRows(Vendor) }),
  transfer: Schema.Struct({
    manifest: Manifest,
    stop: ManifestStop,
    items: rows(ManifestStopItem),
    outbound: optionalRows(TransferLine),
    inbound: optionalRows(TransferLine)
  }),
  sale: Schema.Union(rows(SaleRow), Schema.Struct({ sale: rows(SaleRow), inventory: optionalRows(Inventory) })),
  item: rows(Inventory),
  strain: Schema.Union(Schema.String, Schema.Struct({ strain: Schema.String })),
  location: Schema.Struct({ room: Room, kind: Schema.Literal("inventory", "plant") })
}

type Kind = keyof typeof inputs

/**
 * The raw input each kind takes (the encoded side of its schema).
 *
 * @since 0.1.0
 * @category models
 */
export type Input = { readonly [K in Kind]: (typeof inputs)[K]["Encoded"] }

/**
 * What each kind returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Output {
  readonly facility: Facility.Facility
  readonly package: Package.Package
  readonly plant: Plant.Plant
  readonly harvest: Harvest.Harvest
  readonly labResult: LabResult.LabResult
  readonly transfer: Transfer.Transfer
  readonly sale: Sale.Sale
  readonly item: Item.Item
  readonly strain: Strain.Strain
  readonly location: Location.Location
}

const isUsState = Schema.is(ProviderName.UsState)

const nonEmpty = (kind: string, n: number) =>
  n > 0 ? Either.right(undefined) : Either.left(`${kind} needs at least one row`)

const build: {
  readonly [K in Kind]: (decoded: (typeof inputs)[K]["Type"], options: Options) => Either.Either<Output[K], string>
} = {
  facility: (v, o) => {
    const state = (v.state ?? "").trim().toUpperCase()
    return isUsState(state)
      ? Either.right(toFacility(v, state, isUsState))
      : Either.left(
        `state: expected a two-letter US state code, got ${JSON.stringify(v.state)} (facility ${o.facility_id})`
      )
  },
  package: (input, o) => {
    const ctx = { facility_id: o.facility_id as Ids.FacilityId }
    if (!("inventory" in input)) return Either.right(toPackage(input, ctx))
    const checks = new Map(input.inventory_qa_check.map((c) => [c.sample_id, c]))
    const labResults = input.inventory_qa_sample.flatMap((s) => {
      const check = checks.get(s.inventoryid)
      return s.result === 0 || check === undefined ? [] : [toLabResult(s, check, ctx)]
    })
    return Either.right(
      toPackage(input.inventory, ctx, {
        derivatives: input.plant_derivative,
        samples: input.inventory_qa_sample,
        labResults
      })
    )
  },
  plant: (input, o) => {
    const ctx = { facility_id: o.facility_id as Ids.FacilityId }
    if (!("plant" in input)) return Either.right(toPlant(input, ctx))
    const room = input.plant_room.find((r) => r.roomid === input.plant.room)
    return Either.right(toPlant(input.plant, ctx, { roomName: room?.name, derivatives: input.plant_derivative }))
  },
  harvest: (input, o) => {
    const ctx = { facility_id: o.facility_id as Ids.FacilityId }
    const list = Array.isArray(input)
      ? input
      : (input as { plant_derivative: ReadonlyArray<PlantDerivative> }).plant_derivative
    const plants = Array.isArray(input) ? [] : (input as { plant: ReadonlyArray<PlantRow> }).plant
    return Either.map(
      nonEmpty("a harvest", list.length),
      () => toHarvest(list, ctx, new Map(plants.map((p) => [p.id, p])))
    )
  },
  labResult: (input, o) => {
    const name = input.vendor.find((v) => v.location === input.sample.lab_license)?.name
    return Either.right(toLabResult(input.sample, input.check, { facility_id: o.facility_id as Ids.FacilityId }, name))
  },
  transfer: (input, o) => Either.right(toTransfer(input, { facility_id: o.facility_id as Ids.FacilityId })),
  sale: (input, o) => {
    const ctx = { facility_id: o.facility_id as Ids.FacilityId }
    const list = Array.isArray(input) ? input : (input as { sale: ReadonlyArray<SaleRow> }).sale
    const lots = Array.isArray(input) ? [] : (input as { inventory: ReadonlyArray<Inventory> }).inventory
    return Either.map(nonEmpty("a sale", list.length), () => toSale(list, ctx, new Map(lots.map((l) => [l.id, l]))))
  },
  item: (list, o) =>
    Either.map(nonEmpty("an item", list.length), () => toItem(list, { facility_id: o.facility_id as Ids.FacilityId })),
  strain: (input, o) => {
    const name = (typeof input === "string" ? input : input.strain).trim()
    return name.length === 0
      ? Either.left("strain: expected a non-blank name")
      : Either.right(toStrain(name, { facility_id: o.facility_id as Ids.FacilityId }))
  },
  location: (input, o) =>
    Either.right(toLocation(input.room, input.kind, { facility_id: o.facility_id as Ids.FacilityId }))
}

const run = <K extends Kind>(
  kind: K,
  raw: unknown,
  options: Options
): Either.Either<Output[K], ProviderError.ProviderInvalidResponse> => {
  const operation = `normalize.${kind}`
  const schema = inputs[kind] as unknown as Schema.Schema<(typeof inputs)[K]["Type"], unknown>
  return Either.flatMap(
    Either.mapLeft(
      Schema.decodeUnknownEither(schema, { errors: "first" })(raw),
      (error: ParseResult.ParseError) =>
        ProviderError.ProviderInvalidResponse.fromParseError({ provider: "provider_b", operation, error })
    ),
    (decoded) =>
      Either.mapLeft(
        build[kind](decoded, options),
        (message) =>
          new ProviderError.ProviderInvalidResponse({
            provider: "provider_b",
            operation,
            path: message.split(":")[0] ?? "(root)",
            message: `provider_b ${operation}: ${message}`
          })
      )
  )
}

/** One kind as an Effect. */
const effectOf =
  <K extends Kind>(kind: K) =>
  (raw: unknown, options: Options): Effect.Effect<Output[K], ProviderError.ProviderInvalidResponse> =>
    Effect.suspend(() => run(kind, raw, options))

/** One kind, synchronous: the object, or the `ProviderInvalidResponse` thrown. */
const syncOf = <K extends Kind>(kind: K) => (raw: unknown, options: Options): Output[K] =>
  Either.getOrThrowWith(run(kind, raw, options), (e) => e)

const facilityIdOk = (options: Options) => Ids.decodeAs("facility", "provider_b", options.facility_id)

/**
 * Each kind as an Effect.
 *
 * @since 0.1.0
 * @category normalize
 */
export const normalize: {
  readonly [K in Kind]: (
    raw: Input[K] | unknown,
    options: Options
  ) => Effect.Effect<Output[K], ProviderError.ProviderInvalidResponse>
} = {
  facility: effectOf("facility"),
  package: effectOf("package"),
  plant: effectOf("plant"),
  harvest: effectOf("harvest"),
  labResult: effectOf("labResult"),
  transfer: effectOf("transfer"),
  sale: effectOf("sale"),
  item: effectOf("item"),
  strain: effectOf("strain"),
  location: effectOf("location")
}

/**
 * Each kind, synchronous: returns the object or throws `ProviderInvalidResponse`.
 *
 * @since 0.1.0
 * @category normalize
 */
export const normalizeSync: { readonly [K in Kind]: (raw: Input[K] | unknown, options: Options) => Output[K] } = {
  facility: syncOf("facility"),
  package: syncOf("package"),
  plant: syncOf("plant"),
  harvest: syncOf("harvest"),
  labResult: syncOf("labResult"),
  transfer: syncOf("transfer"),
  sale: syncOf("sale"),
  item: syncOf("item"),
  strain: syncOf("strain"),
  location: syncOf("location")
}

/**
 * Whether a facility id is a provider_b facility id (a guard for embedders).
 *
 * @since 0.1.0
 * @category guards
 */
export const isFacilityId = (id: string): boolean => facilityIdOk({ facility_id: id })._tag === "Some"
