import { assert, describe, it } from "@effect/vitest"
import { WebhookSignature } from "@tracebridge/core"
import { Effect, Either, TestClock } from "effect"
import { createHmac } from "node:crypto"

const body = JSON.stringify({ id: "evt_1", type: "lab_result.received", data: { passed: false } })
const secret = "whsec_current"
const old = "whsec_previous"
const T = 1_767_225_600

describe("WebhookSignature", () => {
  it.effect("signs t=<unix>,v1=<hex HMAC-SHA256 of \"t.body\"> (the same bytes node:crypto gives)", () =>
    Effect.gen(function*() {
      const header = yield* WebhookSignature.sign([secret], T, body)
      const hex = createHmac("sha256", secret).update(`${T}.${body}`).digest("hex")
      assert.strictEqual(header, `t=${T},v1=${hex}`)
    }))

  it.effect("accepts a good signature within the tolerance", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T * 1000 + 299_000)
      const header = yield* WebhookSignature.sign([secret], T, body)
      const ok = yield* WebhookSignature.verify(body, header, [secret])
      assert.deepStrictEqual(ok, { timestamp: T })
    }))

  it.effect("refuses a tampered body, a stale timestamp, a missing or malformed header, a wrong secret", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T * 1000)
      const header = yield* WebhookSignature.sign([secret], T, body)
      const reason = (e: Either.Either<unknown, WebhookSignature.WebhookSignatureError>) =>
        Either.isLeft(e) ? e.left.reason : "accepted"
      assert.strictEqual(
        reason(yield* Effect.either(WebhookSignature.verify(body.replace("false", "true"), header, [secret]))),
        "no_matching_signature"
      )
      assert.strictEqual(
        reason(yield* Effect.either(WebhookSignature.verify(body, header, ["whsec_other"]))),
        "no_matching_signature"
      )
      assert.strictEqual(
        reason(yield* Effect.either(WebhookSignature.verify(body, undefined, [secret]))),
        "missing_header"
      )
      assert.strictEqual(
        reason(yield* Effect.either(WebhookSignature.verify(body, "v1=abc", [secret]))),
        "malformed_header"
      )
      yield* TestClock.setTime((T + 301) * 1000)
      assert.strictEqual(
        reason(yield* Effect.either(WebhookSignature.verify(body, header, [secret]))),
        "stale_timestamp"
      )
      assert.strictEqual(
        reason(yield* Effect.either(WebhookSignature.verify(body, header, [secret], { toleranceSeconds: 600 }))),
        "accepted"
      )
    }))

  it.effect("during a rotation the header carries two v1 entries and either secret verifies it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T * 1000)
      const header = yield* WebhookSignature.sign([secret, old], T, body)
      assert.strictEqual(header.split(",").filter((p) => p.startsWith("v1=")).length, 2)
      yield* WebhookSignature.verify(body, header, [old])
      yield* WebhookSignature.verify(body, header, [secret])
      const onlyNew = yield* WebhookSignature.sign([secret], T, body)
      const refused = yield* Effect.either(WebhookSignature.verify(body, onlyNew, [old]))
      assert.isTrue(Either.isLeft(refused))
    }))

  it.live("verifyWebhook resolves with the event, or rejects with the reason", () =>
    Effect.gen(function*() {
      const now = Math.floor(Date.now() / 1000)
      const header = yield* WebhookSignature.sign([secret], now, body)
      const event = yield* Effect.promise(() =>
        WebhookSignature.verifyWebhook(body, header, [old, secret], { toleranceSeconds: 300 })
      )
      assert.strictEqual(event.id, "evt_1")
      const stale = yield* WebhookSignature.sign([secret], now - 3600, body)
      const error = yield* Effect.promise(() =>
        WebhookSignature.verifyWebhook(body, stale, [secret], { toleranceSeconds: 300 }).then(
          () => undefined,
          (e: unknown) => e
        )
      )
      assert.instanceOf(error, WebhookSignature.WebhookSignatureError)
      assert.strictEqual((error as WebhookSignature.WebhookSignatureError).reason, "stale_timestamp")
    }))
})
