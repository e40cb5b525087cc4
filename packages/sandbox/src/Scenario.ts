/**
 * Scenarios (DECISIONS "Simulate"): the state changes a production state system would make on its
 * own — a transfer arriving or completing, a lab result coming in, a login lapsing, a plant
 * advancing, a package put on hold. Each moves state only through the core transition tables (an
 * impossible move is `InvalidStateTransition`) and returns the webhook event a production
 * connection would see, if any.
 *
 * One scenario changes no state: `upstream_timeout` (DECISIONS "Sandbox reset and faults") stops
 * the state system answering. It returns the upstream fault to switch on (a `slow` fault held for
 * `delay_ms`, by default `Faults.MAX_DELAY_MS`), which `Sandbox.apply` sets until it is cleared.
 *
 * @since 0.1.0
 */
import type { Package, Plant, Transfer } from "@tracebridge/core"
import { Ids, LabResult, ProviderError, ScenarioName, Transitions, WebhookEvent } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as Faults from "./Faults.js"
import * as Profile from "./Profile.js"
import * as Seed from "./Seed.js"
import type { FacilityData, World } from "./World.js"
import { facilityByLicense, packageView } from "./World.js"
import * as Writes from "./Writes.js"

/**
 * Every scenario name (core's `ScenarioName.names`, which the contract shares).
 *
 * @since 0.1.0
 * @category constants
 */
export const names = ScenarioName.names

/**
 * @since 0.1.0
 * @category models
 */
export type Name = ScenarioName.ScenarioName

const Params = {
  transfer_arrived: Schema.Struct({
    transfer_id: Schema.optional(Schema.String),
    facility_id: Schema.optional(Schema.String)
  }),
  transfer_completed: Schema.Struct({
    transfer_id: Schema.optional(Schema.String),
    outcome: Schema.optionalWith(Schema.Literal("received", "rejected"), { default: () => "received" as const })
  }),
  lab_result_received: Schema.Struct({
    package_id: Schema.optional(Schema.String),
    result: Schema.optionalWith(Schema.Literal("pass", "fail"), { default: () => "pass" as const })
  }),
  connection_login_required: Schema.Struct({}),
  plant_phase_advanced: Schema.Struct({ plant_id: Schema.optional(Schema.String) }),
  package_hold: Schema.Struct({
    package_id: Schema.optional(Schema.String),
    on_hold: Schema.optional(Schema.Boolean),
    /** What kind of hold (default administrative): each stops the package and reads as on hold. */
    kind: Schema.optional(Schema.Literal("administrative", "investigation", "recall"))
  }),
  upstream_timeout: Schema.Struct({
    delay_ms: Schema.optional(Schema.Int.pipe(Schema.between(0, Faults.MAX_DELAY_MS)))
  })
} as const

/**
 * A scenario to run, as logged.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly name: string
  readonly params: unknown
  /** The connection the event is for (the sandbox connection's id behind /v1). */
  readonly connection_id: string
  readonly at: number
  /**
   * A number no earlier run of a scenario on this connection had, even before a reset (the API
   * passes the connection's sandbox version): the fired event's id is made from it, so that it
   * never repeats an id already delivered. Without it, the world's own event counter is used.
   */
  readonly sequence?: number
}

/**
 * What a scenario did: the event to deliver (none for state-only scenarios), whether the login
 * now needs re-entering, and the upstream fault to switch on, if any (`upstream_timeout`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly scenario: Name
  readonly event: WebhookEvent.WebhookEvent | null
  readonly loginRequired: boolean
  readonly fault?: Faults.Fault
}

/**
 * Why a scenario did not run.
 *
 * @since 0.1.0
 * @category models
 */
export type Failure =
  | ProviderError.InvalidInput
  | ProviderError.ResourceNotFound
  | ProviderError.InvalidStateTransition
  | { readonly _tag: "UnknownScenario"; readonly message: string }
  | Exhausted

/**
 * A scenario asked to pick its own object found none left in the world (every package tested, every
 * plant flowering, …): what ran out and what to do about it are in the message.
 *
 * @since 0.1.0
 * @category models
 */
export interface Exhausted {
  readonly _tag: "Exhausted"
  readonly scenario: string
  readonly message: string
}

const exhausted = (
  scenario: string,
  what: string,
  param: string,
  remedy?: string
): Either.Either<never, Exhausted> =>
  Either.left({
    _tag: "Exhausted",
    scenario,
    message: `${scenario}: no ${what} is left in this sandbox connection's world. Pass params.${param} to pick ` +
      `one yourself${remedy === undefined ? "" : `, ${remedy}`}, or link a new sandbox connection to start again ` +
      "from the seeded world."
  })

const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString()

const eventId = (world: World, input: Input) => {
  const counted = world.counters.next++
  const n = input.sequence ?? counted
  return `evt_${
    Seed.integer(`${world.seed}|${world.provider}|${world.state}|${world.login}`, "event", n).toString(36)
  }${n.toString(36)}`
}

/** The envelope of the event a scenario fires: its id (see `eventId`) and the scenario's time. */
const envelope = (world: World, input: Input): WebhookEvent.Envelope =>
  WebhookEvent.envelope(eventId(world, input), input.at)

const fail = <E>(e: E): Either.Either<never, E> => Either.left(e)

const transition = <S extends string | boolean>(m: Transitions.Machine<S>, from: S, to: S) =>
  Transitions.canTransition(m, from, to)
    ? Either.right(to)
    : Either.left(
      new ProviderError.InvalidStateTransition({
        machine: m.name,
        from: String(from),
        to: String(to),
        message: `${m.name} cannot move from ${String(from)} to ${String(to)}`
      })
    )

const stored = (world: World, id: string | undefined, pick: (t: Transfer.Transfer) => boolean) =>
  world.transfers.find((s) =>
    id === undefined
      ? pick({ ...s.transfer, facility_id: "" as Transfer.Transfer["facility_id"] }) &&
        facilityByLicense(world, s.transfer.recipient_facility) !== undefined
      : s.transfer.id === id
  )

const updateTransfer = (world: World, id: string, patch: Partial<Transfer.Transfer>, at: number) => {
  for (const s of world.transfers) if (s.transfer.id === id) s.transfer = { ...s.transfer, ...patch }
  world.modified.set(id, Math.floor(at / 1000) * 1000)
}

const transferEvent = (
  world: World,
  type: "transfer.arrived" | "transfer.completed",
  id: string,
  input: Input
): WebhookEvent.WebhookEvent => {
  const s = world.transfers.find((t) => t.transfer.id === id)!
  // the facility of the world the event is about: the recipient, or, for a transfer to another
  // licensee, the shipper (issue #30: it once crashed on a recipient outside the world)
  const recipient = facilityByLicense(world, s.transfer.recipient_facility) ??
    facilityByLicense(world, s.transfer.shipper_facility)!
  const transfer: Transfer.Transfer = { ...s.transfer, facility_id: recipient.facility.id }
  return WebhookEvent.make(type, envelope(world, input), {
    id: transfer.id,
    connection_id: Ids.ConnectionId.make(input.connection_id),
    facility_id: recipient.facility.id,
    transfer
  })
}

const moveReceived = (world: World, transfer: Omit<Transfer.Transfer, "facility_id">, at: number) => {
  const from = facilityByLicense(world, transfer.shipper_facility)
  const to = facilityByLicense(world, transfer.recipient_facility)
  if (from === undefined) return
  for (const line of transfer.packages) {
    const pkg = from.packages.find((p) => p.id === line.package_id)
    if (pkg === undefined) continue
    from.packages = from.packages.filter((p) => p.id !== pkg.id)
    from.departedPackages = [...from.departedPackages.filter((p) => p.id !== pkg.id), pkg]
    // received by another licensee: the package has left the world (issue #30)
    if (to === undefined) {
      from.labResults = from.labResults.filter((r) => r.package_id !== pkg.id)
      world.modified.set(pkg.id, Math.floor(at / 1000) * 1000)
      continue
    }
    to.packages.push({ ...pkg, facility_id: to.facility.id })
    to.departedPackages = to.departedPackages.filter((p) => p.id !== pkg.id)
    const results = from.labResults.filter((r) => r.package_id === pkg.id)
    from.labResults = from.labResults.filter((r) => r.package_id !== pkg.id)
    to.labResults.push(...results.map((r) => ({ ...r, facility_id: to.facility.id })))
    world.modified.set(pkg.id, Math.floor(at / 1000) * 1000)
  }
}

const findPackage = (world: World, id: string | undefined, pick: (p: Package.Package, d: FacilityData) => boolean) => {
  for (const data of world.facilities) {
    const pkg = data.packages.find((p) => (id === undefined ? pick(p, data) : p.id === id))
    if (pkg !== undefined) return { data, pkg }
  }
  return undefined
}

const setPackage = (world: World, data: FacilityData, id: string, patch: Partial<Package.Package>, at: number) => {
  data.packages = data.packages.map((p) =>
    p.id === id
      ? {
        ...p,
        ...patch,
        metadata: Profile.of(world).touchMetadata(p.metadata, at)
      }
      : p
  )
  world.modified.set(id, Math.floor(at / 1000) * 1000)
}

const panel = (
  failing: boolean
): ReadonlyArray<{ name: string; value: number | null; passed: boolean; notes: string | null }> => [
  { name: "THC", value: 21.3, passed: true, notes: null },
  { name: "CBD", value: 0.4, passed: true, notes: null },
  { name: "Moisture", value: 10.2, passed: true, notes: null },
  {
    name: "Microbiologicals",
    value: failing ? 12_000 : 40,
    passed: !failing,
    notes: failing ? "Total yeast and mold above limit" : null
  },
  {
    name: "Pesticides",
    value: failing ? 0.9 : 0.01,
    passed: !failing,
    notes: failing ? "Myclobutanil above action level" : null
  }
]

/**
 * Runs a scenario on a world.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (world: World, input: Input): Either.Either<Outcome, Failure> => {
  const name = input.name as Name
  if (!(names as ReadonlyArray<string>).includes(input.name)) {
    return fail({
      _tag: "UnknownScenario" as const,
      message: `\`scenario\` must be one of: ${names.join(", ")}; got "${
        input.name.length > 100 ? `${input.name.slice(0, 100)}…` : input.name
      }"`
    })
  }
  const decoded = Schema.decodeUnknownEither(Params[name] as Schema.Schema<any, any>, { onExcessProperty: "error" })(
    input.params ?? {}
  )
  if (Either.isLeft(decoded)) return fail(ProviderError.InvalidInput.fromParseError(`simulate.${name}`, decoded.left))
  const params = decoded.right as Record<string, any>
  const at = input.at

  switch (name) {
    case "transfer_arrived": {
      const s = params.transfer_id !== undefined
        ? stored(world, params.transfer_id, () => true)
        : stored(
          world,
          undefined,
          (t) =>
            (t.status === "pending" || t.status === "in_transit") && t.actual_arrival === null &&
            (params.facility_id === undefined ||
              facilityByLicense(world, t.recipient_facility)?.facility.id === params.facility_id)
        )
      if (s === undefined) {
        if (params.transfer_id !== undefined) {
          return fail(ProviderError.ResourceNotFound.of("transfer", params.transfer_id))
        }
        return created(world, input, params.facility_id)
      }
      const from = s.transfer.status
      if (from !== "in_transit") {
        const moved = transition(Transitions.transferStatus, from, "in_transit")
        if (Either.isLeft(moved)) return Either.left(moved.left)
      }
      updateTransfer(world, s.transfer.id, {
        status: "in_transit",
        actual_departure: s.transfer.actual_departure ?? iso(at - 3_600_000),
        actual_arrival: iso(at)
      }, at)
      return Either.right({
        scenario: name,
        event: transferEvent(world, "transfer.arrived", s.transfer.id, input),
        loginRequired: false
      })
    }
    case "transfer_completed": {
      const outcome = params.outcome as "received" | "rejected"
      const s = params.transfer_id !== undefined
        ? stored(world, params.transfer_id, () => true)
        : stored(
          world,
          undefined,
          (t) => t.status === "in_transit" || (outcome === "rejected" && t.status === "pending")
        )
      if (s === undefined) {
        return params.transfer_id !== undefined
          ? fail(ProviderError.ResourceNotFound.of("transfer", params.transfer_id))
          : exhausted(
            name,
            "in-transit transfer",
            "transfer_id",
            "run transfer_arrived first (it creates an incoming transfer when none is pending)"
          )
      }
      const moved = transition(Transitions.transferStatus, s.transfer.status, outcome)
      if (Either.isLeft(moved)) return Either.left(moved.left)
      updateTransfer(
        world,
        s.transfer.id,
        { status: outcome, actual_arrival: s.transfer.actual_arrival ?? iso(at) },
        at
      )
      if (outcome === "received") moveReceived(world, s.transfer, at)
      return Either.right({
        scenario: name,
        event: transferEvent(world, "transfer.completed", s.transfer.id, input),
        loginRequired: false
      })
    }
    case "lab_result_received": {
      const failing = params.result === "fail"
      const found = findPackage(
        world,
        params.package_id,
        (p, d) => d.labResults.every((r) => r.package_id !== p.id) && !p.is_on_hold
      )
      if (found === undefined) {
        return params.package_id !== undefined
          ? fail(ProviderError.ResourceNotFound.of("package", params.package_id))
          : exhausted(
            name,
            "untested package off hold",
            "package_id",
            "create packages first (POST …/packages splits a new one off a package)"
          )
      }
      const lab = world.facilities.find((d) => d.role === "testing")
      const result = Writes.recordLabResult(world, {
        license: found.data.facility.license_number,
        tag: found.pkg.tag,
        labName: lab?.facility.name,
        labLicense: lab?.facility.license_number,
        results: panel(failing),
        testDate: iso(at).slice(0, 10),
        at
      })
      if (Either.isLeft(result)) return fail(ProviderError.ResourceNotFound.of("package", found.pkg.id))
      const recorded = result.right
      const event = WebhookEvent.make("lab_result.received", envelope(world, input), {
        id: recorded.id,
        connection_id: Ids.ConnectionId.make(input.connection_id),
        facility_id: found.data.facility.id,
        package_id: found.pkg.id,
        package_tag: found.pkg.tag,
        passed: recorded.overall_passed,
        failed_panel: [...LabResult.failedPanel(recorded)],
        lab_result: recorded
      })
      return Either.right({ scenario: name, event, loginRequired: false })
    }
    case "connection_login_required":
      world.loginRequired = true
      return Either.right({ scenario: name, event: null, loginRequired: true })
    case "plant_phase_advanced": {
      let data: FacilityData | undefined
      let plant: Plant.Plant | undefined
      for (const d of world.facilities) {
        plant = d.plants.find((p) =>
          params.plant_id === undefined
            ? p.harvest_date === null && p.growth_phase !== "flowering"
            : p.id === params.plant_id
        )
        if (plant !== undefined) {
          data = d
          break
        }
      }
      if (plant === undefined || data === undefined) {
        return params.plant_id !== undefined
          ? fail(ProviderError.ResourceNotFound.of("plant", params.plant_id))
          : exhausted(name, "plant before flowering", "plant_id")
      }
      const to = plant.growth_phase === "clone" ? "vegetative" : "flowering"
      const moved = transition(Transitions.growthPhase, plant.growth_phase, to)
      if (Either.isLeft(moved)) return Either.left(moved.left)
      const day = iso(at).slice(0, 10)
      const id = plant.id
      data.plants = data.plants.map((p) =>
        p.id === id
          ? { ...p, growth_phase: to, ...(to === "vegetative" ? { vegetative_date: day } : { flowering_date: day }) }
          : p
      )
      world.modified.set(id, Math.floor(at / 1000) * 1000)
      return Either.right({ scenario: name, event: null, loginRequired: false })
    }
    case "package_hold": {
      const found = findPackage(world, params.package_id, (p) => !p.is_on_hold)
      if (found === undefined) {
        return params.package_id !== undefined
          ? fail(ProviderError.ResourceNotFound.of("package", params.package_id))
          : exhausted(
            name,
            "package off hold",
            "package_id",
            "release a package (package_hold with params.on_hold false) or create packages first (POST …/packages)"
          )
      }
      const to = params.on_hold ?? !found.pkg.is_on_hold
      const moved = transition(Transitions.packageHold, found.pkg.is_on_hold, to)
      if (Either.isLeft(moved)) return Either.left(moved.left)
      setPackage(world, found.data, found.pkg.id, { is_on_hold: to }, at)
      if (to && params.kind !== undefined && params.kind !== "administrative") {
        world.holds.set(found.pkg.id, params.kind)
      } else world.holds.delete(found.pkg.id)
      return Either.right({ scenario: name, event: null, loginRequired: false })
    }
    case "upstream_timeout":
      return Either.right({
        scenario: name,
        event: null,
        loginRequired: false,
        fault: { kind: "slow", delay_ms: params.delay_ms ?? Faults.MAX_DELAY_MS }
      })
  }
}

/** An incoming transfer created from an outside licence, arrived now. */
const created = (world: World, input: Input, facilityId: string | undefined): Either.Either<Outcome, Failure> => {
  const recipient = facilityId === undefined
    ? world.facilities.find((d) => d.role === "retail") ?? world.facilities[0]!
    : world.facilities.find((d) => d.facility.id === facilityId)
  if (recipient === undefined) return fail(ProviderError.ResourceNotFound.of("facility", facilityId ?? ""))
  const n = world.counters.next++
  const profile = Profile.of(world)
  const { manifest, providerId } = profile.transferIds(n, profile.numeric("transfer", 0, n), false)
  const at = input.at
  const transfer: Omit<Transfer.Transfer, "facility_id"> = {
    id: Ids.make("transfer", world.provider, providerId),
    manifest_number: manifest,
    transfer_type: "Transfer",
    shipper_facility: profile.license(8, n),
    recipient_facility: recipient.facility.license_number,
    packages: [],
    status: "in_transit",
    estimated_departure: iso(at - 4 * 3_600_000),
    estimated_arrival: iso(at),
    actual_departure: iso(at - 4 * 3_600_000),
    actual_arrival: iso(at),
    transporter: null,
    driver_name: null,
    vehicle_info: null,
    provider: world.provider,
    provider_transfer_id: providerId
  }
  world.transfers.push({ transfer, template: false })
  world.modified.set(transfer.id, Math.floor(at / 1000) * 1000)
  return Either.right({
    scenario: "transfer_arrived",
    event: transferEvent(world, "transfer.arrived", transfer.id, input),
    loginRequired: false
  })
}

/**
 * A package with its lab results, for scenario callers that report it.
 *
 * @since 0.1.0
 * @category getters
 */
export const packageWithResults = packageView
