/**
 * The webhook signature of DECISIONS "Webhooks" (Stripe's scheme), for the sender and for
 * integrators who receive deliveries:
 *
 * `X-Tracebridge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, with
 * one `v1=` per live secret while a secret rotates.
 *
 * Only Web Crypto (`globalThis.crypto.subtle`: Node 20+, browsers, edge runtimes); no Node
 * built-ins. `verifyWebhook` is the Promise API for integrators; `verify` and `sign` are the
 * Effect ones (time from `Clock`).
 *
 * ```ts
 * import { verifyWebhook } from "@tracebridge/core/WebhookSignature"
 *
 * // rawBody: the request body exactly as received (a string, not re-serialised JSON)
 * const event = await verifyWebhook(rawBody, req.headers["x-tracebridge-signature"], [process.env.WHSEC!], {
 *   toleranceSeconds: 300
 * }) // rejects with a WebhookSignatureError when the signature is missing, wrong or stale
 * ```
 *
 * @since 0.1.0
 */
import { Clock, Effect, Either, Schema } from "effect"
import type { WebhookEvent } from "./WebhookEvent.js"

/**
 * The header names of a delivery.
 *
 * @since 0.1.0
 * @category constants
 */
export const headers = {
  signature: "X-Tracebridge-Signature",
  eventId: "X-Tracebridge-Event-Id",
  eventType: "X-Tracebridge-Event-Type"
} as const

/**
 * Receivers reject a `t` older than this many seconds (DECISIONS: 300).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TOLERANCE_SECONDS = 300

/**
 * Why a signature was refused.
 *
 * @since 0.1.0
 * @category errors
 */
export class WebhookSignatureError extends Schema.TaggedError<WebhookSignatureError>(
  "@tracebridge/core/WebhookSignature/WebhookSignatureError"
)("WebhookSignatureError", {
  reason: Schema.Literal("missing_header", "malformed_header", "stale_timestamp", "no_matching_signature"),
  message: Schema.String
}) {}

const encoder = new TextEncoder()

const hmacHex = (secret: string, payload: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const key = await globalThis.crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"]
    )
    const mac = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, encoder.encode(payload)))
    let hex = ""
    for (const byte of mac) hex += byte.toString(16).padStart(2, "0")
    return hex
  })

/** Compares two strings in time that depends only on their lengths. */
const constantTimeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}

/**
 * What is signed: the timestamp (unix seconds), a dot, and the raw body.
 *
 * @since 0.1.0
 * @category signing
 */
export const signedPayload = (timestamp: number, rawBody: string): string => `${timestamp}.${rawBody}`

/**
 * The header value from a timestamp and the hex HMAC-SHA256 of `signedPayload` under each secret
 * (for signers with their own HMAC, such as node:crypto's).
 *
 * @since 0.1.0
 * @category signing
 */
export const format = (timestamp: number, macs: ReadonlyArray<string>): string =>
  [`t=${timestamp}`, ...macs.map((m) => `v1=${m}`)].join(",")

/**
 * The signature header value for a body at a time (unix seconds), one `v1=` per secret.
 *
 * @since 0.1.0
 * @category signing
 */
export const sign = (
  secrets: ReadonlyArray<string>,
  timestamp: number,
  rawBody: string
): Effect.Effect<string> =>
  Effect.map(
    Effect.forEach(secrets, (secret) => hmacHex(secret, signedPayload(timestamp, rawBody))),
    (macs) => format(timestamp, macs)
  )

/**
 * The parts of a signature header, or undefined when it is not `t=…,v1=…`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (
  header: string
): { readonly timestamp: number; readonly signatures: ReadonlyArray<string> } | undefined => {
  let timestamp: number | undefined
  const signatures: Array<string> = []
  for (const part of header.split(",")) {
    const eq = part.indexOf("=")
    if (eq < 0) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === "t" && /^\d+$/.test(value)) timestamp = Number(value)
    else if (key === "v1" && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase())
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface VerifyOptions {
  /** Refuse a `t` more than this many seconds from now (default 300). */
  readonly toleranceSeconds?: number
}

/**
 * Checks a delivery: a `t` within the tolerance and a `v1` that matches any of `secrets` (pass
 * the old and the new secret while you rotate). Constant-time comparisons.
 *
 * @since 0.1.0
 * @category verifying
 */
export const verify = (
  rawBody: string,
  header: string | null | undefined,
  secrets: ReadonlyArray<string>,
  options: VerifyOptions = {}
): Effect.Effect<{ readonly timestamp: number }, WebhookSignatureError> =>
  Effect.gen(function*() {
    if (header === null || header === undefined || header.trim() === "") {
      return yield* new WebhookSignatureError({
        reason: "missing_header",
        message: `No ${headers.signature} header`
      })
    }
    const parsed = parse(header)
    if (parsed === undefined) {
      return yield* new WebhookSignatureError({
        reason: "malformed_header",
        message: `${headers.signature} is not t=<unix seconds>,v1=<hex>`
      })
    }
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
    if (Math.abs(now - parsed.timestamp) > tolerance) {
      return yield* new WebhookSignatureError({
        reason: "stale_timestamp",
        message: `The signature's timestamp is more than ${tolerance} s from now`
      })
    }
    const expected = yield* Effect.forEach(secrets, (s) => hmacHex(s, signedPayload(parsed.timestamp, rawBody)))
    let matched = false
    for (const e of expected) for (const s of parsed.signatures) if (constantTimeEqual(e, s)) matched = true
    if (!matched) {
      return yield* new WebhookSignatureError({
        reason: "no_matching_signature",
        message: "No signature matches a secret of this endpoint"
      })
    }
    return { timestamp: parsed.timestamp }
  })

/**
 * The integrator's helper: resolves with the parsed event when the signature is good, rejects with
 * a {@link WebhookSignatureError} otherwise. `rawBody` must be the body exactly as received.
 *
 * @since 0.1.0
 * @category verifying
 */
export const verifyWebhook = (
  rawBody: string,
  signatureHeader: string | null | undefined,
  secrets: ReadonlyArray<string>,
  options: VerifyOptions = {}
): Promise<WebhookEvent> =>
  Effect.runPromise(Effect.either(verify(rawBody, signatureHeader, secrets, options))).then((result) => {
    if (Either.isLeft(result)) throw result.left
    return JSON.parse(rawBody) as WebhookEvent
  })
