import { FetchHttpClient, HttpClient } from "@effect/platform"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ProviderBClient, Wire } from "@tracebridge/adapter-provider-b"
import { Deadline } from "@tracebridge/core"
import { Duration, Effect, Exit, Fiber, Option, Schema, TestClock } from "effect"
import type { JsonBodyType } from "msw"
import { HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { handlers, makeStore, PASSWORD } from "./support/BioTrackServer.js"
import { good, sessionFor } from "./support/setup.js"

const server = setupServer(...handlers)
beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
afterAll(() => server.close())

const Vendors = Wire.syncAnswer("sync_vendor")
const setup = (name: string, credentials: Record<string, string> = good) =>
  Effect.gen(function*() {
    const { baseUrl, store } = makeStore(name)
    const client = yield* ProviderBClient.make.pipe(Effect.provide(FetchHttpClient.layer))
    return { client, store, session: sessionFor(baseUrl, name, credentials) }
  })
const op = { operation: "test.call" }
const fault = (body: JsonBodyType) => ({ action: "sync_vendor", respond: () => HttpResponse.json(body) })

describe("ProviderBClient", () => {
  it.effect("logs in lazily, once, and sends API 4.0 with the session id in every body", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("lazy")
      assert.deepStrictEqual(store.calls, [])
      const first = yield* client.call(session, "sync_vendor", { download: 1 }, Vendors, op)
      yield* client.call(session, "sync_vendor", { download: 1 }, Vendors, op)
      assert.strictEqual(first.vendor.length, 4)
      assert.deepStrictEqual(store.calls, ["login", "sync_vendor", "sync_vendor"])
      assert.isTrue(store.bodies.every((b) => b["API"] === "4.0"))
      assert.strictEqual(store.bodies[0]!["license_number"], good.ubi)
      assert.strictEqual(store.bodies[1]!["sessionid"], store.bodies[2]!["sessionid"])
    }))

  it.effect("on errorcode 63 logs in again once and retries", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("expiry")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      store.sessions.clear()
      const again = yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.strictEqual(again.vendor.length, 4)
      assert.deepStrictEqual(store.calls, ["login", "sync_vendor", "sync_vendor", "login", "sync_vendor"])
    }))

  it.effect("a second errorcode 63 is ProviderLoginRequired (session_expired)", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("expiry-twice")
      const expired = { success: 0, error: "Your session has expired.", errorcode: 63 }
      store.faults.push(fault(expired), fault(expired))
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderLoginRequired")
      assert.strictEqual(error._tag === "ProviderLoginRequired" && error.reason, "session_expired")
      assert.strictEqual(store.calls.filter((c) => c === "login").length, 2)
    }))

  it.effect("an errorcode 63 that says the session is invalid also logs in again once and retries", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("expiry-invalid")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      store.faults.push(fault({ success: 0, error: "Invalid session ID.", errorcode: "63" }))
      const again = yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.strictEqual(again.vendor.length, 4)
      assert.deepStrictEqual(store.calls, ["login", "sync_vendor", "sync_vendor", "login", "sync_vendor"])
    }))

  it.effect("an errorcode 63 about a missing privilege is ProviderPermissionDenied, without a new login", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("e63-privilege")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      const text = "The current session does not possess access to the sync_vendor privilege."
      store.faults.push(fault({ success: 0, error: text, errorcode: 63 }))
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderPermissionDenied")
      assert.include(error.message, "does not possess access")
      assert.deepStrictEqual(store.calls, ["login", "sync_vendor", "sync_vendor"])
      // The session was kept: the next call reuses it without logging in.
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.deepStrictEqual(store.calls, ["login", "sync_vendor", "sync_vendor", "sync_vendor"])
      assert.strictEqual(store.bodies[1]!["sessionid"], store.bodies[3]!["sessionid"])
    }))

  it.effect("an errorcode 63 about the license is ProviderPermissionDenied, not ProviderLoginRequired", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("e63-license")
      store.faults.push(
        fault({ success: 0, error: "Your license is not permitted to perform this action.", errorcode: 63 })
      )
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderPermissionDenied")
      assert.strictEqual(store.calls.filter((c) => c === "login").length, 1)
    }))

  it.effect("any other errorcode 63 is ProviderRejected with the code and text, without a new login", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("e63-other")
      store.faults.push(fault({ success: 0, error: "Transaction could not be completed.", errorcode: 63 }))
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderRejected")
      if (error._tag === "ProviderRejected") {
        assert.strictEqual(error.code, "63")
        assert.deepStrictEqual(error.messages, ["Transaction could not be completed."])
      }
      assert.deepStrictEqual(store.calls, ["login", "sync_vendor"])
    }))

  it.effect("concurrent calls that meet an expired session share one new login", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("expiry-concurrent")
      yield* client.call(session, "sync_vendor", {}, Vendors, op)
      store.sessions.clear()
      const answers = yield* Effect.all(
        Array.from({ length: 6 }, () => client.call(session, "sync_vendor", {}, Vendors, op)),
        { concurrency: "unbounded" }
      )
      assert.isTrue(answers.every((a) => a.vendor.length === 4))
      assert.strictEqual(store.calls.filter((c) => c === "login").length, 2, "the first login and one shared re-login")
    }))

  it.effect("concurrent first calls share one login", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("login-concurrent")
      const answers = yield* Effect.all(
        Array.from({ length: 6 }, () => client.call(session, "sync_vendor", {}, Vendors, op)),
        { concurrency: "unbounded" }
      )
      assert.isTrue(answers.every((a) => a.vendor.length === 4))
      assert.strictEqual(store.calls.filter((c) => c === "login").length, 1)
    }))

  it.effect("a refused login is ProviderLoginRequired with BioTrack's text and no secret", () =>
    Effect.gen(function*() {
      const { client, session } = yield* setup("bad-login", { ...good, password: "not-the-password" })
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderLoginRequired")
      assert.include(error.message, "Invalid username or password.")
      assert.notInclude(JSON.stringify(error), "not-the-password")
      assert.notInclude(JSON.stringify(error), PASSWORD)
    }))

  it.effect("missing credentials are ProviderLoginRequired without a call", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("no-creds", { ubi: "1", username: "u" })
      const error = yield* Effect.flip(client.login(session))
      assert.strictEqual(error._tag === "ProviderLoginRequired" && error.reason, "missing_credentials")
      assert.deepStrictEqual(store.calls, [])
    }))

  it.effect("errorcode 62 is ProviderPermissionDenied", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("e62")
      store.faults.push(fault({ success: 0, error: "The current session does not possess access.", errorcode: 62 }))
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderPermissionDenied")
      assert.include(error.message, "does not possess access")
    }))

  it.effect("errorcode 602 is ResourceNotFound or ProviderRejected by its message", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("e602")
      store.faults.push(fault({ success: 0, error: "Barcode not found.", errorcode: 602 }))
      const missing = yield* Effect.flip(
        client.call(session, "sync_vendor", {}, Vendors, { ...op, notFound: { resource: "package", id: "pkg_x" } })
      )
      assert.strictEqual(missing._tag, "ResourceNotFound")
      assert.strictEqual(missing._tag === "ResourceNotFound" && missing.id, "pkg_x")
      store.faults.push(fault({ success: 0, error: "Please specify at least one identifier.", errorcode: "602" }))
      const invalid = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(invalid._tag, "ProviderRejected")
      assert.strictEqual(invalid._tag === "ProviderRejected" && invalid.code, "602")
    }))

  it.effect("other success:0 answers are ProviderRejected with the text and code, even on HTTP 200", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("e200")
      store.faults.push(fault({ success: 0, errorcode: 200, error: "Only QA Labs may enter results." }))
      const error = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(error._tag, "ProviderRejected")
      if (error._tag === "ProviderRejected") {
        assert.strictEqual(error.code, "200")
        assert.deepStrictEqual(error.messages, ["Only QA Labs may enter results."])
      }
      store.faults.push(fault({ success: 0, error: "Something went wrong." }))
      const bare = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(bare._tag, "ProviderRejected")
      assert.isUndefined(bare._tag === "ProviderRejected" ? bare.code : "x")
    }))

  it.effect("HTTP errors, non-JSON and envelope-less bodies map into the family", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("transport")
      store.faults.push({ respond: () => HttpResponse.text("down", { status: 503 }) })
      assert.strictEqual(
        (yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)))._tag,
        "ProviderUnavailable"
      )
      store.faults.push({ action: "sync_vendor", respond: () => HttpResponse.text("slow", { status: 429 }) })
      assert.strictEqual(
        (yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)))._tag,
        "ProviderRateLimited"
      )
      store.faults.push({ action: "sync_vendor", respond: () => HttpResponse.text("<html>oops</html>") })
      const html = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(html._tag, "ProviderInvalidResponse")
      store.faults.push(fault({ vendor: [] }))
      const bare = yield* Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op))
      assert.strictEqual(bare._tag === "ProviderInvalidResponse" && bare.path, "success")
    }))

  it.effect("strips a leaked Content-Type line before parsing", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("leak")
      store.faults.push({
        action: "sync_vendor",
        respond: () => HttpResponse.text("Content-Type: text/plain\r\n\r\n{\"success\":1,\"vendor\":[]}")
      })
      const answer = yield* client.call(session, "sync_vendor", {}, Vendors, op)
      assert.deepStrictEqual(answer.vendor, [])
    }))

  it.effect("a malformed row is ProviderInvalidResponse naming the field", () =>
    Effect.gen(function*() {
      const { client, session, store } = yield* setup("malformed")
      store.faults.push({
        action: "sync_sale",
        respond: () =>
          HttpResponse.json({
            success: 1,
            sale: [{
              inventoryid: "9000000000000002",
              price: "8.00",
              quantity: "1 unit",
              location: "1",
              transactionid: 1
            }]
          })
      })
      const error = yield* Effect.flip(client.call(session, "sync_sale", {}, Wire.syncAnswer("sync_sale"), op))
      assert.strictEqual(error._tag === "ProviderInvalidResponse" && error.path, "sale.0.quantity")
      assert.isTrue(Schema.is(Schema.String)(error.message))
    }))
})

describe("ProviderBClient and the deadline", () => {
  /** A client over a BioTrack that never answers, counting the calls it is sent. */
  const hung = Effect.gen(function*() {
    const sent: Array<number> = []
    const http = HttpClient.make(() =>
      Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        sent.push(now)
        return Effect.never
      })
    )
    const client = yield* ProviderBClient.make.pipe(Effect.provideService(HttpClient.HttpClient, http))
    return { client, sent, session: sessionFor("https://fake-biotrack.test/serverjson.asp", "hung") }
  })

  it.effect("a call's timeout is cut to the budget left before the deadline (ProviderTimeout)", () =>
    Effect.gen(function*() {
      const { client, sent, session } = yield* hung
      const fiber = yield* Effect.fork(
        Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)).pipe(Deadline.withBudget("10 seconds"))
      )
      yield* TestClock.adjust("10 seconds")
      const done = yield* Fiber.poll(fiber)
      assert.isTrue(Option.isSome(done), "answered at the 10 s deadline, not after its own 30 s")
      const exit = Option.getOrThrow(done)
      assert.isTrue(Exit.isSuccess(exit))
      const error = Exit.isSuccess(exit) ? exit.value : undefined
      assert.strictEqual(error?._tag, "ProviderTimeout")
      if (error?._tag === "ProviderTimeout") assert.deepStrictEqual(error.timeout, Duration.seconds(10))
      assert.deepStrictEqual(sent, [0], "the login was sent once, and nothing after the deadline")
    }))

  it.effect("without a deadline a call keeps its own 30 s timeout", () =>
    Effect.gen(function*() {
      const { client, session } = yield* hung
      const fiber = yield* Effect.fork(Effect.flip(client.call(session, "sync_vendor", {}, Vendors, op)))
      yield* TestClock.adjust("29 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "ProviderTimeout")
    }))
})
