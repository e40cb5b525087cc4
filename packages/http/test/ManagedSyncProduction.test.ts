/**
 * The managed sync in production mode, against the strict provider_a emulator (the standalone
 * sandbox server, reached as a production state system with a vendor key, under the upstream
 * rate governor): a linked connection is `pending` until every facility's backfill is done, then
 * `active`; the feed holds exactly the records the state system has (read again through the
 * adapter, not the store); production reads are then answered from the store with `meta.sync` and
 * no upstream call; a refused login moves the connection to `error` and queues
 * `connection.login_required`.
 */
import { SqlClient } from "@effect/sql"
import { LibsqlClient } from "@effect/sql-libsql"
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { Standalone } from "@tracebridge/sandbox"
import { Polls } from "@tracebridge/sync"
import { ConfigProvider, Effect, Either, Layer, Option } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Database from "../src/persistence/Database.js"
import * as Crypto from "../src/services/Crypto.js"
import { Providers } from "../src/services/Providers.js"
import { call, linkProduction, productionSignIn } from "./support/TestApp.js"

/** The database, in a file: the test reads the queued events beside the API. */
const file = path.join(os.tmpdir(), `tracebridge-sync-production-${process.pid}.db`)

const HORIZON_DAYS = 8

const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Every change of a feed from `cursor`: the changes and the last cursor. */
const drainAll = (token: string, base: string, cursor?: string) =>
  Effect.gen(function*() {
    const changes: Array<any> = []
    let next = cursor
    for (;;) {
      const page = yield* call("GET", `${base}/changes?limit=500${next === undefined ? "" : `&cursor=${next}`}`, {
        token
      })
      assert.strictEqual(page.status, 200, JSON.stringify(page.body))
      changes.push(...page.body.data)
      next = page.body.meta.next_cursor as string
      if (!page.body.meta.has_more) return { changes, cursor: next }
    }
  })

const standalone = Effect.acquireRelease(
  Effect.promise(() => Standalone.start({ port: 0, host: "127.0.0.1", seed: "42" })),
  (running) => Effect.promise(() => running.close())
)

const appFor = (origin: string) =>
  Http.makeHttpLive({ worker: false }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(Layer.orDie(Database.layerSqlite(file))),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
      new Map([
        ["TRACEBRIDGE_PROVIDER_A_BASE_URL", `${origin}/provider_a/{state}`],
        ["PROVIDER_A_VENDOR_KEY", "integrator-vendor-key"],
        // 8 days of 24 h windows (the sandbox's facilities were licensed 60 to 80 days ago)
        ["TRACEBRIDGE_SYNC_HORIZON_DAYS", String(HORIZON_DAYS)],
        // the shortest poll interval: the scheduled poll below is due 10 s after the backfill
        ["TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS", "10"]
      ])
    )))
  )

describe("managed sync (production, provider_a emulator)", () => {
  it.live("backfills every facility, then answers the feed and the reads from the store", () =>
    Effect.gen(function*() {
      const running = yield* standalone
      const upstream: Array<string> = []
      running.server.on("request", (request: { url?: string }) => upstream.push(request.url ?? ""))
      yield* Effect.provide(
        Effect.gen(function*() {
          const { access } = yield* productionSignIn
          const { connectionId, status: linked } = yield* linkProduction(access)
          assert.strictEqual(linked, "pending", "pending until the first backfill is done")

          let status: any
          for (let i = 0; i < 1200; i++) {
            status = (yield* call("GET", `/v1/connections/${connectionId}/sync`, { token: access })).body.data
            if (status.facilities.length > 0 && status.facilities.every((f: any) => f.status === "live")) break
            yield* pause(100)
          }
          assert.isTrue(status.facilities.every((f: any) => f.status === "live"), JSON.stringify(status))
          const connection = yield* call("GET", `/v1/connections/${connectionId}`, { token: access })
          assert.strictEqual(connection.body.data.status, "active")

          // the feed against the state system, read again through the adapter
          const providers = yield* Providers
          const port = Option.getOrThrow(yield* providers.port("provider_a", false))
          const row = Option.getOrThrow(yield* (yield* ConnectionStore).getConnection(connectionId))
          const session = yield* providers.session(row)
          for (const f of status.facilities as Array<any>) {
            const base = `/v1/connections/${connectionId}/facilities/${f.facility_id}`
            const changes: Array<any> = []
            let cursor: string | undefined
            for (;;) {
              const page = yield* call("GET", `${base}/changes?limit=500${cursor ? `&cursor=${cursor}` : ""}`, {
                token: access
              })
              changes.push(...page.body.data)
              cursor = page.body.meta.next_cursor
              if (!page.body.meta.has_more) break
            }
            assert.strictEqual(new Set(changes.map((c) => c.id)).size, changes.length)
            for (const r of f.resources as Array<any>) {
              if (r.status === "unavailable") continue
              // everything changed within the horizon, as the adapter reads it from the state system
              const since = new Date(Date.parse(r.backfilled_through) - HORIZON_DAYS * 86_400_000).toISOString()
              const truth = yield* port.listAll(r.type, session, f.facility_id, { updated_since: since })
              const fed = changes.filter((c) => c.type === r.type)
              assert.deepStrictEqual(
                fed.map((c) => c.object_id).sort(),
                truth.map((o: any) => o.id).sort(),
                `${f.facility_id} ${r.type}: exactly what the state system has`
              )
              for (const c of fed) assert.deepStrictEqual(c.object, truth.find((o: any) => o.id === c.object_id))
            }
          }

          // production reads now come from the store: meta.sync, and not one upstream request
          const f = status.facilities.find((x: any) =>
            x.resources.some((r: any) => r.type === "packages" && r.count > 0)
          )
          const base = `/v1/connections/${connectionId}/facilities/${f.facility_id}`
          const before = upstream.length
          const list = yield* call("GET", `${base}/packages?per_page=3&page=2`, { token: access })
          assert.strictEqual(list.status, 200, JSON.stringify(list.body))
          assert.strictEqual(list.body.meta.sync.status, "live")
          assert.strictEqual(list.body.pagination.page, 2)
          const one = yield* call("GET", `${base}/packages/${list.body.data[0].id}`, { token: access })
          assert.deepStrictEqual(one.body.data, list.body.data[0])
          const missing = yield* call("GET", `${base}/packages/pkg_nope`, { token: access })
          assert.strictEqual(missing.status, 404)
          const held = yield* call("GET", `${base}/packages?is_on_hold=true&per_page=100`, { token: access })
          assert.isTrue((held.body.data as Array<any>).every((p) => p.is_on_hold === true))
          assert.strictEqual(upstream.length, before, "no upstream call")

          // a change upstream is picked up by the scheduled poll (due 10 s after the backfill), once
          const { cursor: caughtUp } = yield* drainAll(access, base)
          const target = (held.body.data as Array<any>).length === 0
            ? (list.body.data as Array<any>).find((p) => !p.is_on_hold)
            : (yield* call("GET", `${base}/packages?is_on_hold=false&per_page=1`, { token: access })).body.data[0]
          const world = running.sandbox.world("provider_a", "CO", "user_good")
          const changed = running.sandbox.apply(world, {
            _tag: "Scenario",
            input: {
              name: "package_hold",
              params: { package_id: target.id, on_hold: true },
              at: Date.now()
            }
          })
          assert.isTrue(Either.isRight(changed), JSON.stringify(changed))
          const polls = yield* Polls.Polls
          let mine: Array<any> = []
          for (let i = 0; i < 60 && mine.length === 0; i++) {
            yield* pause(500)
            yield* polls.tick
            yield* pause(200)
            mine = (yield* drainAll(access, base, caughtUp)).changes.filter((c) => c.object_id === target.id)
          }
          assert.strictEqual(mine.length, 1, "the change once, from the scheduled poll")
          assert.isTrue(mine[0].object.is_on_hold)
          const reread = yield* call("GET", `${base}/packages/${target.id}`, { token: access })
          assert.isTrue(reread.body.data.is_on_hold, "the store answers the read with the change")

          // a package received by another facility leaves the shipper's active list for Metrc's
          // inactive one: the poll removes it from the shipper's store, and reads no longer show it
          const apply = (name: string, params: Record<string, unknown>) => {
            const applied = running.sandbox.apply<{ readonly change: any }>(
              running.sandbox.world("provider_a", "CO", "user_good"),
              {
                _tag: "Scenario",
                input: { name, params, at: Date.now() }
              }
            )
            return Either.getOrThrowWith(applied, (e) => new Error(`${name}: ${JSON.stringify(e)}`))
          }
          const shipment = apply("transfer_arrived", {}).change.data.transfer
          const facilities = (yield* call("GET", `/v1/connections/${connectionId}/facilities?per_page=100`, {
            token: access
          })).body.data as Array<any>
          const shipper = facilities.find((x) => x.license_number === shipment.shipper_facility)
          assert.isDefined(shipper, "the transfer ships from a facility of the connection")
          const moved = (shipment.packages as Array<any>).map((line) => line.package_id as string)
          const shipperBase = `/v1/connections/${connectionId}/facilities/${shipper.id}`
          const { cursor: beforeMove } = yield* drainAll(access, shipperBase)
          const stocked = yield* call("GET", `${shipperBase}/packages?per_page=100`, { token: access })
          for (const id of moved) assert.include(stocked.body.data.map((p: any) => p.id), id)
          apply("transfer_completed", { transfer_id: shipment.id, outcome: "received" })
          yield* pause(1_100) // Metrc's markers are whole seconds
          yield* polls.pollNow(connectionId, shipper.id)
          const gone = (yield* drainAll(access, shipperBase, beforeMove)).changes.filter((c) =>
            moved.includes(c.object_id)
          )
          assert.deepStrictEqual(
            gone.map((c) => [c.object_id, c.action]).sort(),
            moved.map((id) => [id, "removed"]).sort(),
            "each moved package removed once"
          )
          const restocked = yield* call("GET", `${shipperBase}/packages?per_page=100`, { token: access })
          assert.isDefined(restocked.body.meta.sync, "answered from the store")
          for (const id of moved) assert.notInclude(restocked.body.data.map((p: any) => p.id), id)

          // a refused login: error, and connection.login_required queued
          running.sandbox.world("provider_a", "CO", "user_good").loginRequired = true
          yield* (yield* Polls.Polls).pollNow(connectionId, f.facility_id)
          const after = yield* call("GET", `/v1/connections/${connectionId}`, { token: access })
          assert.strictEqual(after.body.data.status, "error")
          const events = yield* Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql`SELECT type FROM webhook_events WHERE connection_id = ${connectionId}`
          ).pipe(Effect.provide(LibsqlClient.layer({ url: `file:${file}` })))
          assert.includeMembers(events.map((e) => e.type), ["connection.login_required", "sync.updates_available"])
        }),
        appFor(running.origin)
      )
    }).pipe(Effect.scoped), 180_000)
})
