/**
 * Sandbox reads kept by world version: the same read is answered once per version and minute,
 * a change to the world, a fault, another session or another query reads again, and failures are
 * never kept. End to end, a write is visible in the next list (see also Resources.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import type { ProviderPort, Session } from "@tracebridge/core"
import { ProviderError, Session as Sessions } from "@tracebridge/core"
import { Registry, Sandbox } from "@tracebridge/sandbox"
import { Effect, TestClock } from "effect"
import * as Lru from "../src/Lru.js"
import * as SandboxReadCache from "../src/services/SandboxReadCache.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

const setup = (capacity = 10) => {
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: "2026-03-15T12:00:00.000Z",
    now: () => 0
  })
  const key = Sandbox.keyOf("provider_a", "CO", "user_good~conn_1")
  sandbox.world("provider_a", "CO", "user_good~conn_1")
  const calls: Array<string> = []
  let failNext = false
  const port = {
    list: (resource: string, _session: Session.Session, facility: string, query: unknown) =>
      Effect.suspend(() => {
        calls.push(`${resource} ${facility} ${JSON.stringify(query)}`)
        if (failNext) {
          failNext = false
          return Effect.fail(
            new ProviderError.ProviderUnavailable({ provider: "provider_a", operation: "x", message: "down" })
          )
        }
        return Effect.succeed({ items: [{ id: calls.length }], pagination: {} })
      })
  } as unknown as ProviderPort.Service
  const session = (key: string) =>
    Sessions.make({ key, provider: "provider_a", state: "CO", environment: "sandbox", credentials: {} })
  const mine = session("conn_1")
  const worlds = new Map<Session.Session, string>([[mine, key]])
  const cached = SandboxReadCache.wrap(
    port,
    sandbox,
    new Lru.Lru(capacity),
    (s) => worlds.get(s)
  )
  const list = (s: Session.Session = mine, query: unknown = {}) =>
    cached.list("packages", s, "fac_1", query as never, { page: 1, per_page: 10 } as never)
  return { sandbox, key, calls, list, session, fail: () => (failNext = true) }
}

describe("SandboxReadCache", () => {
  it.effect("answers the same read once per world version and minute", () =>
    Effect.gen(function*() {
      const { calls, key, list, sandbox } = setup()
      const first = yield* list()
      assert.strictEqual(yield* list(), first)
      assert.strictEqual(calls.length, 1)
      yield* list(undefined, { is_on_hold: true })
      assert.strictEqual(calls.length, 2, "another query is another read")
      sandbox.reset(key)
      yield* list()
      assert.strictEqual(calls.length, 3, "a changed world is read again")
      yield* TestClock.adjust("60 seconds")
      yield* list()
      assert.strictEqual(calls.length, 4, "an answer lives at most a minute")
    }))

  it.effect("bypasses a world with a fault, a session without a world, and keeps no failure", () =>
    Effect.gen(function*() {
      const { calls, fail, key, list, sandbox, session } = setup()
      sandbox.setFault(key, { kind: "outage" })
      yield* list()
      yield* list()
      assert.strictEqual(calls.length, 2)
      sandbox.setFault(key, null)
      const stranger = session("conn_2")
      yield* list(stranger)
      yield* list(stranger)
      assert.strictEqual(calls.length, 4)
      fail()
      const failed = yield* Effect.either(list())
      assert.strictEqual(failed._tag, "Left")
      yield* list()
      assert.strictEqual(calls.length, 6, "a failure was kept")
    }))

  it.effect("drops the least recently used answer past its capacity, and 0 turns it off", () =>
    Effect.gen(function*() {
      const { calls, list } = setup(2)
      yield* list(undefined, { a: 1 })
      yield* list(undefined, { a: 2 })
      yield* list(undefined, { a: 1 })
      yield* list(undefined, { a: 3 })
      yield* list(undefined, { a: 1 })
      assert.strictEqual(calls.length, 3)
      yield* list(undefined, { a: 2 })
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
