/**
 * The client's retries against the overall deadline of the call (`Deadline`): no try's timeout
 * and no retry's wait runs past it, so a hung or failing state system costs at most the budget
 * the caller gave, however many retries the settings allow. Over a fake `HttpClient` that counts
 * the requests it is sent; time is the TestClock's.
 */
import { HttpClient, HttpClientResponse } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { ProviderAClient, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import { Deadline, Session, UpstreamGovernor } from "@tracebridge/core"
import type { ProviderError } from "@tracebridge/core"
import { Duration, Effect, Exit, Fiber, Option, Redacted, Schema, TestClock } from "effect"

const session = Session.make({
  key: "conn_deadline",
  provider: "provider_a",
  state: "CO",
  environment: "sandbox",
  credentials: { user_key: "user-key-good-0001" },
  baseUrl: "https://fake-metrc.test"
})

/** A client over a state system that answers with `answer` (or never), counting what it is sent. */
const clientWith = (
  answer: (request: number) => Option.Option<Response>,
  settings: Partial<ProviderAConfig.Settings> = {}
) =>
  Effect.gen(function*() {
    const sent: Array<number> = []
    const http = HttpClient.make((request) =>
      Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        sent.push(now)
        return Option.match(answer(sent.length), {
          onNone: () => Effect.never,
          onSome: (response) => Effect.succeed(HttpClientResponse.fromWeb(request, response))
        })
      })
    )
    const client = yield* ProviderAClient.make.pipe(
      Effect.provideService(HttpClient.HttpClient, http),
      Effect.provide(ProviderAConfig.layerTest({ requestTimeout: "30 seconds", maxRetries: 3, ...settings }))
    )
    return { client, sent }
  })

/** A governor in context that never waits and records every 429 it is told of. */
const recordingGovernor = () => {
  const told: Array<Option.Option<number>> = []
  const service: UpstreamGovernor.Service = {
    ...UpstreamGovernor.unlimited,
    throttled: (_key, retryAfter) =>
      Effect.sync(() => told.push(Option.map(retryAfter, (d) => Duration.toMillis(Duration.decode(d)))))
  }
  return { told, service }
}

const read = (client: ProviderAClient.Client) =>
  client.get(session, "/facilities/v2/", Schema.Unknown, { operation: "facilities.list" })

/** Forks `call`, moves the clock `by`, and answers its error if it has failed by then. */
const after = <A>(call: Effect.Effect<A, ProviderError.ProviderError>, by: Duration.DurationInput) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(Effect.flip(call))
    yield* TestClock.adjust(by)
    const done = yield* Fiber.poll(fiber)
    return Option.flatMap(done, (exit) => (Exit.isSuccess(exit) ? Option.some(exit.value) : Option.none()))
  })

describe("ProviderAClient and the deadline", () => {
  it.scoped("a hung state system: the last try is cut to the budget left, then no retry (ProviderTimeout)", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientWith(() => Option.none())
      // 30 s a try and 3 retries would be 120 s; the deadline leaves 45 s: one whole try and 15 s of another.
      const done = yield* after(read(client).pipe(Deadline.withBudget("45 seconds")), "45 seconds")
      assert.isTrue(Option.isSome(done), "the call has failed at the deadline")
      const error = Option.getOrThrow(done)
      assert.strictEqual(error._tag, "ProviderTimeout")
      assert.deepStrictEqual(sent, [0, 30_000])
    }))

  it.scoped("without a deadline it keeps its own per-try timeout and retries", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientWith(() => Option.none())
      const done = yield* after(read(client), "120 seconds")
      assert.isTrue(Option.isSome(done))
      assert.deepStrictEqual(sent, [0, 30_000, 60_000, 90_000])
    }))

  it.scoped("a 5xx whose backoff would pass the deadline is reported at once, not waited out", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientWith(
        () => Option.some(new Response("{\"Message\":\"down\"}", { status: 503 })),
        { retryBaseDelay: "10 seconds" }
      )
      // Tries at 0 and 10 s; the next would wait 20 s, past the 15 s deadline.
      const done = yield* after(read(client).pipe(Deadline.withBudget("15 seconds")), "10 seconds")
      assert.isTrue(Option.isSome(done), "answered when the budget could not cover another wait")
      const error = Option.getOrThrow(done)
      assert.strictEqual(error._tag, "ProviderUnavailable")
      assert.deepStrictEqual(sent, [0, 10_000])
    }))

  it.scoped("a 429 whose Retry-After passes the deadline is ProviderRateLimited at once, with its Retry-After", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientWith(
        () =>
          Option.some(new Response("{\"Message\":\"slow down\"}", { status: 429, headers: { "retry-after": "20" } }))
      )
      const done = yield* after(read(client).pipe(Deadline.withBudget("15 seconds")), "0 seconds")
      assert.isTrue(Option.isSome(done))
      const error = Option.getOrThrow(done)
      assert.strictEqual(error._tag, "ProviderRateLimited")
      if (error._tag === "ProviderRateLimited") assert.deepStrictEqual(error.retryAfter, Duration.seconds(20))
      assert.deepStrictEqual(sent, [0])
    }))
})

describe("ProviderAClient and the rate governor", () => {
  it.scoped("tells the governor of every 429, with its Retry-After or without one, retried or given up", () =>
    Effect.gen(function*() {
      const { service, told } = recordingGovernor()
      const answers = [
        new Response("{\"Message\":\"slow down\"}", { status: 429 }),
        new Response("{\"Message\":\"slow down\"}", { status: 429, headers: { "retry-after": "1" } }),
        new Response("[]", { status: 200, headers: { "content-type": "application/json" } })
      ]
      const { client, sent } = yield* clientWith((n) => Option.some(answers[n - 1]!)).pipe(
        Effect.provideService(UpstreamGovernor.UpstreamGovernor, service)
      )
      const fiber = yield* Effect.fork(read(client))
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* Fiber.join(fiber), [])
      assert.strictEqual(sent.length, 3)
      assert.deepStrictEqual(told, [Option.none(), Option.some(1000)])

      // the last try's 429 (no retry left) is told too
      const last = recordingGovernor()
      const refused = yield* clientWith(() => Option.some(new Response("{}", { status: 429 })), { maxRetries: 0 }).pipe(
        Effect.provideService(UpstreamGovernor.UpstreamGovernor, last.service)
      )
      const error = yield* Effect.flip(read(refused.client))
      assert.strictEqual(error._tag, "ProviderRateLimited")
      assert.deepStrictEqual(last.told, [Option.none()])
    }))
})

describe("ProviderAClient and priority: the sync leaves room for interactive calls", () => {
  it.scoped("with the sync's calls hung upstream, an interactive call still gets a place in the vendor key's cap", () =>
    Effect.gen(function*() {
      const sent: Array<{ readonly path: string; readonly at: number }> = []
      const http = HttpClient.make((request) =>
        Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (at) => {
          const path = new URL(request.url).pathname
          sent.push({ path, at })
          // the sync's reads hang; the login check is answered
          return path === "/facilities/v2/"
            ? Effect.succeed(HttpClientResponse.fromWeb(request, new Response("[]", { status: 200 })))
            : Effect.never
        })
      )
      const client = yield* ProviderAClient.make.pipe(
        Effect.provideService(HttpClient.HttpClient, http),
        Effect.provide(ProviderAConfig.layerTest({
          requestTimeout: "60 seconds",
          perVendorKey: { requestsPerSecond: 10, concurrency: 5 }
        })),
        Effect.provide(UpstreamGovernor.layerMemory)
      )
      const backfill = (i: number) =>
        client.get(session, "/packages/v2/active", Schema.Unknown, { operation: "packages.list", license: `LIC-${i}` })
      yield* Effect.forkScoped(
        UpstreamGovernor.background(Effect.forEach(Array.from({ length: 20 }, (_, i) => i), backfill, {
          concurrency: "unbounded"
        }))
      )
      yield* TestClock.adjust("2 seconds")
      const syncSent = sent.length
      assert.strictEqual(syncSent, 4, "the background holds 4 of the vendor key's 5 places")
      const check = yield* Effect.fork(read(client))
      yield* TestClock.adjust("200 millis")
      assert.isNotNull(check.unsafePoll(), "the login check went and was answered while the sync's calls hang")
      assert.strictEqual(sent.at(-1)!.path, "/facilities/v2/")
    }))
})

describe("ProviderAClient without a vendor key (issue 17: production configuration fails loudly)", () => {
  it.scoped("sends nothing and answers a provider error naming the operator's setting, never a refused login", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* clientWith(() => Option.some(new Response(null, { status: 401 })), {
        vendorKey: Redacted.make("")
      })
      const error = yield* Effect.flip(read(client))
      assert.strictEqual(error._tag, "ProviderUnavailable")
      assert.include(error.message, "PROVIDER_A_VENDOR_KEY")
      assert.deepStrictEqual(sent, [])
    }))
})
