/**
 * The provider_a client against its one fake: pacing per facility, retries of a 429 after its
 * `Retry-After` and of 5xx on a GET (never on a write), and bodies off the wire schema. The failures
 * are one-shot answers in Metrc's own format, before the emulator sees the request.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderAConfig } from "@tracebridge/adapter-provider-a"
import { ProviderPort } from "@tracebridge/core"
import { Effect, Fiber, TestClock } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

/** A GET's tries: the first and every retry. */
const TRIES = ProviderAConfig.defaults.maxRetries + 1

const serverError = () => A.json({ Message: "An error has occurred." }, 500)

/** The requests logged for a path: how many, and how many different (a retry repeats its request). */
const sentTo = (a: A.A, path: string) => {
  const lines = a.upstream.log.filter((l) => l === `GET ${path}` || l.startsWith(`GET ${path}?`))
  return { all: lines.length, distinct: new Set(lines).size }
}

describe("ProviderA pacing", () => {
  it.effect("starts no more requests per facility than its rate allows", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const item = cultivator.items[0]!
    return Effect.gen(function*() {
      yield* TestClock.setTime(A.NOW)
      const port = yield* ProviderPort.ProviderPort
      const fiber = yield* Effect.fork(
        Effect.forEach(
          Array.from({ length: 6 }, () => item.id),
          (id) => port.get("items", a.session(), cultivator.facility.id, id),
          { concurrency: "unbounded" }
        )
      )
      const sent = () => a.upstream.log.filter((l) => l.startsWith(`GET /items/v2/${item.provider_item_id}?`)).length
      yield* TestClock.adjust("10 millis")
      yield* Effect.yieldNow()
      assert.strictEqual(sent(), 1, "requests are spaced at the rate: one starts at once")
      yield* TestClock.adjust("3 seconds")
      const items = yield* Fiber.join(fiber)
      assert.strictEqual(items.length, 6)
      assert.deepStrictEqual(items[0], item)
      assert.strictEqual(sent(), 6)
    }).pipe(Effect.provide(A.portLayer({ perFacility: { requestsPerSecond: 2, concurrency: 10 } })))
  })
})

describe("ProviderA failures", () => {
  it.live("retries a 429 after its Retry-After, then succeeds", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    a.upstream.failNext(
      () => A.json({ Message: "The limit of API calls allowed has been exceeded." }, 429, { "retry-after": "1" }),
      {
        path: /^\/items\//
      }
    )
    return Effect.gen(function*() {
      const port = yield* ProviderPort.ProviderPort
      const started = Date.now()
      const items = yield* port.listAll("items", a.session(), cultivator.facility.id, {})
      assert.strictEqual(items.length, cultivator.items.length)
      assert.isAtLeast(Date.now() - started, 900)
      const sent = sentTo(a, "/items/v2/active")
      assert.strictEqual(sent.all, sent.distinct + 1, "the refused request was sent again, once")
    }).pipe(Effect.provide(A.portLayer()))
  })

  it.effect("retries 500s on a GET and surfaces them after the last retry", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const strain = cultivator.strains[0]!
    return A.withPort((port) =>
      Effect.gen(function*() {
        a.upstream.failNext(serverError, { count: 2, path: /^\/items\// })
        const items = yield* port.listAll("items", a.session(), cultivator.facility.id, {})
        assert.strictEqual(items.length, cultivator.items.length)
        const sent = sentTo(a, "/items/v2/active")
        assert.strictEqual(sent.all, sent.distinct + 2, "each refused request was sent again")
        a.upstream.failNext(serverError, { count: TRIES, path: /^\/strains\// })
        const error = yield* Effect.flip(port.get("strains", a.session(), cultivator.facility.id, strain.id))
        assert.strictEqual(error._tag, "ProviderUnavailable")
        if (error._tag === "ProviderUnavailable") assert.strictEqual(error.status, 500)
        assert.include(error.message, "An error has occurred.")
        assert.strictEqual(sentTo(a, `/strains/v2/${strain.provider_strain_id}`).all, TRIES)
      })
    )
  })

  it.effect("never retries a write after a 500", () => {
    const a = A.make()
    // a lab records results, on a sample it holds
    const lab = a.facility("testing")
    const untested = lab.packages.find((p) => p.lab_testing_state === "NotSubmitted" && !p.is_on_hold)!
    return A.withPort((port) =>
      Effect.gen(function*() {
        a.upstream.failNext(serverError, { path: /^\/labtests\/v2\/record$/ })
        const error = yield* Effect.flip(port.recordLabResult(a.session(), lab.facility.id, {
          package_id: untested.id,
          lab_name: lab.facility.name,
          overall_passed: true,
          results: [{ name: "THC", category: "potency", value: 20, unit: "%", passed: true, notes: null }],
          lab_license: null,
          test_type: "ComplianceTesting",
          test_date: null
        }))
        assert.strictEqual(error._tag, "ProviderUnavailable")
        assert.strictEqual(a.upstream.log.filter((l) => l.startsWith("POST /labtests/v2/record")).length, 1)
      })
    )
  })

  it.effect("names the field of a malformed body, and refuses a body that is not JSON", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const facility = cultivator.facility.id
    const location = cultivator.locations[0]!
    return A.withPort((port) =>
      Effect.gen(function*() {
        // one object read: the field is named
        a.upstream.failNext(() => A.json({ Id: 1, Name: "Vault", LocationTypeName: 5 }), {
          path: /^\/locations\/v2\/\d+$/
        })
        const error = yield* Effect.flip(port.get("locations", a.session(), facility, location.id))
        assert.strictEqual(error._tag, "ProviderInvalidResponse")
        if (error._tag === "ProviderInvalidResponse") assert.strictEqual(error.path, "LocationTypeName")
        // in a list, the same row is left out and reported (tolerant reads), the page still answers
        a.upstream.failNext(() => A.json({ Data: [{ Id: 1, Name: "Vault", LocationTypeName: 5 }], Total: 1 }), {
          path: /^\/locations\/v2\/active$/
        })
        const page = yield* port.list("locations", a.session(), facility, {}, { page: 1, per_page: 10 })
        assert.deepStrictEqual(page.skipped?.map((s) => s.upstream_id), ["1"])
        assert.include(page.skipped![0]!.reason, "LocationTypeName")
        a.upstream.failNext(() => new Response("<html>maintenance</html>", { status: 200 }), {
          path: /^\/locations\//
        })
        const html = yield* Effect.flip(port.listAll("locations", a.session(), facility, {}))
        if (html._tag === "ProviderInvalidResponse") assert.strictEqual(html.path, "(body)")
        else assert.fail(html._tag)
      })
    )
  })
})
