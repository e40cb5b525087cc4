/**
 * The change feed's cursor (DECISIONS "Change feed and managed sync"): opaque to integrators, it
 * names the facility, the last change sequence a page handed over, and when it was issued. It
 * stays valid for 30 days; one of another facility, a damaged one or an older one is refused.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"

/**
 * How long a cursor stays valid.
 *
 * @since 0.1.0
 * @category constants
 */
export const VALIDITY_MS = 30 * 86_400_000

/**
 * What a cursor carries.
 *
 * @since 0.1.0
 * @category models
 */
export interface Position {
  readonly facility_id: string
  /** The last sequence handed over; the next page starts after it. */
  readonly seq: number
  /** When the cursor was issued (epoch ms). */
  readonly issued_at: number
}

const Payload = Schema.Struct({
  v: Schema.Literal(1),
  f: Schema.String,
  s: Schema.Int.pipe(Schema.nonNegative()),
  t: Schema.Int.pipe(Schema.nonNegative())
})
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(Payload))

/**
 * The cursor's text: base64url of a small JSON.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (position: Position): string =>
  Buffer.from(JSON.stringify({ v: 1, f: position.facility_id, s: position.seq, t: position.issued_at }), "utf8")
    .toString("base64url")

/**
 * Reads a cursor for `facilityId` at `now`, or says why it cannot be used.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decode = (text: string, facilityId: string, now: number): Either.Either<Position, string> => {
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(text)) return Either.left("The cursor is not one this API issued")
  const payload = decodePayload(Buffer.from(text, "base64url").toString("utf8"))
  if (Either.isLeft(payload)) return Either.left("The cursor is not one this API issued")
  const { f, s, t } = payload.right
  if (f !== facilityId) return Either.left("The cursor belongs to another facility's feed")
  if (t > now + 60_000) return Either.left("The cursor is not one this API issued")
  if (now - t > VALIDITY_MS) {
    return Either.left("The cursor is older than 30 days; start again without one")
  }
  return Either.right({ facility_id: f, seq: s, issued_at: t })
}
