/**
 * The write actions of the BioTrack emulator: `inventory_split`, `inventory_convert`,
 * `inventory_qa_sample` + `inventory_qa_sample_results`, `inventory_manifest` +
 * `inventory_transfer_outbound`. Each decodes its body (with the emulator's own request schemas,
 * `request.ts`), checks what BioTrack checks, and changes the world only through `sandbox.apply`
 * (so a refused write changes nothing and an accepted one is logged and announced). A `Refusal`
 * becomes errorcode 602 with its text.
 *
 * The answer is BioTrack's `{success: 1, transactionid, sessiontime}` (numbers, as recorded),
 * with `barcode_id` (a list) when the write created lots or samples, and `manifest_id` (a
 * 16-digit string) after `inventory_manifest`. `inventory_manifest` checks its `employee_id` and
 * `vehicle_id` against the login's seeded employees and vehicles (`staff.ts`).
 */
import { Either, ParseResult, Schema } from "effect"
import type { Sandbox } from "../../Sandbox.js"
import type { World } from "../../World.js"
import type { Refusal } from "../../Writes.js"
import type { JsonObject } from "./format.js"
import { seconds } from "./format.js"
import { Barcode, Code, Epoch, Id, LabId, Panel, Quantity } from "./request.js"
import type { PendingSample } from "./rows.js"
import {
  awaitingLines,
  categoryOfPanel,
  findLot,
  isoOf,
  judged,
  manifestOf,
  samples,
  typeOfPackage,
  unitOfType,
  uomOf
} from "./rows.js"
import { profile } from "./seeding.js"
import * as Staff from "./staff.js"

/** What the emulator keeps per world between calls: samples awaiting results, renamed samples. */
export interface Memory {
  readonly pending: Map<string, PendingSample>
  /** Lab result id → the sample barcode BioTrack answered with, when the world minted another. */
  readonly aliases: Map<string, string>
}

/** A BioTrack failure: `{success: 0, error, errorcode?}`. */
export interface Failure {
  readonly error: string
  readonly errorcode?: number
}

/** A write's answer, as it goes on the wire. */
export type Written = JsonObject

/** What a write action needs. */
export interface Context {
  readonly sandbox: Sandbox
  readonly world: World
  readonly memory: Memory
  readonly body: Readonly<Record<string, unknown>>
  /** The session is the world's QA lab's (`Logins.LAB_PREFIX`), the only one that enters results. */
  readonly lab: boolean
}

/** Validation and not-found answers. */
export const VALIDATION = 602
/** "Only QA Labs may enter results." */
export const LAB_ONLY = 200

const fail = (error: string, errorcode: number | undefined = VALIDATION): Either.Either<never, Failure> =>
  Either.left(errorcode === undefined ? { error } : { error, errorcode })

const refused = (refusal: Refusal): Failure => ({ error: refusal.message, errorcode: VALIDATION })

const decode = <A, I>(schema: Schema.Schema<A, I>, body: unknown): Either.Either<A, Failure> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema)(body),
    (e) => ({ error: `Invalid request: ${ParseResult.TreeFormatter.formatErrorSync(e)}`, errorcode: VALIDATION })
  )

const written = (
  ctx: Context,
  extra: { readonly barcode_id?: ReadonlyArray<string>; readonly manifest_id?: string } = {}
): Written => {
  const at = seconds(ctx.sandbox.now())
  return {
    success: 1,
    transactionid: at,
    sessiontime: at,
    ...(extra.barcode_id === undefined ? {} : { barcode_id: extra.barcode_id }),
    ...(extra.manifest_id === undefined ? {} : { manifest_id: extra.manifest_id })
  }
}

const notFound = (barcode: string) => fail(`Barcode ${barcode} not found.`)

// ---- inventory_split / inventory_convert ------------------------------------------------------------

const Draw = Schema.Struct({
  barcodeid: Barcode,
  remove_quantity: Quantity,
  remove_quantity_uom: Schema.optional(Schema.String)
})
const SplitBody = Schema.Struct({ data: Schema.NonEmptyArray(Draw) })
const ConvertBody = Schema.Struct({
  data: Schema.NonEmptyArray(Draw),
  derivative_product: Schema.String.pipe(Schema.minLength(1)),
  derivative_quantity: Quantity,
  derivative_type: Schema.optional(Code),
  derivative_strain: Schema.optional(Schema.NullOr(Schema.String)),
  derivative_quantity_uom: Schema.optional(Schema.String)
})

/** Finds the draws' lots and checks them as BioTrack does: known, one location, unit, quantity. */
const drawsOf = (world: World, draws: ReadonlyArray<typeof Draw.Type>) =>
  Either.gen(function*() {
    const found: Array<{ readonly lot: NonNullable<ReturnType<typeof findLot>>; readonly draw: typeof Draw.Type }> = []
    const taken = new Map<string, number>()
    for (const draw of draws) {
      const lot = findLot(world, draw.barcodeid)
      if (lot === undefined) return yield* notFound(draw.barcodeid)
      if (lot.data !== found[0]?.lot.data && found.length > 0) {
        return yield* fail(
          `Barcode ${draw.barcodeid} is not at location ${found[0]!.lot.data.facility.license_number}.`
        )
      }
      const unit = unitOfType(typeOfPackage(lot.pkg))
      if (draw.remove_quantity_uom !== undefined && draw.remove_quantity_uom.toLowerCase() !== uomOf(unit)) {
        return yield* fail(`Barcode ${draw.barcodeid} is measured in ${uomOf(unit)}, not ${draw.remove_quantity_uom}.`)
      }
      if (!(draw.remove_quantity > 0)) return yield* fail("The quantity to remove must be more than zero.")
      if (lot.pkg.is_on_hold) return yield* fail(`Barcode ${draw.barcodeid} is on hold and cannot be used.`)
      const total = (taken.get(draw.barcodeid) ?? 0) + draw.remove_quantity
      if (total > lot.pkg.quantity + 1e-9) {
        return yield* fail(
          `Insufficient quantity: barcode ${draw.barcodeid} holds ${lot.pkg.quantity}, ${total} were asked for.`
        )
      }
      taken.set(draw.barcodeid, total)
      found.push({ lot, draw })
    }
    return found
  })

/** `inventory_split`: each draw becomes a new lot of the same product. */
export const split = (ctx: Context): Either.Either<Written, Failure> =>
  Either.gen(function*() {
    const body = yield* decode(SplitBody, ctx.body)
    const draws = yield* drawsOf(ctx.world, body.data)
    const created: Array<string> = []
    for (const { draw, lot } of draws) {
      const result = ctx.sandbox.apply<{ readonly tag: string }>(ctx.world, {
        _tag: "SplitPackage",
        input: {
          license: lot.data.facility.license_number,
          itemName: lot.pkg.item_name,
          quantity: draw.remove_quantity,
          unit: lot.pkg.unit_of_measure,
          ingredients: [{ tag: lot.pkg.tag, quantity: draw.remove_quantity, unit: lot.pkg.unit_of_measure }],
          at: ctx.sandbox.now()
        }
      })
      created.push((yield* Either.mapLeft(result, refused)).tag)
    }
    return written(ctx, { barcode_id: created })
  })

/** `inventory_convert`: the draws become one new lot of another product of the location. */
export const convert = (ctx: Context): Either.Either<Written, Failure> =>
  Either.gen(function*() {
    const body = yield* decode(ConvertBody, ctx.body)
    const draws = yield* drawsOf(ctx.world, body.data)
    const data = draws[0]!.lot.data
    const item = data.items.find((i) => i.name === body.derivative_product)
    if (item === undefined) {
      return yield* fail(`Product ${body.derivative_product} is not known at location ${data.facility.license_number}.`)
    }
    const result = ctx.sandbox.apply<{ readonly tag: string }>(ctx.world, {
      _tag: "SplitPackage",
      input: {
        license: data.facility.license_number,
        itemName: item.name,
        quantity: body.derivative_quantity,
        unit: item.unit_of_measure,
        ingredients: draws.map(({ draw, lot }) => ({
          tag: lot.pkg.tag,
          quantity: draw.remove_quantity,
          unit: lot.pkg.unit_of_measure
        })),
        at: ctx.sandbox.now()
      }
    })
    const pkg = yield* Either.mapLeft(result, refused)
    return written(ctx, { barcode_id: [pkg.tag] })
  })

// ---- inventory_qa_sample / inventory_qa_sample_results ----------------------------------------------

const SampleBody = Schema.Struct({
  barcodeid: Barcode,
  lab_id: LabId,
  use: Schema.optionalWith(Code, { default: () => 1 })
})

/** The barcode a new sample gets: the id the world will mint for its result, when free. */
const sampleBarcode = (world: World, memory: Memory): string => {
  const taken = new Set([
    ...memory.pending.keys(),
    ...samples(world, [], memory.aliases).map((s) => s.barcode)
  ])
  for (let n = world.counters.next;; n++) {
    const barcode = profile.tag("package", 9, n)
    if (!taken.has(barcode)) return barcode
  }
}

/** `inventory_qa_sample`: a sample of a lot is sent to a lab; it awaits results. */
export const sample = (ctx: Context): Either.Either<Written, Failure> =>
  Either.gen(function*() {
    const body = yield* decode(SampleBody, ctx.body)
    const lot = findLot(ctx.world, body.barcodeid)
    if (lot === undefined) return yield* notFound(body.barcodeid)
    const barcode = sampleBarcode(ctx.world, ctx.memory)
    ctx.memory.pending.set(barcode, {
      barcode,
      license: lot.data.facility.license_number,
      tag: lot.pkg.tag,
      labId: body.lab_id,
      use: body.use,
      at: ctx.sandbox.now()
    })
    return written(ctx, { barcode_id: [barcode] })
  })

const ResultsBody = Schema.Struct({
  sample_id: Barcode,
  result: Schema.optional(Code.pipe(Schema.filter((n) => n === 1 || n === -1 || "result is 1 (pass) or -1 (fail)"))),
  test: Schema.Array(Panel)
})

const isContaminant = judged

/**
 * The verdict of a sample filed without `result` (the recorded lab call sends none: BioTrack
 * judges): it passes when no contaminant was found, i.e. every contaminant value is 0 or empty.
 */
const judge = (tests: ReadonlyArray<{ readonly category: string; readonly value: number | null }>): boolean =>
  tests.every((t) => !isContaminant(t.category) || t.value === null || t.value === 0)

/**
 * Per-test verdicts from BioTrack's one verdict per sample (the adapter's reading): all pass when
 * the sample passed; when it failed, potency and moisture pass, a contaminant only at exactly 0,
 * and at least one test fails.
 */
const verdicts = (
  passed: boolean,
  tests: ReadonlyArray<{ readonly category: string; readonly value: number | null }>
) => {
  const out = tests.map((t) => passed || !isContaminant(t.category) || t.value === 0)
  if (!passed && out.every((p) => p) && out.length > 0) {
    const contaminant = tests.findIndex((t) => isContaminant(t.category))
    out[contaminant >= 0 ? contaminant : 0] = false
  }
  return out
}

/**
 * `inventory_qa_sample_results`: a lab files the panels of a sample, on the lab's login only (a
 * grower's is refused, training mode or not, as BioTrack refuses non-labs). The result is the
 * sample's, and shows on the lot it was taken from (`parentid`), as BioTrack shows it.
 */
export const results = (ctx: Context): Either.Either<Written, Failure> =>
  Either.gen(function*() {
    if (!ctx.lab) return yield* fail("Only QA Labs may enter results.", LAB_ONLY)
    const body = yield* decode(ResultsBody, ctx.body)
    const pending = ctx.memory.pending.get(body.sample_id)
    if (pending === undefined) {
      const judged = samples(ctx.world, [], ctx.memory.aliases).some((s) => s.barcode === body.sample_id)
      return yield* fail(judged ? `Results were already entered for sample ${body.sample_id}.` : "Sample not found.")
    }
    const tests = body.test.flatMap((panel) =>
      Object.entries(panel)
        .filter(([name]) => name !== "type")
        .map(([name, value]) => ({ name, value: value ?? null, category: categoryOfPanel(panel.type) }))
    )
    const passed = verdicts(body.result === undefined ? judge(tests) : body.result === 1, tests)
    const lab = ctx.world.facilities.find((d) => d.facility.license_number === pending.labId)
    const result = ctx.sandbox.apply<{ readonly id: string; readonly provider_result_id: string }>(ctx.world, {
      _tag: "RecordLabResult",
      input: {
        license: pending.license,
        tag: pending.tag,
        labName: lab?.facility.name ?? pending.labId,
        labLicense: pending.labId,
        results: tests.map((t, i) => ({ name: t.name, value: t.value, passed: passed[i]!, notes: null })),
        testDate: isoOf(seconds(pending.at)).slice(0, 10),
        at: ctx.sandbox.now()
      }
    })
    const recorded = yield* Either.mapLeft(result, refused)
    ctx.memory.pending.delete(body.sample_id)
    if (recorded.provider_result_id !== body.sample_id) ctx.memory.aliases.set(recorded.id, body.sample_id)
    return written(ctx)
  })

// ---- inventory_manifest / inventory_transfer_outbound -----------------------------------------------

const Stop = Schema.Struct({
  vendor_license: Id,
  stop_number: Schema.optional(Id),
  approximate_departure: Schema.optionalWith(Epoch, { default: () => null }),
  approximate_arrival: Schema.optionalWith(Epoch, { default: () => null }),
  barcodeid: Schema.NonEmptyArray(Barcode)
})
/**
 * The documented request (`{employee_id, vehicle_id, location, stop_overview}`, the cre-adapter's
 * production client). Any other key, such as the `transporter_name` and
 * `transporter_vehicle_details` of the sync rows, is not a request field: it is ignored and
 * recorded nowhere. Whether BioTrack requires `employee_id` and `vehicle_id` is not known; the
 * emulator takes a manifest without them, and checks them when present.
 */
const ManifestBody = Schema.Struct({
  employee_id: Schema.optional(Id),
  vehicle_id: Schema.optional(Id),
  location: Id,
  stop_overview: Schema.NonEmptyArray(Stop)
})

/**
 * `inventory_manifest`: a pending manifest of one stop from a location of the login, driven by an
 * employee of the login in a vehicle of the location (their name and description are recorded on
 * the transfer). Its lines come with `inventory_transfer_outbound`.
 */
export const manifest = (ctx: Context): Either.Either<Written, Failure> =>
  Either.gen(function*() {
    const body = yield* decode(ManifestBody, ctx.body)
    if (!ctx.world.facilities.some((d) => d.facility.license_number === body.location)) {
      return yield* fail(`Location ${body.location} not found.`)
    }
    const driver = body.employee_id === undefined ? undefined : Staff.employee(ctx.world, body.employee_id)
    if (body.employee_id !== undefined && driver === undefined) {
      return yield* fail(`Employee ${body.employee_id} not found.`)
    }
    const vehicle = body.vehicle_id === undefined
      ? undefined
      : Staff.vehicle(ctx.world, body.vehicle_id, body.location)
    if (body.vehicle_id !== undefined && vehicle === undefined) {
      return yield* fail(`Vehicle ${body.vehicle_id} not found at location ${body.location}.`)
    }
    if (body.stop_overview.length > 1) return yield* fail("The sandbox takes manifests of one stop.")
    const stop = body.stop_overview[0]
    const result = ctx.sandbox.apply<{ readonly manifest_number: string }>(ctx.world, {
      _tag: "CreateTransfer",
      input: {
        license: body.location,
        recipient: stop.vendor_license,
        transferType: "Transfer",
        tags: stop.barcodeid,
        estimatedDeparture: stop.approximate_departure === null ? null : isoOf(stop.approximate_departure),
        estimatedArrival: stop.approximate_arrival === null ? null : isoOf(stop.approximate_arrival),
        driverName: driver?.name ?? null,
        vehicleInfo: vehicle === undefined ? null : Staff.description(vehicle),
        transporter: null,
        template: false,
        at: ctx.sandbox.now()
      }
    })
    const transfer = yield* Either.mapLeft(result, refused)
    awaitingLines(ctx.world).add(transfer.manifest_number)
    return written(ctx, { manifest_id: transfer.manifest_number })
  })

const OutboundBody = Schema.Struct({
  manifest_id: Barcode,
  data: Schema.NonEmptyArray(Schema.Struct({ barcodeid: Barcode, quantity: Quantity }))
})

/**
 * `inventory_transfer_outbound`: the lines of a pending manifest (checked against the manifest's
 * items and the lots); from then on `sync_inventory_transfer` shows them.
 */
export const outbound = (ctx: Context): Either.Either<Written, Failure> =>
  Either.gen(function*() {
    const body = yield* decode(OutboundBody, ctx.body)
    const stored = ctx.world.transfers.find((t) => manifestOf(t.transfer).manifestid === body.manifest_id)
    if (stored === undefined) return yield* fail(`Manifest ${body.manifest_id} not found.`)
    if (stored.transfer.status !== "pending") return yield* fail(`Manifest ${body.manifest_id} has already left.`)
    for (const line of body.data) {
      const onManifest = stored.transfer.packages.find((p) => p.tag === line.barcodeid)
      if (onManifest === undefined) {
        return yield* fail(`Barcode ${line.barcodeid} is not on manifest ${body.manifest_id}.`)
      }
      const lot = findLot(ctx.world, line.barcodeid)
      if (lot === undefined) return yield* notFound(line.barcodeid)
      if (line.quantity > lot.pkg.quantity + 1e-9) {
        return yield* fail(`Insufficient quantity: barcode ${line.barcodeid} holds ${lot.pkg.quantity}.`)
      }
    }
    awaitingLines(ctx.world).delete(body.manifest_id)
    return written(ctx)
  })
