/**
 * The provider port: what the rest of Tracebridge calls to read and write a state system.
 *
 * An adapter implements the small, provider-shaped {@link Driver}; {@link make} wraps it with the
 * behaviour every provider shares (the shape of `@effect/ai`'s `LanguageModel.make`):
 * - our `page`/`per_page` become a window the driver serves (adapters use `Page.fetchWindow` to
 *   read it through the provider's own smaller pages);
 * - capability checks per state (`CapabilityNotEnabled`, `UnsupportedState`);
 * - Tracebridge ids decoded back to provider ids for gets, and unknown ids answered with
 *   `ResourceNotFound` without a provider call;
 * - output validated against the core schemas with exact field sets (`ProviderInvalidResponse`
 *   naming the field): every object, or a sample of each list window when the caller asks for it
 *   (`OutputCheck`, `withOutputCheck`; ADR 0031), and every listed object checked to belong to the
 *   facility asked for;
 * - each served state's capabilities read from the descriptor once;
 * - writes refused outside the sandbox (`SandboxOnly`) and commands validated (`InvalidInput`);
 * - a transfer's parties (`shipper_facility`, `recipient_facility`) taken by `fac_…` id, licence
 *   number or exact name and handed to the driver as licence numbers (DECISIONS "Transfer
 *   parties"; `internal/parties.ts`);
 * - a span per call, `<provider>.<resource>.<operation>`;
 * - chain of custody, assembled from the driver's reads.
 *
 * @since 0.1.0
 */
import type { ParseResult } from "effect"
import { Context, Effect, Either, FiberRef, Function, GlobalValue, Option, Schema } from "effect"
import type { Capabilities } from "./Capabilities.js"
import * as ChainOfCustody from "./ChainOfCustody.js"
import * as Commands from "./Commands.js"
import { Facility } from "./Facility.js"
import type { FacilityId } from "./Ids.js"
import * as Ids from "./Ids.js"
import * as LabInput from "./internal/labInput.js"
import * as Parties from "./internal/parties.js"
import type { LabResult } from "./LabResult.js"
import type { Package } from "./Package.js"
import * as Page from "./Page.js"
import * as ProviderDescriptor from "./ProviderDescriptor.js"
import type { ProviderError } from "./ProviderError.js"
import {
  CapabilityNotEnabled,
  InvalidInput,
  PackageInTransfer,
  ProviderInvalidResponse,
  ResourceNotFound,
  SandboxOnly
} from "./ProviderError.js"
import * as ReadWindow from "./ReadWindow.js"
import * as Resource from "./Resource.js"
import type { Session } from "./Session.js"
import * as Skipped from "./Skipped.js"
import type { Transfer } from "./Transfer.js"

/**
 * The facility a call is about: our id and the provider's (for provider_a and provider_b, the
 * licence number).
 *
 * @since 0.1.0
 * @category models
 */
export interface FacilityRef {
  readonly id: FacilityId
  readonly provider_facility_id: string
}

/**
 * What a driver implements per resource. `list` returns exactly the items of the window and the
 * total after filters; `get` takes the provider's id and fails with `ResourceNotFound` when absent.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceDriver<A, Q> {
  readonly list: (
    session: Session,
    facility: FacilityRef,
    query: Q,
    window: Page.Window
  ) => Effect.Effect<Page.Slice<A>, ProviderError>
  readonly get: (session: Session, facility: FacilityRef, providerId: string) => Effect.Effect<A, ProviderError>
  /**
   * The ids (core ids) of objects that left this list, changed since `since` (all when absent):
   * Metrc's inactive lists, where a finished or transferred package goes. A provider whose lists
   * are read whole leaves it out: what a whole read no longer has is gone.
   */
  readonly departures?: (
    session: Session,
    facility: FacilityRef,
    since: string | undefined,
    window: Page.Window
  ) => Effect.Effect<Page.Slice<string>, ProviderError>
}

/**
 * A driver per resource. A missing resource is one the provider does not offer anywhere.
 *
 * @since 0.1.0
 * @category models
 */
export type ResourceDrivers = {
  readonly [R in Resource.Name]?: ResourceDriver<Resource.Item<R>, Resource.Filters<R>>
}

/**
 * The optional writes (sandbox connections only). Each returns the created object as a later
 * read returns it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Writes {
  readonly splitPackage?: (
    session: Session,
    facility: FacilityRef,
    command: Commands.SplitPackage
  ) => Effect.Effect<Package, ProviderError>
  readonly recordLabResult?: (
    session: Session,
    facility: FacilityRef,
    command: Commands.RecordLabResult
  ) => Effect.Effect<LabResult, ProviderError>
  /**
   * A sandbox lab result at a facility without the capability `record_lab_result` needs
   * (`writeNeeds`, `labs`), as the real world makes one: a sample of the package is taken at
   * `facility` (on its licence), `lab` (the sandbox world's lab: a facility of the same session
   * with the capability) records the result on that sample, and the result shows on the package
   * as the state system shows an inherited result. Returns the result as a later read of
   * `facility` returns it (`package_id` the package, not the sample). The port calls it only for
   * sandbox sessions; without it such a write is refused with `CapabilityNotEnabled` (ADR 0020).
   */
  readonly recordLabResultByLab?: (
    session: Session,
    facility: FacilityRef,
    lab: FacilityRef,
    command: Commands.RecordLabResult
  ) => Effect.Effect<LabResult, ProviderError>
  readonly createTransfer?: (
    session: Session,
    facility: FacilityRef,
    command: Commands.CreateTransfer
  ) => Effect.Effect<Transfer, ProviderError>
}

/**
 * What an adapter implements: small and provider-shaped.
 *
 * @since 0.1.0
 * @category models
 */
export interface Driver {
  readonly descriptor: ProviderDescriptor.ProviderDescriptor
  /** Checks a login (the Connect widget's credential check); fails with `ProviderLoginRequired`. */
  readonly checkCredentials: (session: Session) => Effect.Effect<void, ProviderError>
  /** Every facility the login can reach. */
  readonly listFacilities: (session: Session) => Effect.Effect<ReadonlyArray<Facility>, ProviderError>
  readonly resources: ResourceDrivers
  readonly writes?: Writes
}

/**
 * What callers get: the driver plus the shared behaviour.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly descriptor: ProviderDescriptor.ProviderDescriptor
  readonly capabilities: (state: string) => Effect.Effect<Capabilities, ProviderError>
  readonly checkCredentials: (session: Session) => Effect.Effect<void, ProviderError>
  readonly listFacilities: (
    session: Session,
    page: Page.PageRequest
  ) => Effect.Effect<Page.Page<Facility>, ProviderError>
  readonly getFacility: (session: Session, facilityId: string) => Effect.Effect<Facility, ProviderError>
  readonly list: <R extends Resource.Name>(
    resource: R,
    session: Session,
    facilityId: string,
    query: Resource.Filters<R>,
    page: Page.PageRequest
  ) => Effect.Effect<Page.Page<Resource.Item<R>>, ProviderError>
  /** Every item of a list (read in windows of 500). */
  readonly listAll: <R extends Resource.Name>(
    resource: R,
    session: Session,
    facilityId: string,
    query: Resource.Filters<R>
  ) => Effect.Effect<ReadonlyArray<Resource.Item<R>>, ProviderError>
  readonly get: <R extends Resource.Name>(
    resource: R,
    session: Session,
    facilityId: string,
    id: string
  ) => Effect.Effect<Resource.Item<R>, ProviderError>
  /**
   * A page of the objects changed within a window of modification time (the managed sync's
   * read): `range.from` absent reads from the beginning, and `range.to` bounds the read
   * (`ReadWindow.Until`). A provider without change markers answers its whole list.
   */
  readonly changes: <R extends Resource.Name>(
    resource: R,
    session: Session,
    facilityId: string,
    range: ChangeRange,
    page: Page.PageRequest
  ) => Effect.Effect<Page.Page<Resource.Item<R>>, ProviderError>
  /**
   * A page of the ids of objects that left the list within a window of modification time (the
   * managed sync's removals for a windowed provider), bounded like {@link Service.changes}. Empty
   * for a list whose driver has no departures.
   */
  readonly departures: (
    resource: Resource.Name,
    session: Session,
    facilityId: string,
    range: ChangeRange,
    page: Page.PageRequest
  ) => Effect.Effect<Page.Page<string>, ProviderError>
  readonly splitPackage: (
    session: Session,
    facilityId: string,
    command: Commands.SplitPackage
  ) => Effect.Effect<Package, ProviderError>
  readonly recordLabResult: (
    session: Session,
    facilityId: string,
    command: Commands.RecordLabResult
  ) => Effect.Effect<LabResult, ProviderError>
  readonly createTransfer: (
    session: Session,
    facilityId: string,
    command: Commands.CreateTransfer
  ) => Effect.Effect<Transfer, ProviderError>
  readonly chainOfCustody: (
    session: Session,
    facilityId: string,
    packageId: string
  ) => Effect.Effect<ChainOfCustody.ChainOfCustody, ProviderError>
}

/**
 * A window of modification time, as ISO 8601 date-times (`from` inclusive, `to` inclusive).
 *
 * @since 0.1.0
 * @category models
 */
export interface ChangeRange {
  readonly from?: string | undefined
  readonly to: string
}

/**
 * The port as a service tag, for code that works with one provider at a time (the conformance kit).
 * Code that serves every provider finds its port by name in `ProviderPorts`.
 *
 * @since 0.1.0
 * @category tags
 */
export class ProviderPort extends Context.Tag("@tracebridge/core/ProviderPort")<ProviderPort, Service>() {}

/**
 * How much of a driver's output a port validates against the core schemas (exact field sets,
 * every refinement), ADR 0031:
 *
 * - `all`: every object of every answer (the default: tests, the conformance kit, the sandbox);
 * - `sample`: the first object of each list window (`list`, each window of `listAll`, `changes`),
 *   and every object of the other answers (a get, the facility list, a chain of custody, a write).
 *   A mapper's systematic fault shows on the first object; the rest of a window is trusted to the
 *   mappers' types (what the API's production connections do);
 * - `none`: nothing.
 *
 * Whatever the level, every listed object is checked to belong to the provider and the facility
 * asked for, and a bad object that is checked fails the call with `ProviderInvalidResponse`.
 *
 * @since 0.1.0
 * @category models
 */
export type OutputCheck = "all" | "sample" | "none"

/**
 * The level of output check the caller sets for the port calls it runs (`withOutputCheck`); none
 * set: each port's own (`Options.validateOutput`, default `all`).
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const currentOutputCheck: FiberRef.FiberRef<OutputCheck | undefined> = GlobalValue.globalValue(
  Symbol.for("@tracebridge/core/ProviderPort/currentOutputCheck"),
  () => FiberRef.unsafeMake<OutputCheck | undefined>(undefined)
)

/**
 * Runs port calls with a level of output check, whatever the port's own: the host decides (the
 * API samples its production connections' answers and checks its sandbox connections' whole).
 *
 * @since 0.1.0
 * @category combinators
 */
export const withOutputCheck: {
  (check: OutputCheck): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, check: OutputCheck): Effect.Effect<A, E, R>
} = Function.dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, check: OutputCheck): Effect.Effect<A, E, R> =>
    Effect.locally(self, currentOutputCheck, check)
)

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * How much driver output to validate against the core schemas when the caller sets no level
   * (`withOutputCheck`): `true` or `"all"` (the default), `"sample"`, `false` or `"none"` (see
   * {@link OutputCheck}). Only lower it for a driver whose mappers already produce validated
   * objects and whose tests pass the kit.
   */
  readonly validateOutput?: boolean | OutputCheck
}

const ALL_WINDOW = 500

/**
 * Wraps a driver with the shared behaviour.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (driver: Driver, options: Options = {}): Service => {
  const { descriptor } = driver
  const provider = descriptor.name
  const own: OutputCheck = options.validateOutput === undefined || options.validateOutput === true
    ? "all"
    : options.validateOutput === false
    ? "none"
    : options.validateOutput
  /** The level in force for this call: the caller's, else the port's own. */
  const level: Effect.Effect<OutputCheck> = Effect.map(FiberRef.get(currentOutputCheck), (set) => set ?? own)

  /** One validator per schema (made on first use). */
  const validators = new Map<
    Schema.Schema<any, any>,
    (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  >()
  const checkOutput = <A>(schema: Schema.Schema<A, any>, operation: string) => {
    let run = validators.get(schema)
    if (run === undefined) {
      run = Schema.validate(schema, { onExcessProperty: "error", errors: "first" })
      validators.set(schema, run)
    }
    const validate = run
    return (value: A): Effect.Effect<A, ProviderError> =>
      Effect.mapError(
        validate(value) as Effect.Effect<A, ParseResult.ParseError>,
        (error) => ProviderInvalidResponse.fromParseError({ provider, operation, error })
      )
  }
  /** Checks one object of an answer that is checked whole (unless the level is `none`). */
  const checkWhole = <A>(schema: Schema.Schema<A, any>, operation: string, value: A): Effect.Effect<A, ProviderError> =>
    Effect.flatMap(level, (check) => check === "none" ? Effect.succeed(value) : checkOutput(schema, operation)(value))

  const invalid = (operation: string, path: string, message: string) =>
    new ProviderInvalidResponse({ provider, operation, path, message })

  const checkOwner = (operation: string, facility: FacilityRef, value: unknown, path: string) => {
    const v = value as { readonly facility_id?: unknown; readonly provider?: unknown }
    if (v.provider !== provider) return Effect.fail(invalid(operation, `${path}provider`, `expected ${provider}`))
    if (v.facility_id !== facility.id) {
      return Effect.fail(invalid(operation, `${path}facility_id`, `expected the facility asked for (${facility.id})`))
    }
    return Effect.void
  }

  // A state's capabilities, and which resources they open, read from the descriptor once per state
  // (only for the states it serves: an unserved one is refused each time, and kept nowhere).
  const served = new Set(Object.keys(descriptor.capabilities))
  const capabilitiesByState = new Map<string, Effect.Effect<Capabilities, ProviderError>>()
  const capabilitiesOf = (state: string): Effect.Effect<Capabilities, ProviderError> => {
    let known = capabilitiesByState.get(state)
    if (known === undefined) {
      known = ProviderDescriptor.capabilitiesFor(descriptor, state)
      if (served.has(state)) capabilitiesByState.set(state, known)
    }
    return known
  }

  const checkSession = (session: Session, operation: string): Effect.Effect<Capabilities, ProviderError> =>
    session.provider === provider
      ? capabilitiesOf(session.state)
      : Effect.fail(
        new InvalidInput({
          operation,
          path: "session.provider",
          message: `a ${session.provider} session was given to the ${provider} port`
        })
      )

  const facilityRef = (facilityId: string): Effect.Effect<FacilityRef, ResourceNotFound> =>
    Option.match(Ids.decodeAs("facility", provider, facilityId), {
      onNone: () => Effect.fail(ResourceNotFound.of("facility", facilityId)),
      onSome: (provider_facility_id) => Effect.succeed({ id: facilityId as FacilityId, provider_facility_id })
    })

  const resourceDriver = <R extends Resource.Name>(
    resource: R,
    session: Session,
    operation: string
  ): Effect.Effect<ResourceDriver<Resource.Item<R>, Resource.Filters<R>>, ProviderError> =>
    Effect.flatMap(checkSession(session, operation), (capabilities) => {
      const definition = Resource.resources[resource]
      const rd = driver.resources[resource] as ResourceDriver<Resource.Item<R>, Resource.Filters<R>> | undefined
      if (rd === undefined || !definition.enabled(capabilities)) {
        return Effect.fail(
          new CapabilityNotEnabled({
            provider,
            state: session.state,
            capability: definition.capability,
            message: `${resource} is not available for ${descriptor.displayName} in ${session.state}: it needs the ` +
              `${definition.capability} capability, and ${session.state} has ` +
              `${Object.entries(capabilities).filter(([, on]) => on).map(([flag]) => flag).join(", ") || "none"}`
          })
        )
      }
      return Effect.succeed(rd)
    })

  const span = (operation: string, session: Session, facilityId?: string) =>
    Effect.withSpan(`${provider}.${operation}`, {
      captureStackTrace: false,
      attributes: { provider, state: session.state, environment: session.environment, facility_id: facilityId }
    })

  const listChecked = <R extends Resource.Name>(
    resource: R,
    session: Session,
    facilityId: string,
    query: Resource.Filters<R>,
    window: Page.Window
  ): Effect.Effect<Page.Slice<Resource.Item<R>>, ProviderError> => {
    const operation = `${resource}.list`
    return Effect.gen(function*() {
      const rd = yield* resourceDriver(resource, session, operation)
      const facility = yield* facilityRef(facilityId)
      const [read, reported] = yield* Skipped.collect(rd.list(session, facility, query, window))
      const skipped = Skipped.union(read.skipped ?? [], reported)
      const slice = skipped.length === 0 ? read : { ...read, skipped }
      if (!Number.isInteger(slice.total) || slice.total < 0) {
        return yield* invalid(operation, "total", `the total must be a whole number, got ${slice.total}`)
      }
      if (slice.items.length > window.limit) {
        return yield* invalid(operation, "items", `${slice.items.length} items for a window of ${window.limit}`)
      }
      const schema = Resource.resources[resource].schema as unknown as Schema.Schema<Resource.Item<R>, unknown>
      const check = checkOutput(schema, operation)
      // `sample`: the window's first item stands for the rest (ADR 0031)
      const checked = yield* level
      const upTo = checked === "all" ? slice.items.length : checked === "sample" ? 1 : 0
      for (let i = 0; i < slice.items.length; i++) {
        const item = slice.items[i]!
        if (i < upTo) yield* check(item)
        yield* checkOwner(operation, facility, item, `${i}.`)
      }
      return slice
    })
  }

  const service: Service = {
    descriptor,
    capabilities: capabilitiesOf,
    checkCredentials: (session) =>
      checkSession(session, "credentials.check").pipe(
        Effect.zipRight(driver.checkCredentials(session)),
        span("credentials.check", session)
      ),
    listFacilities: (session, page) =>
      Effect.gen(function*() {
        yield* checkSession(session, "facilities.list")
        const all = yield* driver.listFacilities(session)
        // a connection's few facilities are checked whole at every level but none
        if ((yield* level) !== "none") {
          const check = checkOutput(Facility, "facilities.list")
          for (const facility of all) yield* check(facility)
        }
        return Page.paginate(all, page)
      }).pipe(span("facilities.list", session)),
    getFacility: (session, facilityId) =>
      Effect.gen(function*() {
        yield* checkSession(session, "facilities.get")
        yield* facilityRef(facilityId)
        const all = yield* driver.listFacilities(session)
        const found = all.find((f) => f.id === facilityId)
        if (found === undefined) return yield* ResourceNotFound.of("facility", facilityId)
        return yield* checkWhole(Facility, "facilities.get", found)
      }).pipe(span("facilities.get", session, facilityId)),
    list: (resource, session, facilityId, query, page) =>
      listChecked(resource, session, facilityId, query, Page.toWindow(page)).pipe(
        Effect.map((slice) => Page.fromSlice(page, slice)),
        span(`${resource}.list`, session, facilityId)
      ),
    listAll: (resource, session, facilityId, query) =>
      Effect.gen(function*() {
        const out: Array<Resource.Item<typeof resource>> = []
        let total = Infinity
        // window after window of the list: a window may hold fewer items than its size when rows
        // were skipped (tolerant reads), so the position moves by the window, not by the items
        for (let offset = 0; offset < total; offset += ALL_WINDOW) {
          const slice = yield* listChecked(resource, session, facilityId, query, { offset, limit: ALL_WINDOW })
          total = slice.total
          out.push(...slice.items)
        }
        return out
      }).pipe(span(`${resource}.listAll`, session, facilityId)),
    changes: (resource, session, facilityId, range, page) =>
      listChecked(
        resource,
        session,
        facilityId,
        (range.from === undefined ? {} : { updated_since: range.from }) as Resource.Filters<typeof resource>,
        Page.toWindow(page)
      ).pipe(
        ReadWindow.bounded(Date.parse(range.to)),
        Effect.map((slice) => Page.fromSlice(page, slice)),
        span(`${resource}.changes`, session, facilityId)
      ),
    departures: (resource, session, facilityId, range, page) =>
      Effect.gen(function*() {
        const operation = `${resource}.departures`
        const rd = yield* resourceDriver(resource, session, operation)
        if (rd.departures === undefined) return { items: [], total: 0 }
        const facility = yield* facilityRef(facilityId)
        return yield* rd.departures(session, facility, range.from, Page.toWindow(page))
      }).pipe(
        ReadWindow.bounded(Date.parse(range.to)),
        Effect.map((slice) => Page.fromSlice(page, slice)),
        span(`${resource}.departures`, session, facilityId)
      ),
    get: (resource, session, facilityId, id) => {
      const operation = `${resource}.get`
      return Effect.gen(function*() {
        const rd = yield* resourceDriver(resource, session, operation)
        const facility = yield* facilityRef(facilityId)
        const definition = Resource.resources[resource]
        const providerId = yield* Option.match(Ids.decodeAs(definition.kind, provider, id), {
          onNone: () => Effect.fail(ResourceNotFound.of(definition.kind, id)),
          onSome: Effect.succeed
        })
        const item = yield* rd.get(session, facility, providerId)
        const schema = definition.schema as unknown as Schema.Schema<Resource.Item<typeof resource>, unknown>
        yield* checkWhole(schema, operation, item)
        yield* checkOwner(operation, facility, item, "")
        if ((item as { readonly id: unknown }).id !== id) {
          return yield* invalid(operation, "id", `asked for ${id}, got ${(item as { readonly id: string }).id}`)
        }
        return item
      }).pipe(span(operation, session, facilityId))
    },
    splitPackage: (session, facilityId, command) =>
      write(
        session,
        facilityId,
        "split_package",
        Commands.SplitPackage,
        command,
        driver.writes?.splitPackage,
        Resource.resources.packages.schema
      ),
    recordLabResult: (session, facilityId, command) =>
      write(
        session,
        facilityId,
        "record_lab_result",
        Commands.RecordLabResult,
        command,
        driver.writes?.recordLabResult,
        Resource.resources.lab_results.schema,
        (valid, _at, _facilities, lab) => Effect.as(LabInput.check(valid, lab), valid),
        byLab(driver.writes?.recordLabResultByLab)
      ),
    createTransfer: (session, facilityId, command) =>
      write(
        session,
        facilityId,
        "create_transfer",
        Commands.CreateTransfer,
        command,
        onlyOnce(driver.writes?.createTransfer),
        Resource.resources.transfers.schema,
        (valid, at, facilities) => Parties.resolve(provider, facilities, at, valid)
      ),
    chainOfCustody: (session, facilityId, packageId) =>
      Effect.flatMap(level, (check) => {
        const chain = chainOfCustody(service, session, facilityId, packageId)
        // answered whole, so read whole: no part of it is left unchecked by a sample
        return check === "sample" ? withOutputCheck(chain, "all") : chain
      }).pipe(span("packages.chainOfCustody", session, facilityId))
  }

  function write<C, A>(
    session: Session,
    facilityId: string,
    operation: ProviderDescriptor.WriteName,
    commandSchema: Schema.Schema<C, any>,
    command: C,
    run: ((session: Session, facility: FacilityRef, command: C) => Effect.Effect<A, ProviderError>) | undefined,
    output: Schema.Schema<A, any>,
    /**
     * Rewrites the valid command against the connection's facilities (transfer parties), or
     * refuses it before anything is written (a package already on its way).
     */
    prepare?: (
      command: C,
      at: Facility,
      facilities: ReadonlyArray<Facility>,
      /** The facility that makes the write: `at`, or the one it goes through. */
      by: Facility
    ) => Effect.Effect<C, ProviderError>,
    /**
     * Where the write goes at a facility without the capability it needs (sandbox sessions only):
     * through another facility of the session that has it (the sandbox world's lab).
     */
    through?: (
      helper: Facility
    ) => (session: Session, facility: FacilityRef, command: C) => Effect.Effect<A, ProviderError>
  ): Effect.Effect<A, ProviderError> {
    return Effect.gen(function*() {
      yield* checkSession(session, operation)
      if (session.environment !== "sandbox") {
        return yield* new SandboxOnly({
          operation,
          message: "Writes to packages, lab results and transfers only work against sandbox connections"
        })
      }
      if (run === undefined || !descriptor.writes.includes(operation)) {
        return yield* new CapabilityNotEnabled({
          provider,
          state: session.state,
          capability: operation,
          message: `${descriptor.displayName} does not support ${operation}`
        })
      }
      const valid = yield* Schema.validate(commandSchema, { onExcessProperty: "error" })(command).pipe(
        Effect.mapError((error) => InvalidInput.fromParseError(operation, error))
      )
      const facility = yield* facilityRef(facilityId)
      const needs = descriptor.writeNeeds?.[operation]
      let ready = valid
      let go = run
      if (needs !== undefined || prepare !== undefined) {
        const facilities = yield* driver.listFacilities(session)
        const found = facilities.find((f) => f.id === facilityId)
        if (found === undefined) return yield* ResourceNotFound.of("facility", facilityId)
        let by = found
        if (needs !== undefined && !found.capabilities.includes(needs)) {
          // the sandbox world plays the part of a facility that has it (ADR 0020)
          const helper = facilities.find((f) => f.id !== found.id && f.capabilities.includes(needs))
          if (through === undefined || helper === undefined) {
            return yield* new CapabilityNotEnabled({
              provider,
              state: session.state,
              capability: operation,
              message: `${operation} needs a facility with the ${needs} capability on ${descriptor.displayName}; ` +
                `${found.name} (${found.license_type}) has ${found.capabilities.join(", ") || "none"}` +
                (through === undefined ? "" : `, and the connection has no facility with ${needs} to make it`) +
                (operation === "record_lab_result"
                  ? "; record it at the lab's facility (its own connection), or, in the sandbox, run the " +
                    "lab_result_received scenario (POST /v1/sandbox/{connection_id}/simulate)"
                  : "")
            })
          }
          go = through(helper)
          by = helper
        }
        if (prepare !== undefined) ready = yield* prepare(valid, found, facilities, by)
      }
      const created = yield* go(session, facility, ready)
      yield* checkWhole(output, operation, created)
      yield* checkOwner(operation, facility, created, "")
      return created
    }).pipe(span(operation, session, facilityId))
  }

  /**
   * A package goes on one transfer at a time (issue #30: the sandbox once shipped one package
   * twice). Before the driver writes, the facility's transfers that have not arrived (pending or
   * in transit) are read:
   *
   * - the same transfer again (same recipient, same lines) is a retry, which the driver finishes or
   *   answers as it knows how (BioTrack's manifest is made in two calls); the state system refuses
   *   a second transfer of a package;
   * - a package on another of them is refused with `PackageInTransfer` naming the line and the
   *   transfer, before anything is written.
   *
   * A provider without a transfers list leaves it to the state system.
   */
  function onlyOnce(
    run: Writes["createTransfer"]
  ): Writes["createTransfer"] {
    if (run === undefined) return undefined
    return (session, facility, command) =>
      Effect.flatMap(
        notOnTheWay(session, facility.id, command),
        () => run(session, facility, command)
      )
  }

  function notOnTheWay(session: Session, facilityId: string, command: Commands.CreateTransfer) {
    return Effect.gen(function*() {
      const open = yield* Effect.forEach(
        ["pending", "in_transit"] as const,
        (status) => service.listAll("transfers", session, facilityId, { status }),
        { concurrency: 1 }
      ).pipe(
        Effect.map((lists) => lists.flat()),
        Effect.catchIf((e) => e._tag === "CapabilityNotEnabled", () => Effect.succeed([]))
      )
      const lines = (packages: ReadonlyArray<{ readonly package_id: string; readonly quantity: number }>) =>
        packages.map((p) => `${p.package_id}:${p.quantity}`).sort().join(",")
      const retry = open.some((t) =>
        t.status === "pending" && t.shipper_facility === command.shipper_facility &&
        t.recipient_facility === command.recipient_facility && lines(t.packages) === lines(command.packages)
      )
      if (retry) return
      for (const [i, line] of command.packages.entries()) {
        const on = open.find((t) =>
          t.shipper_facility === command.shipper_facility && t.packages.some((p) => p.package_id === line.package_id)
        )
        if (on !== undefined) {
          return yield* new PackageInTransfer({
            path: `packages.${i}.package_id`,
            package_id: line.package_id,
            transfer_id: on.id,
            message: `package ${line.tag} is already on ${on.status.replace("_", " ")} transfer ` +
              `${on.manifest_number || on.provider_transfer_id} (${on.id}); a package goes on one transfer at a ` +
              "time: wait until it is received or rejected, or ship another package"
          })
        }
      }
    })
  }

  /** A sandbox lab result recorded by the world's lab (`Writes.recordLabResultByLab`). */
  function byLab(
    recordByLab: Writes["recordLabResultByLab"]
  ):
    | ((
      lab: Facility
    ) => (
      session: Session,
      facility: FacilityRef,
      command: Commands.RecordLabResult
    ) => Effect.Effect<LabResult, ProviderError>)
    | undefined
  {
    if (recordByLab === undefined) return undefined
    return (lab) => (session, facility, command) =>
      Effect.flatMap(facilityRef(lab.id), (labRef) => recordByLab(session, facility, labRef, command))
  }

  return service
}

const MAX_ANCESTORS = 50

/** Reads what the chain needs through the port, skipping what the provider does not have. */
const chainOfCustody = (
  port: Service,
  session: Session,
  facilityId: string,
  packageId: string
): Effect.Effect<ChainOfCustody.ChainOfCustody, ProviderError> =>
  Effect.gen(function*() {
    const optional = <A>(effect: Effect.Effect<A, ProviderError>, fallback: A) =>
      Effect.catchIf(effect, (e) =>
        e._tag === "ResourceNotFound" || e._tag === "CapabilityNotEnabled", () =>
        Effect.succeed(fallback))
    const target = yield* port.get("packages", session, facilityId, packageId)
    const packages: Array<Package> = [target]
    const queue = [...target.source_package_ids]
    const seen = new Set<string>([target.id])
    while (queue.length > 0 && packages.length <= MAX_ANCESTORS) {
      const id = queue.shift()!
      if (seen.has(id)) {
        continue
      }
      seen.add(id)
      const source = yield* optional(
        port.get("packages", session, facilityId, id).pipe(Effect.map(Option.some)),
        Option.none()
      )
      if (Option.isSome(source)) {
        packages.push(source.value)
        queue.push(...source.value.source_package_ids)
      }
    }
    const harvestIds = [
      ...new Set(packages.flatMap((p) =>
        p.source_harvest_ids
      ))
    ]
    const harvests = (yield* Effect.forEach(harvestIds, (id) =>
      optional(port.get("harvests", session, facilityId, id).pipe(Effect.map(Option.some)), Option.none()))).flatMap(
        Option.toArray
      )
    const plantIds = [
      ...new Set(harvests.flatMap((h) =>
        h.source_plant_ids
      ))
    ]
    const plants = (yield* Effect.forEach(plantIds, (id) =>
      optional(port.get("plants", session, facilityId, id).pipe(Effect.map(Option.some)), Option.none()))).flatMap(
        Option.toArray
      )
    const lab_results = (yield* Effect.forEach(packages, (p) =>
      optional(port.listAll("lab_results", session, facilityId, { package_id: p.id }), []))).flat()
    const transfers = yield* optional(port.listAll("transfers", session, facilityId, {}), [])
    const sales = yield* optional(port.listAll("sales", session, facilityId, {}), [])
    return yield* Either.match(
      ChainOfCustody.assemble(target.id, { packages, plants, harvests, lab_results, transfers, sales }),
      { onLeft: Effect.fail, onRight: Effect.succeed }
    )
  })

/**
 * Decodes unknown input with a schema, failing with `InvalidInput` (for callers that hold raw JSON).
 *
 * @since 0.1.0
 * @category utils
 */
export const decodeInput = <A, I>(schema: Schema.Schema<A, I>, operation: string) => (input: unknown) =>
  Effect.mapError(
    Schema.decodeUnknown(schema, { onExcessProperty: "error" })(input),
    (error: ParseResult.ParseError) => InvalidInput.fromParseError(operation, error)
  )
