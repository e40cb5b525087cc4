/**
 * The errors the SDK throws: {@link TracebridgeError} for every `/v1` error answer (the body
 * `{"error": {type, code, message, request_id, param?}}` of DECISIONS "Errors"), and
 * {@link OAuthError} for the token endpoint's RFC 6749 body `{error, error_description?}`.
 *
 * ```ts
 * try {
 *   await tb.get("/v1/connections/{connection_id}", { params: { path: { connection_id: "conn_x" } } })
 * } catch (e) {
 *   if (e instanceof TracebridgeError && e.code === "resource_not_found") console.log(e.requestId)
 * }
 * ```
 *
 * @since 0.1.0
 */

/**
 * The error object of a `/v1` error answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApiErrorObject {
  readonly type: string
  readonly code: string
  readonly message: string
  readonly request_id: string
  readonly param?: string
}

/**
 * An error answer of the API: the HTTP status and the body's `type`, `code`, `message`,
 * `request_id` and `param`. `retryAfter` is the `Retry-After` header in seconds, when sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class TracebridgeError extends Error {
  override readonly name = "TracebridgeError"
  readonly status: number
  readonly type: string
  readonly code: string
  readonly requestId: string | undefined
  readonly param: string | undefined
  readonly retryAfter: number | undefined
  readonly body: unknown

  constructor(init: {
    readonly status: number
    readonly type: string
    readonly code: string
    readonly message: string
    readonly requestId?: string | undefined
    readonly param?: string | undefined
    readonly retryAfter?: number | undefined
    readonly body?: unknown
  }) {
    super(init.message)
    this.status = init.status
    this.type = init.type
    this.code = init.code
    this.requestId = init.requestId
    this.param = init.param
    this.retryAfter = init.retryAfter
    this.body = init.body
  }
}

/**
 * An error answer of `POST /v1/oauth/token`: `error` is the RFC 6749 code (`invalid_client`,
 * `invalid_grant`, …).
 *
 * @since 0.1.0
 * @category errors
 */
export class OAuthError extends Error {
  override readonly name = "OAuthError"
  readonly status: number
  readonly error: string
  readonly errorDescription: string | undefined
  readonly requestId: string | undefined

  constructor(init: {
    readonly status: number
    readonly error: string
    readonly errorDescription?: string | undefined
    readonly requestId?: string | undefined
  }) {
    super(init.errorDescription ?? init.error)
    this.status = init.status
    this.error = init.error
    this.errorDescription = init.errorDescription
    this.requestId = init.requestId
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const text = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/**
 * The error of an error answer, from its status, parsed body (or text) and headers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromResponse = (
  status: number,
  body: unknown,
  headers: Headers,
  retryAfter?: number
): TracebridgeError | OAuthError => {
  const requestId = headers.get("x-request-id") ?? undefined
  if (isRecord(body) && isRecord(body.error)) {
    const e = body.error
    return new TracebridgeError({
      status,
      type: text(e.type) ?? "api_error",
      code: text(e.code) ?? "unknown",
      message: text(e.message) ?? `The API answered ${status}`,
      requestId: text(e.request_id) ?? requestId,
      param: text(e.param),
      retryAfter,
      body
    })
  }
  if (isRecord(body) && typeof body.error === "string") {
    return new OAuthError({ status, error: body.error, errorDescription: text(body.error_description), requestId })
  }
  return new TracebridgeError({
    status,
    type: "api_error",
    code: "unexpected_response",
    message: `The API answered ${status} with a body that is not a Tracebridge error`,
    requestId,
    retryAfter,
    body
  })
}
