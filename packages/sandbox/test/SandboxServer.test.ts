/**
 * The in-process client (`SandboxServer.httpClient`): a run of calls gives the event loop a turn
 * at least every `SLICE_MS`, as answers over sockets would, so that a sync making thousands of
 * in-process calls lets the server's sockets, timers and other requests in between (it held the
 * event loop for seconds).
 */
import { HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { SandboxServer } from "@tracebridge/sandbox"
import { Effect, Fiber } from "effect"

/** Holds the event loop, as a long synchronous stretch of work does. */
const busyFor = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // nothing else runs
  }
}

const answering = (order: Array<string>, workMs = 0): SandboxServer.Handler => (request) => {
  order.push(`handler ${new URL(request.url).pathname}`)
  busyFor(workMs)
  return Promise.resolve(new Response("{}", { status: 200, headers: { "content-type": "application/json" } }))
}

const get = (path: string) => HttpClientRequest.get(`${SandboxServer.IN_PROCESS_ORIGIN}${path}`)

describe.sequential("SandboxServer.httpClient", () => {
  it.live("a call after a slice of work without a turn runs after what the event loop had waiting", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const client = SandboxServer.httpClient(answering(order))
      busyFor(SandboxServer.SLICE_MS + 5)
      setImmediate(() => order.push("immediate"))
      const response = yield* client.execute(get("/x"))
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(order, ["immediate", "handler /x"])
    }))

  it.live("a long run of calls lets other work run about every slice", () =>
    Effect.gen(function*() {
      const client = SandboxServer.httpClient(answering([], 1))
      let turns = 0
      let running = true
      const tick = () => {
        turns++
        if (running) setImmediate(tick)
      }
      setImmediate(tick)
      const started = performance.now()
      yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => i), (i) => client.execute(get(`/n/${i}`)), {
        discard: true
      })
      running = false
      const elapsed = performance.now() - started
      // 200 calls of 1 ms: at least 200 ms, so at least a turn for every slice of it but the last
      assert.isAtLeast(elapsed, 200)
      assert.isAtLeast(turns, Math.floor(elapsed / (SandboxServer.SLICE_MS + 2)) - 1)
    }))

  it.live("a call interrupted while it waits for its turn never reaches the handler", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const client = SandboxServer.httpClient(answering(order))
      busyFor(SandboxServer.SLICE_MS + 5)
      const fiber = yield* Effect.fork(client.execute(get("/gone")))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(order, [])
    }))
})
