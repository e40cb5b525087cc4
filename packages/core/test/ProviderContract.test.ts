import { assert, describe, it } from "@effect/vitest"
import type { ProviderPort as Port } from "@tracebridge/core"
import { Ids, ProviderContract, ProviderError, ProviderPort, Resource, Session } from "@tracebridge/core"
import { Effect, Layer } from "effect"
import * as Memory from "./support/MemoryDriver.js"

const HOUR = 3_600_000
const CHANGED_FROM = Date.parse("2026-03-01T00:00:00Z")

/**
 * The memory driver with the two filters its `Query` predicates leave out: `updated_since` (from
 * a change marker per object: one hour apart, in the world's order) and transfer `direction`.
 */
const withChangeMarkers = (driver: Port.Driver & { readonly world: Memory.World }): Port.Driver => {
  const changedAt = (resource: Resource.Name, item: { readonly id: string }): number =>
    CHANGED_FROM + (driver.world[resource] as Array<{ readonly id: string }>).findIndex((x) => x.id === item.id) * HOUR
  const resources = Object.fromEntries(
    Object.entries(driver.resources as Record<string, Port.ResourceDriver<any, any>>).map(([name, rd]) => [name, {
      ...rd,
      list: (session: Session.Session, facility: Port.FacilityRef, query: any, window: any) => {
        const { direction, updated_since, ...rest } = query
        if (direction === undefined && updated_since === undefined) return rd.list(session, facility, query, window)
        return Effect.map(rd.list(session, facility, rest, { offset: 0, limit: 1_000_000 }), (slice) => {
          const kept = slice.items.filter((item: any) =>
            (updated_since === undefined || changedAt(name as Resource.Name, item) >= Date.parse(updated_since)) &&
            (direction === undefined ||
              (item.shipper_facility === facility.provider_facility_id) === (direction === "outgoing"))
          )
          return { items: kept.slice(window.offset, window.offset + window.limit), total: kept.length }
        })
      }
    }])
  )
  return { ...driver, resources, changedAt } as Port.Driver
}

/** The memory world with what the filters need to tell values apart: an incoming transfer, dated deliveries. */
const contractWorld = (): Memory.World => {
  const world = Memory.makeWorld()
  world.transfers[1] = {
    ...world.transfers[1]!,
    shipper_facility: Memory.OTHER_LICENSE,
    recipient_facility: Memory.LICENSE
  }
  world.sales_deliveries = world.sales_deliveries.map((d, i) => ({
    ...d,
    delivery_date: i === 0 ? null : `2026-03-0${i}T15:00:00Z`
  }))
  return world
}

const fail = (failures: Array<ProviderError.ProviderError>, error: ProviderError.ProviderError) =>
  Effect.sync(() => {
    failures.push(error)
  })

const context = { provider: "provider_a" as const, operation: "x" }

const fixtureFor = (
  state: "CO" | "MA",
  failures: Array<ProviderError.ProviderError>,
  world: Memory.World
): ProviderContract.Fixture => ({
  session: Session.make({
    key: `contract-${state}`,
    provider: "provider_a",
    state,
    environment: "sandbox",
    credentials: { user_key: Memory.GOOD_KEY }
  }),
  invalidCredentials: { user_key: "wrong-key" },
  facilityId: Ids.make("facility", "provider_a", Memory.LICENSE),
  licensees: Memory.LICENSEES,
  updatedAt: (resource, item) => {
    const index = (world[resource] as Array<{ readonly id: string }>).findIndex((x) => x.id === item.id)
    return index < 0 ? undefined : CHANGED_FROM + index * HOUR
  },
  failures: [
    {
      name: "a 503 becomes ProviderUnavailable",
      arrange: fail(failures, new ProviderError.ProviderUnavailable({ ...context, message: "down" })),
      expected: "ProviderUnavailable"
    },
    {
      name: "a 429 becomes ProviderRateLimited",
      arrange: fail(failures, new ProviderError.ProviderRateLimited({ ...context, message: "slow down" })),
      expected: "ProviderRateLimited",
      call: (port, fx) => port.get("plants", fx.session, fx.facilityId, Ids.make("plant", "provider_a", "PL0"))
    },
    {
      name: "no answer becomes ProviderTimeout",
      arrange: fail(failures, new ProviderError.ProviderTimeout({ ...context, message: "no answer" })),
      expected: "ProviderTimeout"
    },
    {
      name: "a malformed body becomes ProviderInvalidResponse",
      arrange: fail(failures, new ProviderError.ProviderInvalidResponse({ ...context, path: "Data", message: "bad" })),
      expected: "ProviderInvalidResponse"
    },
    {
      name: "an expired login becomes ProviderLoginRequired",
      arrange: fail(
        failures,
        new ProviderError.ProviderLoginRequired({ ...context, message: "expired", reason: "session_expired" })
      ),
      expected: "ProviderLoginRequired"
    },
    {
      name: "a foreign licence becomes ProviderPermissionDenied",
      arrange: fail(failures, new ProviderError.ProviderPermissionDenied({ ...context, message: "not yours" })),
      expected: "ProviderPermissionDenied"
    },
    {
      name: "a refused request becomes ProviderRejected",
      arrange: fail(failures, new ProviderError.ProviderRejected({ ...context, message: "no", messages: ["no"] })),
      expected: "ProviderRejected"
    }
  ]
})

type ContractLayer = Layer.Layer<ProviderPort.ProviderPort | ProviderContract.ContractFixture>

const layerFor = (
  state: "CO" | "MA",
  options: Memory.Options = {},
  portOptions: ProviderPort.Options = {},
  fixture: (f: ProviderContract.Fixture) => ProviderContract.Fixture = (f) => f
): ContractLayer => {
  const failures: Array<ProviderError.ProviderError> = []
  const world = options.world ?? contractWorld()
  return Layer.mergeAll(
    Layer.succeed(
      ProviderPort.ProviderPort,
      ProviderPort.make(withChangeMarkers(Memory.make({ ...options, world, failures })), portOptions)
    ),
    Layer.succeed(ProviderContract.ContractFixture, fixture(fixtureFor(state, failures, world)))
  )
}

for (const state of ["CO", "MA"] as const) {
  describe.sequential(`ProviderContract against the memory driver in ${state}`, () => {
    const layer = layerFor(state)
    for (const check of ProviderContract.checksFor(Memory.descriptor, state)) {
      it.effect(check.name, () => Effect.provide(check.run, layer))
    }
  })
}

const runCheck = (name: string, layer: ContractLayer, state: "CO" | "MA" = "CO") => {
  const check = ProviderContract.checksFor(Memory.descriptor, state).find((c) => c.name === name)
  if (check === undefined) throw new Error(`no check named ${name}`)
  return Effect.flip(Effect.provide(check.run, layer))
}

/** A port over the memory driver with one list rewritten. */
const rewired = (
  resource: Resource.Name,
  list: (inner: Port.ResourceDriver<any, any>) => Port.ResourceDriver<any, any>["list"],
  fixture: (f: ProviderContract.Fixture) => ProviderContract.Fixture = (f) => f
): ContractLayer => {
  const world = contractWorld()
  const driver = withChangeMarkers(Memory.make({ world }))
  const inner = driver.resources[resource] as Port.ResourceDriver<any, any>
  return Layer.mergeAll(
    Layer.succeed(
      ProviderPort.ProviderPort,
      ProviderPort.make({ ...driver, resources: { ...driver.resources, [resource]: { ...inner, list: list(inner) } } })
    ),
    Layer.succeed(ProviderContract.ContractFixture, fixture(fixtureFor("CO", [], world)))
  )
}

describe("ProviderContract", () => {
  it("generates checks from the descriptor: gated resources, every filter, declared writes, failures", () => {
    const names = ProviderContract.checksFor(Memory.descriptor, "CO").map((c) => c.name)
    assert.include(
      names,
      "sales_deliveries: not claimed in CO, its list, each filter and a get answer CapabilityNotEnabled"
    )
    assert.include(names, "packages: lists paginate consistently")
    assert.include(names, "packages: per_page 1 walks every item exactly once, in order")
    assert.include(names, "packages: per_page 100 (the most) covers the list in order")
    assert.include(names, "descriptor: CO has a sandbox and a production base URL")
    assert.include(names, "writes: split_package beyond the source is InsufficientQuantity and changes nothing")
    assert.include(names, "writes: record_lab_result with an invalid command is InvalidInput and changes nothing")
    assert.include(names, "failures: the fixture arranges every provider-side error kind, or says why not")
    for (const kind of ProviderContract.providerSideKinds) {
      assert.include(names, `failures: ${kind} arranged by the fixture maps into the error family`)
    }
    assert.notInclude(names, "sales_deliveries: lists paginate consistently")
    assert.notInclude(names, "sales_deliveries: the from filter returns exactly the matching items")
    const readOnly = ProviderContract.checksFor({ ...Memory.descriptor, writes: [] }, "MA").map((c) => c.name)
    assert.include(readOnly, "writes: create_transfer is not declared, answers CapabilityNotEnabled")
    assert.include(readOnly, "sales_deliveries: lists paginate consistently")
    assert.notInclude(readOnly, "writes: refused outside the sandbox with SandboxOnly")
    assert.throws(() => ProviderContract.checksFor(Memory.descriptor, "TX"))
  })

  it("checks every filter of DECISIONS \"Paths\" for every claimed list", () => {
    const expected: Record<Resource.Name, ReadonlyArray<string>> = {
      packages: ["updated_since", "is_on_hold", "lab_testing_state", "tag"],
      plants: ["updated_since", "growth_phase"],
      harvests: ["updated_since"],
      lab_results: ["updated_since", "package_id"],
      transfers: ["updated_since", "status", "direction"],
      sales: ["updated_since", "from", "to"],
      sales_deliveries: ["updated_since", "from", "to"],
      items: ["updated_since"],
      strains: ["updated_since"],
      locations: ["updated_since"],
      patients: ["updated_since"]
    }
    const names = ProviderContract.checksFor(Memory.descriptor, "MA").map((c) => c.name)
    for (const [resource, filters] of Object.entries(expected)) {
      assert.sameMembers([...ProviderContract.filtersOf(resource as Resource.Name)], [...filters], resource)
      for (const filter of filters) {
        assert.include(names, `${resource}: the ${filter} filter returns exactly the matching items`)
      }
    }
  })

  it("says how every error kind of the family is covered", () => {
    assert.sameMembers(Object.keys(ProviderContract.errorCoverage), [...ProviderError.tags])
    assert.sameMembers(
      [...ProviderContract.providerSideKinds],
      Object.entries(ProviderContract.errorCoverage).filter(([, c]) => c.by === "fixture").map(([tag]) => tag)
    )
  })

  it.effect("catches a driver whose totals lie", () =>
    Effect.gen(function*() {
      const error = yield* runCheck("items: lists paginate consistently", layerFor("CO", { tamperTotal: (t) => t + 1 }))
      assert.strictEqual(error._tag, "ContractViolation")
    }))

  it.effect("catches a page walk that repeats an item and skips another", () =>
    Effect.gen(function*() {
      const layer = rewired("strains", (inner) => (s, f, q, w) =>
        Effect.flatMap(inner.list(s, f, q, w), (slice) =>
          w.offset === 1 && w.limit === 1 ? inner.list(s, f, q, { offset: 0, limit: 1 }) : Effect.succeed(slice)))
      const error = yield* runCheck("strains: per_page 1 walks every item exactly once, in order", layer)
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "page 2 at per_page 1")
    }))

  it.effect("catches a page past the end that is not empty", () =>
    Effect.gen(function*() {
      const layer = rewired("items", (inner) => (s, f, q, w) =>
        inner.list(s, f, q, w.offset >= 3 ? { offset: 0, limit: w.limit } : w))
      const error = yield* runCheck("items: per_page 100 (the most) covers the list in order", layer)
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "past the end")
    }))

  it.effect("catches a list that disagrees with the get", () =>
    Effect.gen(function*() {
      const tamper = (_: unknown, item: any) => ({ ...item, name: `${item.name} (listed)` })
      const error = yield* runCheck("strains: a get returns the same object as the list", layerFor("CO", { tamper }))
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "name")
    }))

  it.effect("catches extra fields even when the port does not validate", () =>
    Effect.gen(function*() {
      const tamper = (_: unknown, item: any) => ({ ...item, LastModified: "2026-01-01" })
      const error = yield* runCheck(
        "locations: objects carry exactly the spec's fields",
        layerFor("CO", { tamper }, { validateOutput: false })
      )
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "extra [LastModified]")
    }))

  it.effect("checks every listed object itself, even when the caller has the port sample its output (ADR 0031)", () =>
    Effect.gen(function*() {
      const tamper = (name: string, item: any, i: number) =>
        name === "locations" && i > 0 ? { ...item, LastModified: "2026-01-01" } : item
      const error = yield* ProviderPort.withOutputCheck(
        runCheck("locations: objects carry exactly the spec's fields", layerFor("CO", { tamper })),
        "sample"
      )
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "extra [LastModified]")
    }))

  it.effect("catches a filter the driver ignores", () =>
    Effect.gen(function*() {
      const layer = rewired("plants", (inner) => (s, f, _q, w) => inner.list(s, f, {}, w))
      const error = yield* runCheck("plants: the growth_phase filter returns exactly the matching items", layer)
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "growth_phase")
    }))

  it.effect("catches an updated_since that is not inclusive, and one the driver ignores", () =>
    Effect.gen(function*() {
      const exclusive = rewired("harvests", (inner) => (s, f, q, w) =>
        inner.list(
          s,
          f,
          q.updated_since ? { updated_since: new Date(Date.parse(q.updated_since) + 1).toISOString() } : q,
          w
        ))
      const error = yield* runCheck("harvests: the updated_since filter returns exactly the matching items", exclusive)
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "missing")
      const ignoring = rewired("harvests", (inner) => (s, f, _q, w) => inner.list(s, f, {}, w))
      const ignored = yield* runCheck("harvests: the updated_since filter returns exactly the matching items", ignoring)
      assert.include(ignored.message, "not matching")
    }))

  it.effect("catches a `to` that is exclusive", () =>
    Effect.gen(function*() {
      const layer = rewired("sales", (inner) => (s, f, q, w) =>
        inner.list(s, f, q.to ? { ...q, to: new Date(Date.parse(q.to) - 1).toISOString() } : q, w))
      const error = yield* runCheck("sales: the to filter returns exactly the matching items", layer)
      assert.strictEqual(error._tag, "ContractViolation")
    }))

  it.effect("catches a direction read from the wrong end", () =>
    Effect.gen(function*() {
      const layer = rewired("transfers", (inner) => (s, f, q, w) =>
        inner.list(
          s,
          f,
          q.direction ? { ...q, direction: q.direction === "incoming" ? "outgoing" : "incoming" } : q,
          w
        ))
      const error = yield* runCheck("transfers: the direction filter returns exactly the matching items", layer)
      assert.strictEqual(error._tag, "ContractViolation")
    }))

  it.effect("refuses a filter the data cannot exercise unless the fixture says why", () =>
    Effect.gen(function*() {
      const world = contractWorld()
      world.packages = world.packages.map((p) => ({ ...p, is_on_hold: false }))
      const name = "packages: the is_on_hold filter returns exactly the matching items"
      const error = yield* runCheck(name, layerFor("CO", { world }))
      assert.include(error.message, "notApplicable.filters[\"packages.is_on_hold\"]")
      const declared = layerFor("CO", { world: contractWorld() }, {}, (f) => ({
        ...f,
        notApplicable: { filters: { "packages.is_on_hold": "no package is on hold" } }
      }))
      const stale = yield* runCheck(name, declared)
      assert.include(stale.message, "remove it")
      const thin = contractWorld()
      thin.packages = thin.packages.map((p) => ({ ...p, is_on_hold: false }))
      yield* Effect.provide(
        ProviderContract.checksFor(Memory.descriptor, "CO").find((c) => c.name === name)!.run,
        layerFor("CO", { world: thin }, {}, (f) => ({
          ...f,
          notApplicable: { filters: { "packages.is_on_hold": "no package is on hold" } }
        }))
      )
    }))

  it.effect("refuses updated_since without an updatedAt oracle", () =>
    Effect.gen(function*() {
      const layer = layerFor("CO", {}, {}, ({ updatedAt: _, ...f }) => f)
      const error = yield* runCheck("items: the updated_since filter returns exactly the matching items", layer)
      assert.include(error.message, "updatedAt")
    }))

  it.effect("lists the provider-side error kinds the fixture does not arrange", () =>
    Effect.gen(function*() {
      const layer = layerFor("CO", {}, {}, (f) => ({
        ...f,
        failures: f.failures.filter((c) => c.expected !== "ProviderTimeout" && c.expected !== "ProviderRejected"),
        notApplicable: { failures: { ProviderRejected: "the memory provider refuses nothing on its merits" } }
      }))
      const error = yield* runCheck(
        "failures: the fixture arranges every provider-side error kind, or says why not",
        layer
      )
      assert.include(error.message, "not arranged: ProviderTimeout.")
      assert.notInclude(error.message, "ProviderRejected")
      const timeout = yield* runCheck(
        "failures: ProviderTimeout arranged by the fixture maps into the error family",
        layer
      )
      assert.include(timeout.message, "arranges no failure that must become ProviderTimeout")
      yield* Effect.provide(
        ProviderContract.checksFor(Memory.descriptor, "CO").find((c) =>
          c.name === "failures: ProviderRejected arranged by the fixture maps into the error family"
        )!.run,
        layer
      )
    }))

  it.effect("catches a failure that does not map to the expected error", () =>
    Effect.gen(function*() {
      const layer = layerFor("CO", {}, {}, (f) => ({
        ...f,
        failures: [{ name: "nothing happens", arrange: Effect.void, expected: "ProviderTimeout" as const }]
      }))
      const error = yield* runCheck(
        "failures: ProviderTimeout arranged by the fixture maps into the error family",
        layer
      )
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "expected ProviderTimeout, but the call succeeded")
    }))

  it.effect("catches a claimed capability that does not work", () =>
    Effect.gen(function*() {
      const layer = rewired("strains", () => () =>
        Effect.fail(
          new ProviderError.CapabilityNotEnabled({
            provider: "provider_a",
            state: "CO",
            capability: "strains",
            message: "no strains here"
          })
        ))
      const error = yield* runCheck("strains: claimed in CO (strains), its list answers", layer)
      assert.strictEqual(error._tag, "CapabilityNotEnabled")
    }))

  it.effect("catches a transfer line of part of a package recorded as the whole package", () =>
    Effect.gen(function*() {
      const world = contractWorld()
      const driver = withChangeMarkers(Memory.make({ world }))
      const inner = driver.writes!.createTransfer!
      // what issue #19 found: the line's quantity dropped, the package's whole quantity recorded
      const createTransfer: NonNullable<Port.Writes["createTransfer"]> = (session, facility, command) =>
        Effect.map(inner(session, facility, command), (created) => {
          const shipped = created.packages.map((line) => ({
            ...line,
            quantity: world.packages.find((p) => p.id === line.package_id)!.quantity
          }))
          const stored = { ...created, packages: shipped }
          world.transfers = world.transfers.map((t) => (t.id === created.id ? stored : t))
          return stored
        })
      const layer = Layer.mergeAll(
        Layer.succeed(
          ProviderPort.ProviderPort,
          ProviderPort.make({ ...driver, writes: { ...driver.writes, createTransfer } })
        ),
        Layer.succeed(ProviderContract.ContractFixture, fixtureFor("CO", [], world))
      )
      const error = yield* runCheck(
        "writes: create_transfer honours a line's quantity or refuses part of a package, and refuses more than it holds",
        layer
      )
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "was recorded as")
    }))

  it.effect("catches a transfer line of part of a package refused anywhere but at its quantity", () =>
    Effect.gen(function*() {
      const world = contractWorld()
      const driver = withChangeMarkers(Memory.make({ world }))
      const inner = driver.writes!.createTransfer!
      const createTransfer: NonNullable<Port.Writes["createTransfer"]> = (session, facility, command) =>
        command.packages.every((l) => l.quantity >= world.packages.find((p) => p.id === l.package_id)!.quantity)
          ? inner(session, facility, command)
          : Effect.fail(
            new ProviderError.ProviderRejected({
              provider: "provider_a",
              operation: "create_transfer",
              messages: ["whole packages only"],
              message: "whole packages only"
            })
          )
      const layer = Layer.mergeAll(
        Layer.succeed(
          ProviderPort.ProviderPort,
          ProviderPort.make({ ...driver, writes: { ...driver.writes, createTransfer } })
        ),
        Layer.succeed(ProviderContract.ContractFixture, fixtureFor("CO", [], world))
      )
      const error = yield* runCheck(
        "writes: create_transfer honours a line's quantity or refuses part of a package, and refuses more than it holds",
        layer
      )
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "expected it shipped, or InvalidInput at packages.0.quantity")
    }))
  it("filterChecksFor: the paging check and one check per filter of every claimed list, from the query schemas", () => {
    const names = ProviderContract.filterChecksFor(Memory.descriptor, "CO").map((c) => c.name)
    const all = ProviderContract.checksFor(Memory.descriptor, "CO").map((c) => c.name)
    const capabilities = Memory.descriptor.capabilities["CO"]!
    const expected = (Object.keys(Resource.resources) as Array<Resource.Name>)
      .filter((name) => Resource.resources[name].enabled(capabilities))
      .flatMap((name) => [
        `${name}: lists paginate consistently`,
        ...ProviderContract.filtersOf(name).map((f) => `${name}: the ${f} filter returns exactly the matching items`)
      ])
    assert.sameMembers(names, expected)
    // every one of them is also in the whole kit
    for (const name of names) assert.include(all, name)
    assert.notInclude(names, "sales_deliveries: the from filter returns exactly the matching items")
    assert.throws(() => ProviderContract.filterChecksFor(Memory.descriptor, "TX"))
  })

  it.effect("catches an is_on_hold filter that leaves out a kind of hold the field counts", () =>
    Effect.gen(function*() {
      // the driver's own hold list knows one kind of hold: it drops a held package the field reads as held
      const layer = rewired("packages", (inner) => (s, f, q, w) =>
        q.is_on_hold !== true
          ? inner.list(s, f, q, w)
          : Effect.map(inner.list(s, f, q, { offset: 0, limit: 1_000_000 }), (slice) => {
            const kept = slice.items.slice(1)
            return { items: kept.slice(w.offset, w.offset + w.limit), total: kept.length }
          }))
      const check = ProviderContract.filterChecksFor(Memory.descriptor, "CO").find((c) =>
        c.name === "packages: the is_on_hold filter returns exactly the matching items"
      )!
      const error = yield* Effect.flip(Effect.provide(check.run, layer))
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "{\"is_on_hold\":true}")
      assert.include(error.message, "missing [")
    }))

  it.effect("catches a total that counts rows the pages leave out (skipped)", () =>
    Effect.gen(function*() {
      // one row is skipped (reported) but still counted, as a pass-through read of the provider's total would
      const layer = rewired("strains", (inner) => (s, f, q, w) =>
        Effect.map(inner.list(s, f, q, { offset: 0, limit: 1_000_000 }), (slice) => ({
          items: slice.items.slice(1).slice(w.offset, w.offset + w.limit),
          total: slice.total,
          skipped: [{ upstream_id: "1", reason: "Name is missing" }]
        })))
      const error = yield* runCheck("strains: lists paginate consistently", layer)
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "says total")
    }))
})
