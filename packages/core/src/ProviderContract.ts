/**
 * The conformance kit: the checks every adapter must pass, as data that any test runner can
 * execute (core does not depend on one). A check is a name and an Effect that needs the port
 * under test and a fixture, and fails with a `ContractViolation` (or the provider error that
 * broke it).
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
 * See `docs/adding-a-provider.md`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Redacted, Schema } from "effect"
import * as Capabilities from "./Capabilities.js"
import type * as Commands from "./Commands.js"
import { Facility } from "./Facility.js"
import * as Ids from "./Ids.js"
import { deepEqual, firstDifference } from "./internal/equal.js"
import type { Package } from "./Package.js"
import * as Page from "./Page.js"
import type { ProviderDescriptor, WriteName } from "./ProviderDescriptor.js"
import { problems } from "./ProviderDescriptor.js"
import type { ProviderError } from "./ProviderError.js"
import type { UsState } from "./ProviderName.js"
import { ProviderPort } from "./ProviderPort.js"
import * as Query from "./Query.js"
import * as Resource from "./Resource.js"
import type { Session } from "./Session.js"

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
  /** The call that meets the failure; default: the first page of packages. */
  readonly call?: (port: ProviderPort["Type"], fixture: Fixture) => Effect.Effect<unknown, ProviderError>
}

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
  readonly failures: ReadonlyArray<FailureCase>
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

const check = (
  name: string,
  body: (
    port: ProviderPort["Type"],
    fixture: Fixture,
    assert: (condition: boolean, message: string) => Effect.Effect<void, ContractViolation>
  ) => Effect.Effect<void, ContractViolation | ProviderError>
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

const expectFailure = <A>(
  effect: Effect.Effect<A, ProviderError>,
  tag: ProviderError["_tag"],
  name: string
): Effect.Effect<void, ContractViolation> =>
  Effect.either(effect).pipe(
    Effect.flatMap((result) =>
      Either.isLeft(result) && result.left._tag === tag
        ? Effect.void
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

const exactFields = (
  schema: Schema.Schema<any, any>,
  item: unknown,
  assert: (condition: boolean, message: string) => Effect.Effect<void, ContractViolation>
) => {
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

type AnyResource = Resource.Definition<any, any>

const facilityOf = (fx: Fixture, name: Resource.Name): string => fx.facilityFor?.[name] ?? fx.facilityId

const idOf = (item: unknown): string => (item as { readonly id: string }).id

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

const filterPredicates: Partial<Record<Resource.Name, (item: any) => { query: object; matches: (x: any) => boolean }>> =
  {
    packages: (p) => {
      const query: Query.Packages = { is_on_hold: p.is_on_hold }
      return { query, matches: Query.matchesPackage(query) }
    },
    plants: (p) => {
      const query: Query.Plants = { growth_phase: p.growth_phase }
      return { query, matches: Query.matchesPlant(query) }
    },
    lab_results: (r) => {
      const query: Query.LabResults = { package_id: r.package_id }
      return { query, matches: Query.matchesLabResult(query) }
    },
    transfers: (t) => {
      const query: Query.Transfers = { status: t.status }
      return { query, matches: Query.matchesTransfer(query) }
    },
    sales: (s) => {
      const query: Query.Sales = { from: s.sale_date, to: s.sale_date }
      return { query, matches: Query.matchesSale(query) }
    }
  }

const filterCheck = (name: Resource.Name) =>
  check(`${name}: filters narrow the list`, (port, fx, assert) =>
    Effect.gen(function*() {
      const all = yield* port.listAll(name, fx.session, facilityOf(fx, name), {})
      const sample = all[0]
      yield* assert(sample !== undefined, `the fixture facility holds no ${name}`)
      const { matches, query } = filterPredicates[name]!(sample)
      const filtered = yield* port.listAll(name, fx.session, facilityOf(fx, name), query as never)
      const expected = all.filter(matches).map(idOf).sort()
      yield* assert(
        deepEqual(filtered.map(idOf).sort(), expected),
        `filter ${JSON.stringify(query)} gave ${filtered.length} items, expected ${expected.length}`
      )
    }))

const disabledCheck = (name: Resource.Name, state: string) =>
  check(`${name}: not offered in ${state}, answers CapabilityNotEnabled`, (port, fx) =>
    Effect.gen(function*() {
      yield* expectFailure(
        port.list(name, fx.session, facilityOf(fx, name), {}, Page.firstPage),
        "CapabilityNotEnabled",
        `${name} disabled`
      )
    }))

const facilityChecks: ReadonlyArray<Check> = [
  check("descriptor: is complete and consistent", (port, _fx, assert) => {
    const found = problems(port.descriptor)
    return assert(found.length === 0, found.join("; "))
  }),
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
  check(
    "facilities: the list paginates consistently and holds the fixture facility",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const first = yield* port.listFacilities(fx.session, { page: 1, per_page: 1 })
        const total = first.pagination.total
        yield* assert(total >= 1, "the login reaches no facility")
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

const pickPackage = (port: ProviderPort["Type"], fx: Fixture) =>
  Effect.map(
    port.listAll("packages", fx.session, fx.facilityId, { is_on_hold: false }),
    (all) => all.find((p) => p.quantity >= 2)
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
          const target = yield* pickPackage(port, fx)
          yield* assert(target !== undefined, "the fixture facility holds no package to test")
          const before = yield* port.listAll("lab_results", fx.session, fx.facilityId, { package_id: target!.id })
          const created = yield* port.recordLabResult(fx.session, fx.facilityId, {
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
          const after = yield* port.listAll("lab_results", fx.session, fx.facilityId, { package_id: target!.id })
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
          const before = yield* port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage)
          const created = yield* port.createTransfer(fx.session, fx.facilityId, {
            transfer_type: "Transfer",
            shipper_facility: facility.license_number,
            recipient_facility: "CONTRACT-RECIPIENT-0001",
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
  check(`writes: ${name} is not offered, answers CapabilityNotEnabled`, (port, fx) => {
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

const failureChecks = check(
  "failures: provider failures map into the error family",
  (port, fx, assert) =>
    Effect.gen(function*() {
      yield* assert(fx.failures.length > 0, "the fixture names no provider failures to check")
      for (const failure of fx.failures) {
        yield* failure.arrange
        const call = failure.call?.(port, fx) ?? port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
        yield* expectFailure(call, failure.expected, failure.name)
      }
    })
)

/**
 * The checks for one state of a provider, in the order to run them: credentials, facilities,
 * each resource (enabled ones for paging, gets, fields, unknown ids and filters; disabled ones
 * for `CapabilityNotEnabled`), provider failures, then writes.
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
        pagingCheck(name),
        getCheck(name),
        fieldsCheck(name),
        notFoundCheck(name, descriptor),
        ...(filterPredicates[name] ? [filterCheck(name)] : [])
      ]
      : [disabledCheck(name, state)]
  )
  const allWrites: ReadonlyArray<WriteName> = ["split_package", "record_lab_result", "create_transfer"]
  return [
    ...facilityChecks,
    ...resourceChecks,
    failureChecks,
    ...allWrites.filter((w) => !descriptor.writes.includes(w)).map(undeclaredWrite),
    ...(descriptor.writes.length > 0 ? [productionRefusal] : []),
    ...descriptor.writes.flatMap((w) => writeChecks[w])
  ]
}

/**
 * The flag names the kit knows, re-exported for adapters that document their capability tables.
 *
 * @since 0.1.0
 * @category constants
 */
export const capabilityFlags = Capabilities.flags
