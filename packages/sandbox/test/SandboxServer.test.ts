/**
 * The in-process client (`SandboxServer.httpClient`): an answer comes back on a later turn of the
 * event loop, as over a socket, so that a sync making thousands of in-process calls lets the
 * server's sockets, timers and other requests in between (it held the event loop for seconds).
 */
import { HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { SandboxServer } from "@tracebridge/sandbox"
import { Effect, Fiber } from "effect"

const answering = (order: Array<string>): SandboxServer.Handler => (request) => {
  order.push(`handler ${new URL(request.url).pathname}`)
  return Promise.resolve(new Response("{}", { status: 200, headers: { "content-type": "application/json" } }))
}

describe("SandboxServer.httpClient", () => {
  it.live("runs the handler after what the event loop had waiting", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const client = SandboxServer.httpClient(answering(order))
      setImmediate(() => order.push("immediate"))
      const response = yield* client.execute(HttpClientRequest.get(`${SandboxServer.IN_PROCESS_ORIGIN}/x`))
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(order, ["immediate", "handler /x"])
    }))

  it.live("lets other work run between the calls of a long run of them", () =>
    Effect.gen(function*() {
      const client = SandboxServer.httpClient(answering([]))
      let turns = 0
      let running = true
      const tick = () => {
        turns++
        if (running) setImmediate(tick)
      }
      setImmediate(tick)
      yield* Effect.forEach(
        Array.from({ length: 200 }, (_, i) => i),
        (i) => client.get(`${SandboxServer.IN_PROCESS_ORIGIN}/n/${i}`),
        { discard: true }
      )
      running = false
      // every call waits for one turn, so the ticker ran about once a call (it ran once, at most, before)
      assert.isAtLeast(turns, 150)
    }))

  it.live("an interrupted call never reaches the handler", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const client = SandboxServer.httpClient(answering(order))
      const fiber = yield* Effect.fork(client.execute(HttpClientRequest.get(`${SandboxServer.IN_PROCESS_ORIGIN}/gone`)))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(order, [])
    }))
})
