/**
 * Webhook signatures (DECISIONS "Webhooks", Stripe's scheme): every delivery carries
 * `X-Tracebridge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, with
 * one `v1=` per live secret while a secret rotates. Receivers check the signature against the raw
 * body (the bytes as received, never re-serialised JSON) and refuse a `t` more than 300 s away.
 *
 * Web Crypto only (`globalThis.crypto.subtle`): Node 20+, browsers, Deno, Bun, edge runtimes.
 *
 * ```ts
 * const event = await constructWebhookEvent(rawBody, req.headers["x-tracebridge-signature"], process.env.WHSEC!)
 * if (event.type === "lab_result.received" && !event.data.passed) console.log(event.data.failed_panel)
 * ```
 *
 * @since 0.1.0
 */
import type { components } from "./generated/openapi.js"

/**
 * The headers of a delivery.
 *
 * @since 0.1.0
 * @category constants
 */
export const WEBHOOK_HEADERS = {
  signature: "X-Tracebridge-Signature",
  eventId: "X-Tracebridge-Event-Id",
  eventType: "X-Tracebridge-Event-Type"
} as const

/**
 * Receivers refuse a `t` more than this many seconds from now.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TOLERANCE_SECONDS = 300

/**
 * A delivery's body, as the OpenAPI document describes it.
 *
 * @since 0.1.0
 * @category models
 */
export type WebhookEvent = components["schemas"]["WebhookEvent"]

/**
 * Why a delivery was refused.
 *
 * @since 0.1.0
 * @category errors
 */
export class WebhookSignatureError extends Error {
  override readonly name = "WebhookSignatureError"
  constructor(
    readonly reason: "missing_header" | "malformed_header" | "stale_timestamp" | "no_matching_signature",
    message: string
  ) {
    super(message)
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface VerifyOptions {
  /** Refuse a `t` more than this many seconds from now (default 300). */
  readonly toleranceSeconds?: number
  /** The time now in milliseconds (default `Date.now()`). */
  readonly now?: () => number
}

const encoder = new TextEncoder()

const bytesOf = (body: string | Uint8Array | ArrayBuffer): Uint8Array =>
  typeof body === "string" ? encoder.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body)

const subtle = (): SubtleCrypto => {
  const found = globalThis.crypto?.subtle
  if (found === undefined) {
    throw new TypeError(
      "Web Crypto (crypto.subtle) is not available here: browsers offer it only in secure contexts " +
        "(https:// pages and http://localhost)"
    )
  }
  return found
}

const hmacHex = async (secret: string, timestamp: number, body: Uint8Array): Promise<string> => {
  const key = await subtle().importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"]
  )
  const prefix = encoder.encode(`${timestamp}.`)
  const payload = new Uint8Array(prefix.length + body.length)
  payload.set(prefix, 0)
  payload.set(body, prefix.length)
  const mac = new Uint8Array(await subtle().sign("HMAC", key, payload))
  let hex = ""
  for (const byte of mac) hex += byte.toString(16).padStart(2, "0")
  return hex
}

/** Compares two strings in time that depends only on their lengths. */
const constantTimeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}

/**
 * The parts of a signature header, or undefined when it has no `t=` or no well-formed `v1=`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseSignatureHeader = (
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
 * A signature header for a body, one `v1=` per secret: what the server sends (for tests of your
 * own receiver).
 *
 * @since 0.1.0
 * @category signing
 */
export const signWebhook = async (
  rawBody: string | Uint8Array | ArrayBuffer,
  secrets: string | ReadonlyArray<string>,
  timestamp: number = Math.floor(Date.now() / 1000)
): Promise<string> => {
  const body = bytesOf(rawBody)
  const macs = await Promise.all(
    (typeof secrets === "string" ? [secrets] : secrets).map((s) => hmacHex(s, timestamp, body))
  )
  return [`t=${timestamp}`, ...macs.map((m) => `v1=${m}`)].join(",")
}

/**
 * Checks a delivery's signature: a `t` within the tolerance and a `v1` that matches one of
 * `secrets` (pass the old and the new secret while you rotate). Resolves with the timestamp;
 * rejects with a {@link WebhookSignatureError}.
 *
 * @since 0.1.0
 * @category verifying
 */
export const verifyWebhookSignature = async (
  rawBody: string | Uint8Array | ArrayBuffer,
  header: string | null | undefined,
  secrets: string | ReadonlyArray<string>,
  options: VerifyOptions = {}
): Promise<{ readonly timestamp: number }> => {
  if (header === null || header === undefined || header.trim() === "") {
    throw new WebhookSignatureError("missing_header", `No ${WEBHOOK_HEADERS.signature} header`)
  }
  const parsed = parseSignatureHeader(header)
  if (parsed === undefined) {
    throw new WebhookSignatureError(
      "malformed_header",
      `${WEBHOOK_HEADERS.signature} is not t=<unix seconds>,v1=<hex>`
    )
  }
  const now = Math.floor((options.now ?? Date.now)() / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (Math.abs(now - parsed.timestamp) > tolerance) {
    throw new WebhookSignatureError("stale_timestamp", `The signature's timestamp is more than ${tolerance} s from now`)
  }
  const body = bytesOf(rawBody)
  const list = typeof secrets === "string" ? [secrets] : secrets
  const expected = await Promise.all(list.map((s) => hmacHex(s, parsed.timestamp, body)))
  let matched = false
  for (const e of expected) for (const s of parsed.signatures) if (constantTimeEqual(e, s)) matched = true
  if (!matched) {
    throw new WebhookSignatureError("no_matching_signature", "No signature matches a secret of this endpoint")
  }
  return { timestamp: parsed.timestamp }
}

/**
 * Verifies a delivery, then parses its body: the event, typed by the OpenAPI document.
 *
 * @since 0.1.0
 * @category verifying
 */
export const constructWebhookEvent = async (
  rawBody: string | Uint8Array | ArrayBuffer,
  header: string | null | undefined,
  secrets: string | ReadonlyArray<string>,
  options: VerifyOptions = {}
): Promise<WebhookEvent> => {
  await verifyWebhookSignature(rawBody, header, secrets, options)
  const text = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(bytesOf(rawBody))
  return JSON.parse(text) as WebhookEvent
}
