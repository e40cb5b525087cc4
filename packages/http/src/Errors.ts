/**
 * The wire errors of `/v1`, encoded exactly as the spec's envelope
 * `{"error": {"type", "code", "message", "request_id", "param"?}}` (no `_tag`), each class carrying
 * its HTTP status; the OAuth errors `{error, error_description?}` of RFC 6749; and the one function
 * that maps every core error to the wire (DECISIONS "Errors").
 *
 * @since 0.1.0
 */
import { HttpApiSchema, HttpApp, HttpServerResponse } from "@effect/platform"
import type { ProviderError } from "@tracebridge/core"
import { Duration, Effect, Schema } from "effect"
import * as RequestId from "./RequestId.js"

/**
 * The body of every non-OAuth error.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ErrorBody = Schema.Struct({
  type: Schema.String.annotations({ description: "Category, e.g. validation_error" }),
  code: Schema.String.annotations({ description: "e.g. invalid_parameter" }),
  message: Schema.String,
  request_id: Schema.String,
  param: Schema.optional(Schema.String).annotations({ description: "The offending parameter, when one is to blame" })
}).annotations({ identifier: "ErrorBody" })

/**
 * @since 0.1.0
 * @category models
 */
export type ErrorBody = typeof ErrorBody.Type

/**
 * Every code each error type is sent with: the DECISIONS error table, plus the codes it leaves to
 * us ("other refused writes"; the login refusals of the widget and the sandbox link). The document
 * enumerates them, and `make` takes no other.
 *
 * @since 0.1.0
 * @category constants
 */
export const codes = {
  validation_error: [
    "invalid_parameter",
    "missing_parameter",
    "invalid_json",
    "unknown_scenario",
    // a state login the state system refused (the widget and the sandbox link)
    "invalid_credentials",
    "account_locked",
    // the Connect widget's link token (its own routes; what onExit hands the integrator)
    "link_token_invalid",
    "link_token_expired",
    "link_token_used"
  ],
  authentication_error: ["unauthorized", "token_expired"],
  permission_error: ["forbidden", "sandbox_only", "capability_not_enabled", "plan_not_enabled"],
  not_found_error: ["resource_not_found"],
  conflict_error: [
    "invalid_state_transition",
    "idempotency_key_reused",
    "idempotency_key_in_progress",
    "connection_login_required",
    "connection_inactive",
    "write_conflict"
  ],
  invalid_request_error: ["insufficient_quantity", "package_in_transfer", "provider_rejected", "scenario_exhausted"],
  rate_limit_error: ["rate_limited"],
  api_error: ["internal_error", "service_unavailable"]
} as const

/**
 * A code of one error type.
 *
 * @since 0.1.0
 * @category models
 */
export type Code<T extends keyof typeof codes> = (typeof codes)[T][number]

/**
 * The body of one kind of error: its `type` and its `code`s are literals, so that each class
 * encodes only its own errors, HttpApi picks its status, and the document enumerates the codes.
 */
const bodyOf = <T extends string, const C extends ReadonlyArray<string>>(type: T, code: C) => ({
  error: Schema.Struct({
    ...ErrorBody.fields,
    type: Schema.Literal(type),
    code: Schema.Literal(...code).annotations({ description: "What went wrong; one of these values" })
  })
})

/** @since 0.1.0 @category errors */
export class ValidationError extends Schema.Class<ValidationError>("ValidationError")(
  bodyOf("validation_error", codes.validation_error),
  HttpApiSchema.annotations({ status: 400, description: "validation_error" })
) {
  readonly _tag = "ValidationError"
}
/** @since 0.1.0 @category errors */
export class AuthenticationError extends Schema.Class<AuthenticationError>("AuthenticationError")(
  bodyOf("authentication_error", codes.authentication_error),
  HttpApiSchema.annotations({ status: 401, description: "authentication_error" })
) {
  readonly _tag = "AuthenticationError"
}
/** @since 0.1.0 @category errors */
export class PermissionError extends Schema.Class<PermissionError>("PermissionError")(
  bodyOf("permission_error", codes.permission_error),
  HttpApiSchema.annotations({ status: 403, description: "permission_error" })
) {
  readonly _tag = "PermissionError"
}
/** @since 0.1.0 @category errors */
export class NotFoundError extends Schema.Class<NotFoundError>("NotFoundError")(
  bodyOf("not_found_error", codes.not_found_error),
  HttpApiSchema.annotations({ status: 404, description: "not_found_error" })
) {
  readonly _tag = "NotFoundError"
}
/** @since 0.1.0 @category errors */
export class ConflictError extends Schema.Class<ConflictError>("ConflictError")(
  bodyOf("conflict_error", codes.conflict_error),
  HttpApiSchema.annotations({ status: 409, description: "conflict_error" })
) {
  readonly _tag = "ConflictError"
}
/** @since 0.1.0 @category errors */
export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLarge")(
  bodyOf("invalid_request_error", ["payload_too_large"]),
  HttpApiSchema.annotations({ status: 413, description: "invalid_request_error" })
) {
  readonly _tag = "PayloadTooLarge"
}
/** @since 0.1.0 @category errors */
export class MethodNotAllowed extends Schema.Class<MethodNotAllowed>("MethodNotAllowed")(
  bodyOf("invalid_request_error", ["method_not_allowed"]),
  HttpApiSchema.annotations({ status: 405, description: "invalid_request_error" })
) {
  readonly _tag = "MethodNotAllowed"
}
/** @since 0.1.0 @category errors */
export class UnsupportedMediaType extends Schema.Class<UnsupportedMediaType>("UnsupportedMediaType")(
  bodyOf("invalid_request_error", ["unsupported_media_type"]),
  HttpApiSchema.annotations({ status: 415, description: "invalid_request_error" })
) {
  readonly _tag = "UnsupportedMediaType"
}
/** @since 0.1.0 @category errors */
export class UnprocessableError extends Schema.Class<UnprocessableError>("UnprocessableError")(
  bodyOf("invalid_request_error", codes.invalid_request_error),
  HttpApiSchema.annotations({ status: 422, description: "invalid_request_error" })
) {
  readonly _tag = "UnprocessableError"
}
/** @since 0.1.0 @category errors */
export class RateLimitError extends Schema.Class<RateLimitError>("RateLimitError")(
  bodyOf("rate_limit_error", codes.rate_limit_error),
  HttpApiSchema.annotations({ status: 429, description: "rate_limit_error" })
) {
  readonly _tag = "RateLimitError"
}
/** @since 0.1.0 @category errors */
export class InternalError extends Schema.Class<InternalError>("InternalError")(
  bodyOf("api_error", ["internal_error"]),
  HttpApiSchema.annotations({ status: 500, description: "api_error" })
) {
  readonly _tag = "InternalError"
}
/**
 * Our own side cannot answer now: the database could not be had within its wait (DECISIONS
 * "Database or service down"). Sent with `Retry-After`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServiceUnavailableError extends Schema.Class<ServiceUnavailableError>("ServiceUnavailableError")(
  bodyOf("api_error", ["service_unavailable"]),
  HttpApiSchema.annotations({ status: 503, description: "api_error" })
) {
  readonly _tag = "ServiceUnavailableError"
}
/** @since 0.1.0 @category errors */
export class ProviderBadGateway extends Schema.Class<ProviderBadGateway>("ProviderBadGateway")(
  bodyOf("provider_error", ["provider_invalid_response"]),
  HttpApiSchema.annotations({ status: 502, description: "provider_error" })
) {
  readonly _tag = "ProviderBadGateway"
}
/** @since 0.1.0 @category errors */
export class ProviderUnavailableError extends Schema.Class<ProviderUnavailableError>("ProviderUnavailableError")(
  bodyOf("provider_error", ["provider_unavailable", "provider_rate_limited"]),
  HttpApiSchema.annotations({ status: 503, description: "provider_error" })
) {
  readonly _tag = "ProviderUnavailableError"
}
/** @since 0.1.0 @category errors */
export class ProviderTimeoutError extends Schema.Class<ProviderTimeoutError>("ProviderTimeoutError")(
  bodyOf("provider_error", ["provider_timeout"]),
  HttpApiSchema.annotations({ status: 504, description: "provider_error" })
) {
  readonly _tag = "ProviderTimeoutError"
}

/**
 * Every envelope error.
 *
 * @since 0.1.0
 * @category models
 */
export type HttpError =
  | ValidationError
  | AuthenticationError
  | PermissionError
  | NotFoundError
  | ConflictError
  | PayloadTooLarge
  | MethodNotAllowed
  | UnsupportedMediaType
  | UnprocessableError
  | RateLimitError
  | InternalError
  | ServiceUnavailableError
  | ProviderBadGateway
  | ProviderUnavailableError
  | ProviderTimeoutError

type Classes = {
  readonly validation_error: ValidationError
  readonly authentication_error: AuthenticationError
  readonly permission_error: PermissionError
  readonly not_found_error: NotFoundError
  readonly conflict_error: ConflictError
  readonly invalid_request_error: UnprocessableError
  readonly rate_limit_error: RateLimitError
  readonly api_error: InternalError | ServiceUnavailableError
}

/** The envelope's body of one error type. */
type BodyOf<T extends keyof typeof codes> = {
  readonly type: T
  readonly code: Code<T>
  readonly message: string
  readonly request_id: string
  readonly param?: string
}

const construct: { readonly [T in keyof Classes]: (error: BodyOf<T>) => Classes[T] } = {
  validation_error: (error) => new ValidationError({ error }),
  authentication_error: (error) => new AuthenticationError({ error }),
  permission_error: (error) => new PermissionError({ error }),
  not_found_error: (error) => new NotFoundError({ error }),
  conflict_error: (error) => new ConflictError({ error }),
  invalid_request_error: (error) => new UnprocessableError({ error }),
  rate_limit_error: (error) => new RateLimitError({ error }),
  api_error: (error) =>
    error.code === "service_unavailable"
      ? new ServiceUnavailableError({ error: { ...error, code: error.code } })
      : new InternalError({ error: { ...error, code: error.code } })
}

/**
 * An envelope error with the current request id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <T extends keyof Classes>(
  type: T,
  code: Code<T>,
  message: string,
  param?: string
): Effect.Effect<Classes[T]> =>
  Effect.map(RequestId.get, (request_id) => {
    const body: BodyOf<T> = { type, code, message, request_id, ...(param === undefined ? {} : { param }) }
    return construct[type](body)
  })

/**
 * Fails with an envelope error (for handlers: `return yield* Errors.fail("not_found_error", …)`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fail = <T extends keyof Classes>(type: T, code: Code<T>, message: string, param?: string) =>
  Effect.flatMap(make(type, code, message, param), Effect.fail)

/**
 * The `Retry-After` (seconds) of a 503 `service_unavailable`: the database's default wait.
 *
 * @since 0.1.0
 * @category constants
 */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5

/**
 * A 503 `api_error` / `service_unavailable` with `Retry-After`: our database could not be had
 * within its wait (DECISIONS "Database or service down"; never a 500, never a hang).
 *
 * @since 0.1.0
 * @category constructors
 */
export const serviceUnavailable: Effect.Effect<InternalError | ServiceUnavailableError> = Effect.zipRight(
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.succeed(
      HttpServerResponse.setHeader(response, "retry-after", String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS))
    )
  ),
  make(
    "api_error",
    "service_unavailable",
    "The service cannot reach its database right now; retry after the Retry-After header"
  )
)

/**
 * A 413 `payload_too_large` (bodies over 1 MiB).
 *
 * @since 0.1.0
 * @category constructors
 */
export const payloadTooLarge = (message: string) =>
  Effect.map(RequestId.get, (request_id) =>
    new PayloadTooLarge({
      error: { type: "invalid_request_error", code: "payload_too_large", message, request_id }
    }))

/**
 * A 405 `method_not_allowed`, with the `Allow` header naming `allowed` (a path the contract has,
 * asked with a method it does not take there).
 *
 * @since 0.1.0
 * @category constructors
 */
export const methodNotAllowed = (method: string, allowed: ReadonlyArray<string>) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "allow", allowed.join(", ")))
    ),
    Effect.map(RequestId.get, (request_id) =>
      new MethodNotAllowed({
        error: {
          type: "invalid_request_error",
          code: "method_not_allowed",
          message: `${method} is not allowed here; this path takes ${allowed.join(", ")}`,
          request_id
        }
      }))
  )

/**
 * A 415 `unsupported_media_type`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsupportedMediaType = (message: string) =>
  Effect.map(RequestId.get, (request_id) =>
    new UnsupportedMediaType({
      error: { type: "invalid_request_error", code: "unsupported_media_type", message, request_id }
    }))

const provider = <
  C extends "provider_invalid_response" | "provider_unavailable" | "provider_rate_limited" | "provider_timeout"
>(
  code: C,
  message: string
) =>
  Effect.map(RequestId.get, (request_id) => {
    const error = { type: "provider_error" as const, message, request_id }
    switch (code) {
      case "provider_invalid_response":
        return new ProviderBadGateway({ error: { ...error, code } })
      case "provider_timeout":
        return new ProviderTimeoutError({ error: { ...error, code } })
      default:
        return new ProviderUnavailableError({
          error: { ...error, code: code as "provider_unavailable" | "provider_rate_limited" }
        })
    }
  })

/**
 * The one mapping of core errors to the wire (DECISIONS "Errors"). A throttled or timed-out state
 * system's answer also gets its `Retry-After` header (`retryAfterFor`).
 *
 * @since 0.1.0
 * @category mapping
 */
export const fromProviderError = (error: ProviderError.ProviderError): Effect.Effect<HttpError> => {
  const retryAfter = retryAfterFor(error)
  const mapped = upstreamMessages[error._tag] === undefined ? toWire(error) : Effect.zipRight(
    // the state system's own text goes to the log (with the request id), never to the client
    Effect.flatMap(RequestId.get, (request_id) =>
      Effect.logWarning("upstream error").pipe(
        Effect.annotateLogs({
          request_id,
          upstream_error: error._tag,
          upstream_provider: "provider" in error ? String(error.provider) : "",
          upstream_operation: "operation" in error ? String(error.operation) : "",
          upstream_message: error.message
        })
      )),
    toWire(error)
  )
  return retryAfter === undefined ? mapped : Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfter)))
    ),
    mapped
  )
}

/**
 * The fixed message of each core error that can carry a state system's own text (issue #28): the
 * client gets this, the log gets the text. Errors Tracebridge words itself keep their message.
 *
 * @since 0.1.0
 * @category mapping
 */
export const upstreamMessages: Partial<Record<ProviderError.ProviderError["_tag"], string>> = {
  ProviderPermissionDenied: "The state system does not let this login read or change this resource",
  ProviderLoginRequired: "The state system no longer accepts this connection's login; re-enter it in update mode",
  ProviderRejected: "The state system refused the request; quote the request id for its details",
  ProviderInvalidResponse: "The state system answered with something Tracebridge cannot read; try again later",
  ProviderRateLimited: "The state system is rate limiting requests; retry after the Retry-After header",
  ProviderUnavailable: "The state system could not be reached or failed; try again later",
  ProviderTimeout: "The state system did not answer in time; try again later"
}

const toWire = (error: ProviderError.ProviderError): Effect.Effect<HttpError> =>
  wireOf(error, upstreamMessages[error._tag] ?? error.message)

const wireOf = (error: ProviderError.ProviderError, message: string): Effect.Effect<HttpError> => {
  switch (error._tag) {
    case "ResourceNotFound":
      return make("not_found_error", "resource_not_found", message)
    case "CapabilityNotEnabled":
      return make("permission_error", "capability_not_enabled", message)
    case "SandboxOnly":
      return make("permission_error", "sandbox_only", message)
    case "ProviderPermissionDenied":
      return make("permission_error", "forbidden", message)
    case "InvalidStateTransition":
      return make("conflict_error", "invalid_state_transition", message)
    case "ProviderLoginRequired":
      return make("conflict_error", "connection_login_required", message)
    case "InsufficientQuantity":
      return make("invalid_request_error", "insufficient_quantity", message)
    case "PackageInTransfer":
      return make("invalid_request_error", "package_in_transfer", message, error.path)
    case "ProviderRejected":
      return make("invalid_request_error", "provider_rejected", message)
    case "InvalidInput":
      return make("validation_error", "invalid_parameter", message, error.path === "" ? undefined : error.path)
    case "UnsupportedState":
      return make("validation_error", "invalid_parameter", message, "state")
    case "ProviderInvalidResponse":
      return provider("provider_invalid_response", message)
    case "ProviderRateLimited":
      return provider("provider_rate_limited", message)
    case "ProviderUnavailable":
      return provider("provider_unavailable", message)
    case "ProviderTimeout":
      return provider("provider_timeout", message)
  }
}

/**
 * Seconds to wait before retrying, for a `Retry-After` header, where the provider said so.
 *
 * @since 0.1.0
 * @category mapping
 */
export const retryAfterOf = (error: ProviderError.ProviderError): number | undefined =>
  error._tag === "ProviderRateLimited" && error.retryAfter !== undefined
    ? Math.max(1, Math.ceil(Duration.toSeconds(error.retryAfter)))
    : undefined

/**
 * The `Retry-After` (seconds) of a state system that throttled us without saying for how long.
 *
 * @since 0.1.0
 * @category constants
 */
export const RATE_LIMITED_RETRY_AFTER_SECONDS = 60

/**
 * The `Retry-After` (seconds) of a state system that did not answer within the upstream deadline
 * (504 `provider_timeout`): a retry at once would most likely hang as long again.
 *
 * @since 0.1.0
 * @category constants
 */
export const TIMEOUT_RETRY_AFTER_SECONDS = 30

/**
 * The `Retry-After` (seconds) of the answer to a core error: a throttle always gets one (the
 * provider's own, or `RATE_LIMITED_RETRY_AFTER_SECONDS`), a timeout `TIMEOUT_RETRY_AFTER_SECONDS`;
 * nothing else has one.
 *
 * @since 0.1.0
 * @category mapping
 */
export const retryAfterFor = (error: ProviderError.ProviderError): number | undefined =>
  error._tag === "ProviderRateLimited"
    ? retryAfterOf(error) ?? RATE_LIMITED_RETRY_AFTER_SECONDS
    : error._tag === "ProviderTimeout"
    ? TIMEOUT_RETRY_AFTER_SECONDS
    : undefined

/**
 * The OAuth error body (RFC 6749 §5.2).
 *
 * @since 0.1.0
 * @category schemas
 */
export const OAuthErrorBody = {
  error: Schema.Literal(
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope"
  ),
  error_description: Schema.optional(Schema.String)
}

/** @since 0.1.0 @category errors */
export class OAuthBadRequest extends Schema.Class<OAuthBadRequest>("OAuthBadRequest")({
  ...OAuthErrorBody,
  error: Schema.Literal("invalid_request", "invalid_grant", "unsupported_grant_type", "invalid_scope")
}, HttpApiSchema.annotations({ status: 400 })) {
  readonly _tag = "OAuthBadRequest"
}
/** @since 0.1.0 @category errors */
export class OAuthUnauthorized extends Schema.Class<OAuthUnauthorized>("OAuthUnauthorized")({
  ...OAuthErrorBody,
  error: Schema.Literal("invalid_client")
}, HttpApiSchema.annotations({ status: 401 })) {
  readonly _tag = "OAuthUnauthorized"
}
/** @since 0.1.0 @category errors */
export class OAuthForbidden extends Schema.Class<OAuthForbidden>("OAuthForbidden")({
  ...OAuthErrorBody,
  error: Schema.Literal("unauthorized_client")
}, HttpApiSchema.annotations({ status: 403 })) {
  readonly _tag = "OAuthForbidden"
}

/**
 * An OAuth error with the status RFC 6749 and DECISIONS give its code.
 *
 * @since 0.1.0
 * @category constructors
 */
export const oauth = (error: (typeof OAuthErrorBody.error)["Type"], description?: string) => {
  const body = { error, ...(description === undefined ? {} : { error_description: description }) }
  return error === "invalid_client"
    ? new OAuthUnauthorized({ ...body, error })
    : error === "unauthorized_client"
    ? new OAuthForbidden({ ...body, error })
    : new OAuthBadRequest({ ...body, error })
}
