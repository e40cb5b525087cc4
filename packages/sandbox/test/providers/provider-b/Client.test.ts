/**
 * The provider_b session client (`ProviderBClient`) against the emulator, over msw
 * (`FetchHttpClient`, as in production): the lazy login, errorcode 63 read by its message (expiry
 * and re-login once, shared by concurrent calls; privilege, licence and other texts kept apart),
 * refused and missing logins, the BioTrack failure envelope under HTTP 200, transport failures and
 * the deadline. The emulator answers everything a test does not answer itself with a one-shot
 * (`Upstream.failNext`) in BioTrack's JSON.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderBClient, Wire } from "@tracebridge/adapter-provider-b"
import { Deadline } from "@tracebridge/core"
import { Licensees, type World } from "@tracebridge/sandbox"
import { Duration, Effect, Exit, Fiber, Option, Schema, TestClock } from "effect"
import * as Emulator from "../../../src/providers/provider-b/Emulator.js"
import * as Upstream from "../../support/Upstream.js"
import type { B } from "./Support.js"
import { good, hang, json, make, onAction } from "./Support.js"

Upstream.useUpstream()

/** BioTrack's vendor list: the login's facilities and the other licensees of its state. */
const vendorCount = (world: World.World) => world.facilities.length + Licensees.of(world).length

const Vendors = Wire.syncAnswer("sync_vendor")
const op = { operation: "test.call" }

/** A fresh upstream and a client over it. */
const setup = (name: string, credentials: Record<string, string> = good) =>
  Effect.gen(function*() {
    const b = make()
    const client = yield* ProviderBClient.make.pipe(Effect.provide(Upstream.httpClient))
    return { b, client, session: b.session(name, credentials) }
  })

/** The next `sync_vendor` answers `body` instead of the emulator. */
const nextVendor = (b: B, body: unknown) => b.upstream.failNext(() => json(body), { match: onAction("sync_vendor") })

const count = (b: B, action: string) => b.actions().filter((a) => a === action).length

/** Real time, so that a request in flight reaches msw (the test clock does not move it). */
const tick = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))

describe("ProviderBClient against the emulator", () => {
  it.effect("logs in lazily, once, and sends API 4.0 with the session id in every body", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("lazy")
      assert.deepStrictEqual(b.actions(), [])
      const first = yield* client.call(session, "sync_vendor", { download: 1 }, Vendors, op)
      yield* client.call(session, "sync_vendor", { download: 1 }, Vendors, op)
      assert.strictEqual(first.vendor.length, vendorCount(b.world))
      assert.deepStrictEqual(b.actions(), ["login", "sync_vendor", "sync_vendor"])
      const bodies = b.bodies()
      assert.isTrue(bodies.every((body) => body["API"] === "4.0"))
      assert.strictEqual(bodies[0]!["license_number"], good.ubi)
      assert.isString(bodies[1]!["sessionid"])
      assert.strictEqual(bodies[1]!["sessionid"], bodies[2]!["sessionid"])
    }))

  it.effect("on errorcode 63 logs in again once and retries", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("expiry")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      // The session idles past the emulator's default 30 minutes; the next call answers errorcode 63.
      b.clock.now += 31 * 60_000
      const again = yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.strictEqual(again.vendor.length, vendorCount(b.world))
      assert.deepStrictEqual(b.actions(), ["login", "sync_vendor", "sync_vendor", "login", "sync_vendor"])
      const sessions = b.bodies().filter((body) => body["action"] === "sync_vendor").map((body) => body["sessionid"])
      assert.strictEqual(sessions[0], sessions[1], "the expired session was tried first")
      assert.notStrictEqual(sessions[1], sessions[2], "the retry carries the new session")
    }))

  it.effect("a second errorcode 63 is ProviderLoginRequired (session_expired)", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("expiry-twice")
      const expired = { success: 0, error: "Your session has expired.", errorcode: 63 }
      b.upstream.failNext(() => json(expired), { count: 2, match: onAction("sync_vendor") })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderLoginRequired")
      assert.strictEqual(error._tag === "ProviderLoginRequired" && error.reason, "session_expired")
      assert.strictEqual(count(b, "login"), 2)
    }))

  it.effect("an errorcode 63 that says the session is invalid also logs in again once and retries", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("expiry-invalid")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      nextVendor(b, { success: 0, error: "Invalid session ID.", errorcode: "63" })
      const again = yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.strictEqual(again.vendor.length, vendorCount(b.world))
      assert.deepStrictEqual(b.actions(), ["login", "sync_vendor", "sync_vendor", "login", "sync_vendor"])
    }))

  it.effect("an errorcode 63 about a missing privilege is ProviderPermissionDenied, without a new login", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("e63-privilege")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      const text = "The current session does not possess access to the sync_vendor privilege."
      nextVendor(b, { success: 0, error: text, errorcode: 63 })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderPermissionDenied")
      assert.include(error.message, "does not possess access")
      assert.deepStrictEqual(b.actions(), ["login", "sync_vendor", "sync_vendor"])
      // The session was kept: the next call reuses it without logging in, and the emulator takes it.
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.deepStrictEqual(b.actions(), ["login", "sync_vendor", "sync_vendor", "sync_vendor"])
      assert.strictEqual(b.bodies()[1]!["sessionid"], b.bodies()[3]!["sessionid"])
    }))

  it.effect("an errorcode 63 about the license is ProviderPermissionDenied, not ProviderLoginRequired", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("e63-license")
      nextVendor(b, { success: 0, error: "Your license is not permitted to perform this action.", errorcode: 63 })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderPermissionDenied")
      assert.strictEqual(count(b, "login"), 1)
    }))

  it.effect("any other errorcode 63 is ProviderRejected with the code and text, without a new login", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("e63-other")
      nextVendor(b, { success: 0, error: "Transaction could not be completed.", errorcode: 63 })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderRejected")
      if (error._tag === "ProviderRejected") {
        assert.strictEqual(error.code, "63")
        assert.deepStrictEqual(error.messages, ["Transaction could not be completed."])
      }
      assert.deepStrictEqual(b.actions(), ["login", "sync_vendor"])
    }))

  it.effect("concurrent calls that meet an expired session share one new login", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("expiry-concurrent")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      Emulator.expireSessions(b.sandbox)
      const answers = yield* Effect.all(
        Array.from({ length: 6 }, () => client.call(session, "sync_vendor", {}, Vendors, op)),
        { concurrency: "unbounded" }
      )
      assert.isTrue(answers.every((a) => a.vendor.length === vendorCount(b.world)))
      assert.strictEqual(count(b, "login"), 2, "the first login and one shared re-login")
    }))

  it.effect("concurrent first calls share one login", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("login-concurrent")
      const answers = yield* Effect.all(
        Array.from({ length: 6 }, () => client.call(session, "sync_vendor", {}, Vendors, op)),
        { concurrency: "unbounded" }
      )
      assert.isTrue(answers.every((a) => a.vendor.length === vendorCount(b.world)))
      assert.strictEqual(count(b, "login"), 1)
    }))

  it.effect("a refused login is ProviderLoginRequired with BioTrack's text and no secret", () =>
    Effect.gen(function*() {
      const { client, session } = yield* setup("bad-login", { ...good, password: "not-the-password" })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderLoginRequired")
      assert.include(error.message, "Invalid username or password.")
      assert.notInclude(JSON.stringify(error), "not-the-password")
      assert.notInclude(JSON.stringify(error), good.password!)
    }))

  it.effect("missing credentials are ProviderLoginRequired without a call", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("no-creds", { ubi: "1", username: "u" })
      const error = yield* Effect.flip(client.login(session))
      assert.strictEqual(error._tag === "ProviderLoginRequired" && error.reason, "missing_credentials")
      assert.deepStrictEqual(b.upstream.log, [])
    }))

  it.effect("errorcode 62 is ProviderPermissionDenied", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("e62")
      nextVendor(b, { success: 0, error: "The current session does not possess access.", errorcode: 62 })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderPermissionDenied")
      assert.include(error.message, "does not possess access")
    }))

  it.effect("errorcode 602 is ResourceNotFound or ProviderRejected by its message", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("e602")
      // The emulator's own 602: no sample has this barcode ("Sample not found.").
      const missing = yield* Effect.flip(
        client.call(session, "inventory_qa_check", { sample_id: "9999999999999999" }, Wire.QaCheckResult, {
          ...op,
          notFound: { resource: "package", id: "pkg_x" }
        })
      )
      assert.strictEqual(missing._tag, "ResourceNotFound")
      assert.strictEqual(missing._tag === "ResourceNotFound" && missing.id, "pkg_x")
      nextVendor(b, { success: 0, error: "Please specify at least one identifier.", errorcode: "602" })
      const invalid = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(invalid._tag, "ProviderRejected")
      assert.strictEqual(invalid._tag === "ProviderRejected" && invalid.code, "602")
    }))

  it.effect("other success:0 answers are ProviderRejected with the text and code, even on HTTP 200", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("e200")
      nextVendor(b, { success: 0, errorcode: 200, error: "Only QA Labs may enter results." })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderRejected")
      if (error._tag === "ProviderRejected") {
        assert.strictEqual(error.code, "200")
        assert.deepStrictEqual(error.messages, ["Only QA Labs may enter results."])
      }
      nextVendor(b, { success: 0, error: "Something went wrong." })
      const bare = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(bare._tag, "ProviderRejected")
      assert.isUndefined(bare._tag === "ProviderRejected" ? bare.code : "x")
    }))

  it.effect("HTTP errors, non-JSON and envelope-less bodies map into the family", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("transport")
      // The first request, the login, meets an outage.
      b.upstream.failNext(() => new Response("down", { status: 503 }))
      assert.strictEqual(
        (yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)))._tag,
        "ProviderUnavailable"
      )
      b.upstream.failNext(() => new Response("slow", { status: 429 }), { match: onAction("sync_vendor") })
      assert.strictEqual(
        (yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)))._tag,
        "ProviderRateLimited"
      )
      b.upstream.failNext(() => new Response("<html>oops</html>"), { match: onAction("sync_vendor") })
      const html = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(html._tag, "ProviderInvalidResponse")
      nextVendor(b, { vendor: [] })
      const bare = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(bare._tag === "ProviderInvalidResponse" && bare.path, "success")
      assert.deepStrictEqual(b.actions(), ["login", "login", "sync_vendor", "sync_vendor", "sync_vendor"])
    }))

  it.effect("strips a leaked Content-Type line before parsing", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("leak")
      b.upstream.failNext(
        () => new Response("Content-Type: text/plain\r\n\r\n{\"success\":1,\"vendor\":[]}"),
        { match: onAction("sync_vendor") }
      )
      const answer = yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.deepStrictEqual(answer.vendor, [])
    }))

  it.effect("a malformed row is ProviderInvalidResponse naming the field", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* setup("malformed")
      const retail = b.facility("retail")
      b.upstream.failNext(() =>
        json({
          success: 1,
          sale: [{
            inventoryid: retail.packages[0]!.tag,
            price: "8.00",
            quantity: "1 unit",
            location: retail.facility.license_number,
            transactionid: 1
          }]
        }), { match: onAction("sync_sale") })
      const error = yield* Effect.flip(client.call(session, "sync_sale", {}, Wire.syncAnswer("sync_sale"), op))
      assert.strictEqual(error._tag === "ProviderInvalidResponse" && error.path, "sale.0.quantity")
      assert.isTrue(Schema.is(Schema.String)(error.message))
    }))
})

describe("ProviderBClient and the deadline", () => {
  /** A client over an upstream that stops answering: the next request hangs until it is given up. */
  const hung = Effect.gen(function*() {
    const { b, client, session } = yield* setup("hung")
    b.upstream.failNext(hang)
    return { b, client, session }
  })

  /** Waits (in real time) until the upstream received `n` requests. */
  const received = (b: B, n: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < 400 && b.upstream.log.length < n; i++) yield* tick
      assert.strictEqual(b.upstream.log.length, n, `${n} request(s) reached the upstream`)
    })

  it.effect("a call's timeout is cut to the budget left before the deadline (ProviderTimeout)", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* hung
      const fiber = yield* Effect.fork(
        Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)).pipe(Deadline.withBudget("10 seconds"))
      )
      yield* received(b, 1)
      yield* TestClock.adjust("10 seconds")
      // The clock stays at the deadline: let the given-up request settle in real time only.
      for (let i = 0; i < 200 && Option.isNone(yield* Fiber.poll(fiber)); i++) yield* tick
      const done = yield* Fiber.poll(fiber)
      assert.isTrue(Option.isSome(done), "answered at the 10 s deadline, not after its own 30 s")
      const exit = Option.getOrThrow(done)
      assert.isTrue(Exit.isSuccess(exit))
      const error = Exit.isSuccess(exit) ? exit.value : undefined
      assert.strictEqual(error?._tag, "ProviderTimeout")
      if (error?._tag === "ProviderTimeout") assert.deepStrictEqual(error.timeout, Duration.seconds(10))
      for (let i = 0; i < 10; i++) yield* tick
      assert.deepStrictEqual(b.actions(), ["login"], "the login was sent once, and nothing after the deadline")
    }))

  it.effect("without a deadline a call keeps its own 30 s timeout", () =>
    Effect.gen(function*() {
      const { b, client, session } = yield* hung
      const fiber = yield* Effect.fork(Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)))
      yield* received(b, 1)
      yield* TestClock.adjust("29 seconds")
      for (let i = 0; i < 10; i++) yield* tick
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "ProviderTimeout")
      assert.deepStrictEqual(b.actions(), ["login"])
    }))
})
