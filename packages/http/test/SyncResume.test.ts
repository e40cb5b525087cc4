/**
 * A backfill that stops half way (its process goes away mid-page) resumes in the next process from
 * its last stored page, without loss or duplicates: the next process's scheduler takes over a
 * backfill that stored nothing for `TRACEBRIDGE_SYNC_TAKEOVER_SECONDS`, and the feed then holds
 * every object of the facility exactly once, with change sequences 1…n and no gap (a page stored
 * twice would have used more).
 */
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { Jobs } from "@tracebridge/sync"
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import * as Database from "../src/persistence/Database.js"
import * as Crypto from "../src/services/Crypto.js"
import { call, linkSandbox, signIn } from "./support/TestApp.js"

const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const file = path.join(os.tmpdir(), `tracebridge-sync-resume-${process.pid}.db`)

/** One process of the API on the shared database file (the crypto key is the same in both). */
const processOf = () =>
  Http.makeHttpLive({ worker: false }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(Layer.orDie(Database.layerSqlite(file))),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
      new Map([["TRACEBRIDGE_SYNC_TAKEOVER_SECONDS", "1"]])
    )))
  )

const statusOf = (token: string, connectionId: string) =>
  Effect.map(call("GET", `/v1/connections/${connectionId}/sync`, { token }), (r) => r.body.data)

describe("a backfill that stops half way", () => {
  it.live(
    "resumes in the next process from its last stored page: every object once, no sequence used twice",
    () =>
      Effect.gen(function*() {
        // the first process: link, start the sync, and go away once some lists are done but not all
        const first = yield* Scope.make()
        const context = yield* Layer.buildWithScope(processOf(), first)
        const { access, connectionId } = yield* Effect.gen(function*() {
          const me = yield* signIn
          const linked = yield* linkSandbox(me.access)
          for (let i = 0; i < 400; i++) {
            const status = yield* statusOf(me.access, linked.connection_id)
            const resources = status.facilities.flatMap((f: any) => f.resources)
            const live = resources.filter((r: any) => r.status === "live").length
            if (live >= 2 && status.facilities.some((f: any) => f.status === "backfilling")) break
            yield* pause(20)
          }
          return { access: me.access, connectionId: linked.connection_id }
        }).pipe(Effect.provide(context))
        yield* Scope.close(first, Exit.void)

        // the next process: its scheduler takes the stopped backfills over
        yield* Effect.gen(function*() {
          const stopped = yield* statusOf(access, connectionId)
          assert.isTrue(
            stopped.facilities.some((f: any) => f.status === "backfilling"),
            "the first process stopped before the backfill was done"
          )
          const jobs = yield* Jobs.Jobs
          let status: any
          for (let i = 0; i < 600; i++) {
            if (i % 20 === 0) yield* jobs.tick
            status = yield* statusOf(access, connectionId)
            if (status.facilities.every((f: any) => f.status === "live")) break
            yield* pause(50)
          }
          assert.isTrue(status.facilities.every((f: any) => f.status === "live"), JSON.stringify(status))
          for (const f of status.facilities as Array<any>) {
            const base = `/v1/connections/${connectionId}/facilities/${f.facility_id}`
            const page = yield* call("GET", `${base}/changes?limit=500`, { token: access })
            assert.isFalse(page.body.meta.has_more)
            const changes = page.body.data as Array<any>
            const ids = changes.map((c) => c.object_id)
            assert.strictEqual(new Set(ids).size, ids.length, "every object once")
            assert.deepStrictEqual(
              changes.map((c) => Number(c.id.slice(4))),
              changes.map((_, i) => i + 1),
              "sequences 1…n: nothing stored twice"
            )
            const packages = yield* call("GET", `${base}/packages?per_page=100`, { token: access })
            assert.deepStrictEqual(
              changes.filter((c) => c.type === "packages").map((c) => c.object_id).sort(),
              (packages.body.data as Array<any>).map((p) => p.id).sort(),
              "and nothing lost"
            )
          }
        }).pipe(Effect.provide(Layer.fresh(processOf())), Effect.scoped)
      }),
    120_000
  )
})
