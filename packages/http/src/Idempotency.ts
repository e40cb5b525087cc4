/**
 * `Idempotency-Key` on authenticated POSTs under `/v1` (DECISIONS "Tokens and limits" and
 * "Idempotency scope"; see docs/limits.md):
 *
 * - A key is scoped to the principal that sent it ({@link scopeOf}: the organisation and its API
 *   client for an access token, the organisation and the connection for a connection token). Another
 *   principal reusing a key gets exactly what it would get without one.
 * - A replay re-runs authorisation: the key is looked at only when the handler says the caller
 *   may do what it asks ({@link authorised}, called by every POST handler right after its
 *   authorisation). A request refused before that point is refused as it would be without a key,
 *   and nothing is claimed, stored or replayed.
 * - Keys live 24 h (time from Effect's `Clock`).
 * - The same key with the same method, path and body replays the first response byte for byte
 *   (status, body, the handler's headers and content type) with `Idempotent-Replayed: true`.
 * - The same key with another body (a different SHA-256 of method, path and body) is 409
 *   `conflict_error` / `idempotency_key_reused`.
 * - Of two concurrent requests with one key, the first claims the key (a row in state
 *   `in_progress`; the primary key decides) and runs; the other is answered at once with 409
 *   `idempotency_key_in_progress` and may retry.
 * - 5xx answers (and interrupted requests) are not stored: the key is released and a retry runs
 *   again. 4xx answers given after authorisation are stored and replayed.
 * - Stored responses are encrypted with the Crypto service (AES-256-GCM with a key id), so the
 *   secrets a response reveals once (`connection_token`, `whsec_…`) are never stored in plain text.
 * - `POST /v1/oauth/token` is excluded: it is unauthenticated (no principal to scope a key by)
 *   and issues fresh tokens, which a replay must not hand out again.
 *
 * @since 0.1.0
 */
import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import type { HttpServerRequest } from "@effect/platform"
import { Clock, Effect, FiberRef, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import * as Errors from "./Errors.js"
import type * as IdempotencyStore from "./persistence/IdempotencyStore.js"
import type { Crypto } from "./services/Crypto.js"

/**
 * How long a key is remembered.
 *
 * @since 0.1.0
 * @category constants
 */
export const TTL_MILLIS = 24 * 60 * 60 * 1000

/**
 * The request header.
 *
 * @since 0.1.0
 * @category constants
 */
export const HEADER = "idempotency-key"

/**
 * The header every replayed response carries.
 *
 * @since 0.1.0
 * @category constants
 */
export const REPLAYED_HEADER = "idempotent-replayed"

/** 1–255 printable ASCII characters. */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/

/**
 * Whether a key is well formed: 1–255 printable ASCII characters.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isValidKey = (key: string): boolean => VALID_KEY.test(key)

/**
 * Whether a request takes part: a POST under `/v1`, other than the OAuth token endpoint.
 *
 * @since 0.1.0
 * @category predicates
 */
export const applies = (method: string, path: string): boolean =>
  method === "POST" && path.startsWith("/v1/") && path !== "/v1/oauth/token"

interface Stored {
  readonly status: number
  readonly headers: Record<string, string>
  readonly contentType: string | null
  /** base64 of the body bytes; null for an empty body. */
  readonly body: string | null
}

const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/** The response as stored, or undefined when it cannot be (a stream, a 5xx). */
const capture = (response: HttpServerResponse.HttpServerResponse): Stored | undefined => {
  if (response.status >= 500) return undefined
  const headers = { ...response.headers } as Record<string, string>
  switch (response.body._tag) {
    case "Empty":
      return { status: response.status, headers, contentType: null, body: null }
    case "Uint8Array":
      return {
        status: response.status,
        headers,
        contentType: response.body.contentType,
        body: Buffer.from(response.body.body).toString("base64")
      }
    default:
      return undefined
  }
}

const replay = (stored: Stored): HttpServerResponse.HttpServerResponse => {
  const options = { status: stored.status, headers: stored.headers }
  const response = stored.body === null
    ? HttpServerResponse.empty(options)
    : HttpServerResponse.uint8Array(new Uint8Array(Buffer.from(stored.body, "base64")), {
      ...options,
      ...(stored.contentType === null ? {} : { contentType: stored.contentType })
    })
  return HttpServerResponse.setHeader(response, REPLAYED_HEADER, "true")
}

const isHttpError = (e: unknown): e is Errors.HttpError =>
  typeof e === "object" && e !== null && "error" in e && Schema.isSchema((e as object).constructor) &&
  typeof (e as { error?: { type?: unknown } }).error?.type === "string"

/** An envelope error as the wire shows it (the same encoding HttpApi applies afterwards). */
const errorResponse = (error: Errors.HttpError): Effect.Effect<Stored | undefined> =>
  Effect.gen(function*() {
    const schema = error.constructor as unknown as Schema.Schema<unknown, unknown>
    const status = HttpApiSchema.getStatusError(schema)
    if (status >= 500) return undefined
    const encoded = yield* Schema.encode(schema)(error)
    const response = yield* HttpServerResponse.json(encoded, { status })
    return capture(response)
  }).pipe(Effect.orElseSucceed(() => undefined))

/**
 * The scope of a principal's keys: its organisation, and the API client (access tokens) or the
 * connection (connection tokens) it acts as. An access token's successor from a refresh or a new
 * client-credentials grant keeps the scope, so a retry after a token renewal still replays.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scopeOf = (principal: {
  readonly organisation: { readonly id: string }
  readonly client_id: string | null
  readonly connection_id: string | null
}): string =>
  principal.connection_id !== null
    ? `${principal.organisation.id}/connection:${principal.connection_id}`
    : `${principal.organisation.id}/client:${principal.client_id ?? ""}`

/** A request with a key, waiting for its handler's authorisation. */
interface Pending {
  readonly scope: string
  readonly key: string
  readonly fingerprint: string
  readonly keys: IdempotencyStore.Service
  readonly crypto: Crypto["Type"]
  claimed: boolean
}

const pending = FiberRef.unsafeMake<Pending | undefined>(undefined)

/**
 * How {@link authorised} ends a request early: a replay of the stored response, or an error (the
 * key is in use with another body, or by a request still running). It travels as a defect so that
 * handlers' error types stay those of the contract; {@link handle} turns it back.
 */
class ShortCircuit {
  constructor(readonly answer: HttpServerResponse.HttpServerResponse | Errors.HttpError) {}
}

const claim = (p: Pending): Effect.Effect<void> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const claimed = yield* p.keys.claimIdempotencyKey({
      scope: p.scope,
      idem_key: p.key,
      fingerprint: p.fingerprint,
      state: "in_progress",
      response: null,
      key_id: null,
      created_at: now,
      expires_at: now + TTL_MILLIS
    })
    if (claimed) {
      p.claimed = true
      return
    }
    const existing = yield* p.keys.getIdempotencyKey(p.scope, p.key, now)
    if (Option.isSome(existing) && existing.value.fingerprint !== p.fingerprint) {
      return yield* Effect.die(
        new ShortCircuit(
          yield* Errors.make(
            "conflict_error",
            "idempotency_key_reused",
            "This Idempotency-Key was used with another request; use a new key for a new request",
            "Idempotency-Key"
          )
        )
      )
    }
    if (Option.isNone(existing) || existing.value.state === "in_progress" || existing.value.response === null) {
      return yield* Effect.die(
        new ShortCircuit(
          yield* Errors.make(
            "conflict_error",
            "idempotency_key_in_progress",
            "A request with this Idempotency-Key is still running; retry shortly",
            "Idempotency-Key"
          )
        )
      )
    }
    const stored = JSON.parse(p.crypto.decrypt(existing.value.response, existing.value.key_id ?? "")) as Stored
    return yield* Effect.die(new ShortCircuit(replay(stored)))
  })

/**
 * Called by every POST handler once the caller is authorised to do what it asks: with an
 * `Idempotency-Key`, the key is claimed here, or the request ends with the stored response (a
 * replay) or a 409. Without a key (or outside a POST) it does nothing.
 *
 * @since 0.1.0
 * @category middleware
 */
export const authorised: Effect.Effect<void> = Effect.flatMap(
  FiberRef.get(pending),
  (p) => p === undefined || p.claimed ? Effect.void : claim(p)
)

/**
 * Runs `run` under the request's `Idempotency-Key`, if it has one and takes part; `scope` is the
 * principal's {@link scopeOf} (undefined: the request is not authenticated, and fails on its own).
 * The key is claimed when the handler calls {@link authorised}.
 *
 * @since 0.1.0
 * @category middleware
 */
export const handle = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  scope: string | undefined,
  run: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  keys: IdempotencyStore.Service,
  crypto: Crypto["Type"]
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | Errors.HttpError, R> =>
  Effect.gen(function*() {
    const key = request.headers[HEADER]
    const path = pathOf(request.url)
    if (key === undefined || scope === undefined || !applies(request.method, path)) return yield* run
    if (!isValidKey(key)) {
      return yield* Errors.fail(
        "validation_error",
        "invalid_parameter",
        "Idempotency-Key must be 1 to 255 printable ASCII characters",
        "Idempotency-Key"
      )
    }
    const body = yield* Effect.orElseSucceed(request.text, () => "")
    const fingerprint = createHash("sha256").update(`${request.method}\n${request.url}\n${body}`).digest("hex")
    const p: Pending = { scope, key, fingerprint, keys, crypto, claimed: false }
    const store = (stored: Stored | undefined) => {
      if (stored === undefined) return keys.releaseIdempotencyKey(scope, key)
      const sealed = crypto.encrypt(JSON.stringify(stored))
      return keys.completeIdempotencyKey(scope, key, sealed.ciphertext, sealed.keyId)
    }
    return yield* Effect.locally(run, pending, p).pipe(
      Effect.onExit((exit) => {
        if (!p.claimed) return Effect.void
        if (exit._tag === "Success") return store(capture(exit.value))
        const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        return isHttpError(failure)
          ? Effect.flatMap(errorResponse(failure), store)
          : keys.releaseIdempotencyKey(scope, key)
      }),
      Effect.catchSomeDefect((defect) =>
        defect instanceof ShortCircuit
          ? Option.some(
            HttpServerResponse.isServerResponse(defect.answer)
              ? Effect.succeed(defect.answer)
              : Effect.fail(defect.answer)
          )
          : Option.none()
      )
    )
  })
