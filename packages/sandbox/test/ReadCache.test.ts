/**
 * Sandbox reads kept by world version: the same read is answered once per version and minute, a
 * change to the world, a fault, another session or another query reads again, failures are never
 * kept, reads that miss together make one call (and share no failure), and a cache of capacity 0
 * is no cache. The API's bound (an LRU) and the end-to-end check
 * are http's `SandboxReadCache.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ProviderPort, Session } from "@tracebridge/core"
import { ProviderError, Session as Sessions } from "@tracebridge/core"
import { ReadCache, Registry, Sandbox } from "@tracebridge/sandbox"
import { Deferred, Effect, Fiber, TestClock } from "effect"

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
  // when set, every read waits for it to open (reads then overlap, as under concurrent requests)
  let gate: Deferred.Deferred<void> | undefined
  const port = {
    list: (resource: string, _session: Session.Session, facility: string, query: unknown) =>
      Effect.suspend(() => {
        calls.push(`${resource} ${facility} ${JSON.stringify(query)}`)
        const n = calls.length
        const shouldFail = failNext
        failNext = false
        const answer = shouldFail
          ? Effect.fail(
            new ProviderError.ProviderUnavailable({ provider: "provider_a", operation: "x", message: "down" })
          )
          : Effect.succeed({ items: [{ id: n }], pagination: {} })
        return gate === undefined ? answer : Effect.zipRight(Deferred.await(gate), answer)
      })
  } as unknown as ProviderPort.Service
  const session = (key: string) =>
    Sessions.make({ key, provider: "provider_a", state: "CO", environment: "sandbox", credentials: {} })
  const mine = session("conn_1")
  const worlds = new Map<Session.Session, string>([[mine, key]])
  const cached = ReadCache.wrap(port, sandbox, cache, (s) => worlds.get(s))
  const list = (s: Session.Session = mine, query: unknown = {}) =>
    cached.list("packages", s, "fac_1", query as never, { page: 1, per_page: 10 } as never)
  return {
    sandbox,
    key,
    calls,
    list,
    session,
    fail: () => (failNext = true),
    hold: () => Effect.map(Deferred.make<void>(), (d) => (gate = d)),
    release: () => gate === undefined ? Effect.void : Deferred.succeed(gate, undefined)
  }
}

/** Lets every forked fiber run until it waits. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

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

  it.effect("reads once for the requests that miss together, and shares no failure", () =>
    Effect.gen(function*() {
      // When an answer expires (each minute), every request in flight missed at once and each read
      // the emulator itself: a page of provider_a packages is about a hundred calls, and 20
      // requests at once held a server for seconds.
      const { calls, fail, hold, list, release } = setup()
      const gate = yield* hold()
      const together = yield* Effect.fork(Effect.all(Array.from({ length: 10 }, () => list()), { concurrency: 10 }))
      yield* settle
      yield* Deferred.succeed(gate, undefined)
      const answers = yield* Fiber.join(together)
      assert.strictEqual(calls.length, 1, "requests that missed together read once")
      for (const answer of answers) assert.strictEqual(answer, answers[0])

      // The first read fails: the requests that waited for it read again (one of them), and succeed.
      yield* TestClock.adjust("60 seconds")
      const second = yield* hold()
      fail()
      const failing = yield* Effect.fork(
        Effect.all(Array.from({ length: 5 }, () => Effect.either(list())), { concurrency: 5 })
      )
      yield* settle
      yield* Deferred.succeed(second, undefined)
      const outcomes = yield* Fiber.join(failing)
      assert.strictEqual(outcomes.filter((o) => o._tag === "Left").length, 1, "only the failed read's request fails")
      assert.strictEqual(calls.length, 3, "after the failure, one read for the four that waited")

      // The first read's request goes away (interrupted): the one that waited still gets its answer.
      yield* TestClock.adjust("60 seconds")
      yield* hold()
      const leader = yield* Effect.fork(list())
      yield* settle
      const follower = yield* Effect.fork(list())
      yield* settle
      yield* Fiber.interrupt(leader)
      yield* release()
      const answered = yield* Fiber.join(follower)
      assert.strictEqual(answered.items.length, 1)
      assert.strictEqual(calls.length, 5)
    }))
})
