/**
 * The conformance kit: the checks every adapter must pass, as data that any test runner can
 * execute (core does not depend on one). A check is a name and an Effect that needs the port
 * under test and a fixture, and fails with a `ContractViolation` (or the provider error that
 * broke it).
 *
 * What it proves, for one state of a provider (see `docs/adding-a-provider.md`, "What the
 * conformance kit proves"):
 * - the descriptor's claims: complete, base URLs for the state, the port reports the state's
 *   capabilities, every claimed resource answers and every unclaimed one (its list, each of its
 *   filters and a get) is `CapabilityNotEnabled`, every declared write works and every undeclared
 *   one is `CapabilityNotEnabled`;
 * - transfer writes: the parties are taken by `fac_…` id, licence number or exact name, and an
 *   unknown, foreign or wrong one is `InvalidInput` at its field; a line of part of a package is
 *   shipped as asked or refused at `packages.0.quantity`, never recorded as the whole package, and
 *   a line above what the package holds is `InsufficientQuantity`;
 * - paging: consistent totals, per_page 1 walks every item once in order, per_page 100 covers the
 *   list, a page past the end is empty with the true total;
 * - every filter of every claimed list (the filters of `Query`, found from `Resource`): for values
 *   taken from the unfiltered list, their edges, and values matching nothing, the filtered list
 *   holds exactly the unfiltered items that pass;
 * - every error kind: the ones the kit provokes itself ({@link errorCoverage}) and the
 *   provider-side ones the fixture arranges ({@link providerSideKinds}); a kind the fixture neither
 *   arranges nor declares not applicable, with a reason, fails a check that names it.
 *
 * @example
 * ```ts
 * // adapter-provider-x/test/ProviderX.test.ts
 * import { describe, it } from "@effect/vitest"
 * import { ProviderContract } from "@tracebridge/core"
 *
 * describe.sequential("ProviderX conformance", () => {
 *   for (const check of ProviderContract.checksFor(ProviderX.descriptor, "CO")) {
 *     it.effect(check.name, () => check.run.pipe(Effect.provide(PortAndFixture)))
 *   }
 * })
 * ```
 *
 * Run the checks in order (writes come last and change the data the earlier checks read).
 *
 * @since 0.1.0
 */
import type { SchemaAST } from "effect"
import { Context, Effect, Either, Redacted, Schema } from "effect"
import * as Capabilities from "./Capabilities.js"
import type * as Commands from "./Commands.js"
import { type CapabilityTag, Facility } from "./Facility.js"
import * as Ids from "./Ids.js"
import { toEpochMillis } from "./internal/calendar.js"
import { deepEqual, firstDifference } from "./internal/equal.js"
import type { Package } from "./Package.js"
import * as Page from "./Page.js"
import { GrowthPhase } from "./Plant.js"
import type { ProviderDescriptor, WriteName } from "./ProviderDescriptor.js"
import { baseUrl, problems } from "./ProviderDescriptor.js"
import type { ProviderError } from "./ProviderError.js"
import type { ProviderName, UsState } from "./ProviderName.js"
import { stateCodes } from "./ProviderName.js"
import { ProviderPort } from "./ProviderPort.js"
import * as Query from "./Query.js"
import * as Resource from "./Resource.js"
import type { Session } from "./Session.js"
import { TransferStatus } from "./Transfer.js"

/**
 * A provider failure the fixture can cause, and the error it must become.
 *
 * @since 0.1.0
 * @category models
 */
export interface FailureCase {
  readonly name: string
  /** Makes the next provider call(s) fail (e.g. an msw one-shot handler, an emulator fault). */
  readonly arrange: Effect.Effect<void>
  /** The tag the port must fail with. */
  readonly expected: ProviderError["_tag"]
  /**
   * The call that meets the failure; default: the first page of packages. It may also undo what
   * `arrange` did (e.g. `Effect.ensuring` a fault switch off) or drive a `TestClock` for a timeout.
   */
  readonly call?: (port: ProviderPort["Type"], fixture: Fixture) => Effect.Effect<unknown, ProviderError>
}

/**
 * A filter of a resource, as `<resource>.<filter>`, e.g. `packages.updated_since`.
 *
 * @since 0.1.0
 * @category models
 */
export type FilterKey = `${Resource.Name}.${string}`

/**
 * What the adapter's test supplies.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fixture {
  /** A working sandbox session for the state under test. */
  readonly session: Session
  /** A login the provider refuses. */
  readonly invalidCredentials: Readonly<Record<string, string>>
  /** A facility of the session that holds at least two objects of every enabled resource. */
  readonly facilityId: string
  /**
   * Another facility per resource, where the main one cannot hold it (a cultivator has no sales;
   * a dispensary no harvests). Writes always use `facilityId`.
   */
  readonly facilityFor?: Partial<Record<Resource.Name, string>>
  /**
   * The facility a write is made at, where `facilityId` cannot make it (the descriptor's
   * `writeNeeds`: a lab result is recorded by a testing laboratory, on a package it holds). A
   * sandbox lab result elsewhere is recorded by the world's lab, which the kit checks at a
   * facility without the capability.
   */
  readonly writeFacilityFor?: Partial<Record<WriteName, string>>
  /**
   * Licence numbers of licensees outside the session that the state system knows, to ship
   * transfers to besides the session's other facilities. Declaring them says the system knows no
   * other: the kit then checks that a transfer to a licence it does not know is refused.
   */
  readonly licensees?: ReadonlyArray<string>
  /** Provider failures and the error each must become: at least one per {@link providerSideKinds}. */
  readonly failures: ReadonlyArray<FailureCase>
  /**
   * When a listed object last changed in the provider's data (epoch ms or an ISO date-time), as the
   * provider's own change marker says (Metrc's `LastModified`, BioTrack's `sessiontime`): core
   * objects carry no modification time, so the `updated_since` checks read it here. `null` for an
   * object with no change marker (no `updated_since` returns it); `undefined` when the fixture
   * cannot tell (the check fails, naming the object).
   */
  readonly updatedAt?: (resource: Resource.Name, item: any) => number | string | null | undefined
  /**
   * Coverage the fixture cannot give, each with its reason, so that what is missing stays visible
   * in the fixture rather than silently untested. A declaration that is not needed (the kind is
   * arranged; the data exercises the filter) fails its check, so declarations do not go stale.
   */
  readonly notApplicable?: {
    /** Provider-side error kinds ({@link providerSideKinds}) the fixture cannot arrange. */
    readonly failures?: Partial<Record<ProviderError["_tag"], string>>
    /** Filters the fixture's data cannot tell from no filter (e.g. every package is off hold). */
    readonly filters?: Partial<Record<FilterKey, string>>
  }
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ContractFixture extends Context.Tag("@tracebridge/core/ProviderContract/ContractFixture")<
  ContractFixture,
  Fixture
>() {}

/**
 * A broken promise of the port.
 *
 * @since 0.1.0
 * @category errors
 */
export class ContractViolation extends Schema.TaggedError<ContractViolation>(
  "@tracebridge/core/ProviderContract/ContractViolation"
)("ContractViolation", { check: Schema.String, message: Schema.String }) {}

/**
 * One check.
 *
 * @since 0.1.0
 * @category models
 */
export interface Check {
  readonly name: string
  readonly run: Effect.Effect<void, ContractViolation | ProviderError, ProviderPort | ContractFixture>
}

/**
 * The error kinds only the provider can cause: the fixture arranges each (a `FailureCase`), or
 * declares it not applicable with a reason.
 *
 * @since 0.1.0
 * @category constants
 */
export const providerSideKinds: ReadonlyArray<ProviderError["_tag"]> = [
  "ProviderUnavailable",
  "ProviderTimeout",
  "ProviderRateLimited",
  "ProviderInvalidResponse",
  "ProviderLoginRequired",
  "ProviderPermissionDenied",
  "ProviderRejected"
]

/**
 * How the kit covers each error kind of the family: `fixture` (arranged by the fixture, one check
 * per kind), `kit` (provoked by the kit's own checks), or `none` (no port call can cause it).
 *
 * @since 0.1.0
 * @category constants
 */
export const errorCoverage: {
  readonly [K in ProviderError["_tag"]]: { readonly by: "fixture" | "kit" | "none"; readonly how: string }
} = {
  ProviderUnavailable: { by: "fixture", how: "the system down or answering 5xx past the adapter's retries" },
  ProviderTimeout: { by: "fixture", how: "the system not answering within the adapter's deadline" },
  ProviderRateLimited: { by: "fixture", how: "429s past the adapter's retries" },
  ProviderInvalidResponse: { by: "fixture", how: "an answer off the provider's wire schema" },
  ProviderLoginRequired: {
    by: "fixture",
    how: "a call refused for the login (an expired session, a locked account); the kit also checks a refused login"
  },
  ProviderPermissionDenied: { by: "fixture", how: "a login that may not read this facility or resource" },
  ProviderRejected: { by: "fixture", how: "the system refusing a request on its merits (a write's validation)" },
  ResourceNotFound: { by: "kit", how: "unknown and malformed ids of every claimed resource and of facilities" },
  CapabilityNotEnabled: { by: "kit", how: "every resource, filter and write the descriptor does not claim" },
  UnsupportedState: { by: "kit", how: "a session for a state the descriptor does not serve" },
  InvalidInput: { by: "kit", how: "a session of another provider; an invalid command for each declared write" },
  InsufficientQuantity: { by: "kit", how: "a split beyond its source (when split_package is declared)" },
  SandboxOnly: { by: "kit", how: "a write with a production session (when any write is declared)" },
  PackageInTransfer: {
    by: "none",
    how: "the port refuses it from the transfers list before the driver runs; the /v1 transfer tests check it"
  },
  InvalidStateTransition: {
    by: "none",
    how: "no port call moves a state; the sandbox's scenarios raise it, and the sandbox's tests check them"
  }
}

type Port = ProviderPort["Type"]
type Assert = (condition: boolean, message: string) => Effect.Effect<void, ContractViolation>
type AnyResource = Resource.Definition<any, any>

const check = (
  name: string,
  body: (port: Port, fixture: Fixture, assert: Assert) => Effect.Effect<void, ContractViolation | ProviderError>
): Check => ({
  name,
  run: Effect.gen(function*() {
    const port = yield* ProviderPort
    const fixture = yield* ContractFixture
    yield* body(
      port,
      fixture,
      (condition, message) => condition ? Effect.void : Effect.fail(new ContractViolation({ check: name, message }))
    )
  })
})

/** Succeeds with the error when the effect fails with `tag`; a violation otherwise. */
const expectFailure = <A>(
  effect: Effect.Effect<A, ProviderError>,
  tag: ProviderError["_tag"],
  name: string
): Effect.Effect<ProviderError, ContractViolation> =>
  Effect.either(effect).pipe(
    Effect.flatMap((result) =>
      Either.isLeft(result) && result.left._tag === tag
        ? Effect.succeed(result.left)
        : Effect.fail(
          new ContractViolation({
            check: name,
            message: Either.isLeft(result)
              ? `expected ${tag}, got ${result.left._tag}: ${result.left.message}`
              : `expected ${tag}, but the call succeeded`
          })
        )
    )
  )

const exactFields = (schema: Schema.Schema<any, any>, item: unknown, assert: Assert) => {
  const ast = schema.ast
  const expected = ast._tag === "TypeLiteral" ? ast.propertySignatures.map((p) => String(p.name)).sort() : []
  const actual = Object.keys(item as object).sort()
  return assert(
    deepEqual(expected, actual),
    `fields differ from the spec: missing [${expected.filter((k) => !actual.includes(k))}], extra [${
      actual.filter((k) => !expected.includes(k))
    }]`
  )
}

const facilityOf = (fx: Fixture, name: Resource.Name): string => fx.facilityFor?.[name] ?? fx.facilityId

const idOf = (item: unknown): string => (item as { readonly id: string }).id

const iso = (ms: number): string => new Date(ms).toISOString()

const nonNull = <A>(a: A | null | undefined): a is A => a !== null && a !== undefined

const distinct = <A>(xs: ReadonlyArray<A>): Array<A> => [...new Set(xs)]

/** Up to `n` of `xs`: the first, the last and evenly between. */
const spread = <A>(xs: ReadonlyArray<A>, n: number): ReadonlyArray<A> =>
  xs.length <= n
    ? xs
    : distinct(Array.from({ length: n }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (n - 1))]!))

const listed = (ids: ReadonlyArray<string>, max = 5) =>
  `[${ids.slice(0, max).join(", ")}${ids.length > max ? `, … ${ids.length - max} more` : ""}]`

/** Whether the error names a provider other than the port's. */
const foreignProvider = (error: ProviderError, provider: ProviderName): string | undefined => {
  const named = (error as { readonly provider?: unknown }).provider
  return named === undefined || named === provider ? undefined : String(named)
}

// ------------------------------------------------------------------ the descriptor and sessions

const otherProvider = (name: ProviderName): ProviderName =>
  name === "provider_contract_other" ? "provider_contract_else" : "provider_contract_other"

const descriptorChecks = (state: UsState): ReadonlyArray<Check> => [
  check("descriptor: is complete and consistent", (port, _fx, assert) => {
    const found = problems(port.descriptor)
    return assert(found.length === 0, found.join("; "))
  }),
  check(`descriptor: ${state} has a sandbox and a production base URL`, (port, _fx, assert) =>
    Effect.gen(function*() {
      for (const environment of ["sandbox", "production"] as const) {
        const url = yield* baseUrl(port.descriptor, state, environment)
        yield* assert(/^https?:\/\/\S+$/.test(url), `the ${environment} base URL of ${state} is ${url}`)
      }
    })),
  check(
    `descriptor: the port reports ${state}'s capabilities as the descriptor claims them`,
    (port, _fx, assert) =>
      Effect.gen(function*() {
        const reported = yield* port.capabilities(state)
        const claimed = port.descriptor.capabilities[state]
        yield* assert(
          deepEqual(reported, claimed),
          `the port reports capabilities that differ from the descriptor at ${firstDifference(reported, claimed)}`
        )
      })
  ),
  check("credentials: the fixture login passes the credential check", (port, fx) => port.checkCredentials(fx.session)),
  check("credentials: a refused login is ProviderLoginRequired", (port, fx) =>
    expectFailure(
      port.checkCredentials({
        ...fx.session,
        key: `${fx.session.key}:refused`,
        credentials: Redacted.make(fx.invalidCredentials)
      }),
      "ProviderLoginRequired",
      "refused login"
    )),
  check("sessions: a state the provider does not serve is UnsupportedState", (port, fx) =>
    Effect.gen(function*() {
      const other = stateCodes.find((s) => port.descriptor.capabilities[s] === undefined)
      if (other === undefined) return // it serves every state
      yield* expectFailure(port.capabilities(other), "UnsupportedState", "capabilities of an unserved state")
      yield* expectFailure(
        port.listFacilities({ ...fx.session, state: other }, Page.firstPage),
        "UnsupportedState",
        "facilities in an unserved state"
      )
    })),
  check("sessions: a session of another provider is InvalidInput", (port, fx) =>
    Effect.asVoid(
      expectFailure(
        port.listFacilities({ ...fx.session, provider: otherProvider(port.descriptor.name) }, Page.firstPage),
        "InvalidInput",
        "foreign session"
      )
    ))
]

// ------------------------------------------------------------------ facilities

const facilityChecks: ReadonlyArray<Check> = [
  check(
    "facilities: per_page 1 walks every facility once and holds the fixture facility",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const first = yield* port.listFacilities(fx.session, { page: 1, per_page: 1 })
        const total = first.pagination.total
        yield* assert(total >= 1, "the login reaches no facility")
        yield* assert(
          first.pagination.total_pages === total,
          `total_pages ${first.pagination.total_pages} at per_page 1`
        )
        const ids: Array<string> = []
        for (let n = 1; n <= total; n++) {
          const page = n === 1 ? first : yield* port.listFacilities(fx.session, { page: n, per_page: 1 })
          yield* assert(
            page.items.length === 1 && page.pagination.total === total,
            `facility page ${n} is inconsistent`
          )
          ids.push(...page.items.map(idOf))
        }
        yield* assert(new Set(ids).size === total, "facility ids repeat")
        yield* assert(ids.includes(fx.facilityId), `the fixture facility ${fx.facilityId} is not listed`)
        const past = yield* port.listFacilities(fx.session, { page: total + 1, per_page: 1 })
        yield* assert(past.items.length === 0 && past.pagination.total === total, "the page past the end is not empty")
        const max = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        yield* assert(
          deepEqual(max.items.slice(0, total).map(idOf), ids.slice(0, Page.MAX_PER_PAGE)),
          `per_page ${Page.MAX_PER_PAGE} lists other facilities, or another order, than per_page 1`
        )
      })
  ),
  check(
    "facilities: a get returns the listed object with exactly the spec's fields",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const page = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        for (const facility of page.items) {
          yield* exactFields(Facility, facility, assert)
          const got = yield* port.getFacility(fx.session, facility.id)
          yield* assert(deepEqual(got, facility), `getFacility differs at ${firstDifference(got, facility)}`)
        }
      })
  ),
  check("facilities: an unknown id is ResourceNotFound", (port, fx) =>
    Effect.gen(function*() {
      const missing = Ids.make("facility", port.descriptor.name, "tracebridge-contract-missing-0")
      yield* expectFailure(port.getFacility(fx.session, missing), "ResourceNotFound", "facility missing")
      yield* expectFailure(
        port.list("packages", fx.session, missing.replace(/^fac_/, "xyz_"), {}, Page.firstPage),
        "ResourceNotFound",
        "malformed facility"
      )
    }))
]

// ------------------------------------------------------------------ resources: capability, paging, reads

const claimedCheck = (name: Resource.Name, state: string) => {
  const definition: AnyResource = Resource.resources[name]
  return check(
    `${name}: claimed in ${state} (${definition.capability}), its list answers`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const page = yield* port.list(name, fx.session, facilityOf(fx, name), {}, Page.firstPage)
        yield* assert(page.pagination.page === 1, "the first page does not say it is page 1")
      })
  )
}

const pagingCheck = (name: Resource.Name) =>
  check(`${name}: lists paginate consistently`, (port, fx, assert) =>
    Effect.gen(function*() {
      const all = yield* port.listAll(name, fx.session, facilityOf(fx, name), {})
      yield* assert(all.length >= 2, `the fixture facility must hold at least 2 ${name} (it has ${all.length})`)
      yield* assert(new Set(all.map(idOf)).size === all.length, "ids repeat across the list")
      const perPage = Math.min(Page.MAX_PER_PAGE, Math.max(1, Math.ceil(Math.min(all.length, 300) / 3)))
      const first = yield* port.list(name, fx.session, facilityOf(fx, name), {}, { page: 1, per_page: perPage })
      const { total, total_pages } = first.pagination
      yield* assert(total === all.length, `page 1 says total ${total}, the whole list has ${all.length}`)
      yield* assert(total_pages === Math.ceil(total / perPage), `total_pages ${total_pages} for ${total} at ${perPage}`)
      const pages = [...new Set([1, 2, 3, total_pages].filter((p) => p >= 1 && p <= total_pages))]
      for (const n of pages) {
        const page = n === 1
          ? first
          : yield* port.list(name, fx.session, facilityOf(fx, name), {}, { page: n, per_page: perPage })
        const expected = all.slice((n - 1) * perPage, n * perPage).map(idOf)
        yield* assert(
          page.pagination.total === total,
          `page ${n} says total ${page.pagination.total}, page 1 said ${total}`
        )
        yield* assert(
          page.pagination.page === n && page.pagination.per_page === perPage,
          `page ${n} echoes the request`
        )
        yield* assert(
          deepEqual(page.items.map(idOf), expected),
          `page ${n} at per_page ${perPage} holds [${page.items.map(idOf)}], expected [${expected}]`
        )
      }
      const past = yield* port.list(name, fx.session, facilityOf(fx, name), {}, {
        page: total_pages + 1,
        per_page: perPage
      })
      yield* assert(past.items.length === 0, `the page past the end holds ${past.items.length} items`)
      yield* assert(past.pagination.total === total, `the page past the end says total ${past.pagination.total}`)
    }))

/** Walks every page at `perPage` and compares it with the whole list, then the page past the end. */
const walkCheck = (name: Resource.Name, perPage: number, title: string) =>
  check(`${name}: ${title}`, (port, fx, assert) =>
    Effect.gen(function*() {
      const facilityId = facilityOf(fx, name)
      const all = (yield* port.listAll(name, fx.session, facilityId, {})).map(idOf)
      const total = all.length
      const totalPages = Math.ceil(total / perPage)
      const seen: Array<string> = []
      for (let n = 1; n <= Math.max(1, totalPages); n++) {
        const page = yield* port.list(name, fx.session, facilityId, {}, { page: n, per_page: perPage })
        const { pagination } = page
        yield* assert(
          pagination.total === total && pagination.total_pages === totalPages,
          `page ${n} at per_page ${perPage} says total ${pagination.total} in ${pagination.total_pages} pages; ` +
            `the whole list has ${total} (${totalPages} pages)`
        )
        yield* assert(
          pagination.page === n && pagination.per_page === perPage,
          `page ${n} at per_page ${perPage} echoes page ${pagination.page}, per_page ${pagination.per_page}`
        )
        const expected = all.slice((n - 1) * perPage, n * perPage)
        const ids = page.items.map(idOf)
        yield* assert(
          deepEqual(ids, expected),
          `page ${n} at per_page ${perPage} holds ${listed(ids)}, expected ${listed(expected)}`
        )
        seen.push(...ids)
      }
      yield* assert(new Set(seen).size === seen.length, `the pages at per_page ${perPage} repeat an item`)
      yield* assert(seen.length === total, `the pages at per_page ${perPage} hold ${seen.length} of ${total} items`)
      const past = yield* port.list(name, fx.session, facilityId, {}, { page: totalPages + 1, per_page: perPage })
      yield* assert(
        past.items.length === 0 && past.pagination.total === total && past.pagination.total_pages === totalPages,
        `page ${totalPages + 1} (past the end) at per_page ${perPage} holds ${past.items.length} items, ` +
          `says total ${past.pagination.total} in ${past.pagination.total_pages} pages`
      )
    }))

const getCheck = (name: Resource.Name) =>
  check(`${name}: a get returns the same object as the list`, (port, fx, assert) =>
    Effect.gen(function*() {
      const page = yield* port.list(name, fx.session, facilityOf(fx, name), {}, {
        page: 1,
        per_page: Page.MAX_PER_PAGE
      })
      const picks = [page.items[0], page.items[page.items.length - 1]].filter((x) => x !== undefined)
      yield* assert(picks.length > 0, `the fixture facility holds no ${name}`)
      for (const item of picks) {
        const got = yield* port.get(name, fx.session, facilityOf(fx, name), idOf(item))
        yield* assert(deepEqual(got, item), `get(${idOf(item)}) differs from the list at ${firstDifference(got, item)}`)
      }
    }))

const fieldsCheck = (name: Resource.Name) =>
  check(`${name}: objects carry exactly the spec's fields`, (port, fx, assert) =>
    Effect.gen(function*() {
      const definition: AnyResource = Resource.resources[name]
      const page = yield* port.list(name, fx.session, facilityOf(fx, name), {}, {
        page: 1,
        per_page: Page.MAX_PER_PAGE
      })
      for (const item of page.items) {
        yield* exactFields(definition.schema, item, assert)
        yield* assert(
          Either.isRight(Schema.validateEither(definition.schema, { onExcessProperty: "error" })(item)),
          `${idOf(item)} does not validate against the core schema`
        )
      }
    }))

const notFoundCheck = (name: Resource.Name, descriptor: ProviderDescriptor) =>
  check(`${name}: an unknown id is ResourceNotFound`, (port, fx) =>
    Effect.gen(function*() {
      const definition: AnyResource = Resource.resources[name]
      const missing = Ids.make(definition.kind, descriptor.name, "tracebridge-contract-missing-0")
      yield* expectFailure(
        port.get(name, fx.session, facilityOf(fx, name), missing),
        "ResourceNotFound",
        `${name} missing`
      )
      yield* expectFailure(
        port.get(name, fx.session, facilityOf(fx, name), "not-an-id"),
        "ResourceNotFound",
        `${name} malformed`
      )
    }))

// ------------------------------------------------------------------ filters

/**
 * The filters of a resource's list, read from its query schema (`Query`), so a filter added there
 * gets a check here (which fails until the kit knows how to check it).
 *
 * @since 0.1.0
 * @category reflection
 */
export const filtersOf = (name: Resource.Name): ReadonlyArray<string> => {
  let ast: SchemaAST.AST = (Resource.resources[name] as AnyResource).query.ast
  while (ast._tag === "Refinement") ast = ast.from
  return ast._tag === "TypeLiteral" ? ast.propertySignatures.map((p) => String(p.name)) : []
}

interface FilterCase {
  readonly query: Readonly<Record<string, unknown>>
  readonly matches: (item: any) => boolean
}

interface FilterPlan {
  readonly cases: ReadonlyArray<FilterCase>
  /** Why the data cannot exercise the filter, when it cannot. */
  readonly thin?: string
}

interface FilterEnv {
  readonly port: Port
  readonly fixture: Fixture
  readonly resource: Resource.Name
  readonly facilityId: string
}

type FilterSpec = (all: ReadonlyArray<any>, env: FilterEnv) => Effect.Effect<FilterPlan, ProviderError>

const caseOf = (query: Readonly<Record<string, unknown>>, predicate: (q: any) => (item: any) => boolean) => ({
  query,
  matches: predicate(query)
})

/** Every value of a closed set. */
const oneOf =
  (field: string, values: ReadonlyArray<unknown>, predicate: (q: any) => (item: any) => boolean): FilterSpec => () =>
    Effect.succeed({ cases: values.map((value) => caseOf({ [field]: value }, predicate)) })

/** Up to `limit` values present in the data (the first, the last, evenly between), and values present nowhere. */
const sampled = (
  field: string,
  valueOf: (item: any) => string | null,
  nowhere: (env: FilterEnv) => ReadonlyArray<string>,
  predicate: (q: any) => (item: any) => boolean,
  limit: number
): FilterSpec =>
(all, env) => {
  const present = distinct(all.map(valueOf).filter(nonNull))
  const absent = nowhere(env).filter((v) => !present.includes(v))
  return Effect.succeed({
    cases: [...spread(present, limit), ...absent].map((value) => caseOf({ [field]: value }, predicate))
  })
}

/**
 * `updated_since` (at or after, DECISIONS "Paths"), from the fixture's `updatedAt`: at the second
 * newest change (so some objects fall before it), one millisecond later (the objects changed at
 * that instant drop out), and just after the newest change (nothing).
 */
const updatedSince: FilterSpec = (all, env) => {
  const oracle = env.fixture.updatedAt
  if (oracle === undefined) {
    return Effect.succeed({
      cases: [],
      thin: "the fixture gives no updatedAt, so the kit cannot tell which objects changed when"
    })
  }
  const times = new Map<string, number | null>()
  for (const item of all) {
    const at = oracle(env.resource, item)
    if (at === undefined) {
      return Effect.succeed({
        cases: [],
        thin: `the fixture's updatedAt does not say when ${env.resource} ${idOf(item)} changed`
      })
    }
    times.set(idOf(item), at === null ? null : typeof at === "number" ? at : toEpochMillis(at))
  }
  const known = distinct([...times.values()].filter(nonNull)).sort((a, b) => b - a)
  if (known.length === 0) {
    return Effect.succeed({ cases: [], thin: `no ${env.resource} of the fixture facility has a change marker` })
  }
  const since = (ms: number): FilterCase => ({
    query: { updated_since: iso(ms) },
    matches: (item) => {
      const t = times.get(idOf(item))
      return t !== undefined && t !== null && t >= ms
    }
  })
  const boundary = known[Math.min(1, known.length - 1)]!
  return Effect.succeed({ cases: [since(boundary), since(boundary + 1), since(known[0]! + 1)] })
}

/**
 * `from` or `to` (inclusive, DECISIONS "Paths") on a date-time field: at a date of the data, one
 * millisecond past it (the objects of that instant drop out), past every date (nothing), and for
 * `to` also `from` = `to` = one date (exactly the objects of that instant). Undated objects pass
 * no bound.
 */
const dateBound = (
  bound: "from" | "to",
  dateOf: (item: any) => string | null,
  predicate: (q: any) => (item: any) => boolean
): FilterSpec =>
(all, env) => {
  const dates = distinct(all.map(dateOf).filter(nonNull).map(toEpochMillis)).sort((a, b) => a - b)
  if (dates.length === 0) {
    return Effect.succeed({ cases: [], thin: `no ${env.resource} of the fixture facility is dated` })
  }
  const first = dates[0]!
  const last = dates[dates.length - 1]!
  const late = dates[Math.max(0, dates.length - 2)]!
  const early = dates[Math.min(1, dates.length - 1)]!
  return Effect.succeed({
    cases: bound === "from"
      ? [
        caseOf({ from: iso(late) }, predicate),
        caseOf({ from: iso(late + 1) }, predicate),
        caseOf({ from: iso(last + 1) }, predicate)
      ]
      : [
        caseOf({ to: iso(early) }, predicate),
        caseOf({ to: iso(early - 1) }, predicate),
        caseOf({ to: iso(first - 1) }, predicate),
        caseOf({ from: iso(late), to: iso(late) }, predicate)
      ]
  })
}

/**
 * `direction`, relative to the facility asked: outgoing when the transfer's `shipper_facility` names
 * it (by id, licence number or name, as the spec allows), incoming otherwise.
 */
const direction: FilterSpec = (_all, env) =>
  Effect.map(env.port.getFacility(env.fixture.session, env.facilityId), (facility) => {
    const names = new Set(
      [facility.id, facility.license_number, facility.name, facility.display_name, facility.alias].filter(nonNull)
    )
    return {
      cases: (["incoming", "outgoing"] as const).map((value) => ({
        query: { direction: value },
        matches: (t: { readonly shipper_facility: string }) => names.has(t.shipper_facility) === (value === "outgoing")
      }))
    }
  })

const missingPackage = (env: FilterEnv) => [
  Ids.make("package", env.port.descriptor.name, "tracebridge-contract-missing-0"),
  "not-an-id"
]

/** How the kit checks each filter of each list (the semantics are `Query`'s predicates). */
const filterSpecs: { readonly [R in Resource.Name]: Readonly<Record<string, FilterSpec>> } = {
  packages: {
    updated_since: updatedSince,
    is_on_hold: oneOf("is_on_hold", [true, false], Query.matchesPackage),
    lab_testing_state: sampled(
      "lab_testing_state",
      (p) => p.lab_testing_state,
      () => ["TracebridgeContractNoSuchState"],
      Query.matchesPackage,
      6
    ),
    tag: sampled("tag", (p) => p.tag, () => ["TRACEBRIDGE-CONTRACT-NO-SUCH-TAG"], Query.matchesPackage, 3)
  },
  plants: {
    updated_since: updatedSince,
    growth_phase: oneOf("growth_phase", GrowthPhase.literals, Query.matchesPlant)
  },
  harvests: { updated_since: updatedSince },
  lab_results: {
    updated_since: updatedSince,
    package_id: sampled("package_id", (r) => r.package_id, missingPackage, Query.matchesLabResult, 3)
  },
  transfers: {
    updated_since: updatedSince,
    status: oneOf("status", TransferStatus.literals, Query.matchesTransfer),
    direction
  },
  sales: {
    updated_since: updatedSince,
    from: dateBound("from", (s) => s.sale_date, Query.matchesSale),
    to: dateBound("to", (s) => s.sale_date, Query.matchesSale)
  },
  sales_deliveries: {
    updated_since: updatedSince,
    from: dateBound("from", (d) => d.delivery_date, Query.matchesSalesDelivery),
    to: dateBound("to", (d) => d.delivery_date, Query.matchesSalesDelivery)
  },
  items: { updated_since: updatedSince },
  strains: { updated_since: updatedSince },
  locations: { updated_since: updatedSince },
  patients: { updated_since: updatedSince }
}

const filterCheck = (name: Resource.Name, filter: string) =>
  check(
    `${name}: the ${filter} filter returns exactly the matching items`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const key: FilterKey = `${name}.${filter}`
        const spec = filterSpecs[name][filter]
        yield* assert(spec !== undefined, `the kit does not know how to check the ${filter} filter of ${name}`)
        const facilityId = facilityOf(fx, name)
        const all = yield* port.listAll(name, fx.session, facilityId, {})
        yield* assert(all.length > 0, `the fixture facility holds no ${name}`)
        const byId = new Map(all.map((item) => [idOf(item), item]))
        const plan = yield* spec!(all, { port, fixture: fx, resource: name, facilityId })
        for (const { matches, query } of plan.cases) {
          const shown = JSON.stringify(query)
          const expected = all.filter(matches).map(idOf)
          const got = yield* port.listAll(name, fx.session, facilityId, query as never)
          const ids = got.map(idOf)
          yield* assert(new Set(ids).size === ids.length, `${shown} repeats items`)
          const missing = expected.filter((id) => !ids.includes(id))
          const extra = ids.filter((id) => !expected.includes(id))
          yield* assert(
            missing.length === 0 && extra.length === 0,
            `${shown} returned ${ids.length} of the ${all.length} unfiltered items, expected ${expected.length}: ` +
              `missing ${listed(missing)}, not matching ${listed(extra)}`
          )
          for (const item of got) {
            const unfiltered = byId.get(idOf(item))
            yield* assert(
              deepEqual(item, unfiltered),
              `${shown} returns ${idOf(item)} unlike the unfiltered list, at ${firstDifference(item, unfiltered)}`
            )
          }
          const page = yield* port.list(name, fx.session, facilityId, query as never, {
            page: 1,
            per_page: Page.MAX_PER_PAGE
          })
          const pageIds = page.items.map(idOf)
          yield* assert(
            page.pagination.total === expected.length &&
              page.pagination.total_pages === Math.ceil(expected.length / Page.MAX_PER_PAGE),
            `${shown}: page 1 says total ${page.pagination.total} in ${page.pagination.total_pages} pages, ` +
              `expected ${expected.length}`
          )
          yield* assert(
            pageIds.length === Math.min(expected.length, Page.MAX_PER_PAGE) &&
              pageIds.every((id) => expected.includes(id)),
            `${shown}: page 1 holds ${listed(pageIds)}, not the first matching items`
          )
        }
        const discriminating = plan.cases.some((c) => {
          const n = all.filter(c.matches).length
          return n > 0 && n < all.length
        })
        const thin = plan.thin ??
          (discriminating
            ? undefined
            : `no tried value of ${filter} keeps some ${name} and drops others, so it cannot be told from no filter`)
        const declared = fx.notApplicable?.filters?.[key]
        yield* assert(
          thin === undefined || (declared !== undefined && declared.trim().length > 0),
          `${thin}: give the fixture data that tells the values apart, or declare notApplicable.filters["${key}"] ` +
            "with a reason"
        )
        yield* assert(
          thin !== undefined || declared === undefined,
          `notApplicable.filters["${key}"] says "${declared}", but the data exercises the filter: remove it`
        )
      })
  )

const sampleFilterValue = (filter: string, provider: ProviderName): unknown =>
  ({
    updated_since: "2026-01-01T00:00:00Z",
    from: "2026-01-01T00:00:00Z",
    to: "2026-12-31T23:59:59Z",
    is_on_hold: true,
    lab_testing_state: "TestPassed",
    tag: "TRACEBRIDGE-CONTRACT-TAG",
    growth_phase: "vegetative",
    status: "pending",
    direction: "incoming",
    package_id: Ids.make("package", provider, "tracebridge-contract-missing-0")
  } as Record<string, unknown>)[filter]

const disabledCheck = (name: Resource.Name, state: string) => {
  const definition: AnyResource = Resource.resources[name]
  return check(
    `${name}: not claimed in ${state}, its list, each filter and a get answer CapabilityNotEnabled`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facilityId = facilityOf(fx, name)
        const refused = (error: ProviderError, what: string) => {
          const e = error as { readonly capability?: unknown; readonly state?: unknown }
          return assert(
            e.capability === definition.capability && e.state === state,
            `${what}: CapabilityNotEnabled names capability ${String(e.capability)} in ${
              String(e.state)
            }, expected ${definition.capability} in ${state}`
          )
        }
        const list = yield* expectFailure(
          port.list(name, fx.session, facilityId, {}, Page.firstPage),
          "CapabilityNotEnabled",
          `${name} disabled`
        )
        yield* refused(list, "the list")
        for (const filter of filtersOf(name)) {
          const value = sampleFilterValue(filter, port.descriptor.name)
          yield* assert(value !== undefined, `the kit has no sample value for the ${filter} filter`)
          const error = yield* expectFailure(
            port.list(name, fx.session, facilityId, { [filter]: value } as never, Page.firstPage),
            "CapabilityNotEnabled",
            `${name} disabled, filtered by ${filter}`
          )
          yield* refused(error, `the ${filter} filter`)
        }
        const missing = Ids.make(definition.kind, port.descriptor.name, "tracebridge-contract-missing-0")
        const get = yield* expectFailure(
          port.get(name, fx.session, facilityId, missing),
          "CapabilityNotEnabled",
          `${name} get disabled`
        )
        yield* refused(get, "a get")
      })
  )
}

// ------------------------------------------------------------------ failures

const runCase = (port: Port, fx: Fixture, failure: FailureCase, assert: Assert) =>
  Effect.gen(function*() {
    yield* failure.arrange
    const call = failure.call?.(port, fx) ?? port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
    const error = yield* expectFailure(call, failure.expected, failure.name)
    const foreign = foreignProvider(error, port.descriptor.name)
    yield* assert(
      foreign === undefined,
      `${failure.name}: the ${error._tag} names provider ${foreign}, not ${port.descriptor.name}`
    )
  })

const declaredReason = (fx: Fixture, kind: ProviderError["_tag"]): string | undefined => {
  const reason = fx.notApplicable?.failures?.[kind]
  return reason !== undefined && reason.trim().length > 0 ? reason : undefined
}

const failureCoverageCheck = check(
  "failures: the fixture arranges every provider-side error kind, or says why not",
  (_port, fx, assert) =>
    Effect.gen(function*() {
      const arranged = new Set(fx.failures.map((f) => f.expected))
      const missing = providerSideKinds.filter((k) => !arranged.has(k) && declaredReason(fx, k) === undefined)
      const stale = providerSideKinds.filter((k) => arranged.has(k) && fx.notApplicable?.failures?.[k] !== undefined)
      const unknown = Object.keys(fx.notApplicable?.failures ?? {}).filter(
        (k) => !providerSideKinds.includes(k as ProviderError["_tag"])
      )
      yield* assert(
        missing.length === 0,
        `not arranged: ${missing.join(", ")}. Add a FailureCase for each, or declare notApplicable.failures.<kind> ` +
          "with the reason the fixture cannot cause it"
      )
      yield* assert(stale.length === 0, `declared not applicable but arranged: ${stale.join(", ")}`)
      yield* assert(
        unknown.length === 0,
        `notApplicable.failures names kinds the kit provokes itself: ${unknown.join(", ")}`
      )
    })
)

const failureKindCheck = (kind: ProviderError["_tag"]) =>
  check(
    `failures: ${kind} arranged by the fixture maps into the error family`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const cases = fx.failures.filter((f) => f.expected === kind)
        yield* assert(
          cases.length > 0 || declaredReason(fx, kind) !== undefined,
          `the fixture arranges no failure that must become ${kind}: add a FailureCase, or declare ` +
            `notApplicable.failures.${kind} with a reason`
        )
        for (const failure of cases) yield* runCase(port, fx, failure, assert)
      })
  )

const otherFailuresCheck = check(
  "failures: the fixture's other cases map as expected",
  (port, fx, assert) =>
    Effect.forEach(
      fx.failures.filter((f) => !providerSideKinds.includes(f.expected)),
      (failure) => runCase(port, fx, failure, assert),
      { discard: true }
    )
)

// ------------------------------------------------------------------ writes

/** The ids of the facility's packages on a transfer that has not arrived (none without a transfers list). */
const onTheirWay = (port: Port, fx: Fixture, facilityId: string) =>
  Effect.forEach(
    ["pending", "in_transit"] as const,
    (status) => port.listAll("transfers", fx.session, facilityId, { status }),
    { concurrency: 1 }
  ).pipe(
    Effect.map((lists) => new Set(lists.flat().flatMap((t) => t.packages.map((p) => p.package_id)))),
    Effect.catchAll(() => Effect.succeed(new Set<string>()))
  )

/** Packages of the facility free to use: off hold, and on no transfer that has not arrived. */
const freePackages = (port: Port, fx: Fixture, facilityId: string) =>
  Effect.zipWith(
    port.listAll("packages", fx.session, facilityId, { is_on_hold: false }),
    onTheirWay(port, fx, facilityId),
    (all, away) => all.filter((p) => !away.has(p.id))
  )

const pickPackage = (port: Port, fx: Fixture, facilityId = fx.facilityId) =>
  Effect.map(freePackages(port, fx, facilityId), (all) => all.find((p) => p.quantity >= 2))

/** Packages of the facility that can be shipped (off hold, holding something, not on their way), at most `count`. */
const shippablePackages = (port: Port, fx: Fixture, count: number) =>
  Effect.map(freePackages(port, fx, fx.facilityId), (all) => all.filter((p) => p.quantity > 0).slice(0, count))

/** A transfer of `pkg` (by default all of it) between the parties given. */
const transferOf = (
  shipper: string,
  recipient: string,
  pkg: Package,
  quantity: number = pkg.quantity
): Commands.CreateTransfer => ({
  transfer_type: "Transfer",
  shipper_facility: shipper,
  recipient_facility: recipient,
  packages: [{
    package_id: pkg.id,
    tag: pkg.tag,
    item_name: pkg.item_name,
    quantity,
    unit_of_measure: pkg.unit_of_measure
  }],
  estimated_departure: null,
  estimated_arrival: null,
  transporter: null,
  driver_name: null,
  vehicle_info: null
})

/** Whether a transfer's party field names the facility (by licence number, name or id). */
const namesFacility = (value: string, facility: Facility) =>
  value === facility.license_number || value === facility.name || value === facility.id

/** Where the fixture facility may ship: the session's other facilities, then the fixture's licensees. */
const recipientsOf = (port: Port, fx: Fixture, facility: Facility) =>
  Effect.map(
    port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE }),
    (page) => [
      ...page.items.filter((f) => f.id !== facility.id).map((f) => f.license_number),
      ...(fx.licensees ?? [])
    ]
  )

const transferCount = (port: Port, fx: Fixture) =>
  Effect.map(port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage), (p) => p.pagination.total)

/** The facility a write is made at. */
const writeFacilityOf = (fx: Fixture, write: WriteName): string => fx.writeFacilityFor?.[write] ?? fx.facilityId

/**
 * A write the descriptor says needs a facility capability is refused, before anything is written,
 * at a facility of the session without it; and works at one with it (the write's own check).
 * `record_lab_result` is the exception: {@link labResultByLabCheck}.
 */
const writeNeedsCheck = (write: WriteName, needs: CapabilityTag) =>
  check(
    `writes: ${write} needs a facility with the ${needs} capability, and is refused elsewhere`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facilities = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        const without = facilities.items.find((f) => !f.capabilities.includes(needs))
        yield* assert(without !== undefined, `every facility of the fixture session has ${needs}: add one without`)
        const at = facilities.items.find((f) => f.id === writeFacilityOf(fx, write))
        yield* assert(
          at !== undefined && at.capabilities.includes(needs),
          `writeFacilityFor.${write} must be a facility with ${needs}`
        )
        const target = yield* pickPackage(port, fx, without!.id)
        const outcome = yield* Effect.either<unknown, ProviderError, never>(
          write === "record_lab_result"
            ? port.recordLabResult(fx.session, without!.id, {
              package_id: target?.id ?? Ids.make("package", port.descriptor.name, "1"),
              lab_name: "Contract Kit Labs",
              overall_passed: true,
              results: [{ name: "THC", category: "potency", value: 20, unit: "%", passed: true, notes: null }],
              lab_license: null,
              test_type: "ComplianceTesting",
              test_date: null
            })
            : write === "split_package"
            ? port.splitPackage(fx.session, without!.id, {
              item_name: target?.item_name ?? "x",
              item_category: target?.item_category ?? "x",
              item_strain: null,
              quantity: 1,
              unit_of_measure: target?.unit_of_measure ?? "Grams",
              source_package_ids: target === undefined ? [] : [target.id]
            })
            : port.createTransfer(fx.session, without!.id, {
              transfer_type: "Transfer",
              shipper_facility: without!.license_number,
              recipient_facility: at!.license_number,
              packages: target === undefined ? [] : [{
                package_id: target.id,
                tag: target.tag,
                item_name: target.item_name,
                quantity: 1,
                unit_of_measure: target.unit_of_measure
              }],
              estimated_departure: null,
              estimated_arrival: null,
              transporter: null,
              driver_name: null,
              vehicle_info: null
            })
        )
        yield* assert(
          Either.isLeft(outcome) && outcome.left._tag === "CapabilityNotEnabled",
          `${write} at ${without!.name} answered ${
            Either.isLeft(outcome) ? outcome.left._tag : "a success"
          }, expected CapabilityNotEnabled`
        )
      })
  )

/**
 * A sandbox lab result at a facility without the capability lab results need (`writeNeeds`) is
 * recorded by the sandbox world's lab on a sample of the package, and shows on the package
 * (DECISIONS "Sandbox writes"; ADR 0020): the result is on the package asked for, at that
 * facility, kept as sent, listed once by the facility and by the package, and the package's
 * `lab_results` and `lab_testing_state` show it.
 */
const labResultByLabCheck = (needs: CapabilityTag) =>
  check(
    `writes: record_lab_result at a facility without ${needs} is recorded by the sandbox world's lab`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facilities = (yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })).items
        const main = facilities.find((f) => f.id === fx.facilityId)
        const without = main !== undefined && !main.capabilities.includes(needs)
          ? main
          : facilities.find((f) => !f.capabilities.includes(needs))
        yield* assert(without !== undefined, `every facility of the fixture session has ${needs}: add one without`)
        yield* assert(
          facilities.some((f) => f.capabilities.includes(needs)),
          `the fixture session has no facility with ${needs}: the sandbox world needs its lab`
        )
        const at = without!.id
        const target = yield* pickPackage(port, fx, at)
        yield* assert(target !== undefined, `${without!.name} holds no package to test`)
        const before = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
        const created = yield* port.recordLabResult(fx.session, at, {
          package_id: target!.id,
          lab_name: "Contract Kit Labs",
          overall_passed: false,
          results: [
            { name: "THC", category: "potency", value: 19.5, unit: "%", passed: true, notes: null },
            { name: "Pesticides", category: "pesticides", value: null, unit: null, passed: false, notes: null }
          ],
          lab_license: null,
          test_type: "ComplianceTesting",
          test_date: null
        })
        yield* assert(created.package_id === target!.id, "the result is not on the package asked for (not the sample)")
        yield* assert(created.facility_id === at, "the result is not on the facility asked at")
        yield* assert(created.overall_passed === false, "overall_passed was not kept")
        yield* assert(
          created.results.map((r) => `${r.name}:${r.passed}`).join() === "THC:true,Pesticides:false",
          "the tests were not kept as sent"
        )
        const after = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
        yield* assert(after.length === before.length + 1, "the package's lab result list did not grow by one")
        const listed = after.filter((r) => r.id === created.id)
        yield* assert(
          listed.length === 1 && deepEqual(listed[0], created),
          "the created result is not listed once as it was answered"
        )
        const all = yield* port.listAll("lab_results", fx.session, at, {})
        yield* assert(
          all.filter((r) => r.id === created.id).length === 1,
          "the facility's list has the result not once"
        )
        const pkg = yield* port.get("packages", fx.session, at, target!.id)
        yield* assert(
          pkg.lab_results.filter((r) => r.id === created.id).length === 1,
          "the package's lab_results do not show the result once"
        )
        yield* assert(pkg.lab_testing_state === "TestFailed", `lab_testing_state is ${pkg.lab_testing_state}`)
      })
  )

const invalidWrites = (port: Port, fx: Fixture): Record<WriteName, Effect.Effect<unknown, ProviderError>> => ({
  split_package: port.splitPackage(fx.session, fx.facilityId, {
    item_name: "x",
    item_category: "x",
    item_strain: null,
    quantity: -1,
    unit_of_measure: "Grams",
    source_package_ids: []
  }),
  record_lab_result: port.recordLabResult(fx.session, fx.facilityId, {
    package_id: Ids.make("package", port.descriptor.name, "1"),
    lab_name: "x",
    overall_passed: true,
    results: [],
    lab_license: null,
    test_type: "ComplianceTesting",
    test_date: null
  }),
  create_transfer: port.createTransfer(fx.session, fx.facilityId, {
    transfer_type: "Transfer",
    shipper_facility: "x",
    recipient_facility: "y",
    packages: [],
    estimated_departure: null,
    estimated_arrival: null,
    transporter: null,
    driver_name: null,
    vehicle_info: null
  })
})

const invalidWriteCheck = (name: WriteName) =>
  check(
    `writes: ${name} with an invalid command is InvalidInput and changes nothing`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const counts = () =>
          Effect.all([
            port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage),
            port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage),
            port.list("lab_results", fx.session, fx.facilityId, {}, Page.firstPage)
          ]).pipe(
            Effect.map((pages) => pages.map((p) => p.pagination.total)),
            Effect.catchTag("CapabilityNotEnabled", () => Effect.succeed<ReadonlyArray<number>>([]))
          )
        const before = yield* counts()
        yield* expectFailure(invalidWrites(port, fx)[name], "InvalidInput", `${name} invalid`)
        const after = yield* counts()
        yield* assert(deepEqual(before, after), `a refused ${name} changed the lists: [${before}] → [${after}]`)
      })
  )

const writeChecks: Record<WriteName, ReadonlyArray<Check>> = {
  split_package: [
    check(
      "writes: split_package creates a package that later reads return",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const source = yield* pickPackage(port, fx)
          yield* assert(source !== undefined, "the fixture facility holds no package of quantity 2 or more off hold")
          const before = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          const amount = Math.floor(source!.quantity) / 2
          const command: Commands.SplitPackage = {
            item_name: source!.item_name,
            item_category: source!.item_category,
            item_strain: source!.item_strain,
            quantity: amount,
            unit_of_measure: source!.unit_of_measure,
            source_package_ids: [source!.id]
          }
          const created = yield* port.splitPackage(fx.session, fx.facilityId, command)
          const got = yield* port.get("packages", fx.session, fx.facilityId, created.id)
          yield* assert(
            deepEqual(got, created),
            `the created package reads back differently at ${firstDifference(got, created)}`
          )
          yield* assert(created.source_package_ids.includes(source!.id), "the new package does not name its source")
          yield* assert(
            Math.abs(created.quantity - amount) < 1e-6,
            `the new package holds ${created.quantity}, asked ${amount}`
          )
          const after = yield* port.get("packages", fx.session, fx.facilityId, source!.id)
          yield* assert(
            Math.abs(after.quantity - (source!.quantity - amount)) < 1e-6,
            `the source went from ${source!.quantity} to ${after.quantity} after taking ${amount}`
          )
          const list = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          yield* assert(list.pagination.total === before.pagination.total + 1, "the package list did not grow by one")
        })
    ),
    check(
      "writes: split_package beyond the source is InsufficientQuantity and changes nothing",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const source = yield* pickPackage(port, fx)
          yield* assert(source !== undefined, "the fixture facility holds no package of quantity 2 or more off hold")
          const before = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          yield* expectFailure(
            port.splitPackage(fx.session, fx.facilityId, {
              item_name: source!.item_name,
              item_category: source!.item_category,
              item_strain: source!.item_strain,
              quantity: source!.quantity + 1000,
              unit_of_measure: source!.unit_of_measure,
              source_package_ids: [source!.id]
            }),
            "InsufficientQuantity",
            "oversized split"
          )
          const after = yield* port.get("packages", fx.session, fx.facilityId, source!.id)
          yield* assert(after.quantity === source!.quantity, "the source quantity changed after a refused split")
          const list = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          yield* assert(list.pagination.total === before.pagination.total, "a refused split changed the package count")
        })
    )
  ],
  record_lab_result: [
    check(
      "writes: record_lab_result creates a result that later reads return",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const at = writeFacilityOf(fx, "record_lab_result")
          const target = yield* pickPackage(port, fx, at)
          yield* assert(target !== undefined, "the lab result's facility holds no package to test")
          const before = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
          const created = yield* port.recordLabResult(fx.session, at, {
            package_id: target!.id,
            lab_name: "Contract Kit Labs",
            overall_passed: false,
            results: [
              { name: "THC", category: "potency", value: 21.5, unit: "%", passed: true, notes: null },
              {
                name: "Pesticides",
                category: "pesticides",
                value: null,
                unit: null,
                passed: false,
                notes: "Myclobutanil"
              }
            ],
            lab_license: null,
            test_type: "ComplianceTesting",
            test_date: null
          })
          yield* assert(created.package_id === target!.id, "the result is not on the package asked for")
          yield* assert(created.overall_passed === false, "overall_passed was not kept")
          const after = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
          yield* assert(after.length === before.length + 1, "the lab result list did not grow by one")
          const listed = after.find((r) => r.id === created.id)
          yield* assert(listed !== undefined && deepEqual(listed, created), "the created result reads back differently")
        })
    )
  ],
  create_transfer: [
    check(
      "writes: create_transfer creates a pending transfer that later reads return",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const pkg: Package | undefined = yield* pickPackage(port, fx)
          yield* assert(pkg !== undefined, "the fixture facility holds no package to ship")
          const facility = yield* port.getFacility(fx.session, fx.facilityId)
          const recipients = yield* recipientsOf(port, fx, facility)
          yield* assert(recipients.length > 0, "the session has one facility and the fixture names no licensees")
          const before = yield* port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage)
          const created = yield* port.createTransfer(fx.session, fx.facilityId, {
            transfer_type: "Transfer",
            shipper_facility: facility.license_number,
            recipient_facility: recipients[0]!,
            packages: [{
              package_id: pkg!.id,
              tag: pkg!.tag,
              item_name: pkg!.item_name,
              quantity: pkg!.quantity,
              unit_of_measure: pkg!.unit_of_measure
            }],
            estimated_departure: null,
            estimated_arrival: null,
            transporter: null,
            driver_name: null,
            vehicle_info: null
          })
          yield* assert(created.status === "pending", `a new transfer is ${created.status}, expected pending`)
          const got = yield* port.get("transfers", fx.session, fx.facilityId, created.id)
          yield* assert(
            deepEqual(got, created),
            `the created transfer reads back differently at ${firstDifference(got, created)}`
          )
          const list = yield* port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage)
          yield* assert(list.pagination.total === before.pagination.total + 1, "the transfer list did not grow by one")
        })
    ),
    check(
      "writes: create_transfer takes its parties by fac_ id, licence number or exact name",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const facility = yield* port.getFacility(fx.session, fx.facilityId)
          const facilities = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
          const other = facilities.items.find((f) => f.id !== facility.id)
          const shipped = yield* shippablePackages(port, fx, 2)
          yield* assert(shipped.length === 2, "the fixture facility holds fewer than two packages to ship")
          const before = yield* transferCount(port, fx)
          // with no other facility in the session, the recipient is another licensee's licence number
          const licensee = fx.licensees?.[0] ?? ""
          yield* assert(other !== undefined || licensee !== "", "the session has one facility and no licensees")
          const created = [
            yield* port.createTransfer(
              fx.session,
              fx.facilityId,
              transferOf(facility.id, other?.name ?? licensee, shipped[0]!)
            ),
            yield* port.createTransfer(
              fx.session,
              fx.facilityId,
              transferOf(facility.name, other?.id ?? licensee, shipped[1]!)
            )
          ]
          for (const transfer of created) {
            yield* assert(
              namesFacility(transfer.shipper_facility, facility),
              `the transfer's shipper_facility is ${transfer.shipper_facility}, not ${facility.license_number}`
            )
            yield* assert(
              other === undefined
                ? transfer.recipient_facility === licensee
                : namesFacility(transfer.recipient_facility, other),
              `the transfer's recipient_facility is ${transfer.recipient_facility}, not ${
                other?.license_number ?? licensee
              }`
            )
          }
          yield* assert((yield* transferCount(port, fx)) === before + 2, "the transfer list did not grow by two")
        })
    ),
    check(
      "writes: create_transfer refuses an unknown, foreign or wrong party with InvalidInput naming the field",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const provider = port.descriptor.name
          const facility = yield* port.getFacility(fx.session, fx.facilityId)
          const facilities = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
          const other = facilities.items.find((f) => f.id !== facility.id)
          const pkg = yield* pickPackage(port, fx)
          yield* assert(pkg !== undefined, "the fixture facility holds no package to ship")
          const unknownId = Ids.make("facility", provider, "tracebridge-contract-missing-0")
          const foreignId = Ids.make("facility", otherProvider(provider), facility.license_number)
          const noName = "Tracebridge Contract Kit No Such Facility"
          const cases: ReadonlyArray<readonly [string, string, "shipper_facility" | "recipient_facility"]> = [
            [unknownId, facility.license_number, "shipper_facility"],
            [foreignId, facility.license_number, "shipper_facility"],
            [noName, facility.license_number, "shipper_facility"],
            [facility.id, unknownId, "recipient_facility"],
            [facility.id, "fac_%%%", "recipient_facility"],
            [facility.id, noName, "recipient_facility"],
            ...(other === undefined ? [] : [
              [other.id, facility.license_number, "shipper_facility"] as const,
              [other.license_number, facility.license_number, "shipper_facility"] as const
            ]),
            // a fixture that declares the licensees the system knows: any other licence is unknown
            ...(fx.licensees === undefined ? [] : [
              [facility.id, "TRACEBRIDGE-CONTRACT-UNKNOWN-1", "recipient_facility"] as const
            ])
          ]
          const before = yield* transferCount(port, fx)
          for (const [shipper, recipient, field] of cases) {
            const error = yield* expectFailure(
              port.createTransfer(fx.session, fx.facilityId, transferOf(shipper, recipient, pkg!)),
              "InvalidInput",
              `a transfer from ${shipper} to ${recipient}`
            )
            const path = (error as { readonly path?: unknown }).path
            yield* assert(
              path === field,
              `a transfer from ${shipper} to ${recipient} was refused at ${String(path)}, expected ${field}`
            )
          }
          yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
        })
    ),
    check(
      "writes: create_transfer refuses the shipper as its recipient, an arrival before its departure, and a package " +
        "already on its way, changing nothing",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const facility = yield* port.getFacility(fx.session, fx.facilityId)
          const recipients = yield* recipientsOf(port, fx, facility)
          yield* assert(recipients.length > 1, "the fixture facility has fewer than two places to ship to")
          const recipient = recipients[0]!
          const shipped = yield* shippablePackages(port, fx, 1)
          yield* assert(shipped.length === 1, "the fixture facility holds no package to ship")
          const pkg = shipped[0]!
          const before = yield* transferCount(port, fx)
          const self = yield* expectFailure(
            port.createTransfer(fx.session, fx.facilityId, transferOf(facility.id, facility.license_number, pkg)),
            "InvalidInput",
            "the shipper as its own recipient"
          )
          yield* assert(
            (self as { readonly path?: unknown }).path === "recipient_facility",
            `the shipper as recipient was refused at ${
              (self as { readonly path?: unknown }).path
            }, not recipient_facility`
          )
          const backwards = yield* expectFailure(
            port.createTransfer(fx.session, fx.facilityId, {
              ...transferOf(facility.license_number, recipient, pkg),
              estimated_departure: "2026-06-02T10:00:00.000Z",
              estimated_arrival: "2026-06-01T10:00:00.000Z"
            }),
            "InvalidInput",
            "an arrival before its departure"
          )
          yield* assert(
            (backwards as { readonly path?: unknown }).path === "estimated_arrival",
            `an arrival before its departure was refused at ${
              (backwards as { readonly path?: unknown }).path
            }, not estimated_arrival`
          )
          yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
          // the package goes on one transfer; the same transfer again is answered with the first (a
          // retry) or refused, never made twice; another transfer of it is refused while the first
          // is on its way
          const first = yield* port.createTransfer(
            fx.session,
            fx.facilityId,
            transferOf(facility.license_number, recipient, pkg)
          )
          const retried = yield* Effect.either(
            port.createTransfer(fx.session, fx.facilityId, transferOf(facility.license_number, recipient, pkg))
          )
          yield* assert(
            Either.isLeft(retried) || retried.right.id === first.id,
            `the same transfer again made another: ${Either.isRight(retried) ? retried.right.id : ""} after ${first.id}`
          )
          const again = yield* expectFailure(
            port.createTransfer(
              fx.session,
              fx.facilityId,
              transferOf(facility.license_number, recipients[1]!, pkg)
            ),
            "PackageInTransfer",
            "a package already on a pending transfer"
          )
          yield* assert(
            (again as { readonly path?: unknown }).path === "packages.0.package_id",
            `the refusal names no line: ${again.message}`
          )
          yield* assert(
            (yield* transferCount(port, fx)) === before + 1,
            "the refused second transfer changed the transfer list"
          )
        })
    ),
    check(
      "writes: create_transfer honours a line's quantity or refuses part of a package, and refuses more than it holds",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const facility = yield* port.getFacility(fx.session, fx.facilityId)
          const [recipient] = yield* recipientsOf(port, fx, facility)
          yield* assert(recipient !== undefined, "the session has one facility and the fixture names no licensees")
          const pkg = yield* pickPackage(port, fx)
          yield* assert(pkg !== undefined, "the fixture facility holds no package of quantity 2 or more off hold")
          const before = yield* transferCount(port, fx)
          yield* expectFailure(
            port.createTransfer(
              fx.session,
              fx.facilityId,
              transferOf(facility.license_number, recipient!, pkg!, Math.ceil(pkg!.quantity) + 1000)
            ),
            "InsufficientQuantity",
            "a transfer line above what its package holds"
          )
          yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
          // part of the package: shipped as asked, or refused naming the line's quantity (a state
          // system that ships whole packages only); never recorded as the whole package
          const part = yield* Effect.either(
            port.createTransfer(
              fx.session,
              fx.facilityId,
              transferOf(facility.license_number, recipient!, pkg!, 1)
            )
          )
          if (Either.isLeft(part)) {
            const path = (part.left as { readonly path?: unknown }).path
            yield* assert(
              part.left._tag === "InvalidInput" && path === "packages.0.quantity",
              `a line of 1 of ${pkg!.quantity} ${pkg!.unit_of_measure} was refused with ${part.left._tag} at ${
                String(path)
              }: ${part.left.message}; expected it shipped, or InvalidInput at packages.0.quantity`
            )
            yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
          } else {
            const line = part.right.packages.find((l) => l.package_id === pkg!.id)
            yield* assert(
              line !== undefined && Math.abs(line.quantity - 1) < 1e-6 &&
                line.unit_of_measure === pkg!.unit_of_measure,
              `a line of 1 ${pkg!.unit_of_measure} of a package of ${pkg!.quantity} was recorded as ${
                line === undefined ? "nothing" : `${line.quantity} ${line.unit_of_measure}`
              }`
            )
            const got = yield* port.get("transfers", fx.session, fx.facilityId, part.right.id)
            yield* assert(
              deepEqual(got, part.right),
              `the created transfer reads back differently at ${firstDifference(got, part.right)}`
            )
          }
        })
    )
  ]
}

const productionRefusal = check(
  "writes: refused outside the sandbox with SandboxOnly",
  (port, fx) =>
    Effect.gen(function*() {
      const production: Session = { ...fx.session, environment: "production" }
      const pkg = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
      const id = pkg.items[0]?.id ?? Ids.make("package", port.descriptor.name, "1")
      yield* expectFailure(
        port.splitPackage(production, fx.facilityId, {
          item_name: "x",
          item_category: "x",
          item_strain: null,
          quantity: 1,
          unit_of_measure: "Grams",
          source_package_ids: [id]
        }),
        "SandboxOnly",
        "production write"
      )
    })
)

const undeclaredWrite = (name: WriteName) =>
  check(`writes: ${name} is not declared, answers CapabilityNotEnabled`, (port, fx) => {
    const calls: Record<WriteName, Effect.Effect<unknown, ProviderError>> = {
      split_package: port.splitPackage(fx.session, fx.facilityId, {
        item_name: "x",
        item_category: "x",
        item_strain: null,
        quantity: 1,
        unit_of_measure: "Grams",
        source_package_ids: [Ids.make("package", port.descriptor.name, "1")]
      }),
      record_lab_result: port.recordLabResult(fx.session, fx.facilityId, {
        package_id: Ids.make("package", port.descriptor.name, "1"),
        lab_name: "x",
        overall_passed: true,
        results: [{ name: "THC", category: "potency", value: 1, unit: "%", passed: true, notes: null }],
        lab_license: null,
        test_type: "ComplianceTesting",
        test_date: null
      }),
      create_transfer: port.createTransfer(fx.session, fx.facilityId, {
        transfer_type: "Transfer",
        shipper_facility: "x",
        recipient_facility: "y",
        packages: [{
          package_id: Ids.make("package", port.descriptor.name, "1"),
          tag: "x",
          item_name: "x",
          quantity: 1,
          unit_of_measure: "Grams"
        }],
        estimated_departure: null,
        estimated_arrival: null,
        transporter: null,
        driver_name: null,
        vehicle_info: null
      })
    }
    return expectFailure(calls[name], "CapabilityNotEnabled", `${name} undeclared`)
  })

// ------------------------------------------------------------------ all of it

/**
 * Every write a descriptor may declare.
 *
 * @since 0.1.0
 * @category constants
 */
export const writeNames: ReadonlyArray<WriteName> = ["split_package", "record_lab_result", "create_transfer"]

/**
 * The checks for one state of a provider, in the order to run them: the descriptor and sessions,
 * credentials, facilities, each resource (claimed ones for paging, gets, fields, unknown ids and
 * every filter; unclaimed ones for `CapabilityNotEnabled`), provider failures, then writes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checksFor = (descriptor: ProviderDescriptor, state: UsState): ReadonlyArray<Check> => {
  const capabilities = descriptor.capabilities[state]
  if (capabilities === undefined) throw new Error(`${descriptor.name} does not serve ${state}`)
  const resourceChecks = Resource.names.flatMap((name) =>
    Resource.resources[name].enabled(capabilities)
      ? [
        claimedCheck(name, state),
        pagingCheck(name),
        walkCheck(name, 1, "per_page 1 walks every item exactly once, in order"),
        walkCheck(name, Page.MAX_PER_PAGE, `per_page ${Page.MAX_PER_PAGE} (the most) covers the list in order`),
        getCheck(name),
        fieldsCheck(name),
        notFoundCheck(name, descriptor),
        ...filtersOf(name).map((filter) => filterCheck(name, filter))
      ]
      : [disabledCheck(name, state)]
  )
  return [
    ...descriptorChecks(state),
    ...facilityChecks,
    ...resourceChecks,
    failureCoverageCheck,
    ...providerSideKinds.map(failureKindCheck),
    otherFailuresCheck,
    ...writeNames.filter((w) => !descriptor.writes.includes(w)).map(undeclaredWrite),
    ...(descriptor.writes.length > 0 ? [productionRefusal] : []),
    ...descriptor.writes.flatMap((w) => [invalidWriteCheck(w), ...writeChecks[w]]),
    ...descriptor.writes.flatMap((w) => {
      const needs = descriptor.writeNeeds?.[w]
      if (needs === undefined) return []
      return [w === "record_lab_result" ? labResultByLabCheck(needs) : writeNeedsCheck(w, needs)]
    })
  ]
}

/**
 * The generated filter checks on their own: for every claimed list of the state, one check per
 * filter of its query schema (`filtersOf`), that the filtered list holds exactly the items of the
 * full list whose field matches. {@link checksFor} runs them with the rest; this is for running
 * them where the rest cannot run, e.g. with a production session against a strict emulator
 * (no writes, no arranged failures).
 *
 * @since 0.1.0
 * @category constructors
 */
export const filterChecksFor = (descriptor: ProviderDescriptor, state: UsState): ReadonlyArray<Check> => {
  const capabilities = descriptor.capabilities[state]
  if (capabilities === undefined) throw new Error(`${descriptor.name} does not serve ${state}`)
  return Resource.names.flatMap((name) =>
    Resource.resources[name].enabled(capabilities)
      ? [pagingCheck(name), ...filtersOf(name).map((filter) => filterCheck(name, filter))]
      : []
  )
}

/**
 * The flag names the kit knows, re-exported for adapters that document their capability tables.
 *
 * @since 0.1.0
 * @category constants
 */
export const capabilityFlags = Capabilities.flags
