/**
 * The sandbox as one web handler: every installed provider's emulator and the control API, mounted at
 *
 * - `/<provider>/{STATE}/…`: that provider's own wire API (so a session's base URL is
 *   `<origin>/<provider>/CO`; `Registry` lists the providers);
 * - `/_sandbox/…`: the control API (state, reset, seed, scenarios, faults).
 *
 * The same handler serves in process (`layerHttpClient`, no sockets: the /v1 service sends sandbox
 * traffic through the real adapters this way) and standalone (`bin.ts`, over `node:http`).
 *
 * @since 0.1.0
 */
import { HttpClient, HttpClientError, HttpClientResponse } from "@effect/platform"
import type { ProviderName } from "@tracebridge/core"
import { ProviderName as Names } from "@tracebridge/core"
import { Effect, Layer, Schema } from "effect"
import * as ControlApi from "./ControlApi.js"
import * as Faults from "./Faults.js"
import * as Registry from "./Registry.js"
import type { Sandbox } from "./Sandbox.js"

/**
 * A web-standard request handler.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = (request: Request) => Promise<Response>

const isState = Schema.is(Names.UsState)

/**
 * The handler of a sandbox: each provider's emulator (of `providers`, default every installed one)
 * under `/{provider}/{STATE}`, and the control API.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeHandler = (
  sandbox: Sandbox,
  providers: Registry.Lookup = Registry.installed
): Handler =>
async (request) => {
  const url = new URL(request.url)
  const mount = /^\/([a-z0-9_]+)\/([A-Za-z]{2})(\/.*)?$/.exec(url.pathname)
  const provider = mount === null ? undefined : providers.get(mount[1]!)
  if (mount !== null && provider !== undefined) {
    const state = mount[2]!.toUpperCase()
    if (!isState(state)) {
      return new Response(JSON.stringify({ Message: `Unknown state ${mount[2]}` }), {
        status: 404,
        headers: { "content-type": "application/json" }
      })
    }
    return provider.emulator(sandbox, state as ProviderName.UsState, mount[3] ?? "/", request)
  }
  if (url.pathname.startsWith("/_sandbox/") || url.pathname === "/_sandbox") return ControlApi.handle(sandbox, request)
  // The sandbox's own answer, in the control API's error shape.
  return new Response(
    JSON.stringify({
      error: {
        code: "not_found",
        message: `No sandbox route ${url.pathname}: the providers are at /{provider}/{STATE}/… (${
          providers.names.join(", ")
        }), the control API at /_sandbox/…`
      }
    }),
    { status: 404, headers: { "content-type": "application/json" } }
  )
}

/**
 * The base URL a session uses to reach a provider through a sandbox at `origin`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const baseUrl = (origin: string, provider: ProviderName.ProviderName, state: string) =>
  `${origin.replace(/\/+$/, "")}/${provider}/${state}`

/**
 * The origin of the in-process sandbox (requests to it never leave the process).
 *
 * @since 0.1.0
 * @category constants
 */
export const IN_PROCESS_ORIGIN = "http://sandbox.tracebridge.internal"

/**
 * One turn of the event loop (`setImmediate`): what was waiting (sockets, timers, other requests)
 * runs first. Interrupting the wait cancels it.
 */
const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const turn = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(turn))
})

/**
 * The longest the in-process calls run on without a turn of the event loop, in milliseconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const SLICE_MS = 10

/** When a call last had its turn (the process's monotonic clock; one event loop per process). */
let lastTurn = Number.NEGATIVE_INFINITY

/**
 * A turn of the event loop when the calls have run on for {@link SLICE_MS} without one. It decides
 * only when a call starts, never what it answers, so the sandbox stays deterministic.
 */
const turnWhenDue: Effect.Effect<void> = Effect.suspend(() =>
  performance.now() - lastTurn < SLICE_MS ? Effect.void : Effect.tap(nextTurn, () => {
    lastTurn = performance.now()
  })
)

/**
 * An `HttpClient` that answers every request with the handler, with no sockets.
 *
 * The emulators answer from memory, so a run of calls (a sync's backfill makes thousands, several
 * fibers at once) chains from one answer to the next and never gives the event loop back: the
 * server that hosted the sandbox answered nothing, its health checks included, for seconds while
 * a sandbox connection's first sync ran. So a call first waits one turn of the event loop when
 * the calls have run on for {@link SLICE_MS} without one, as answers over sockets would. (A turn
 * before every call held the stall under 0.1 s too, but made a backfill 20% slower on a quiet
 * machine and 2.4 times slower on a loaded one.)
 *
 * @since 0.1.0
 * @category layers
 */
export const httpClient = (handler: Handler): HttpClient.HttpClient =>
  HttpClient.make((request, url, signal) =>
    Effect.zipRight(
      turnWhenDue,
      Effect.tryPromise({
        try: async () => {
          const body: BodyInit | undefined = request.body._tag === "Uint8Array"
            ? (request.body.body as unknown as BodyInit)
            : request.body._tag === "Raw"
            ? (request.body.body as BodyInit)
            : undefined
          const web = new Request(url.toString(), {
            method: request.method,
            headers: request.headers as Record<string, string>,
            signal,
            ...(body !== undefined ? { body } : {})
          })
          return handler(web)
        },
        catch: (cause) => new HttpClientError.RequestError({ request, reason: "Transport", cause })
      })
    ).pipe(
      // A `slow` fault's answer is held back on Effect's Clock (so TestClock drives it, and the
      // caller's timeout interrupts the wait).
      Effect.tap((response) => Faults.delayOf(response) > 0 ? Effect.sleep(Faults.delayOf(response)) : Effect.void),
      Effect.map((response) => HttpClientResponse.fromWeb(request, response))
    )
  )

/**
 * The in-process `HttpClient` as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpClient = (handler: Handler): Layer.Layer<HttpClient.HttpClient> =>
  Layer.succeed(HttpClient.HttpClient, httpClient(handler))
