/**
 * The request log's store (`RequestLogStore`) and read service (`services/RequestLog.ts`) on every
 * backend: one suite, run against SQLite (`RequestLogStore.test.ts`) and Postgres
 * (`RequestLogStore.pg.test.ts`). Each test gets a fresh database.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import type { Persistence } from "../src/persistence/Database.js"
import type { Call, Entry } from "../src/persistence/RequestLogStore.js"
import { RequestLogStore } from "../src/persistence/RequestLogStore.js"
import * as RequestLog from "../src/services/RequestLog.js"

/** Epoch ms beyond 2^31 (2026-01-01), so a BIGINT that came back as a string would show. */
const T0 = 1_767_225_600_000

const entry = (n: number, over: Partial<Entry> = {}): Entry => ({
  request_id: `req_${String(n).padStart(24, "0")}`,
  organisation_id: "org_a",
  at: T0 + n * 1000,
  method: "GET",
  route: "/v1/connections/:connection_id/facilities",
  path: `/v1/connections/conn_1/facilities?page=${n}`,
  status: 200,
  status_class: "2xx",
  duration_ms: 1.5,
  principal: "tb_client_a",
  connection_id: "conn_1",
  error_code: null,
  request_body: null,
  request_body_truncated: false,
  error_body: null,
  upstream_calls: 0,
  ...over
})

const call = (requestId: string, n: number, over: Partial<Call> = {}): Call => ({
  request_id: requestId,
  n,
  at: T0 + n,
  provider: "provider_a",
  state: "CO",
  operation: "listPackages",
  method: "GET",
  path: "/provider_a/CO/packages/v2/active?licenseNumber=403-X0001",
  status: 200,
  failure: null,
  duration_ms: 2.25,
  attempt: 1,
  rate_limited: false,
  error_code: null,
  ...over
})

export const requestLogStoreSuite = (name: string, database: () => Layer.Layer<Persistence>) => {
  const withLog = <A, E>(effect: Effect.Effect<A, E, RequestLogStore | RequestLog.RequestLog>) =>
    Effect.provide(effect, RequestLog.layer.pipe(Layer.provideMerge(database())))

  describe(name, () => {
    it.scoped("lists an organisation's entries newest first, with each filter and keyset paging", () =>
      withLog(Effect.gen(function*() {
        const store = yield* RequestLogStore
        const log = yield* RequestLog.RequestLog
        yield* store.insertBatch([
          { entry: entry(1), calls: [] },
          {
            entry: entry(2, {
              status: 409,
              status_class: "4xx",
              error_code: "connection_login_required",
              error_body: "{\"error\":{\"code\":\"connection_login_required\"}}",
              upstream_calls: 1
            }),
            calls: [call(entry(2).request_id, 1, { status: 401 })]
          },
          {
            entry: entry(3, {
              status: 503,
              status_class: "5xx",
              connection_id: "conn_2",
              route: "/v1/connections/:connection_id"
            }),
            calls: []
          },
          { entry: entry(4, { organisation_id: "org_b" }), calls: [] },
          { entry: entry(5, { route: "/v1/webhooks", connection_id: null, method: "POST" }), calls: [] }
        ])
        const ids = (page: RequestLog.Page) => page.items.map((i) => Number(i.request_id.slice(4)))

        const everything = yield* log.list("org_a", {}, undefined, 100)
        assert.deepStrictEqual(ids(everything), [5, 3, 2, 1])
        assert.isNull(everything.next_cursor)
        // read back as written, a BIGINT time included
        assert.deepStrictEqual(everything.items[3], {
          request_id: entry(1).request_id,
          organisation_id: "org_a",
          at: T0 + 1000,
          method: "GET",
          route: "/v1/connections/:connection_id/facilities",
          path: "/v1/connections/conn_1/facilities?page=1",
          status: 200,
          status_class: "2xx",
          duration_ms: 1.5,
          principal: "tb_client_a",
          connection_id: "conn_1",
          error_code: null,
          upstream_calls: 0
        })

        assert.deepStrictEqual(ids(yield* log.list("org_a", { status_class: "2xx" }, undefined, 100)), [5, 1])
        assert.deepStrictEqual(ids(yield* log.list("org_a", { status_class: "4xx" }, undefined, 100)), [2])
        assert.deepStrictEqual(ids(yield* log.list("org_a", { status_class: "5xx" }, undefined, 100)), [3])
        assert.deepStrictEqual(ids(yield* log.list("org_a", { route: "/v1/webhooks" }, undefined, 100)), [5])
        assert.deepStrictEqual(ids(yield* log.list("org_a", { connection_id: "conn_1" }, undefined, 100)), [2, 1])
        assert.deepStrictEqual(
          ids(yield* log.list("org_a", { request_id: entry(2).request_id }, undefined, 100)),
          [2]
        )
        assert.deepStrictEqual(
          ids(yield* log.list("org_a", { connection_id: "conn_1", status_class: "2xx" }, undefined, 100)),
          [1]
        )
        // another organisation's entry is not in the list, even by its request id
        assert.deepStrictEqual(ids(yield* log.list("org_a", { request_id: entry(4).request_id }, undefined, 9)), [])
        assert.deepStrictEqual(ids(yield* log.list("org_b", {}, undefined, 100)), [4])
        assert.deepStrictEqual(ids(yield* log.list("org_c", {}, undefined, 100)), [])

        // pages of two: every entry once, in order
        const first = yield* log.list("org_a", {}, undefined, 2)
        assert.deepStrictEqual(ids(first), [5, 3])
        assert.isString(first.next_cursor)
        const second = yield* log.list("org_a", {}, first.next_cursor!, 2)
        assert.deepStrictEqual(ids(second), [2, 1])
        assert.isNull(second.next_cursor)
        // an entry that arrives meanwhile does not shift the next page
        yield* store.insertBatch([{ entry: entry(6), calls: [] }])
        assert.deepStrictEqual(ids(yield* log.list("org_a", {}, first.next_cursor!, 2)), [2, 1])
        // entries at the same millisecond page by request id
        yield* store.insertBatch([
          { entry: entry(7, { at: T0 + 9_000, request_id: "req_b" }), calls: [] },
          { entry: entry(8, { at: T0 + 9_000, request_id: "req_a" }), calls: [] }
        ])
        const tie = yield* log.list("org_a", {}, undefined, 1)
        assert.strictEqual(tie.items[0]!.request_id, "req_b")
        const after = yield* log.list("org_a", {}, tie.next_cursor!, 1)
        assert.strictEqual(after.items[0]!.request_id, "req_a")

        const bad = yield* Effect.either(log.list("org_a", {}, "not a cursor", 2))
        assert.isTrue(Either.isLeft(bad))
        const forged = yield* Effect.either(log.list("org_a", {}, Buffer.from("{}").toString("base64url"), 2))
        assert.isTrue(Either.isLeft(forged) && forged.left._tag === "InvalidCursor")
      })))

    it.scoped("gets one entry with its upstream calls in order; another organisation's is not found", () =>
      withLog(Effect.gen(function*() {
        const store = yield* RequestLogStore
        const log = yield* RequestLog.RequestLog
        const id = entry(1).request_id
        const failing = entry(1, {
          status: 409,
          status_class: "4xx",
          error_code: "connection_login_required",
          request_body: "{\"password\":\"[REDACTED]\"}",
          request_body_truncated: true,
          error_body: "{\"error\":{\"code\":\"connection_login_required\"}}",
          upstream_calls: 3
        })
        const calls = [
          call(id, 1, { provider: "provider_b", state: "HI", method: "POST", status: 200, error_code: "63" }),
          call(id, 2, { status: 429, rate_limited: true, operation: null }),
          call(id, 3, { status: null, failure: "timeout", attempt: 2 })
        ]
        yield* store.insertBatch([{ entry: failing, calls: [calls[2]!, calls[0]!, calls[1]!] }])
        const found = yield* log.get("org_a", id)
        assert.isTrue(Option.isSome(found))
        const detail = Option.getOrThrow(found)
        assert.deepStrictEqual(detail.entry, failing)
        assert.deepStrictEqual(detail.calls, calls)
        assert.isTrue(Option.isNone(yield* log.get("org_b", id)))
        assert.isTrue(Option.isNone(yield* log.get("org_a", "req_none")))
      })))

    it.scoped("prunes the entries older than the cut-off, with their calls", () =>
      withLog(Effect.gen(function*() {
        const store = yield* RequestLogStore
        const log = yield* RequestLog.RequestLog
        const batch = Array.from({ length: 30 }, (_, i) => ({
          entry: entry(i + 1, { upstream_calls: 1 }),
          calls: [call(entry(i + 1).request_id, 1)]
        }))
        yield* store.insertBatch(batch)
        // entries 1..20 arrived before T0 + 20_500
        assert.strictEqual(yield* store.prune(T0 + 20_500), 20)
        const left = yield* log.list("org_a", {}, undefined, 100)
        assert.deepStrictEqual(left.items.map((i) => i.at), Array.from({ length: 10 }, (_, i) => T0 + (30 - i) * 1000))
        assert.isTrue(Option.isNone(yield* log.get("org_a", entry(20).request_id)))
        const kept = Option.getOrThrow(yield* log.get("org_a", entry(21).request_id))
        assert.strictEqual(kept.calls.length, 1)
        assert.strictEqual(yield* store.prune(T0 + 20_500), 0)
        assert.strictEqual(yield* store.prune(T0 + 1_000_000), 10)
      })))
  })
}
