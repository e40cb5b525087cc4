/**
 * The dashboard's Issues feed (issue #33): the organisation's problems newest first, each with a
 * kind, a severity, a sentence, what to do, the ids and since when; bounded at 100 (`truncated`
 * says more exist); another organisation's never listed; every role reads it. The feed's kinds
 * are each met in their page's test (connections: a relink and a lagging facility; webhooks:
 * failing and failed deliveries); this one covers the bound, the order, failed syncs and a missing
 * vendor key (production provider_a connections while the API runs without `PROVIDER_A_VENDOR_KEY`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { SyncStore } from "@tracebridge/sync"
import { ConfigProvider, Effect, Layer, Option, TestClock } from "effect"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Crypto from "../src/services/Crypto.js"
import * as DashboardHealth from "../src/services/DashboardHealth.js"
import { accept, clientFor, firstOwner, invited, raw } from "./support/Dashboard.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

const T0 = Date.parse("2026-01-15T12:00:00.000Z")

/** Stores a connection directly. */
const insert = (
  organisationId: string,
  id: string,
  status: "active" | "error" | "inactive",
  at: number,
  options: { readonly provider?: string; readonly sandbox?: boolean } = {}
) =>
  Effect.flatMap(ConnectionStore, (store) =>
    store.insertConnection({
      id,
      organisation_id: organisationId,
      provider: options.provider ?? "provider_a",
      state: "CO",
      status,
      is_sandbox: options.sandbox ?? true,
      external_id: `<b>${id}</b>`,
      credentials: null,
      key_id: null,
      token_issued: false,
      created_at: at,
      updated_at: at,
      sandbox_version: 0,
      sandbox_fault: null
    }))

describe("Dashboard issues", () => {
  it.scoped(
    "newest first, at most 100, failed syncs included, another organisation's never listed",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const start = Option.getOrThrow(yield* Bootstrap.firstStart)
        const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "owner@example.com")
        const viewer = yield* invited(owner, "viewer@example.com", "viewer")
        const organisationId = owner.organisationId
        for (let i = 0; i < 104; i++) {
          yield* insert(organisationId, `conn_err_${String(i).padStart(3, "0")}`, "error", T0 - 10_000 + i)
        }
        // a facility whose sync fails (not a refused login), on an active connection: the newest problem
        yield* insert(organisationId, "conn_ok", "active", T0 - 50_000)
        const sync = yield* SyncStore.SyncStore
        yield* sync.ensureFacility("conn_ok", "fac_failing", T0)
        yield* sync.updateFacility("conn_ok", "fac_failing", {
          status: "live",
          last_synced_at: T0 - 60_000,
          failing_since: T0 - 1_000,
          last_error: "provider_unavailable: the state system answered 503"
        })
        const orgB = yield* Bootstrap.createOrganisation("Organisation B")
        const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
        yield* insert(orgB.id, "conn_b", "error", T0)

        const answer = yield* raw("GET", "/dashboard/api/issues", { cookie: viewer.cookie })
        assert.strictEqual(answer.status, 200)
        const { data, truncated } = answer.body
        assert.strictEqual(data.length, DashboardHealth.MAX_ISSUES)
        assert.isTrue(truncated)
        assert.strictEqual(data[0].kind, "sync_failed")
        assert.strictEqual(data[0].severity, "warning")
        assert.strictEqual(data[0].connection_id, "conn_ok")
        assert.strictEqual(data[0].facility_id, "fac_failing")
        assert.strictEqual(data[0].since, T0 - 1_000)
        assert.include(data[0].message, "503")
        assert.strictEqual(data[1].id, "connection_needs_relink:conn_err_103")
        assert.strictEqual(data[1].since, T0 - 10_000 + 103)
        assert.isString(data[1].action)
        assert.include(data[1].message, "<b>conn_err_103</b>", "the external id, as a plain JSON string")
        assert.isTrue(data.every((i: any, n: number) => n === 0 || i.since <= data[n - 1].since))
        assert.notInclude(answer.text, "conn_b")

        const theirs = yield* raw("GET", "/dashboard/api/issues", { cookie: ownerB.cookie })
        assert.deepStrictEqual(
          theirs.body.data.map((i: any) => i.id),
          ["connection_needs_relink:conn_b"]
        )
        assert.isFalse(theirs.body.truncated)

        // recovered, an issue is gone at the next call
        yield* Effect.flatMap(ConnectionStore, (store) => store.updateConnection("conn_err_103", { status: "active" }))
        yield* sync.updateFacility("conn_ok", "fac_failing", {
          failing_since: null,
          last_error: null,
          last_synced_at: T0
        })
        const after = yield* (yield* clientFor(owner)).issues.list()
        assert.isUndefined(after.data.find((i) => i.connection_id === "conn_err_103" || i.connection_id === "conn_ok"))
        assert.strictEqual(after.data.length, DashboardHealth.MAX_ISSUES)
        assert.strictEqual((yield* (yield* clientFor(owner)).overview.get()).open_issues, DashboardHealth.MAX_ISSUES)
        assert.strictEqual((yield* raw("GET", "/dashboard/api/issues")).status, 401)
      }).pipe(Effect.provide(app)),
    { timeout: 120_000 }
  )

  it.scoped(
    "a missing vendor key: each production provider_a connection, with where to set it, until the API runs with it",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        // one database, and the API started twice over it: without the vendor key, then with it
        const database = yield* Layer.build(TestDatabase.layer)
        const appWith = (config: ReadonlyArray<readonly [string, string]>) =>
          Http.makeHttpLive({ worker: false }).pipe(
            Layer.provideMerge(Server.layerTest),
            Layer.provideMerge(Crypto.layerTest),
            Layer.provideMerge(Layer.succeedContext(database)),
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(config))))
          )
        const VENDOR_KEY = "integrator-vendor-key-7c41"

        const { owner, ownerB, viewer } = yield* Effect.gen(function*() {
          const start = Option.getOrThrow(yield* Bootstrap.firstStart)
          const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "owner@example.com")
          const orgB = yield* Bootstrap.createOrganisation("Organisation B", "production")
          const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
          const viewer = yield* invited(owner, "viewer@example.com", "viewer")
          const org = owner.organisationId
          yield* insert(org, "conn_prod_a", "active", T0 - 3_000, { sandbox: false })
          // refused login too: both issues, the relink and the key
          yield* insert(org, "conn_prod_err", "error", T0 - 2_000, { sandbox: false })
          // none for these: disconnected, sandbox (its emulator needs no key), another provider
          yield* insert(org, "conn_prod_gone", "inactive", T0 - 1_000, { sandbox: false })
          yield* insert(org, "conn_sandbox", "active", T0 - 1_000)
          yield* insert(org, "conn_prod_b", "active", T0 - 1_000, { sandbox: false, provider: "provider_b" })
          yield* insert(orgB.id, "conn_theirs", "active", T0 - 500, { sandbox: false })
          return { owner, ownerB, viewer }
        }).pipe(Effect.provide(appWith([])))

        const keyIssues = (cookie: string) =>
          Effect.map(raw("GET", "/dashboard/api/issues", { cookie }), (answer) => {
            assert.strictEqual(answer.status, 200, answer.text)
            return {
              text: answer.text,
              all: answer.body.data as ReadonlyArray<any>,
              key: (answer.body.data as ReadonlyArray<any>).filter((i) => i.kind === "vendor_key_missing")
            }
          })

        // without the key: every live production provider_a connection of the organisation
        yield* Effect.gen(function*() {
          const mine = yield* keyIssues(viewer.cookie)
          assert.deepStrictEqual(mine.key.map((i) => i.id), [
            "vendor_key_missing:conn_prod_err",
            "vendor_key_missing:conn_prod_a"
          ])
          const first = mine.key[1]
          assert.strictEqual(first.severity, "critical")
          assert.strictEqual(first.connection_id, "conn_prod_a")
          assert.strictEqual(first.since, T0 - 3_000)
          assert.include(first.message, "provider_a")
          assert.include(first.message, "503")
          assert.include(first.action, "PROVIDER_A_VENDOR_KEY")
          assert.include(first.action, "restart")
          assert.isDefined(mine.all.find((i) => i.id === "connection_needs_relink:conn_prod_err"))
          assert.notInclude(mine.text, "conn_theirs")
          const theirs = yield* keyIssues(ownerB.cookie)
          assert.deepStrictEqual(theirs.key.map((i) => i.id), ["vendor_key_missing:conn_theirs"])
          assert.strictEqual((yield* (yield* clientFor(owner)).overview.get()).open_issues, mine.all.length)
        }).pipe(Effect.provide(appWith([])))

        // an empty value is no key either
        yield* Effect.gen(function*() {
          assert.strictEqual((yield* keyIssues(owner.cookie)).key.length, 2)
        }).pipe(Effect.provide(appWith([["PROVIDER_A_VENDOR_KEY", " "]])))

        // the API restarted with the key: the issues are gone, the relink stays, the key is never shown
        yield* Effect.gen(function*() {
          const mine = yield* keyIssues(owner.cookie)
          assert.deepStrictEqual(mine.key, [])
          assert.isDefined(mine.all.find((i) => i.id === "connection_needs_relink:conn_prod_err"))
          assert.notInclude(mine.text, VENDOR_KEY)
          assert.deepStrictEqual((yield* keyIssues(ownerB.cookie)).key, [])
        }).pipe(Effect.provide(appWith([["PROVIDER_A_VENDOR_KEY", VENDOR_KEY]])))
      }),
    { timeout: 120_000 }
  )
})
