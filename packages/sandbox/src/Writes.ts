/**
 * Writes to a world, in provider-neutral terms (what both emulators' write endpoints need):
 * split a package, record a lab result, create a transfer. Each validates everything first and
 * changes nothing when it refuses; an accepted write returns what later reads return.
 *
 * @since 0.1.0
 */
import type { LabResult, Package, Transfer } from "@tracebridge/core"
import { Ids, Units } from "@tracebridge/core"
import { Either, Option } from "effect"
import * as Licensees from "./Licensees.js"
import * as Profile from "./Profile.js"
import type { FacilityData, World } from "./World.js"
import { facilityByLicense, packageView } from "./World.js"

/**
 * Why a write was refused, for the emulators to word in their provider's format.
 *
 * @since 0.1.0
 * @category models
 */
export interface Refusal {
  readonly reason:
    | "facility_not_found"
    | "package_not_found"
    | "on_hold"
    | "insufficient_quantity"
    | "units"
    | "invalid"
    | "tag_unavailable"
    | "on_transfer"
    | "unknown_recipient"
  readonly message: string
}

const refuse = (reason: Refusal["reason"], message: string): Either.Either<never, Refusal> =>
  Either.left({ reason, message })

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const round = (n: number) => Math.round(n * 10_000) / 10_000

const facilityOf = (world: World, license: string): Either.Either<FacilityData, Refusal> => {
  const data = facilityByLicense(world, license)
  return data === undefined ? refuse("facility_not_found", `No facility ${license}`) : Either.right(data)
}

/** Unused package tags of a facility (provider_a hands them out before a create). */
export const availableTags = (world: World, license: string, count = 10): ReadonlyArray<string> => {
  const f = world.facilities.findIndex((d) => d.facility.license_number === license)
  if (f < 0) return []
  const used = new Set(world.facilities.flatMap((d) => d.packages.map((p) => p.tag)))
  const out: Array<string> = []
  for (let n = world.counters.next; out.length < count; n++) {
    const tag = Profile.of(world).tag("package", f, n)
    if (!used.has(tag)) out.push(tag)
  }
  return out
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Split {
  readonly license: string
  /** The new package's tag; minted when absent. */
  readonly tag?: string | undefined
  readonly itemName: string
  readonly quantity: number
  readonly unit: string
  /** What to draw from each source, in the source's unit or any unit that converts to it. */
  readonly ingredients: ReadonlyArray<{ readonly tag: string; readonly quantity: number; readonly unit: string }>
  readonly at: number
  /**
   * A testing sample (Metrc's `POST /packages/v2/testing`): submitted for testing, marked as a
   * sample in the provider's metadata (`Profile.testingSample`), from one source package. The
   * world's lab records its result, which shows on the source ({@link recordLabResult}).
   */
  readonly testingSample?: boolean
}

/**
 * Creates a package from others, drawing the ingredients. Refuses unknown sources, sources on
 * hold, draws beyond what a source holds, and units that do not convert.
 *
 * @since 0.1.0
 * @category writes
 */
export const splitPackage = (world: World, split: Split): Either.Either<Package.Package, Refusal> =>
  Either.gen(function*() {
    const data = yield* facilityOf(world, split.license)
    if (!(split.quantity > 0)) return yield* refuse("invalid", "The quantity must be more than zero")
    if (split.ingredients.length === 0) {
      return yield* refuse("invalid", "A new package needs at least one source package")
    }
    if (
      split.testingSample === true && (Profile.of(world).testingSample === undefined || split.ingredients.length > 1)
    ) {
      return yield* refuse("invalid", "A testing sample is taken from one package")
    }
    const item = data.items.find((i) => i.name === split.itemName)
    if (item === undefined) return yield* refuse("invalid", `Item ${split.itemName} does not exist`)
    const plan: Array<[Package.Package, number]> = []
    for (const ing of split.ingredients) {
      const source = data.packages.find((p) => p.tag === ing.tag)
      if (source === undefined) return yield* refuse("package_not_found", `Package ${ing.tag} was not found`)
      if (source.is_on_hold) return yield* refuse("on_hold", `Package ${ing.tag} is on hold`)
      const take = Units.convert(ing.quantity, ing.unit, source.unit_of_measure)
      if (Option.isNone(take)) {
        return yield* refuse(
          "units",
          `Package ${ing.tag} is measured in ${source.unit_of_measure}, which ${ing.unit} cannot convert to`
        )
      }
      const already = plan.filter(([p]) => p.id === source.id).reduce((sum, [, q]) => sum + q, 0)
      if (take.value + already > source.quantity + 1e-9) {
        return yield* refuse(
          "insufficient_quantity",
          `Package ${ing.tag} holds ${source.quantity} ${source.unit_of_measure}; ${take.value} were asked for`
        )
      }
      plan.push([source, take.value])
    }
    const tag = split.tag ?? availableTags(world, split.license, 1)[0]!
    if (world.facilities.some((d) => d.packages.some((p) => p.tag === tag))) {
      return yield* refuse("tag_unavailable", `Tag ${tag} is in use`)
    }
    const n = world.counters.next++
    const f = world.facilities.indexOf(data)
    const profile = Profile.of(world)
    const providerId = profile.packageId(tag, profile.numeric("package", f, n))
    const sources = plan.map(([p]) => p)
    const harvestIds = [...new Set(sources.flatMap((p) => p.source_harvest_ids))]
    const harvestNames = harvestIds.map((id) =>
      world.facilities.flatMap((d) => d.harvests).find((h) => h.id === id)?.harvest_name
    ).filter((x): x is string => x !== undefined)
    const created: Package.Package = {
      id: Ids.make("package", world.provider, tag),
      tag,
      source_tag: sources[0]!.tag,
      item_name: item.name,
      item_category: item.category,
      item_strain: item.strain,
      quantity: split.quantity,
      unit_of_measure: split.unit,
      lab_testing_state: split.testingSample === true ? "SubmittedForTesting" : "NotSubmitted",
      is_on_hold: false,
      packaged_date: isoDay(split.at),
      expiration_date: null,
      facility_id: data.facility.id,
      provider: world.provider,
      provider_package_id: providerId,
      source_harvest_ids: harvestIds,
      source_package_ids: [...new Set(sources.map((p) => p.id))],
      lab_results: [],
      metadata: (split.testingSample === true ? profile.testingSample!.mark : (m: Package.Package["metadata"]) => m)(
        profile.packageMetadata({
          quantity: split.quantity,
          unitAbbreviation: Option.getOrElse(Units.canonical(split.unit), () => split.unit) === "Each" ? "ea" : "g",
          sourceHarvestNames: harvestNames,
          at: split.at,
          providerItemId: item.provider_item_id
        })
      )
    }
    for (const [source, take] of plan) {
      data.packages = data.packages.map((p) =>
        p.id === source.id
          ? {
            ...p,
            quantity: round(p.quantity - take),
            metadata: profile.touchMetadata(p.metadata, split.at)
          }
          : p
      )
      world.modified.set(source.id, Math.floor(split.at / 1000) * 1000)
      world.draws.push({ source: source.id, target: created.id, quantity: take })
    }
    data.packages.push(created)
    world.original.set(created.id, created.quantity)
    world.modified.set(created.id, Math.floor(split.at / 1000) * 1000)
    return packageView(data, created)
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface RecordLabResult {
  readonly license: string
  /** The tested package (the source, not a sample). */
  readonly tag: string
  readonly labName?: string | undefined
  readonly labLicense?: string | undefined
  readonly results: ReadonlyArray<
    { readonly name: string; readonly value: number | null; readonly passed: boolean; readonly notes: string | null }
  >
  readonly testDate: string
  readonly at: number
}

/**
 * A testing sample of the world with this tag, submitted for testing, and the package it was
 * taken from (where the world's lab records its result).
 */
const submittedSample = (world: World, tag: string) => {
  const marked = Profile.of(world).testingSample
  if (marked === undefined) return undefined
  for (const data of world.facilities) {
    const sample = data.packages.find((p) =>
      p.tag === tag && marked.is(p.metadata) && p.lab_testing_state === "SubmittedForTesting" &&
      p.source_package_ids.length === 1
    )
    if (sample === undefined) continue
    const source = data.packages.find((p) => p.id === sample.source_package_ids[0])
    return source === undefined ? undefined : { data, sample, source }
  }
  return undefined
}

/**
 * Records a lab result on a package and moves its lab-testing state to TestPassed or TestFailed.
 *
 * Recorded by the world's lab (a testing facility) on a testing sample it does not hold (a sample
 * taken at another facility of the world with `Split.testingSample`; the world does not model the
 * sample's trip to the lab), the result is the sample's source package's, at the source's
 * facility, as the state system shows a result inherited from a sample (ADR 0020); the sample's
 * state follows too, and the lab's name and licence are the lab's.
 *
 * @since 0.1.0
 * @category writes
 */
export const recordLabResult = (world: World, input: RecordLabResult): Either.Either<LabResult.LabResult, Refusal> =>
  Either.gen(function*() {
    const recorder = yield* facilityOf(world, input.license)
    const held = recorder.packages.find((p) => p.tag === input.tag)
    const sampled = held === undefined && recorder.role === "testing" ? submittedSample(world, input.tag) : undefined
    const data = sampled?.data ?? recorder
    const pkg = held ?? sampled?.source
    if (pkg === undefined) return yield* refuse("package_not_found", `Package ${input.tag} was not found`)
    if (input.results.length === 0) return yield* refuse("invalid", "A lab result needs at least one test")
    const n = world.counters.next++
    const profile = Profile.of(world)
    const resultNo = profile.numeric("lab", world.facilities.indexOf(data), n)
    const { providerId, providerResultId } = profile.labResultIds(pkg, resultNo, n)
    const passed = input.results.every((r) => r.passed)
    const result: LabResult.LabResult = {
      id: Ids.make("lab_result", world.provider, providerId),
      package_id: pkg.id,
      lab_name: input.labName ?? recorder.facility.name,
      lab_license: input.labLicense ?? recorder.facility.license_number,
      test_date: input.testDate,
      result_date: input.testDate,
      overall_passed: passed,
      test_type: "ComplianceTesting",
      results: input.results.map((r) => {
        const { category, unit } = profile.classifyLabTest(r.name)
        return { name: r.name, category, value: r.value, unit, passed: r.passed, notes: r.notes }
      }),
      facility_id: data.facility.id,
      provider: world.provider,
      provider_result_id: providerResultId
    }
    data.labResults.push(result)
    const tested = new Set([pkg.id, ...(sampled === undefined ? [] : [sampled.sample.id])])
    data.packages = data.packages.map((p) =>
      tested.has(p.id)
        ? {
          ...p,
          lab_testing_state: passed ? "TestPassed" : "TestFailed",
          metadata: profile.touchMetadata(p.metadata, input.at)
        }
        : p
    )
    for (const id of tested) world.modified.set(id, Math.floor(input.at / 1000) * 1000)
    world.modified.set(result.id, Math.floor(input.at / 1000) * 1000)
    return result
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface CreateTransfer {
  readonly license: string
  readonly recipient: string
  readonly transferType: string
  readonly tags: ReadonlyArray<string>
  readonly estimatedDeparture: string | null
  readonly estimatedArrival: string | null
  readonly driverName: string | null
  readonly vehicleInfo: string | null
  readonly transporter: string | null
  /** provider_a creates templates (no manifest number until registered). */
  readonly template: boolean
  readonly at: number
}

/**
 * Creates a pending outgoing transfer of packages of the facility.
 *
 * @since 0.1.0
 * @category writes
 */
export const createTransfer = (world: World, input: CreateTransfer): Either.Either<Transfer.Transfer, Refusal> =>
  Either.gen(function*() {
    const data = yield* facilityOf(world, input.license)
    if (input.tags.length === 0) return yield* refuse("invalid", "A transfer needs at least one package")
    // the state system knows its licensees and ships nothing from a facility to itself (issue #30)
    if (input.recipient === data.facility.license_number) {
      return yield* refuse("unknown_recipient", `Facility ${input.recipient} cannot transfer to itself`)
    }
    if (!Licensees.knows(world, input.recipient)) {
      return yield* refuse("unknown_recipient", `Recipient license number ${input.recipient} was not found`)
    }
    const lines: Array<Transfer.TransferPackage> = []
    for (const tag of input.tags) {
      const pkg = data.packages.find((p) => p.tag === tag)
      if (pkg === undefined) return yield* refuse("package_not_found", `Package ${tag} was not found`)
      // a package goes on one transfer at a time, as the state systems require (issue #30)
      const away = world.transfers.find(({ transfer }) =>
        (transfer.status === "pending" || transfer.status === "in_transit") &&
        transfer.shipper_facility === data.facility.license_number &&
        transfer.packages.some((p) => p.tag === tag)
      )
      if (away !== undefined) {
        return yield* refuse(
          "on_transfer",
          `Package ${tag} is already on ${away.transfer.status.replace("_", " ")} transfer ${
            away.transfer.manifest_number || away.transfer.provider_transfer_id
          }`
        )
      }
      lines.push({
        package_id: pkg.id,
        tag: pkg.tag,
        item_name: pkg.item_name,
        quantity: pkg.quantity,
        unit_of_measure: pkg.unit_of_measure
      })
    }
    const n = world.counters.next++
    const profile = Profile.of(world)
    const { manifest, providerId } = profile.transferIds(n, profile.numeric("transfer", 0, n), input.template)
    const canonical = (
      t: string | null
    ) => (t === null || Number.isNaN(Date.parse(t)) ? null : new Date(Date.parse(t)).toISOString())
    const transfer: Omit<Transfer.Transfer, "facility_id"> = {
      id: Ids.make("transfer", world.provider, providerId),
      manifest_number: manifest,
      transfer_type: input.transferType,
      shipper_facility: data.facility.license_number,
      recipient_facility: input.recipient,
      packages: lines,
      status: "pending",
      estimated_departure: canonical(input.estimatedDeparture),
      estimated_arrival: canonical(input.estimatedArrival),
      actual_departure: null,
      actual_arrival: null,
      transporter: input.transporter,
      driver_name: input.driverName,
      vehicle_info: input.vehicleInfo,
      provider: world.provider,
      provider_transfer_id: providerId
    }
    world.transfers.push({ transfer, template: input.template })
    world.modified.set(transfer.id, Math.floor(input.at / 1000) * 1000)
    return { ...transfer, facility_id: data.facility.id } as Transfer.Transfer
  })
