/**
 * `tracebridge listen`: reads the organisation's events from `GET /v1/events/stream` and forwards
 * each to a local URL, signed exactly as a webhook delivery is (`X-Tracebridge-Signature` over the
 * same body, `X-Tracebridge-Event-Id`, `X-Tracebridge-Event-Type`), with a signing secret derived
 * from the client's credentials (the same at every start). No public URL is needed.
 *
 * Nothing is lost across a reconnect or a restart: after each forward the event's id is kept
 * (`Credentials.rememberEventId`), and every (re)connection sends it as `Last-Event-ID`, so the
 * events stored meanwhile come next. An event may come twice (the stream overlaps a little, and a
 * process killed between a forward and keeping its id forwards it again): receivers deduplicate
 * on the event id, as they must for webhooks anyway.
 *
 * @since 0.1.0
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Tracebridge } from "@tracebridge/client"
import { WebhookSignature } from "@tracebridge/core"
import { Clock, Duration, Effect, Schedule, Stream } from "effect"
import type { Credentials } from "./Credentials.js"
import { CliError, lastEventId, listenSecret, rememberEventId } from "./Credentials.js"
import type { Frame } from "./Sse.js"
import { parse } from "./Sse.js"

/**
 * What to listen to and where to forward it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly forwardTo: string
  readonly types?: ReadonlyArray<string> | undefined
  readonly connectionId?: string | undefined
  readonly json: boolean
}

/**
 * One forwarded event, as a line prints it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Forwarded {
  readonly time: string
  readonly event_id: string
  readonly type: string
  /** The local receiver's status, or null when it could not be reached. */
  readonly status: number | null
  readonly latency_ms: number
  readonly error?: string
}

/**
 * A forwarded event as a line: time, type, id, status and latency (or JSON with `--json`).
 *
 * @since 0.1.0
 * @category output
 */
export const line = (forwarded: Forwarded, json: boolean): string =>
  json
    ? JSON.stringify(forwarded)
    : `${forwarded.time}  ${forwarded.type.padEnd(26)} ${forwarded.event_id}  ${
      forwarded.status === null ? `error: ${forwarded.error ?? "unreachable"}` : `[${forwarded.status}]`
    }  ${forwarded.latency_ms} ms`

/** The stream answered something else than 200: whether trying again can help. */
class StreamRefused extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(`the event stream answered ${status}: ${body.slice(0, 300)}`)
  }
}

/** Signs and posts one event to the local URL. */
const forward = (url: string, secret: string, frame: Frame & { readonly id: string; readonly data: string }) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const started = yield* Clock.currentTimeMillis
    const signature = yield* WebhookSignature.sign([secret], Math.floor(started / 1000), frame.data)
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.setHeaders({
        "user-agent": "tracebridge-cli",
        [WebhookSignature.headers.signature]: signature,
        [WebhookSignature.headers.eventId]: frame.id,
        [WebhookSignature.headers.eventType]: frame.event ?? ""
      }),
      HttpClientRequest.bodyText(frame.data, "application/json")
    )
    const outcome = yield* client.execute(request).pipe(
      Effect.flatMap((response) => Effect.as(Effect.ignore(response.text), response.status)),
      Effect.scoped,
      Effect.timeout(Duration.seconds(10)),
      Effect.either
    )
    const ended = yield* Clock.currentTimeMillis
    const forwarded: Forwarded = {
      time: new Date(started).toISOString(),
      event_id: frame.id,
      type: frame.event ?? "",
      status: outcome._tag === "Right" ? outcome.right : null,
      latency_ms: ended - started,
      ...(outcome._tag === "Left" ? { error: String(outcome.left) } : {})
    }
    return forwarded
  })

/**
 * Listens until interrupted: prints the signing secret, then a line per forwarded event.
 *
 * @since 0.1.0
 * @category commands
 */
export const run = (
  credentials: Credentials,
  options: Options,
  print: (line: string) => Effect.Effect<void>,
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<never, CliError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const sdk = new Tracebridge({
      baseUrl: credentials.apiUrl,
      clientId: credentials.clientId,
      clientSecret: credentials.clientSecret
    })
    const secret = listenSecret(credentials)
    // the credentials are checked before anything is printed
    yield* Effect.tryPromise({
      try: () => sdk.accessToken(),
      catch: (error) => new CliError(`cannot sign in at ${credentials.apiUrl}: ${String(error)}`)
    })
    yield* print(
      options.json
        ? JSON.stringify({ ready: true, forward_to: options.forwardTo, signing_secret: secret })
        : `Ready. Forwarding events to ${options.forwardTo}\nYour webhook signing secret is ${secret} (the same every time for this client)`
    )
    const query = new URLSearchParams()
    if (options.types !== undefined && options.types.length > 0) query.set("types", options.types.join(","))
    if (options.connectionId !== undefined) query.set("connection_id", options.connectionId)
    const url = `${credentials.apiUrl}/v1/events/stream${query.size > 0 ? `?${query}` : ""}`

    // One connection: reads frames until the stream ends, forwarding each event in order.
    const connection = Effect.gen(function*() {
      const token = yield* Effect.tryPromise({
        try: () => sdk.accessToken(),
        catch: (error) => new StreamRefused(0, String(error))
      })
      const last = lastEventId(credentials, env)
      const response = yield* client.execute(
        HttpClientRequest.get(url).pipe(
          HttpClientRequest.bearerToken(token),
          HttpClientRequest.setHeaders(last === undefined ? {} : { "last-event-id": last })
        )
      ).pipe(Effect.mapError((error) => new StreamRefused(0, String(error))))
      if (response.status !== 200) {
        const body = yield* Effect.orElseSucceed(response.text, () => "")
        return yield* Effect.fail(new StreamRefused(response.status, body))
      }
      let buffer = ""
      yield* response.stream.pipe(
        Stream.decodeText(),
        Stream.mapError((error) => new StreamRefused(0, String(error))),
        Stream.runForEach((chunk) =>
          Effect.gen(function*() {
            const parsed = parse(buffer + chunk)
            buffer = parsed.rest
            for (const frame of parsed.frames) {
              if (frame.id === undefined || frame.data === undefined) continue
              const forwarded = yield* forward(options.forwardTo, secret, { ...frame, id: frame.id, data: frame.data })
              yield* print(line(forwarded, options.json))
              yield* rememberEventId(credentials, frame.id, env)
            }
          })
        )
      )
    }).pipe(Effect.scoped)

    // A refusal that another try cannot fix (a bad filter, a forbidden connection) ends the command;
    // anything else (the server restarting, a node draining, a network cut) reconnects.
    const fatal = (error: StreamRefused) => error.status === 400 || error.status === 403 || error.status === 404
    return yield* connection.pipe(
      Effect.zipRight(Effect.fail(new StreamRefused(0, "the stream ended"))),
      Effect.tapError((error) =>
        fatal(error) ? Effect.void : print(
          options.json
            ? JSON.stringify({ reconnecting: true, reason: error.message })
            : `Reconnecting (${error.message.slice(0, 200)})`
        )
      ),
      Effect.retry({
        while: (error) => !fatal(error),
        schedule: Schedule.exponential(Duration.millis(250)).pipe(
          Schedule.union(Schedule.spaced(Duration.seconds(10)))
        )
      }),
      Effect.mapError((error) => new CliError(error.message)),
      Effect.zipRight(Effect.never)
    )
  })
