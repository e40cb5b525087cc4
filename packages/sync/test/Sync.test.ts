/**
 * The sync's failure handling (`Sync.recordFailure`): a refused login puts the facility in `error`
 * and reports `loginRequired`; other upstream failures are recorded, reported as `degraded` once
 * after 15 minutes without a success, and a success (a poll) clears them.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Facility } from "@tracebridge/core"
import { Page, ProviderError, Resource, UpstreamGovernor } from "@tracebridge/core"
import { Effect, Layer, Option, TestClock, Tracer } from "effect"
import * as Sync from "../src/Sync.js"
import * as SyncStore from "../src/SyncStore.js"
import * as TempStore from "./support/TempStore.js"

const setup = () => {
  const calls: Array<string> = []
  const host = Layer.succeed(Sync.Host, {
    open: () => Effect.succeed(Option.none()),
    updatesAvailable: (c, f, n) => Effect.sync(() => void calls.push(`updates ${c} ${f} ${n}`)),
    loginRequired: (c) => Effect.sync(() => void calls.push(`login ${c}`)),
    degraded: (c, f) => Effect.sync(() => void calls.push(`degraded ${c} ${f}`)),
    backfilled: (c) => Effect.sync(() => void calls.push(`backfilled ${c}`))
  })
  const store = TempStore.layer()
  return { calls, layer: Layer.mergeAll(host, store, Layer.succeed(Sync.SyncSettings, Sync.defaults)) }
}

const outage = new ProviderError.ProviderUnavailable({
  provider: "provider_a",
  operation: "packages.list",
  message: "down"
})

describe("Sync.recordFailure", () => {
  it.effect("reports degraded once after 15 minutes of failures, and records the last error", () => {
    const { calls, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      yield* store.ensureFacility("conn_1", "fac_1", 0)
      yield* Sync.recordFailure("conn_1", "fac_1", outage)
      yield* TestClock.adjust("14 minutes")
      yield* Sync.recordFailure("conn_1", "fac_1", outage)
      assert.deepStrictEqual(calls, [])
      yield* TestClock.adjust("1 minute")
      yield* Sync.recordFailure("conn_1", "fac_1", outage)
      yield* TestClock.adjust("5 minutes")
      yield* Sync.recordFailure("conn_1", "fac_1", outage)
      assert.deepStrictEqual(calls, ["degraded conn_1 fac_1"], "once")
      const state = Option.getOrThrow(yield* store.facility("conn_1", "fac_1"))
      assert.match(state.last_error!, /ProviderUnavailable: down/)
      assert.strictEqual(state.failing_since, 0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a refused login: the facility is in error and loginRequired is reported", () => {
    const { calls, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      yield* store.ensureFacility("conn_1", "fac_1", 0)
      yield* Sync.recordFailure(
        "conn_1",
        "fac_1",
        new ProviderError.ProviderLoginRequired({
          provider: "provider_a",
          operation: "packages.list",
          reason: "invalid_credentials",
          message: "refused"
        })
      )
      assert.deepStrictEqual(calls, ["login conn_1"])
      assert.strictEqual(Option.getOrThrow(yield* store.facility("conn_1", "fac_1")).status, "error")
    }).pipe(Effect.provide(layer))
  })
})

describe("Sync spans (issue #32)", () => {
  it.effect("a poll makes a sync.poll span naming the provider, state, connection and facility", () => {
    const { layer } = setup()
    const recorded: Array<{ name: string; attributes: Map<string, unknown> }> = []
    const tracer = Tracer.make({
      span(name, parent, context, links, startTime, kind) {
        const attributes = new Map<string, unknown>()
        recorded.push({ name, attributes })
        return {
          _tag: "Span",
          name,
          spanId: "0000000000000001",
          traceId: "00000000000000000000000000000001",
          parent,
          context,
          status: { _tag: "Started", startTime },
          attributes,
          links,
          sampled: true,
          kind,
          end() {},
          attribute(key, value) {
            attributes.set(key, value)
          },
          event() {},
          addLinks() {}
        }
      },
      context: (f) => f()
    })
    const opened = { session: { provider: "provider_a", state: "CO" } } as unknown as Sync.Opened
    return Effect.gen(function*() {
      // no such facility: the poll stores nothing, and its span says so
      assert.strictEqual(yield* Sync.pollFacility(opened, "con_1", "fac_1"), 0)
      const poll = recorded.find((s) => s.name === "sync.poll")
      assert.isDefined(poll, recorded.map((s) => s.name).join(", "))
      assert.deepStrictEqual(Object.fromEntries(poll!.attributes), {
        provider: "provider_a",
        state: "CO",
        connection_id: "con_1",
        facility_id: "fac_1",
        "tracebridge.changes": 0
      })
    }).pipe(Effect.withTracer(tracer), Effect.provide(layer))
  })
})

describe("Sync and the upstream governor's priority (issue #35)", () => {
  it.effect("the sync's upstream calls (capabilities, a backfill's pages) run as background work", () => {
    const { layer } = setup()
    const seen: Array<string> = []
    const record = (call: string) =>
      Effect.flatMap(
        UpstreamGovernor.isBackground,
        (background) => Effect.sync(() => void seen.push(`${call} ${background ? "background" : "interactive"}`))
      )
    const port = {
      descriptor: { syncWindowHours: 24 },
      capabilities: () => Effect.as(record("capabilities"), { packages: true }),
      changes: (_resource: string, _session: unknown, _facility: string, _range: unknown, page: Page.PageRequest) =>
        Effect.as(record("changes"), Page.fromSlice(page, { items: [], total: 0 }))
    }
    const opened = { port, session: { provider: "provider_a", state: "CO" } } as unknown as Sync.Opened
    const facility = { id: "fac_1", license_start_date: null } as unknown as Facility.Facility
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-29T00:00:00Z"))
      const store = yield* SyncStore.SyncStore
      const stored = yield* store.ensureFacility("con_1", "fac_1", Date.parse("2026-11-29T00:00:00Z"))
      yield* Sync.resourcesOf(opened)
      yield* Sync.backfillResource(opened, facility, "con_1", stored.generation, "packages")
      assert.isAbove(seen.length, 1)
      assert.deepStrictEqual(seen.filter((s) => !s.endsWith(" background")).slice(0, 3), [])
      // and the caller's own calls stay interactive
      assert.isFalse(yield* UpstreamGovernor.isBackground)
    }).pipe(Effect.provide(layer))
  })
})

describe("Sync.resourcesOf a facility (issue #35: fewer reads per poll)", () => {
  const everything = Object.fromEntries(
    Resource.names.map((name) => [Resource.resources[name].capability, true])
  )
  const opened = {
    port: { capabilities: () => Effect.succeed(everything) },
    session: { provider: "provider_a", state: "CO" }
  } as unknown as Sync.Opened
  const facility = (capabilities: ReadonlyArray<string>) =>
    ({ id: "fac_1", capabilities }) as unknown as Facility.Facility

  it.effect("a dispensary's sync reads no plants or harvests; a grower's no sales, deliveries or patients", () =>
    Effect.gen(function*() {
      const dispensary = yield* Sync.resourcesOf(opened, facility(["packages", "transfers", "sales", "patients"]))
      for (const name of ["plants", "harvests"]) assert.notInclude(dispensary, name)
      for (const name of ["packages", "lab_results", "transfers", "sales", "patients", "items", "locations"]) {
        assert.include(dispensary, name)
      }
      const grower = yield* Sync.resourcesOf(opened, facility(["cultivation", "harvests", "packages", "transfers"]))
      for (const name of ["sales", "sales_deliveries", "patients"]) assert.notInclude(grower, name)
      for (const name of ["plants", "harvests", "packages", "lab_results", "transfers"]) assert.include(grower, name)
      // without a facility: what the state offers
      assert.deepStrictEqual(yield* Sync.resourcesOf(opened), Resource.names)
    }))
})
