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
 * The body of one kind of error. The `type` (and, where several statuses share a type, the `code`)
 * is a literal, so that each class encodes only its own errors and HttpApi picks its status.
 */
const bodyOf = <T extends string, C extends Schema.Schema.Any = typeof Schema.String>(
  type: T,
  code: C = Schema.String as any
) => ({
  error: Schema.Struct({ ...ErrorBody.fields, type: Schema.Literal(type), code })
})
const notCodes = (...codes: ReadonlyArray<string>) => Schema.String.pipe(Schema.filter((c) => !codes.includes(c)))

/** @since 0.1.0 @category errors */
export class ValidationError extends Schema.Class<ValidationError>("ValidationError")(
  bodyOf("validation_error"),
  HttpApiSchema.annotations({ status: 400, description: "validation_error" })
) {
  readonly _tag = "ValidationError"
}
/** @since 0.1.0 @category errors */
export class AuthenticationError extends Schema.Class<AuthenticationError>("AuthenticationError")(
  bodyOf("authentication_error"),
  HttpApiSchema.annotations({ status: 401, description: "authentication_error" })
) {
  readonly _tag = "AuthenticationError"
}
/** @since 0.1.0 @category errors */
export class PermissionError extends Schema.Class<PermissionError>("PermissionError")(
  bodyOf("permission_error"),
  HttpApiSchema.annotations({ status: 403, description: "permission_error" })
) {
  readonly _tag = "PermissionError"
}
/** @since 0.1.0 @category errors */
export class NotFoundError extends Schema.Class<NotFoundError>("NotFoundError")(
  bodyOf("not_found_error"),
  HttpApiSchema.annotations({ status: 404, description: "not_found_error" })
) {
  readonly _tag = "NotFoundError"
}
/** @since 0.1.0 @category errors */
export class ConflictError extends Schema.Class<ConflictError>("ConflictError")(
  bodyOf("conflict_error"),
  HttpApiSchema.annotations({ status: 409, description: "conflict_error" })
) {
  readonly _tag = "ConflictError"
}
/** @since 0.1.0 @category errors */
export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLarge")(
  bodyOf("invalid_request_error", Schema.Literal("payload_too_large")),
  HttpApiSchema.annotations({ status: 413, description: "invalid_request_error" })
) {
  readonly _tag = "PayloadTooLarge"
}
/** @since 0.1.0 @category errors */
export class UnsupportedMediaType extends Schema.Class<UnsupportedMediaType>("UnsupportedMediaType")(
  bodyOf("invalid_request_error", Schema.Literal("unsupported_media_type")),
  HttpApiSchema.annotations({ status: 415, description: "invalid_request_error" })
) {
  readonly _tag = "UnsupportedMediaType"
}
/** @since 0.1.0 @category errors */
export class UnprocessableError extends Schema.Class<UnprocessableError>("UnprocessableError")(
  bodyOf("invalid_request_error", notCodes("payload_too_large", "unsupported_media_type")),
  HttpApiSchema.annotations({ status: 422, description: "invalid_request_error" })
) {
  readonly _tag = "UnprocessableError"
}
/** @since 0.1.0 @category errors */
export class RateLimitError extends Schema.Class<RateLimitError>("RateLimitError")(
  bodyOf("rate_limit_error"),
  HttpApiSchema.annotations({ status: 429, description: "rate_limit_error" })
) {
  readonly _tag = "RateLimitError"
}
/** @since 0.1.0 @category errors */
export class InternalError extends Schema.Class<InternalError>("InternalError")(
  bodyOf("api_error"),
  HttpApiSchema.annotations({ status: 500, description: "api_error" })
) {
  readonly _tag = "InternalError"
}
/** @since 0.1.0 @category errors */
export class ProviderBadGateway extends Schema.Class<ProviderBadGateway>("ProviderBadGateway")(
  bodyOf("provider_error", Schema.Literal("provider_invalid_response")),
  HttpApiSchema.annotations({ status: 502, description: "provider_error" })
) {
  readonly _tag = "ProviderBadGateway"
}
/** @since 0.1.0 @category errors */
export class ProviderUnavailableError extends Schema.Class<ProviderUnavailableError>("ProviderUnavailableError")(
  bodyOf("provider_error", Schema.Literal("provider_unavailable", "provider_rate_limited")),
  HttpApiSchema.annotations({ status: 503, description: "provider_error" })
) {
  readonly _tag = "ProviderUnavailableError"
}
/** @since 0.1.0 @category errors */
export class ProviderTimeoutError extends Schema.Class<ProviderTimeoutError>("ProviderTimeoutError")(
  bodyOf("provider_error", Schema.Literal("provider_timeout")),
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
  | UnsupportedMediaType
  | UnprocessableError
  | RateLimitError
  | InternalError
  | ProviderBadGateway
  | ProviderUnavailableError
  | ProviderTimeoutError

const classes = {
  validation_error: ValidationError,
  authentication_error: AuthenticationError,
  permission_error: PermissionError,
  not_found_error: NotFoundError,
  conflict_error: ConflictError,
  invalid_request_error: UnprocessableError,
  rate_limit_error: RateLimitError,
  api_error: InternalError
} as const

/**
 * An envelope error with the current request id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <T extends keyof typeof classes>(
  type: T,
  code: string,
  message: string,
  param?: string
): Effect.Effect<InstanceType<(typeof classes)[T]>> =>
  Effect.map(RequestId.get, (request_id) =>
    new (classes[type] as any)({
      error: { type, code, message, request_id, ...(param === undefined ? {} : { param }) }
    }) as InstanceType<(typeof classes)[T]>)

/**
 * Fails with an envelope error (for handlers: `return yield* Errors.fail("not_found_error", …)`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fail = <T extends keyof typeof classes>(type: T, code: string, message: string, param?: string) =>
  Effect.flatMap(make(type, code, message, param), Effect.fail)

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

const provider = <C extends typeof ProviderBadGateway | typeof ProviderUnavailableError | typeof ProviderTimeoutError>(
  Class: C,
  code: string,
  message: string
) =>
  Effect.map(
    RequestId.get,
    (request_id) =>
      new (Class as any)({ error: { type: "provider_error", code, message, request_id } }) as InstanceType<C>
  )

/**
 * The one mapping of core errors to the wire (DECISIONS "Errors"). A throttled or timed-out state
 * system's answer also gets its `Retry-After` header (`retryAfterFor`).
 *
 * @since 0.1.0
 * @category mapping
 */
export const fromProviderError = (error: ProviderError.ProviderError): Effect.Effect<HttpError> => {
  const retryAfter = retryAfterFor(error)
  const mapped = toWire(error)
  return retryAfter === undefined ? mapped : Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfter)))
    ),
    mapped
  )
}

const toWire = (error: ProviderError.ProviderError): Effect.Effect<HttpError> => {
  switch (error._tag) {
    case "ResourceNotFound":
      return make("not_found_error", "resource_not_found", error.message)
    case "CapabilityNotEnabled":
      return make("permission_error", "capability_not_enabled", error.message)
    case "SandboxOnly":
      return make("permission_error", "sandbox_only", error.message)
    case "ProviderPermissionDenied":
      return make("permission_error", "forbidden", error.message)
    case "InvalidStateTransition":
      return make("conflict_error", "invalid_state_transition", error.message)
    case "ProviderLoginRequired":
      return make("conflict_error", "connection_login_required", error.message)
    case "InsufficientQuantity":
      return make("invalid_request_error", "insufficient_quantity", error.message)
    case "ProviderRejected":
      return make("invalid_request_error", "provider_rejected", error.message)
    case "InvalidInput":
      return make("validation_error", "invalid_parameter", error.message, error.path === "" ? undefined : error.path)
    case "UnsupportedState":
      return make("validation_error", "invalid_parameter", error.message, "state")
    case "ProviderInvalidResponse":
      return provider(ProviderBadGateway, "provider_invalid_response", error.message)
    case "ProviderRateLimited":
      return provider(ProviderUnavailableError, "provider_rate_limited", error.message)
    case "ProviderUnavailable":
      return provider(ProviderUnavailableError, "provider_unavailable", error.message)
    case "ProviderTimeout":
      return provider(ProviderTimeoutError, "provider_timeout", error.message)
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
