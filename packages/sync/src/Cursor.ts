/**
 * The change feed's cursor (DECISIONS "Change feed and managed sync", "Cursors"): opaque to
 * integrators, it carries the last change sequence a page handed over and when it was issued,
 * signed with HMAC-SHA256 under a server key and bound to the organisation, connection and
 * facility of the feed that issued it (issue #28). A cursor that was forged, changed, issued for
 * another organisation, connection or facility, or issued more than 30 days ago is refused;
 * the issue time is signed, so the 30 days cannot be stretched.
 *
 * The key is the caller's (the API derives it from its encryption key: HKDF-SHA256 with the label
 * `KEY_LABEL`, so every node of a deployment shares it). The first key signs; every key given is
 * accepted, so cursors outlive a rotation of the encryption key while the old one is kept.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * How long a cursor stays valid.
 *
 * @since 0.1.0
 * @category constants
 */
export const VALIDITY_MS = 30 * 86_400_000

/**
 * The HKDF label (`info`) of the cursor's signing key: it differs from every other use of the
 * encryption key.
 *
 * @since 0.1.0
 * @category constants
 */
export const KEY_LABEL = "tracebridge/change-feed-cursor/v2"

/**
 * The feed a cursor belongs to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Binding {
  readonly organisation_id: string
  readonly connection_id: string
  readonly facility_id: string
}

/**
 * What a cursor carries.
 *
 * @since 0.1.0
 * @category models
 */
export interface Position {
  /** The last sequence handed over; the next page starts after it. */
  readonly seq: number
  /** When the cursor was issued (epoch ms). */
  readonly issued_at: number
}

const Payload = Schema.Struct({
  s: Schema.Int.pipe(Schema.nonNegative()),
  t: Schema.Int.pipe(Schema.nonNegative())
})
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(Payload))

const VERSION = "v2"
const SHAPE = /^v2\.([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/

const NOT_OURS = "The cursor is not one this API issued for this facility's feed; start again without one"

/** The signature of a payload for a feed (the binding and the payload, unambiguously joined). */
const sign = (key: Uint8Array, binding: Binding, payload: string): Buffer =>
  createHmac("sha256", key)
    .update(JSON.stringify([VERSION, binding.organisation_id, binding.connection_id, binding.facility_id, payload]))
    .digest()

/**
 * The cursor's text: `v2.` base64url of a small JSON, `.` base64url of its HMAC-SHA256 (under the
 * first key) over the feed it belongs to and that JSON.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (keys: ReadonlyArray<Uint8Array>, binding: Binding, position: Position): string => {
  const payload = Buffer.from(JSON.stringify({ s: position.seq, t: position.issued_at }), "utf8").toString("base64url")
  return `${VERSION}.${payload}.${sign(keys[0]!, binding, payload).toString("base64url")}`
}

/**
 * Reads a cursor for the feed `binding` at `now`, or says why it cannot be used.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decode = (
  keys: ReadonlyArray<Uint8Array>,
  text: string,
  binding: Binding,
  now: number
): Either.Either<Position, string> => {
  const parts = SHAPE.exec(text)
  if (parts === null) return Either.left(NOT_OURS)
  const payload = parts[1]!
  const mac = Buffer.from(parts[2]!, "base64url")
  // every key is tried (no early exit), so the time taken says nothing about which one matched
  let signed = false
  for (const key of keys) {
    const expected = sign(key, binding, payload)
    if (expected.length === mac.length && timingSafeEqual(expected, mac)) signed = true
  }
  if (!signed) return Either.left(NOT_OURS)
  const decoded = decodePayload(Buffer.from(payload, "base64url").toString("utf8"))
  if (Either.isLeft(decoded)) return Either.left(NOT_OURS)
  const { s, t } = decoded.right
  if (t > now + 60_000) return Either.left(NOT_OURS)
  if (now - t > VALIDITY_MS) return Either.left("The cursor is older than 30 days; start again without one")
  return Either.right({ seq: s, issued_at: t })
}
