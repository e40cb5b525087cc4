/**
 * Upstream faults end to end: a fault set on a sandbox connection's emulated state system
 * (`/v1/sandbox/{connection_id}/faults`) reaches the integrator as its documented error through
 * the real adapter, the port and the error mapping; a fault in one connection never slows or
 * breaks another. Time is the TestClock's, so retries and timeouts cost nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Scenario } from "@tracebridge/sandbox"
import { ConfigProvider, Duration, Effect, Fiber, Layer, Option } from "effect"
import * as TestClock from "effect/TestClock"
import { call, type Json, linkSandbox, otherOrganisation, signIn, TestApp } from "./support/TestApp.js"

const packagesOf = (access: string, connection: string) =>
  Effect.gen(function*() {
    const facilities = yield* call("GET", `/v1/connections/${connection}/facilities`, { token: access })
    assert.strictEqual(facilities.status, 200)
    const facility = facilities.body.data[0].id as string
    return `/v1/connections/${connection}/facilities/${facility}/packages?per_page=5`
  })

/** Runs a request while the TestClock moves on in steps, so that retries and timeouts elapse. */
const settle = <E, R>(request: Effect.Effect<Json, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(request)
    for (let step = 0; step < 400; step++) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) break
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      yield* TestClock.adjust("1 second")
    }
    return yield* Fiber.join(fiber)
  })

const setFault = (access: string, connection: string, fault: unknown) =>
  call("PUT", `/v1/sandbox/${connection}/faults`, { token: access, json: fault })

const expectError = (answer: Json, status: number, code: string) => {
  assert.strictEqual(answer.status, status, JSON.stringify(answer.body))
  assert.strictEqual(answer.body.error.code, code)
  assert.isString(answer.body.error.request_id)
  assert.notProperty(answer.body, "data")
}

describe("sandbox faults end to end", () => {
  it.effect("each fault maps to its documented error, and clearing it restores the connection", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const packages = yield* packagesOf(me.access, conn.connection_id)
      const get = call("GET", packages, { token: me.access })

      const set = yield* setFault(me.access, conn.connection_id, { kind: "outage" })
      assert.strictEqual(set.status, 200)
      assert.deepStrictEqual(set.body.data, { connection_id: conn.connection_id, fault: { kind: "outage" } })
      expectError(yield* settle(get), 503, "provider_unavailable")

      yield* setFault(me.access, conn.connection_id, { kind: "slow", delay_ms: 120_000 })
      expectError(yield* settle(get), 504, "provider_timeout")

      yield* setFault(me.access, conn.connection_id, { kind: "rate_limited", retry_after: 90 })
      const limited = yield* settle(get)
      expectError(limited, 503, "provider_rate_limited")
      assert.strictEqual(limited.headers["retry-after"], "90")

      yield* setFault(me.access, conn.connection_id, { kind: "malformed" })
      expectError(yield* settle(get), 502, "provider_invalid_response")

      const shown = yield* call("GET", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access })
      assert.deepStrictEqual(shown.body.data.fault, { kind: "malformed" })
      const cleared = yield* call("DELETE", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access })
      assert.strictEqual(cleared.body.data.fault, null)
      const healthy = yield* settle(get)
      assert.strictEqual(healthy.status, 200)
      assert.isAbove(healthy.body.data.length, 0)
      const connection = yield* call("GET", `/v1/connections/${conn.connection_id}`, { token: me.access })
      assert.strictEqual(connection.body.data.status, "active")
    }).pipe(Effect.provide(TestApp)))

  it.effect("an expired login moves the connection to error with connection_login_required", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const packages = yield* packagesOf(me.access, conn.connection_id)
      yield* setFault(me.access, conn.connection_id, { kind: "expired_login" })
      expectError(yield* settle(call("GET", packages, { token: me.access })), 409, "connection_login_required")
      const connection = yield* call("GET", `/v1/connections/${conn.connection_id}`, { token: me.access })
      assert.strictEqual(connection.body.data.status, "error")
    }).pipe(Effect.provide(TestApp)))

  it.effect("a cleared fault, or a reset, brings a connection out of error (issue #30)", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const statusOf = (id: string) =>
        Effect.map(call("GET", `/v1/connections/${id}`, { token: me.access }), (r) => r.body.data.status as string)
      for (const way of ["clear", "reset"] as const) {
        const conn = yield* linkSandbox(me.access)
        const packages = yield* packagesOf(me.access, conn.connection_id)
        yield* setFault(me.access, conn.connection_id, { kind: "expired_login" })
        expectError(yield* settle(call("GET", packages, { token: me.access })), 409, "connection_login_required")
        assert.strictEqual(yield* statusOf(conn.connection_id), "error")
        const done = way === "clear"
          ? yield* call("DELETE", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access })
          : yield* call("POST", `/v1/sandbox/${conn.connection_id}/reset`, { token: me.access })
        assert.strictEqual(done.status, 200, JSON.stringify(done.body))
        assert.strictEqual(yield* statusOf(conn.connection_id), "active", `after ${way}`)
        const read = yield* settle(call("GET", packages, { token: me.access }))
        assert.strictEqual(read.status, 200, JSON.stringify(read.body))
      }
      // a login the world itself refuses stays in error after a cleared fault: nothing was fixed
      const flagged = yield* linkSandbox(me.access)
      const simulated = yield* call("POST", `/v1/sandbox/${flagged.connection_id}/simulate`, {
        token: me.access,
        json: { scenario: "connection_login_required" }
      })
      assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
      assert.strictEqual(yield* statusOf(flagged.connection_id), "error")
      yield* call("DELETE", `/v1/sandbox/${flagged.connection_id}/faults`, { token: me.access })
      assert.strictEqual(yield* statusOf(flagged.connection_id), "error")
      yield* call("POST", `/v1/sandbox/${flagged.connection_id}/reset`, { token: me.access })
      assert.strictEqual(yield* statusOf(flagged.connection_id), "active")
    }).pipe(Effect.provide(TestApp)))

  // The fault is the stored login expiring: the user entering the login again (a relink) replaces
  // it, as a fresh key does on Metrc and BioTrack (issue #33: "shows up under Issues, and clears
  // after a relink"). A login the state system refuses replaces nothing, and the fault stays.
  for (const provider of ["provider_a", "provider_b"] as const) {
    it.effect(`${provider}: a relink lifts an expired_login fault; a refused login leaves it`, () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const conn = yield* linkSandbox(me.access, provider)
        const packages = yield* packagesOf(me.access, conn.connection_id)
        const statusOf = Effect.map(
          call("GET", `/v1/connections/${conn.connection_id}`, { token: me.access }),
          (r) => r.body.data.status as string
        )
        const faultOf = Effect.map(
          call("GET", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access }),
          (r) => r.body.data.fault
        )
        yield* setFault(me.access, conn.connection_id, { kind: "expired_login" })
        expectError(yield* settle(call("GET", packages, { token: me.access })), 409, "connection_login_required")
        assert.strictEqual(yield* statusOf, "error")

        const bad = provider === "provider_a"
          ? { user_key: "user_bad" }
          : { ubi: "000000000", username: "user_bad", password: "pass_good" }
        const refused = yield* settle(call("POST", "/v1/sandbox/public_token/create", {
          token: me.access,
          json: { connection_id: conn.connection_id, credentials: bad }
        }))
        assert.isAtLeast(refused.status, 400, JSON.stringify(refused.body))
        assert.deepStrictEqual(yield* faultOf, { kind: "expired_login" })
        assert.strictEqual(yield* statusOf, "error")

        const relinked = yield* settle(call("POST", "/v1/sandbox/public_token/create", {
          token: me.access,
          json: { connection_id: conn.connection_id }
        }))
        assert.strictEqual(relinked.status, 200, JSON.stringify(relinked.body))
        assert.isNull(yield* faultOf)
        assert.strictEqual(yield* statusOf, "active")
        const read = yield* settle(call("GET", packages, { token: me.access }))
        assert.strictEqual(read.status, 200, JSON.stringify(read.body))
      }).pipe(Effect.provide(TestApp)))
  }

  it.effect("provider_b: an outage and a throttle (Retry-After even when BioTrack gives none)", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const down = yield* linkSandbox(me.access, "provider_b")
      const limited = yield* linkSandbox(me.access, "provider_b")
      yield* setFault(me.access, down.connection_id, { kind: "outage" })
      yield* setFault(me.access, limited.connection_id, { kind: "rate_limited" })
      // Past the adapter's 30 s read cache, so that the next reads reach the state system.
      yield* TestClock.adjust("31 seconds")
      const outage = yield* settle(
        call("GET", `/v1/connections/${down.connection_id}/facilities`, { token: me.access })
      )
      expectError(outage, 503, "provider_unavailable")
      const throttled = yield* settle(
        call("GET", `/v1/connections/${limited.connection_id}/facilities`, { token: me.access })
      )
      expectError(throttled, 503, "provider_rate_limited")
      assert.strictEqual(throttled.headers["retry-after"], "60")
    }).pipe(Effect.provide(TestApp)))

  it.effect("a slow state system for one connection never slows or breaks another", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const slow = yield* linkSandbox(me.access)
      const fast = yield* linkSandbox(me.access)
      const slowPackages = yield* packagesOf(me.access, slow.connection_id)
      const fastPackages = yield* packagesOf(me.access, fast.connection_id)
      yield* setFault(me.access, slow.connection_id, { kind: "slow", delay_ms: 600_000 })
      const stuck = yield* Effect.fork(call("GET", slowPackages, { token: me.access }))
      // Without moving the clock at all, the healthy connection answers several times.
      for (let i = 0; i < 3; i++) {
        const answer = yield* call("GET", fastPackages, { token: me.access })
        assert.strictEqual(answer.status, 200)
        assert.isAbove(answer.body.data.length, 0)
      }
      assert.isTrue(Option.isNone(yield* Fiber.poll(stuck)))
      const blocked = yield* settle(Fiber.join(stuck))
      expectError(blocked, 504, "provider_timeout")
    }).pipe(Effect.provide(TestApp)))

  it.effect("faults are for the caller's own sandbox connections, with a valid body", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const unknown = yield* setFault(me.access, conn.connection_id, { kind: "meteor" })
      assert.strictEqual(unknown.status, 400)
      assert.strictEqual(unknown.body.error.type, "validation_error")
      const none = yield* call("GET", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access })
      assert.strictEqual(none.body.data.fault, null)
      const missing = yield* setFault(me.access, "conn_doesnotexist", { kind: "outage" })
      assert.strictEqual(missing.status, 404)
      const stranger = yield* otherOrganisation
      const foreign = yield* setFault(stranger, conn.connection_id, { kind: "outage" })
      assert.strictEqual(foreign.status, 404)
      assert.notProperty(foreign.body, "data")
      const still = yield* call("GET", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access })
      assert.strictEqual(still.body.data.fault, null)
    }).pipe(Effect.provide(TestApp)))
})

/** A moment of real time, so that the test server and the in-process sandbox can move. */
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))

/**
 * Runs a request while the TestClock moves on a second at a time, but never past `limit`: the
 * answer must come by then (after that the clock stands still and only real time passes).
 */
const answeredWithin = <E, R>(request: Effect.Effect<Json, E, R>, limit: Duration.DurationInput) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(request)
    for (let second = 0; second < Duration.toSeconds(limit); second++) {
      if (Option.isSome(yield* Fiber.poll(fiber))) break
      yield* pause
      yield* TestClock.adjust("1 second")
    }
    for (let i = 0; i < 500 && Option.isNone(yield* Fiber.poll(fiber)); i++) yield* pause
    assert.isTrue(Option.isSome(yield* Fiber.poll(fiber)), `no answer within ${Duration.format(limit)}`)
    return yield* Fiber.join(fiber)
  })

const expectTimeout = (answer: Json) => {
  expectError(answer, 504, "provider_timeout")
  assert.strictEqual(answer.body.error.type, "provider_error")
  assert.match(answer.headers["retry-after"] ?? "", /^[1-9][0-9]*$/, "a Retry-After in seconds")
}

const simulate = (access: string, connection: string, scenario: string, params?: unknown) =>
  call("POST", `/v1/sandbox/${connection}/simulate`, {
    token: access,
    json: params === undefined ? { scenario } : { scenario, params }
  })

describe("the overall upstream deadline", () => {
  it.effect("a hung provider_a answers 504 provider_timeout with Retry-After within 30 s, retries included", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const packages = yield* packagesOf(me.access, conn.connection_id)
      // 600 s a call: the adapter alone would try 4 times at 30 s each (120 s).
      yield* setFault(me.access, conn.connection_id, { kind: "slow", delay_ms: 600_000 })
      expectTimeout(yield* answeredWithin(call("GET", packages, { token: me.access }), "30 seconds"))
      // Every call gets its own deadline: the next one is cut at 30 s as well.
      expectTimeout(
        yield* answeredWithin(
          call("GET", `/v1/connections/${conn.connection_id}/facilities`, { token: me.access }),
          "30 seconds"
        )
      )
    }).pipe(Effect.provide(TestApp)))

  it.effect("a hung provider_b (a login and a call, 30 s each) also answers within 30 s", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access, "provider_b")
      yield* setFault(me.access, conn.connection_id, { kind: "slow", delay_ms: 600_000 })
      // Past the adapter's 30 s read cache, so that the read reaches the state system.
      yield* TestClock.adjust("31 seconds")
      expectTimeout(
        yield* answeredWithin(
          call("GET", `/v1/connections/${conn.connection_id}/facilities`, { token: me.access }),
          "30 seconds"
        )
      )
    }).pipe(Effect.provide(TestApp)))

  it.effect("TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS sets the deadline", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const packages = yield* packagesOf(me.access, conn.connection_id)
      yield* setFault(me.access, conn.connection_id, { kind: "slow", delay_ms: 600_000 })
      expectTimeout(yield* answeredWithin(call("GET", packages, { token: me.access }), "5 seconds"))
    }).pipe(
      Effect.provide(TestApp.pipe(
        Layer.provide(
          Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS", "5"]])))
        )
      ))
    ))

  it.effect("upstream_timeout: every /v1 call on the connection answers 504 within the deadline until cleared", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const other = yield* linkSandbox(me.access)
      const packages = yield* packagesOf(me.access, conn.connection_id)
      const otherPackages = yield* packagesOf(me.access, other.connection_id)
      const facilities = `/v1/connections/${conn.connection_id}/facilities`

      const simulated = yield* simulate(me.access, conn.connection_id, "upstream_timeout")
      assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
      assert.deepStrictEqual(simulated.body.data, { scenario: "upstream_timeout", event: null, deliveries: 0 })
      const shown = yield* call("GET", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access })
      assert.strictEqual(shown.body.data.fault.kind, "slow")

      for (const path of [facilities, packages, `${facilities}/${packages.split("/")[5]}`]) {
        expectTimeout(yield* answeredWithin(call("GET", path, { token: me.access }), "30 seconds"))
      }
      // Another connection is untouched, without the clock moving.
      const fine = yield* call("GET", otherPackages, { token: me.access })
      assert.strictEqual(fine.status, 200)

      const cleared = yield* call("DELETE", `/v1/sandbox/${conn.connection_id}/faults`, { token: me.access })
      assert.strictEqual(cleared.body.data.fault, null)
      const healthy = yield* call("GET", packages, { token: me.access })
      assert.strictEqual(healthy.status, 200)
      assert.isAbove(healthy.body.data.length, 0)

      // delay_ms is checked like any scenario's params.
      const bad = yield* simulate(me.access, conn.connection_id, "upstream_timeout", { delay_ms: "never" })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.error.code, "invalid_parameter")
      assert.strictEqual(bad.body.error.param, "params.delay_ms")
    }).pipe(Effect.provide(TestApp)))

  it.effect("the OpenAPI document lists every scenario, and Retry-After on 504 answers", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/v1/openapi.json")).body
      const scenario = spec.components.schemas.Simulate.properties.scenario
      assert.include(Scenario.names, "upstream_timeout")
      for (const name of Scenario.names) assert.include(scenario.description, name)
      const resources = spec.paths["/v1/connections/{connection_id}/facilities"].get.responses
      assert.property(resources["504"].headers, "Retry-After")
    }).pipe(Effect.provide(TestApp)))
})
