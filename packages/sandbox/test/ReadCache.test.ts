/**
 * Sandbox reads kept by world version: the same read is answered once per version and minute, a
 * change to the world, a fault, another session or another query reads again, failures are never
 * kept, and a cache of capacity 0 is no cache. The API's bound (an LRU) and the end-to-end check
 * are http's `SandboxReadCache.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ProviderPort, Session } from "@tracebridge/core"
import { ProviderError, Session as Sessions } from "@tracebridge/core"
import { ReadCache, Registry, Sandbox } from "@tracebridge/sandbox"
import { Effect, TestClock } from "effect"

/** A cache that keeps everything (the host's bound is its own business). */
const unbounded = (capacity = 10): ReadCache.Cache => {
  const entries = new Map<string, unknown>()
  return { capacity, get: (key) => entries.get(key), set: (key, value) => entries.set(key, value) }
}

const setup = (cache: ReadCache.Cache = unbounded()) => {
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
  const cached = ReadCache.wrap(port, sandbox, cache, (s) => worlds.get(s))
  const list = (s: Session.Session = mine, query: unknown = {}) =>
    cached.list("packages", s, "fac_1", query as never, { page: 1, per_page: 10 } as never)
  return { sandbox, key, calls, list, session, fail: () => (failNext = true) }
}

describe("ReadCache", () => {
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

  it.effect("a cache of capacity 0 is no cache", () =>
    Effect.gen(function*() {
      const off = setup(unbounded(0))
      yield* off.list()
      yield* off.list()
      assert.strictEqual(off.calls.length, 2)
    }))
})
