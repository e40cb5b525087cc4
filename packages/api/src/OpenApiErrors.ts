/**
 * Which error statuses each operation of the OpenAPI document lists, each with the one schema the
 * API really sends at that status there (DECISIONS "OpenAPI": "documented errors in the error
 * shape").
 *
 * The server may answer any operation with any envelope error (the API declares them all, so that
 * every refusal is encoded in one shape); the document lists, per operation, the ones it can
 * really give. An endpoint says what it is made of (`errors("params", "upstream")`), and its
 * `OpenApi.Transform` keeps those statuses, with the envelope's own schema in place of the
 * framework's `HttpApiDecodeError` (never sent: a request that fails its schema is a 400
 * `validation_error`). Every authenticated operation can also answer 401, and every operation 429,
 * 500 and 503 (`service_unavailable`: the database). `OpenApiResponses.test.ts` checks real
 * answers against the result.
 *
 * @since 0.1.0
 */
import { HttpApiSchema } from "@effect/platform"
import type { Schema } from "effect"
import {
  AuthenticationError,
  ConflictError,
  InternalError,
  NotFoundError,
  OAuthBadRequest,
  OAuthForbidden,
  OAuthUnauthorized,
  PayloadTooLarge,
  PermissionError,
  ProviderBadGateway,
  ProviderTimeoutError,
  ProviderUnavailableError,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableError,
  UnsupportedMediaType,
  ValidationError
} from "./Errors.js"

type Json = Record<string, any>

interface Documented {
  readonly schema: Schema.Schema.Any & { readonly identifier: string }
  readonly description: string
}

const doc = (schema: Documented["schema"], description: string): Documented => ({ schema, description })

const validation = doc(
  ValidationError,
  "`validation_error`: a parameter or the body is not valid (`param` names it), or the JSON cannot be read."
)
const authentication = doc(
  AuthenticationError,
  "`authentication_error`: no bearer token, or one that is unknown, revoked or expired (`token_expired`)."
)
const permission = doc(PermissionError, "`permission_error`: this token may not do this here (see `code`).")
const notFound = doc(
  NotFoundError,
  "`not_found_error` / `resource_not_found`: no such object for this organisation (another organisation's objects answer the same)."
)
const conflict = doc(
  ConflictError,
  "`conflict_error`: the object's state or the idempotency key refuses the request (see `code`)."
)
const tooLarge = doc(PayloadTooLarge, "`payload_too_large`: the body is over 1 MiB.")
const mediaType = doc(UnsupportedMediaType, "`unsupported_media_type`: send `application/json`.")
const refused = doc(UnprocessableError, "`invalid_request_error`: the write was refused (see `code` and `message`).")
const rateLimited = doc(RateLimitError, "`rate_limit_error` / `rate_limited`: wait `Retry-After` seconds.")
const internal = doc(InternalError, "`api_error` / `internal_error`: our side failed; quote `request_id` to support.")
const serviceUnavailable = doc(
  ServiceUnavailableError,
  "`api_error` / `service_unavailable` (with `Retry-After`): our database cannot be reached now; retry later."
)
const badGateway = doc(
  ProviderBadGateway,
  "`provider_invalid_response`: the state system answered something unreadable."
)
const unavailable = doc(
  ProviderUnavailableError,
  "`provider_unavailable` or `provider_rate_limited` (with `Retry-After`): the state system cannot answer now."
)
const timeout = doc(
  ProviderTimeoutError,
  "`provider_timeout` (with `Retry-After`): the state system did not answer within the upstream deadline."
)

/**
 * What an operation is made of, each bringing its errors.
 *
 * @since 0.1.0
 * @category models
 */
export const traits = {
  /** Bearer authentication (401). */
  authenticated: [authentication],
  /** Query or path parameters with rules of their own (400). */
  params: [validation],
  /** A JSON body (400 when invalid, 413 over 1 MiB, 415 not JSON). */
  body: [validation, tooLarge, mediaType],
  /** An authenticated POST, which takes an `Idempotency-Key` (400 when malformed, 409 when reused). */
  idempotent: [validation, conflict],
  /** One of the organisation's objects, by id (404; 403 for a connection token outside its connection). */
  owned: [permission, notFound],
  /** Organisation tokens only (403 `forbidden` for a connection token). */
  organisation: [permission],
  /** Reaches the state system (409 login required or inactive, 403 capability, 502–504). */
  upstream: [permission, conflict, badGateway, unavailable, timeout],
  /** A sandbox write (403 `sandbox_only`, 409 `invalid_state_transition`/`write_conflict`, 422 refused). */
  write: [permission, conflict, refused],
  /** The OAuth token endpoint's RFC 6749 bodies (400, 401, 403). */
  oauth: [
    doc(OAuthBadRequest, "RFC 6749 `invalid_request`, `invalid_grant`, `unsupported_grant_type` or `invalid_scope`."),
    doc(OAuthUnauthorized, "RFC 6749 `invalid_client`: the client id or secret is wrong."),
    doc(OAuthForbidden, "RFC 6749 `unauthorized_client`: this client may not use this grant or scope."),
    tooLarge,
    mediaType
  ]
} as const

/**
 * @since 0.1.0
 * @category models
 */
export type Trait = keyof typeof traits

const everywhere: ReadonlyArray<Documented> = [rateLimited, internal, serviceUnavailable]

/**
 * The error responses of an operation made of `these` traits, by status.
 *
 * @since 0.1.0
 * @category operations
 */
export const responses = (these: ReadonlyArray<Trait>): Readonly<Record<string, Json>> => {
  const byStatus = new Map<number, Array<Documented>>()
  for (const documented of [...these.flatMap((trait) => traits[trait]), ...everywhere]) {
    const status = HttpApiSchema.getStatusError(documented.schema)
    const same = byStatus.get(status) ?? []
    if (!same.includes(documented)) byStatus.set(status, [...same, documented])
  }
  const ref = (schema: Documented["schema"]) => ({ $ref: `#/components/schemas/${schema.identifier}` })
  return Object.fromEntries(
    [...byStatus.entries()].sort(([a], [b]) => a - b).map(([status, all]) => [
      String(status),
      {
        // one status, several bodies (503: the state system's, or our own database's)
        description: all.map((d) => d.description).join(" Or "),
        content: {
          "application/json": {
            schema: all.length === 1 ? ref(all[0]!.schema) : { anyOf: all.map((d) => ref(d.schema)) }
          }
        }
      }
    ])
  )
}

/**
 * An endpoint's `OpenApi.Transform`: its success responses as generated, then the error responses
 * of its traits (authenticated unless `public` is among them).
 *
 * @since 0.1.0
 * @category operations
 */
export const errors = (...these: ReadonlyArray<Trait | "public">) => (operation: Json): Json => {
  const own = these.filter((t): t is Trait => t !== "public")
  const all: ReadonlyArray<Trait> = these.includes("public") ? own : ["authenticated", ...own]
  const successes = Object.fromEntries(
    Object.entries<Json>(operation.responses ?? {}).filter(([status]) => Number(status) < 400)
  )
  return { ...operation, responses: { ...successes, ...responses(all) } }
}
