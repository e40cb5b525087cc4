/**
 * The session client of the BioTrack classic API: one `POST …/serverjson.asp` endpoint with an
 * `action` and `"API":"4.0"` in every body.
 *
 * - It logs in lazily (`login` with the company UBI as `license_number`) and keeps the session id
 *   per connection, `Redacted`.
 * - Errorcode 63 is read by its message: when the text says the session expired or is invalid it
 *   logs in again once and retries the call; concurrent calls of one connection that meet the
 *   expiry share that one login. Any other 63 (a privilege or license text, or anything else)
 *   is no session problem: it keeps the session and becomes `ProviderPermissionDenied` or
 *   `ProviderRejected`, never `ProviderLoginRequired`.
 * - Every answer is HTTP 200, so it never takes the status as success: `success` decides. A
 *   `success: 0` answer becomes one of the core errors: a refused login `ProviderLoginRequired`
 *   (with BioTrack's text), 62 `ProviderPermissionDenied`, 602 `ResourceNotFound` or
 *   `ProviderRejected` (by its message), anything else `ProviderRejected` with the text and code.
 * - Every POST, the login included, first takes a token of the upstream rate governor in context
 *   when the client is built (`UpstreamGovernor` of core, ADR 0015: the HTTP service's, shared by
 *   every node): one bucket per provider and company licence (the UBI), at the descriptor's rate.
 *   Without one in context, calls are not paced. A 429 with `Retry-After` pauses that bucket.
 * - Transport failures become `ProviderUnavailable`/`ProviderTimeout`/`ProviderRateLimited`;
 *   a body off the wire schema becomes `ProviderInvalidResponse` naming the field.
 * - Each POST times out after `TIMEOUT`, or sooner when the caller's overall deadline
 *   (`Deadline`) leaves less, so a login and a call together never pass it.
 *
 * Passwords and session ids never appear in errors or logs.
 *
 * @since 0.1.0
 */
import type { HttpClientError } from "@effect/platform"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import type { ProviderName, Session } from "@tracebridge/core"
import { Deadline, ProviderDescriptor, ProviderError, UpstreamGovernor } from "@tracebridge/core"
import type { ParseResult } from "effect"
import { Cause, Context, Deferred, Duration, Effect, Either, FiberId, Layer, Option, Redacted, Schema } from "effect"
import { API_VERSION, Failure, LoginResult } from "./internal/wire/Envelope.js"

const PROVIDER: ProviderName.ProviderName = "provider_b"

/**
 * The login the end user enters (the descriptor's credential schema).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Credentials = Schema.Struct({
  ubi: Schema.String.pipe(Schema.pattern(/^\d{9}$/, { message: () => "the UBI is 9 digits" })),
  username: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  password: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
})

/**
 * The errorcodes the client understands.
 *
 * @since 0.1.0
 * @category constants
 */
export const ErrorCodes = {
  missingPrivilege: 62,
  sessionExpired: 63,
  validation: 602
} as const

/**
 * How long one call may take (less when the caller's `Deadline` leaves less).
 *
 * @since 0.1.0
 * @category constants
 */
export const TIMEOUT = Duration.seconds(30)

/**
 * How fast BioTrack may be called (the descriptor's `rateLimit`): the upstream governor's pacing
 * per company licence.
 *
 * @since 0.1.0
 * @category constants
 */
export const RATE_LIMIT: ProviderDescriptor.RateLimitPolicy = {
  requestsPerSecond: 5,
  concurrency: 2,
  retryAfterHeader: false,
  notes: "No published limits; conservative pacing per company licence (UBI), shared by every node"
}

/**
 * What a call is about, for error context: the operation (e.g. `packages.list`) and, for 602
 * "not found" answers, the object asked for.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly operation: string
  readonly notFound?: { readonly resource: string; readonly id: string }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Client {
  /** Calls an action for a session, logging in first when needed, and decodes the answer. */
  readonly call: <A, I>(
    session: Session.Session,
    action: string,
    fields: Readonly<Record<string, unknown>>,
    answer: Schema.Schema<A, I>,
    options: CallOptions
  ) => Effect.Effect<A, ProviderError.ProviderError>
  /** Logs in now (the credential check), replacing any kept session id. */
  readonly login: (session: Session.Session) => Effect.Effect<void, ProviderError.ProviderError>
  /** Drops the kept session id of a connection. */
  readonly forget: (session: Session.Session) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ProviderBClient extends Context.Tag("@tracebridge/adapter-provider-b/ProviderBClient")<
  ProviderBClient,
  Client
>() {}

/** A text saying the session expired or is not (or no longer) valid. */
const SESSION_EXPIRED_TEXT =
  /\bsession\b[^.]*\b(expired|timed out|invalid|not valid|no longer valid|not found|unknown)\b|\b(invalid|expired|unknown)\s+session\b|not logged in|log ?in again/i

/** A text about a privilege, permission or license the login lacks. */
const PERMISSION_TEXT =
  /privilege|permission|not (authori[sz]ed|allowed|permitted)|unauthori[sz]ed|access denied|does not possess access|\blicen[cs]e\b/i

/**
 * Whether a `success: 0` answer is an expired session: errorcode 63 whose text says so (or that
 * carries no text of its own, which the wire schema defaults to "Unknown error"; BioTrack documents
 * 63 as "Your session has expired.").
 *
 * @since 0.1.0
 * @category predicates
 */
export const isSessionExpired = (failure: Failure): boolean =>
  Number(failure.errorcode) === ErrorCodes.sessionExpired &&
  (failure.error.trim() === "" || failure.error === "Unknown error" || SESSION_EXPIRED_TEXT.test(failure.error))

/** BioTrack sometimes leaks a header line into the body; clients strip it. */
const stripHeaderLeak = (text: string): string => text.replace(/^\s*Content-Type:[^\n]*\n\s*/i, "")

const decodeFailure = Schema.decodeUnknownOption(Failure)

/**
 * BioTrack's `errorcode` in an answer body (`{"success":0,"error":…,"errorcode":63}`, sent with
 * HTTP 200), as text; undefined for a successful answer, one without a code, or a body that is
 * not JSON. The request log shows it beside the upstream call (`ProviderModule.upstreamErrorCode`).
 *
 * @since 0.1.0
 * @category errors
 */
export const errorCodeOf = (answer: { readonly status: number; readonly body: string }): string | undefined => {
  let json: unknown
  try {
    json = JSON.parse(stripHeaderLeak(answer.body))
  } catch {
    return undefined
  }
  const failure = decodeFailure(json)
  return failure._tag === "Some" && failure.value.errorcode !== undefined
    ? String(failure.value.errorcode)
    : undefined
}

/** Maps a `success: 0` answer to the core error family. */
const fromFailure = (failure: Failure, options: CallOptions): ProviderError.ProviderError => {
  const code = failure.errorcode === undefined ? undefined : Number(failure.errorcode)
  const text = failure.error
  const context = { provider: PROVIDER, operation: options.operation }
  if (isSessionExpired(failure)) {
    return new ProviderError.ProviderLoginRequired({ ...context, reason: "session_expired", message: text })
  }
  if (
    code === ErrorCodes.missingPrivilege ||
    (code === ErrorCodes.sessionExpired && PERMISSION_TEXT.test(text))
  ) {
    return new ProviderError.ProviderPermissionDenied({ ...context, message: text })
  }
  if (code === ErrorCodes.validation && /not (be )?found|does not exist|no such|unknown|invalid barcode/i.test(text)) {
    const target = options.notFound ?? { resource: "object", id: "" }
    return new ProviderError.ResourceNotFound({ resource: target.resource, id: target.id, message: text })
  }
  return new ProviderError.ProviderRejected({
    ...context,
    ...(code === undefined || Number.isNaN(code) ? {} : { code: String(code) }),
    message: code === undefined ?
      `BioTrack refused ${options.operation}: ${text}` :
      `BioTrack refused ${options.operation} (errorcode ${code}): ${text}`,
    messages: [text]
  })
}

const isFailure = Schema.is(Schema.Struct({ success: Schema.Union(Schema.Literal(0), Schema.Literal("0")) }))
const isSuccess = Schema.is(Schema.Struct({ success: Schema.Union(Schema.Literal(1), Schema.Literal("1")) }))

/**
 * Builds the client over `HttpClient.HttpClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Client, never, HttpClient.HttpClient> = Effect.gen(function*() {
  const http = yield* HttpClient.HttpClient
  const governor = Option.getOrElse(
    yield* Effect.serviceOption(UpstreamGovernor.UpstreamGovernor),
    () => UpstreamGovernor.unlimited
  )
  // BioTrack has no vendor key: every bucket is of the empty one.
  const vendorKeyFingerprint = yield* UpstreamGovernor.fingerprint(Redacted.make(""))
  const sessions = new Map<string, Redacted.Redacted<string>>()
  /** The login under way per connection, which concurrent calls join instead of sending their own. */
  const logins = new Map<string, Deferred.Deferred<Redacted.Redacted<string>, ProviderError.ProviderError>>()

  const urlOf = (session: Session.Session, operation: string) =>
    ProviderDescriptor.baseUrl(descriptorStub, session.state, session.environment, session.baseUrl).pipe(
      Effect.mapError((e): ProviderError.ProviderError => e),
      Effect.withSpan("ProviderBClient.url", { captureStackTrace: false, attributes: { operation } })
    )

  const keyOf = (session: Session.Session) => `${session.key}|${session.baseUrl ?? ""}|${session.state}`

  const unreachable = (operation: string) => (e: HttpClientError.HttpClientError): ProviderError.ProviderError =>
    new ProviderError.ProviderUnavailable({
      provider: PROVIDER,
      operation,
      message: `BioTrack could not be reached or its answer could not be read (${e._tag}: ${e.reason})`
    })

  /** The governor's bucket of a session: the provider, no vendor key, and the company licence (UBI). */
  const bucketOf = (session: Session.Session): string => {
    const credentials = Schema.decodeUnknownOption(Credentials)(Redacted.value(session.credentials))
    return UpstreamGovernor.key({
      provider: PROVIDER,
      vendorKeyFingerprint,
      licence: Option.isSome(credentials) ? credentials.value.ubi : undefined
    })
  }

  /** One POST, after the governor's token; answers the parsed JSON, or a transport-level error. */
  const post = (
    url: string,
    body: Readonly<Record<string, unknown>>,
    operation: string,
    bucket: string
  ): Effect.Effect<unknown, ProviderError.ProviderError> =>
    HttpClientRequest.post(url).pipe(
      HttpClientRequest.bodyText(JSON.stringify(body), "text/JSON"),
      (request) =>
        Effect.zipRight(
          Effect.flatMap(
            // a background caller (the sync) is admitted at its share of the rate first
            Effect.timed(Effect.zipRight(governor.admit(bucket, RATE_LIMIT), governor.take(bucket, RATE_LIMIT))),
            ([waited]) => Effect.annotateCurrentSpan("tracebridge.governor_wait_ms", Duration.toMillis(waited))
          ),
          http.execute(request)
        ),
      Effect.mapError(unreachable(operation)),
      Effect.tap((response) => Effect.annotateCurrentSpan("http.response.status_code", response.status)),
      Effect.flatMap((response): Effect.Effect<string, ProviderError.ProviderError> => {
        if (response.status === 429) {
          const seconds = Number(response.headers["retry-after"] ?? Number.NaN)
          const retryAfter = Number.isFinite(seconds) && seconds >= 0 ? Duration.seconds(seconds) : undefined
          return Effect.zipRight(
            // not retried here: the caller is answered 429, and the bucket pauses for its Retry-After
            Effect.zipRight(
              Effect.annotateCurrentSpan("tracebridge.upstream_429", "refused"),
              governor.throttled(bucket, Option.fromNullable(retryAfter))
            ),
            Effect.fail(
              new ProviderError.ProviderRateLimited({
                provider: PROVIDER,
                operation,
                ...(retryAfter === undefined ? {} : { retryAfter }),
                message: "BioTrack is refusing calls for rate (HTTP 429)"
              })
            )
          )
        }
        if (response.status < 200 || response.status >= 300) {
          return Effect.fail(
            new ProviderError.ProviderUnavailable({
              provider: PROVIDER,
              operation,
              status: response.status,
              message: `BioTrack answered HTTP ${response.status}`
            })
          )
        }
        return Effect.mapError(response.text, unreachable(operation))
      }),
      (self) =>
        Effect.flatMap(Deadline.clamp(TIMEOUT), (timeout) =>
          Effect.timeoutFail(self, {
            duration: timeout,
            onTimeout: () =>
              new ProviderError.ProviderTimeout({
                provider: PROVIDER,
                operation,
                timeout,
                message: `BioTrack did not answer ${operation} within ${Duration.format(timeout)}`
              })
          })),
      Effect.flatMap((text) =>
        Either.match(
          Either.try(() => JSON.parse(stripHeaderLeak(text)) as unknown),
          {
            onLeft: () =>
              Effect.fail(
                new ProviderError.ProviderInvalidResponse({
                  provider: PROVIDER,
                  operation,
                  path: "(root)",
                  message: `BioTrack answered ${operation} with a body that is not JSON`
                })
              ),
            onRight: (json) => Effect.succeed(json)
          }
        )
      ),
      // one upstream request (no URL: BioTrack's carries none of the body's login, but keep it out)
      Effect.withSpan("ProviderBClient.post", {
        captureStackTrace: false,
        kind: "client",
        attributes: { provider: PROVIDER, operation }
      })
    )

  const invalid = (operation: string) => (error: ParseResult.ParseError) =>
    ProviderError.ProviderInvalidResponse.fromParseError({ provider: PROVIDER, operation, error })

  const credentialsOf = (session: Session.Session, operation: string) =>
    Schema.decodeUnknown(Credentials)(Redacted.value(session.credentials)).pipe(
      Effect.mapError(() =>
        new ProviderError.ProviderLoginRequired({
          provider: PROVIDER,
          operation,
          reason: "missing_credentials",
          message: "The BioTrack login needs the company UBI (9 digits), a username and a password"
        })
      )
    )

  const training = (session: Session.Session) => (session.environment === "sandbox" ? { training: "1" } : {})

  const login = (
    session: Session.Session,
    operation: string
  ): Effect.Effect<Redacted.Redacted<string>, ProviderError.ProviderError> =>
    Effect.gen(function*() {
      const url = yield* urlOf(session, operation)
      const credentials = yield* credentialsOf(session, operation)
      const json = yield* post(
        url,
        {
          API: API_VERSION,
          action: "login",
          license_number: credentials.ubi,
          username: credentials.username,
          password: credentials.password,
          ...training(session)
        },
        operation,
        bucketOf(session)
      )
      if (isFailure(json)) {
        const failure = yield* Schema.decodeUnknown(Failure)(json).pipe(Effect.mapError(invalid(operation)))
        const code = failure.errorcode === undefined ? undefined : Number(failure.errorcode)
        if (
          code === ErrorCodes.missingPrivilege || (code === ErrorCodes.sessionExpired && !isSessionExpired(failure))
        ) {
          return yield* fromFailure(failure, { operation })
        }
        return yield* new ProviderError.ProviderLoginRequired({
          provider: PROVIDER,
          operation,
          reason: /lock/i.test(failure.error) ? "account_locked" : "invalid_credentials",
          message: `BioTrack refused the login: ${failure.error}`
        })
      }
      const ok = yield* Schema.decodeUnknown(LoginResult)(json).pipe(Effect.mapError(invalid(operation)))
      const sid = Redacted.make(ok.sessionid)
      sessions.set(keyOf(session), sid)
      return sid
    }).pipe(
      Effect.withSpan("ProviderBClient.login", { captureStackTrace: false, attributes: { state: session.state } })
    )

  /**
   * Logs in for a connection, or joins the login already under way for it, so concurrent calls
   * send one login. When the fiber running it is interrupted, a joined call logs in itself.
   */
  const sharedLogin = (
    session: Session.Session,
    operation: string
  ): Effect.Effect<Redacted.Redacted<string>, ProviderError.ProviderError> =>
    Effect.suspend(() => {
      const key = keyOf(session)
      const running = logins.get(key)
      if (running !== undefined) {
        return Deferred.await(running).pipe(
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause) ? sharedLogin(session, operation) : Effect.failCause(cause)
          )
        )
      }
      const deferred = Deferred.unsafeMake<Redacted.Redacted<string>, ProviderError.ProviderError>(FiberId.none)
      logins.set(key, deferred)
      return login(session, operation).pipe(
        Effect.onExit((exit) =>
          Effect.suspend(() => {
            if (logins.get(key) === deferred) logins.delete(key)
            return Deferred.done(deferred, exit)
          })
        )
      )
    })

  const sessionId = (session: Session.Session, operation: string) =>
    Option.match(Option.fromNullable(sessions.get(keyOf(session))), {
      onNone: () => sharedLogin(session, operation),
      onSome: Effect.succeed
    })

  /**
   * A fresh session after `stale` expired: the one another call already got, if any, else a
   * (shared) new login.
   */
  const relogin = (session: Session.Session, stale: Redacted.Redacted<string>, operation: string) =>
    Effect.suspend(() => {
      const key = keyOf(session)
      const current = sessions.get(key)
      if (current !== undefined && current !== stale) return Effect.succeed(current)
      sessions.delete(key)
      return sharedLogin(session, operation)
    })

  const call = <A, I>(
    session: Session.Session,
    action: string,
    fields: Readonly<Record<string, unknown>>,
    answer: Schema.Schema<A, I>,
    options: CallOptions
  ): Effect.Effect<A, ProviderError.ProviderError> =>
    Effect.gen(function*() {
      const { operation } = options
      const url = yield* urlOf(session, operation)
      const bucket = bucketOf(session)
      const once = (sid: Redacted.Redacted<string>) =>
        post(
          url,
          { API: API_VERSION, action, sessionid: Redacted.value(sid), ...training(session), ...fields },
          operation,
          bucket
        )
      const sid = yield* sessionId(session, operation)
      let json = yield* once(sid)
      if (isFailure(json)) {
        const failure = yield* Schema.decodeUnknown(Failure)(json).pipe(Effect.mapError(invalid(operation)))
        if (isSessionExpired(failure)) json = yield* once(yield* relogin(session, sid, operation))
      }
      if (isFailure(json)) {
        const failure = yield* Schema.decodeUnknown(Failure)(json).pipe(Effect.mapError(invalid(operation)))
        if (isSessionExpired(failure)) sessions.delete(keyOf(session))
        return yield* fromFailure(failure, options)
      }
      if (!isSuccess(json)) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation,
          path: "success",
          message: `BioTrack answered ${operation} without success 1 or 0`
        })
      }
      return yield* Schema.decodeUnknown(answer)(json).pipe(Effect.mapError(invalid(operation)))
    }).pipe(
      Effect.withSpan(`ProviderBClient.${action}`, { captureStackTrace: false, attributes: { state: session.state } })
    )

  return {
    call,
    login: (session) =>
      Effect.suspend(() => {
        sessions.delete(keyOf(session))
        return Effect.asVoid(login(session, "credentials.check"))
      }),
    forget: (session) => Effect.sync(() => void sessions.delete(keyOf(session)))
  }
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProviderBClient, never, HttpClient.HttpClient> = Layer.effect(ProviderBClient, make)

/**
 * The state hosts of the classic `serverjson.asp` API. BioTrack's training mode runs on the same
 * host (a `training` flag in the body), so sandbox and production share it.
 *
 * @since 0.1.0
 * @category constants
 */
export const hosts: Readonly<Partial<Record<ProviderName.UsState, string>>> = {
  AR: "https://arstems.arkansas.gov/serverjson.asp",
  CT: "https://trace.ct.biotr.ac/serverjson.asp",
  HI: "https://hicsts.hawaii.gov/serverjson.asp",
  IL: "https://mcmonitoring.agr.illinois.gov/serverjson.asp"
}

const descriptorStub = {
  name: PROVIDER,
  displayName: "BioTrack",
  baseUrls: Object.fromEntries(Object.entries(hosts).map(([s, url]) => [s, { sandbox: url, production: url }]))
} as ProviderDescriptor.ProviderDescriptor
