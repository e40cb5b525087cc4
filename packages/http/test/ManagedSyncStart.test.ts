/**
 * A production connection whose first sync did not start at its link (the state system failed to
 * list its facilities just then, or the start itself failed) is started later by the scheduler
 * (`ManagedSync.startUnsynced`), once the state system answers: its facilities are backfilled and
 * it becomes `active`. Before, nothing retried it, and it stayed `pending` with no sync at all.
 *
 * Against the strict provider_a emulator (the standalone sandbox as a production state system),
 * behind a proxy that answers 503 to the facility list while the test says so.
 */
import { assert, describe, it } from "@effect/vitest"
import { SyncStore } from "@tracebridge/sync"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as ManagedSync from "../src/services/ManagedSync.js"
import { appAt, standalone } from "./support/StandaloneUpstream.js"
import { awaitStatus, linkProduction, productionSignIn } from "./support/TestApp.js"

/**
 * A proxy to `origin` that answers 503 to every facility list after the first (the login check)
 * while `failing` is set.
 */
const proxyTo = (origin: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const state = { failing: false, lists: 0, refused: 0 }
      const server = http.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const url = request.url ?? "/"
          if (url.includes("/facilities/v2/")) {
            state.lists++
            if (state.failing && state.lists > 1) {
              state.refused++
              response.writeHead(503, { "content-type": "application/json" })
              response.end("{\"Message\":\"Service unavailable\"}")
              return
            }
          }
          const headers = new Headers()
          for (const [name, value] of Object.entries(request.headers)) {
            if (typeof value === "string" && name !== "host" && name !== "connection") headers.set(name, value)
          }
          fetch(`${origin}${url}`, {
            method: request.method ?? "GET",
            headers,
            ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) })
          }).then(async (answer) => {
            const body = Buffer.from(await answer.arrayBuffer())
            const out: Record<string, string> = {}
            answer.headers.forEach((value, name) => {
              if (name !== "content-encoding" && name !== "content-length" && name !== "transfer-encoding") {
                out[name] = value
              }
            })
            response.writeHead(answer.status, out)
            response.end(body)
          }, () => {
            response.writeHead(502)
            response.end()
          })
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { state, server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
    }),
    ({ server }) => Effect.promise(() => new Promise((resolve) => server.close(resolve)))
  )

describe("ManagedSync.startUnsynced", () => {
  it.live(
    "a production connection whose sync did not start at its link is started once the state system answers",
    () =>
      Effect.gen(function*() {
        const running = yield* standalone
        const proxy = yield* proxyTo(running.origin)
        yield* Effect.provide(
          Effect.gen(function*() {
            const { access } = yield* productionSignIn
            // the login check answers; the facility list of the link's first sync does not
            proxy.state.failing = true
            const { connectionId, status: linked } = yield* linkProduction(access)
            assert.isAbove(proxy.state.refused, 0, "the link's facility list was refused")
            assert.strictEqual(linked, "pending")
            const store = yield* SyncStore.SyncStore
            assert.deepStrictEqual(yield* store.facilities(connectionId), [], "no sync was started at the link")

            // still failing: the scheduler tries, and nothing is started or lost
            const backoff: ManagedSync.StartBackoff = new Map()
            assert.strictEqual(yield* ManagedSync.startUnsynced(Date.now() + 1, backoff), 0)
            assert.deepStrictEqual(yield* store.facilities(connectionId), [])
            // this node waits before it tries again: no upstream call on its next tick
            proxy.state.failing = false
            const lists = proxy.state.lists
            assert.strictEqual(yield* ManagedSync.startUnsynced(Date.now() + 1, backoff), 0)
            assert.strictEqual(proxy.state.lists, lists, "backing off: no facility list asked for")

            // the state system answers again: a node's scheduler starts every facility's backfill
            const started = yield* ManagedSync.startUnsynced(Date.now() + 1, new Map())
            assert.strictEqual(started, 1, "one connection started")
            assert.isAbove((yield* store.facilities(connectionId)).length, 0, "its facilities are in the sync")
            assert.strictEqual(
              yield* awaitStatus(access, connectionId, "active"),
              "active",
              "every facility backfilled: the connection is active"
            )
            // a connection with its sync is not started again
            assert.strictEqual(yield* ManagedSync.startUnsynced(Date.now() + 1, new Map()), 0)
          }),
          appAt(proxy.origin, { TRACEBRIDGE_SYNC_HORIZON_DAYS: "1" })
        )
      }).pipe(Effect.scoped),
    120_000
  )
})
