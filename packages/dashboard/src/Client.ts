/**
 * The pages' one way to the dashboard's internal API: `HttpApiClient.make(DashboardApi)` over the
 * browser's `fetch` (the cookie goes with every same-origin call), so every call is typed by the
 * contract itself (`@tracebridge/api/DashboardApi`). Every change (any method but GET) carries the
 * session's CSRF token in `X-CSRF-Token` (docs/dashboard.md "CSRF"). A failure becomes a
 * {@link Problem} whose message is the API's own words (`error.message` of the envelope), never a
 * schema's text.
 *
 * @since 0.1.0
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { CSRF_HEADER, DashboardApi } from "@tracebridge/api/DashboardApi"
import type { Me } from "@tracebridge/api/DashboardApi"
import { Cause, Effect, Exit, Option } from "effect"

/**
 * Who is signed in (`GET /dashboard/api/session`), with the CSRF token.
 *
 * @since 0.1.0
 */
export type Session = typeof Me.Type

let csrfToken: string | undefined

/**
 * Remembers (or, with undefined, forgets) the session's CSRF token.
 *
 * @since 0.1.0
 */
export const setCsrf = (token: string | undefined): void => {
  csrfToken = token
}

const make = HttpApiClient.make(DashboardApi, {
  // the API's paths already start with /dashboard/api (`DashboardApi.prefix`)
  baseUrl: globalThis.location?.origin ?? "http://127.0.0.1",
  transformClient: HttpClient.mapRequest((request) =>
    request.method === "GET" || request.method === "HEAD" || csrfToken === undefined
      ? request
      : HttpClientRequest.setHeader(request, CSRF_HEADER, csrfToken)
  )
})

/**
 * The typed client: one method per endpoint, by group (`client.keys.create()`).
 *
 * @since 0.1.0
 */
export type Client = Effect.Effect.Success<typeof make>

let client: Promise<Client> | undefined
const getClient = () => (client ??= Effect.runPromise(Effect.provide(make, FetchHttpClient.layer)))

/**
 * A refused or failed call, in words a person can read.
 *
 * @since 0.1.0
 */
export class Problem extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly code: string | undefined,
    readonly param: string | undefined
  ) {
    super(message)
  }
}

const statusOf: Record<string, number> = {
  ValidationError: 400,
  AuthenticationError: 401,
  PermissionError: 403,
  NotFoundError: 404,
  MethodNotAllowed: 405,
  ConflictError: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  UnprocessableError: 422,
  RateLimitError: 429,
  InternalError: 500,
  ProviderBadGateway: 502,
  ServiceUnavailableError: 503,
  ProviderUnavailableError: 503,
  ProviderTimeoutError: 504
}

/** The words of a failure: the envelope's message when the API answered one. */
export const problemOf = (failure: unknown): Problem => {
  if (typeof failure === "object" && failure !== null) {
    const tagged = failure as {
      readonly _tag?: string
      readonly error?: { readonly message?: unknown; readonly code?: unknown; readonly param?: unknown }
      readonly response?: { readonly status?: number }
      readonly reason?: string
    }
    if (tagged.error !== undefined && typeof tagged.error.message === "string") {
      return new Problem(
        tagged.error.message,
        statusOf[tagged._tag ?? ""],
        typeof tagged.error.code === "string" ? tagged.error.code : undefined,
        typeof tagged.error.param === "string" ? tagged.error.param : undefined
      )
    }
    if (tagged._tag === "ResponseError" && tagged.response?.status !== undefined) {
      return new Problem(
        `The server answered ${tagged.response.status}. Try again.`,
        tagged.response.status,
        undefined,
        undefined
      )
    }
    if (tagged._tag === "RequestError") {
      return new Problem(
        "The server could not be reached. Check the connection and try again.",
        undefined,
        undefined,
        undefined
      )
    }
    if (tagged._tag === "ParseError") {
      // a value the contract refuses before sending, or an answer it cannot read: never the schema's text
      return new Problem(
        "A value was not accepted, or the server's answer could not be read. Check the form, or reload the page.",
        undefined,
        undefined,
        undefined
      )
    }
  }
  return new Problem("Something went wrong. Reload the page and try again.", undefined, undefined, undefined)
}

let onSignedOut: () => void = () => {}

/**
 * What to do when a call finds the session gone (401): show the sign-in page.
 *
 * @since 0.1.0
 */
export const whenSignedOut = (f: () => void): void => {
  onSignedOut = f
}

/**
 * Runs one typed call. A refusal rejects with a {@link Problem}; a 401 on a signed-in call also
 * tells the app the session has ended (unless `signingIn`: a refused sign-in is just an answer).
 *
 * @since 0.1.0
 */
export const call = async <A>(
  f: (client: Client) => Effect.Effect<A, unknown>,
  options: { readonly signingIn?: boolean } = {}
): Promise<A> => {
  const exit = await Effect.runPromiseExit(Effect.flatMap(Effect.promise(getClient), f))
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.failureOption(exit.cause)
  const problem = problemOf(Option.getOrUndefined(failure))
  if (problem.status === 401 && options.signingIn !== true) {
    setCsrf(undefined)
    onSignedOut()
  }
  throw problem
}
