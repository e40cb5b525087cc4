/**
 * The wire errors of `/v1`, as the contract declares them: the envelope
 * `{"error": {"type", "code", "message", "request_id", "param"?}}` (no `_tag`), each class carrying
 * its HTTP status and the codes it may be sent with; and the OAuth errors `{error,
 * error_description?}` of RFC 6749 (DECISIONS "Errors"). The server's constructors and the one
 * mapping of core errors to the wire are http's `Errors` module, which re-exports these.
 *
 * @since 0.1.0
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

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
 * enumerates them, and the server's constructor (http's `Errors.make`) takes no other.
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
