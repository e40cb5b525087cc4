/**
 * The upstream rate governor's database store (`DatabaseGovernor.make` over
 * `UpstreamBuckets`), on SQLite: two governors on one database (two API nodes) share one bucket
 * per key, a pause set by one holds the other, and the governor fails open when the store fails.
 * End to end, a production connection's reads over `/v1` take their tokens from the database
 * (keyed by provider, vendor key fingerprint and licence) and a sandbox connection's do not. The
 * store's statements run on Postgres too in the persistence suite (`npm run test:pg`).
 */
import { assert, describe, it } from "@effect/vitest"
import { DatabaseGovernor, Http, Server } from "@tracebridge/http"
import { Standalone } from "@tracebridge/sandbox"
import { Clock, ConfigProvider, Effect, Fiber, Layer, Logger, Option, TestClock } from "effect"
import { UpstreamBuckets } from "../src/persistence/UpstreamBuckets.js"
import * as Crypto from "../src/services/Crypto.js"
import { call, linkProduction, linkSandbox, productionSignIn, signIn } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** Real time for the database to answer. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))

/** Two nodes' governors over one database. */
const twoNodes = Effect.map(UpstreamBuckets, (buckets) =>
  [
    DatabaseGovernor.make(buckets),
    DatabaseGovernor.make(buckets)
  ] as const)

/** When each take of `key` (alternating between the governors) got its token, on the TestClock. */
const takeTimes = (
  governors: ReadonlyArray<
    { readonly take: (key: string, policy: { requestsPerSecond: number }) => Effect.Effect<void> }
  >,
  key: string,
  n: number,
  requestsPerSecond: number
) =>
  Effect.fork(Effect.forEach(
    Array.from({ length: n }, (_, i) => governors[i % governors.length]!),
    (governor) => Effect.zipRight(governor.take(key, { requestsPerSecond }), Clock.currentTimeMillis),
    { concurrency: "unbounded" }
  ))

/** Moves the TestClock in steps until `fiber` is done. */
const drive = <X, E>(fiber: Fiber.Fiber<X, E>, millis: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* settle
      yield* TestClock.adjust(millis)
    }
    return yield* Fiber.join(fiber)
  })

describe("DatabaseGovernor", () => {
  it.effect("two nodes share one bucket per key: takes from both are spaced at the rate", () =>
    Effect.gen(function*() {
      const [a, b] = yield* twoNodes
      const fiber = yield* takeTimes([a, b], "provider_x|f|LIC-1", 10, 5)
      const times = (yield* drive(fiber, 50)).slice().sort((x, y) => x - y)
      // 10 takes at 5 a second: one every 200 ms, none together, whichever node took it
      assert.strictEqual(times.length, 10)
      for (let i = 1; i < times.length; i++) assert.isAtLeast(times[i]! - times[i - 1]!, 200)
      assert.isAtMost(times[9]! - times[0]!, 1_800 + 50)
      // another key (another licence) has a bucket of its own
      const other = yield* takeTimes([a, b], "provider_x|f|LIC-2", 1, 5)
      const [t] = yield* drive(other, 50)
      assert.isAtMost(t! - (yield* TestClock.currentTimeMillis), 0)
    }).pipe(Effect.provide(TestDatabase.layer)))

  it.effect("a pause set on one node (a 429's Retry-After) holds the other node's takes until it ends", () =>
    Effect.gen(function*() {
      const [a, b] = yield* twoNodes
      const start = yield* TestClock.currentTimeMillis
      yield* a.pause("provider_x|f|LIC-3", "3 seconds")
      const fiber = yield* takeTimes([b], "provider_x|f|LIC-3", 1, 50)
      const [t] = yield* drive(fiber, 100)
      assert.isAtLeast(t! - start, 3_000)
      assert.isAtMost(t! - start, 3_100)
    }).pipe(Effect.provide(TestDatabase.layer)))

  it.effect("fails open: when the store fails, takes are paced in the process", () =>
    Effect.gen(function*() {
      const buckets = yield* UpstreamBuckets
      const broken = { ...buckets, reserve: () => Effect.die(new Error("database down")) }
      const governor = DatabaseGovernor.make(broken)
      const fiber = yield* takeTimes([governor], "provider_x|f|LIC-4", 3, 10)
      const times = (yield* drive(fiber, 50)).slice().sort((x, y) => x - y)
      assert.deepStrictEqual(times.map((x) => x - times[0]!), [0, 100, 200])
    }).pipe(Effect.provide(Layer.merge(TestDatabase.layer, Logger.remove(Logger.defaultLogger)))))

  it.live(
    "production reads over /v1 take their tokens from the database, keyed by licence; sandbox reads none",
    () =>
      Effect.gen(function*() {
        const running = yield* Effect.acquireRelease(
          Effect.promise(() => Standalone.start({ port: 0, host: "127.0.0.1", seed: "42" })),
          (standalone) => Effect.promise(() => standalone.close())
        )
        const vendorKey = "integrator-vendor-key"
        const reserved: Array<string> = []
        const spy = Layer.effect(
          UpstreamBuckets,
          Effect.map(UpstreamBuckets, (buckets) => ({
            ...buckets,
            reserve: (key: string, rate: { readonly rate: number; readonly burst: number }, now: number) => {
              reserved.push(key)
              return buckets.reserve(key, rate, now)
            }
          }))
        )
        const app = Http.makeHttpLive({ worker: false }).pipe(
          Layer.provideMerge(Server.layerTest),
          Layer.provideMerge(Crypto.layerTest),
          Layer.provideMerge(spy),
          Layer.provideMerge(TestDatabase.layer),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
            new Map([
              ["TRACEBRIDGE_PROVIDER_A_BASE_URL", `${running.origin}/provider_a/{state}`],
              ["PROVIDER_A_VENDOR_KEY", vendorKey]
            ])
          )))
        )
        yield* Effect.provide(
          Effect.gen(function*() {
            // a sandbox connection's reads go to the in-process emulator, ungoverned
            const sandbox = yield* signIn
            const linked = yield* linkSandbox(sandbox.access)
            const sandboxFacilities = yield* call("GET", `/v1/connections/${linked.connection_id}/facilities`, {
              token: sandbox.access
            })
            assert.strictEqual(sandboxFacilities.status, 200)
            assert.deepStrictEqual(reserved, [])
            // a production connection's reads take a token each, per licence
            const { access } = yield* productionSignIn
            const { connectionId: connection } = yield* linkProduction(access)
            const world = running.sandbox.world("provider_a", "CO", "user_good")
            const cultivator = world.facilities.find((d) => d.role === "cultivation")!
            const before = reserved.length
            const packages = yield* call(
              "GET",
              `/v1/connections/${connection}/facilities/${cultivator.facility.id}/packages?per_page=5`,
              { token: access }
            )
            assert.strictEqual(packages.status, 200, JSON.stringify(packages.body))
            const licence = cultivator.facility.license_number
            const keys = reserved.slice(before)
            // the facility's calls are keyed by its licence; a facility list (no licence) by the vendor key alone
            const fingerprint = keys[0]!.split("|")[1]!
            assert.match(fingerprint, /^[0-9a-f]{32}$/)
            assert.includeMembers(keys, [`provider_a|${fingerprint}|${licence}`])
            // (the managed sync's backfill of every facility runs beside the read: each by its
            // licence, and admitted first by the key's background bucket, ADR 0032)
            const licences = world.facilities.map((d) => `provider_a|${fingerprint}|${d.facility.license_number}`)
            const known = [...licences, `provider_a|${fingerprint}|`, `provider_a|${fingerprint}|*`]
            assert.includeMembers([...known, ...known.map((k) => `${k}|background`)], [...new Set(keys)])
            // and every request also takes a token of the vendor key's own bucket (Metrc's per-integrator limit)
            assert.includeMembers(keys, [`provider_a|${fingerprint}|*`])
            assert.isTrue(reserved.every((key) => !key.includes(vendorKey) && !key.includes("user_good")))
          }),
          app
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
