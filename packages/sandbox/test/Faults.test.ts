/**
 * Upstream faults per connection, end to end through the real adapters: every fault kind on both
 * emulators surfaces as its core `ProviderError`, a fault never reaches another world (not even
 * while it is in flight), and the control API sets and clears faults.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import type { ProviderError, ProviderName } from "@tracebridge/core"
import { ProviderPort, Session, UpstreamGovernor } from "@tracebridge/core"
import type { Faults } from "@tracebridge/sandbox"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Duration, Effect, Either, Exit, Fiber, Layer, Option, TestClock } from "effect"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 60_000

const makeSandbox = () =>
  new Sandbox.Sandbox({ providers: Registry.installed, seed: "42", referenceDate: REFERENCE, now: () => NOW })

interface Target {
  readonly provider: ProviderName.ProviderName
  readonly state: ProviderName.UsState
  /** The sandbox login of a connection (as the /v1 service makes it: the typed login `~` the connection id). */
  readonly login: (connection: string) => string
  readonly session: (connection: string) => Session.Session
  readonly port: (sandbox: Sandbox.Sandbox) => Layer.Layer<ProviderPort.ProviderPort>
  /** Where the adapter says a body that is not JSON went wrong. */
  readonly malformedPath: string
}

const targets: ReadonlyArray<Target> = [
  {
    provider: "provider_a",
    state: "CO",
    login: (connection) => `user_good~${connection}`,
    session: (connection) =>
      Session.make({
        key: `sandbox:a:${connection}`,
        provider: "provider_a",
        state: "CO",
        environment: "sandbox",
        credentials: { user_key: `user_good~${connection}` },
        baseUrl: SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_a", "CO")
      }),
    port: (sandbox) =>
      ProviderA.layer.pipe(
        // one retry keeps the retried faults (503, timeouts) short under TestClock
        Layer.provide(ProviderAConfig.layerTest({ maxRetries: 1 })),
        // sandbox ports are not governed (ADR 0015; the API wires them so): one world's 429 must
        // not pause another world's reads
        Layer.provide(Layer.succeed(UpstreamGovernor.UpstreamGovernor, UpstreamGovernor.unlimited)),
        Layer.provide(SandboxServer.layerHttpClient(SandboxServer.makeHandler(sandbox)))
      ),
    malformedPath: "(body)"
  },
  {
    provider: "provider_b",
    state: "HI",
    login: (connection) => `000000000:user_good~${connection}`,
    session: (connection) =>
      Session.make({
        key: `sandbox:b:${connection}`,
        provider: "provider_b",
        state: "HI",
        environment: "sandbox",
        credentials: { ubi: "000000000", username: `user_good~${connection}`, password: "pass_good" },
        baseUrl: SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_b", "HI")
      }),
    port: (sandbox) =>
      ProviderB.layer.pipe(Layer.provide(SandboxServer.layerHttpClient(SandboxServer.makeHandler(sandbox)))),
    malformedPath: "(root)"
  }
]

/** The licence numbers of a connection's facilities, read through the adapter. */
const facilities = (session: Session.Session) =>
  Effect.flatMap(
    ProviderPort.ProviderPort,
    (port) =>
      Effect.map(
        port.listFacilities(session, { page: 1, per_page: 100 }),
        (page) => page.items.map((f) => f.license_number)
      )
  )

const setFault = (sandbox: Sandbox.Sandbox, target: Target, connection: string, fault: Faults.Fault | null) =>
  sandbox.setFaultFor({ provider: target.provider, state: target.state, login: target.login(connection) }, fault)

/** The error a call fails with (failing the test if it succeeds). */
const failure = <A>(effect: Effect.Effect<A, ProviderError.ProviderError, ProviderPort.ProviderPort>) =>
  Effect.flatMap(
    Effect.either(effect),
    (result) => Either.isLeft(result) ? Effect.succeed(result.left) : Effect.dieMessage("expected the call to fail")
  )

/** Moves the test clock on, a step at a time, until the fiber is done. */
const settle = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, step: Duration.DurationInput = "10 seconds") =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      if (Option.isSome(yield* Fiber.poll(fiber))) break
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.await(fiber)
  })

for (const target of targets) {
  describe(`faults on ${target.provider} (${target.state})`, () => {
    const sandbox = makeSandbox()
    const world = (connection: string) => sandbox.world(target.provider, target.state, target.login(connection))
    const run = <A, E>(effect: Effect.Effect<A, E, ProviderPort.ProviderPort>) =>
      Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), target.port(sandbox))

    /** Asserts that another connection's world still answers, and with its own facilities. */
    const healthy = (connection: string) =>
      Effect.map(facilities(target.session(connection)), (items) => {
        assert.deepStrictEqual(items, world(connection).facilities.map((d) => d.facility.license_number))
      })

    it.effect("outage: 503 is ProviderUnavailable with the status", () =>
      run(Effect.gen(function*() {
        setFault(sandbox, target, "outage", { kind: "outage" })
        const error = yield* failure(facilities(target.session("outage")))
        assert.strictEqual(error._tag, "ProviderUnavailable")
        assert.strictEqual(error._tag === "ProviderUnavailable" ? error.status : undefined, 503)
        yield* healthy("outage_neighbour")
        setFault(sandbox, target, "outage", null)
        yield* healthy("outage")
      })))

    it.effect("rate_limited: 429 is ProviderRateLimited", () =>
      run(Effect.gen(function*() {
        setFault(sandbox, target, "limited", { kind: "rate_limited", retry_after: 90 })
        const error = yield* failure(facilities(target.session("limited")))
        assert.strictEqual(error._tag, "ProviderRateLimited")
        if (target.provider === "provider_a" && error._tag === "ProviderRateLimited") {
          // Metrc's Retry-After reaches the error (past the 30 s the adapter waits out itself)
          assert.isTrue(error.retryAfter !== undefined && Duration.equals(error.retryAfter, Duration.seconds(90)))
        }
        yield* healthy("limited_neighbour")
      })))

    it.effect("malformed: a cut-off body is ProviderInvalidResponse", () =>
      run(Effect.gen(function*() {
        setFault(sandbox, target, "malformed", { kind: "malformed" })
        const error = yield* failure(facilities(target.session("malformed")))
        assert.strictEqual(error._tag, "ProviderInvalidResponse")
        assert.strictEqual(error._tag === "ProviderInvalidResponse" ? error.path : undefined, target.malformedPath)
        yield* healthy("malformed_neighbour")
      })))

    it.effect("expired_login: a login that worked is refused: ProviderLoginRequired", () =>
      run(Effect.gen(function*() {
        const session = target.session("expired")
        yield* healthy("expired") // a session (provider_b) is open before the login expires
        yield* TestClock.adjust("31 seconds") // past provider_b's 30 s read cache, so the next call goes out
        setFault(sandbox, target, "expired", { kind: "expired_login" })
        const error = yield* failure(facilities(session))
        assert.strictEqual(error._tag, "ProviderLoginRequired")
        assert.strictEqual(error._tag === "ProviderLoginRequired" ? error.reason : undefined, "invalid_credentials")
        yield* healthy("expired_neighbour")
        setFault(sandbox, target, "expired", null)
        yield* healthy("expired")
      })))

    it.effect("slow: past the adapter's timeout is ProviderTimeout; within it, the answer comes late", () =>
      run(Effect.gen(function*() {
        setFault(sandbox, target, "slow", { kind: "slow" })
        const timedOut = yield* Effect.fork(facilities(target.session("slow")))
        yield* TestClock.adjust("29 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(timedOut)), "nothing answers before the timeout")
        const exit = yield* settle(timedOut)
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ?
          Option.getOrUndefined(
            Exit.causeOption(exit).pipe(
              Option.flatMap((cause) => Option.fromNullable(cause._tag === "Fail" ? cause.error : undefined))
            )
          ) :
          undefined
        assert.strictEqual(error?._tag, "ProviderTimeout")

        setFault(sandbox, target, "late", { kind: "slow", delay_ms: 5_000 })
        const late = yield* Effect.fork(facilities(target.session("late")))
        yield* TestClock.adjust("4 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(late)), "held back for delay_ms")
        // (provider_b makes two calls, a login and a read, each held back)
        const answered = yield* settle(late, "1 second")
        assert.deepStrictEqual(answered, Exit.succeed(world("late").facilities.map((d) => d.facility.license_number)))
      })))

    it.effect("a slow or down connection never holds up another one (concurrently)", () =>
      run(Effect.gen(function*() {
        setFault(sandbox, target, "stuck", { kind: "slow", delay_ms: 600_000 })
        setFault(sandbox, target, "down", { kind: "outage" })
        const stuck = yield* Effect.fork(facilities(target.session("stuck")))
        // The clock does not move: the healthy connections answer while the slow one still waits.
        const [down, ...fine] = yield* Effect.all([
          failure(facilities(target.session("down"))),
          facilities(target.session("fine_1")),
          facilities(target.session("fine_2"))
        ], { concurrency: "unbounded" })
        assert.strictEqual(down._tag, "ProviderUnavailable")
        assert.deepStrictEqual(fine, [
          world("fine_1").facilities.map((d) => d.facility.license_number),
          world("fine_2").facilities.map((d) => d.facility.license_number)
        ])
        assert.isTrue(Option.isNone(yield* Fiber.poll(stuck)), "the slow connection is still pending")
        const exit = yield* settle(stuck)
        assert.isTrue(Exit.isFailure(exit))
      })))
  })
}

// one sandbox and its one fault list for every test here, each test listing and resetting it whole: one at a time
describe.sequential("faults through the control API", () => {
  const sandbox = makeSandbox()
  const handler = SandboxServer.makeHandler(sandbox)
  const control = (method: string, path: string, body?: unknown) =>
    Effect.promise(async () => {
      const response = await handler(
        new Request(`http://sandbox.test/_sandbox/${path}`, {
          method,
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      )
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    })
  const a = targets[0]!
  const ref = { provider: "provider_a", state: "CO", login: a.login("ctl") }
  const run = <A, E>(effect: Effect.Effect<A, E, ProviderPort.ProviderPort>) =>
    Effect.provide(Effect.zipRight(TestClock.setTime(NOW), effect), a.port(sandbox))

  it.effect("PUT sets a world's fault, GET lists it, DELETE clears it", () =>
    run(Effect.gen(function*() {
      const put = yield* control("PUT", "faults", { ...ref, fault: { kind: "outage" } })
      assert.strictEqual(put.status, 200)
      assert.deepStrictEqual(put.body, {
        key: Sandbox.keyOf("provider_a", "CO", ref.login),
        ...ref,
        fault: { kind: "outage" }
      })
      assert.deepStrictEqual((yield* control("GET", "faults")).body, { faults: [put.body] })
      assert.strictEqual((yield* failure(facilities(a.session("ctl"))))._tag, "ProviderUnavailable")

      const query = new URLSearchParams(ref).toString()
      const deleted = yield* control("DELETE", `faults?${query}`)
      assert.deepStrictEqual(deleted, { status: 200, body: { cleared: Sandbox.keyOf("provider_a", "CO", ref.login) } })
      assert.deepStrictEqual((yield* control("GET", "faults")).body, { faults: [] })
      assert.strictEqual(
        (yield* facilities(a.session("ctl"))).length,
        sandbox.world("provider_a", "CO", ref.login).facilities.length
      )
    })))

  it.effect("refuses an unknown kind in the error shape, and a reset clears faults", () =>
    run(Effect.gen(function*() {
      const bad = yield* control("PUT", "faults", { ...ref, fault: { kind: "flaky" } })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual((bad.body["error"] as { readonly code: string }).code, "invalid_parameter")
      assert.strictEqual(sandbox.fault(Sandbox.keyOf("provider_a", "CO", ref.login)), undefined)

      yield* control("PUT", "faults", { ...ref, fault: { kind: "slow", delay_ms: 1000 } })
      yield* control("PUT", "faults", { ...ref, login: a.login("other"), fault: { kind: "malformed" } })
      assert.strictEqual(sandbox.faultList().length, 2)
      yield* control("POST", "reset", ref)
      assert.deepStrictEqual(sandbox.faultList().map(([key]) => key), [
        Sandbox.keyOf("provider_a", "CO", a.login("other"))
      ])
      yield* control("POST", "reset")
      assert.deepStrictEqual(sandbox.faultList(), [])
    })))

  it.effect("the upstream_timeout scenario holds every answer of the world until its fault is cleared", () =>
    run(Effect.gen(function*() {
      const hung = { ...ref, login: a.login("hung") }
      const ran = yield* control("POST", "scenarios/upstream_timeout", { ...hung, params: { delay_ms: 300_000 } })
      assert.deepStrictEqual(ran, {
        status: 200,
        body: { scenario: "upstream_timeout", event: null, login_required: false }
      })
      const key = Sandbox.keyOf("provider_a", "CO", hung.login)
      assert.deepStrictEqual(sandbox.fault(key), { kind: "slow", delay_ms: 300_000 })
      // The adapter gives up on its own timeouts (two tries of 30 s here) long before an answer comes.
      const stuck = yield* Effect.fork(failure(facilities(a.session("hung"))))
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual((yield* Fiber.join(stuck))._tag, "ProviderTimeout")
      yield* control("DELETE", `faults?${new URLSearchParams(hung).toString()}`)
      assert.strictEqual(
        (yield* facilities(a.session("hung"))).length,
        sandbox.world("provider_a", "CO", hung.login).facilities.length
      )
      const bad = yield* control("POST", "scenarios/upstream_timeout", { ...hung, params: { delay_ms: "never" } })
      assert.strictEqual(bad.status, 400)
      assert.isUndefined(sandbox.fault(key))
    })))
})
