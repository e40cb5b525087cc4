/**
 * The sandbox read cache as the API runs it: the sandbox's `ReadCache` over http's `Lru`, bounded
 * by `TRACEBRIDGE_SANDBOX_CACHE_ENTRIES`. Past its capacity it drops the least recently used answer,
 * and 0 turns it off. End to end, a write is visible in the next list (see also Resources.test.ts).
 * The cache's rules (versions, minutes, faults, failures) are tested in the sandbox
 * (`ReadCache.test.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import type { ProviderPort, Session } from "@tracebridge/core"
import { Session as Sessions } from "@tracebridge/core"
import { ReadCache, Registry, Sandbox } from "@tracebridge/sandbox"
import { Effect } from "effect"
import * as Lru from "../src/Lru.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

const setup = (capacity: number) => {
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: "2026-03-15T12:00:00.000Z",
    now: () => 0
  })
  const key = Sandbox.keyOf("provider_a", "CO", "user_good~conn_1")
  sandbox.world("provider_a", "CO", "user_good~conn_1")
  const calls: Array<string> = []
  const port = {
    list: (resource: string, _session: Session.Session, facility: string, query: unknown) =>
      Effect.sync(() => {
        calls.push(`${resource} ${facility} ${JSON.stringify(query)}`)
        return { items: [{ id: calls.length }], pagination: {} }
      })
  } as unknown as ProviderPort.Service
  const mine = Sessions.make({
    key: "conn_1",
    provider: "provider_a",
    state: "CO",
    environment: "sandbox",
    credentials: {}
  })
  const cached = ReadCache.wrap(port, sandbox, new Lru.Lru(capacity), (s) => s === mine ? key : undefined)
  const list = (query: unknown = {}) =>
    cached.list("packages", mine, "fac_1", query as never, { page: 1, per_page: 10 } as never)
  return { calls, list }
}

describe("SandboxReadCache", () => {
  it.effect("drops the least recently used answer past its capacity, and 0 turns it off", () =>
    Effect.gen(function*() {
      const { calls, list } = setup(2)
      yield* list({ a: 1 })
      yield* list({ a: 2 })
      yield* list({ a: 1 })
      yield* list({ a: 3 })
      yield* list({ a: 1 })
      assert.strictEqual(calls.length, 3)
      yield* list({ a: 2 })
      assert.strictEqual(calls.length, 4)
      const off = setup(0)
      yield* off.list()
      yield* off.list()
      assert.strictEqual(off.calls.length, 2)
    }))

  it.effect("end to end: a split package shows in the next list of the same page", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const { connection_id } = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${connection_id}/facilities`, { token: me.access })
      const facility = facilities.body.data[0].id as string
      const path = `/v1/connections/${connection_id}/facilities/${facility}/packages?per_page=100`
      const before = yield* call("GET", path, { token: me.access })
      assert.strictEqual(
        (yield* call("GET", path, { token: me.access })).body.pagination.total,
        before.body.pagination.total
      )
      const source = (before.body.data as Array<any>).find((p) => !p.is_on_hold && p.quantity > 5)
      const split = yield* call("POST", `/v1/connections/${connection_id}/facilities/${facility}/packages`, {
        token: me.access,
        json: {
          item_name: source.item_name,
          item_category: source.item_category,
          quantity: 1,
          unit_of_measure: source.unit_of_measure,
          source_package_ids: [source.id]
        }
      })
      assert.strictEqual(split.status, 201, JSON.stringify(split.body))
      const after = yield* call("GET", path, { token: me.access })
      assert.strictEqual(after.body.pagination.total, before.body.pagination.total + 1)
    }).pipe(Effect.provide(TestApp)))
})
