/**
 * The server's side of the wire errors of `/v1`: the contract's error schemas (re-exported from
 * `@tracebridge/api`'s `Errors`), their constructors with the current request id, and the one
 * function that maps every core error to the wire (DECISIONS "Errors").
 *
 * @since 0.1.0
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import type { Code, codes, HttpError } from "@tracebridge/api/Errors"
import {
  AuthenticationError,
  ConflictError,
  InternalError,
  MethodNotAllowed,
  NotFoundError,
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
} from "@tracebridge/api/Errors"
import type { ProviderError } from "@tracebridge/core"
import { Duration, Effect } from "effect"
import * as RequestId from "./RequestId.js"

export * from "@tracebridge/api/Errors"

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
