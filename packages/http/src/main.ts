/**
 * The process entry point of `npm start`: migrates the database, makes sure a sandbox organisation
 * and client exist (printing their credentials the first time, but never a secret that came from
 * the environment), and serves the API on `HOST:PORT`. Every log line is redacted as it is written
 * (`Redact.ts`).
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, Option } from "effect"
import * as AppConfig from "./AppConfig.js"
import * as Bootstrap from "./Bootstrap.js"
import { makeHttpLive } from "./Http.js"
import * as LogFormat from "./LogFormat.js"
import * as Database from "./persistence/Database.js"
import * as Readiness from "./Readiness.js"
import * as Redact from "./Redact.js"
import * as Server from "./Server.js"
import * as Crypto from "./services/Crypto.js"
import * as Tracing from "./Tracing.js"

/**
 * The HTTP server. On SIGTERM or SIGINT (`NodeRuntime.runMain` interrupts the program) the layers
 * close in reverse: `/readyz` turns 503 `draining` and the node keeps serving for
 * `TRACEBRIDGE_DRAIN_SECONDS` (default 0; `Readiness.drainOnShutdown`), then the webhook worker hands back the deliveries it has not started and gives the
 * attempts in flight up to `TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS` to end (then abandons them, due again),
 * the server stops accepting connections and waits for the requests in flight, and only then does
 * the database close. Requests still running after `TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS` have their
 * connections cut, so a hung upstream cannot hold the process forever. Slow clients are cut by the
 * server's timeouts (`Server.Timeouts`, `TRACEBRIDGE_*_TIMEOUT_SECONDS`).
 */
const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig.server, ({ host, port, shutdownGrace, timeouts }) => {
    const server = Server.make(timeouts)
    // Built after the server, so released before it: the grace period starts as the server closes.
    const grace = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.forkDaemon(Effect.delay(Effect.sync(() => server.closeAllConnections()), shutdownGrace))
      )
    )
    return grace.pipe(Layer.provideMerge(NodeHttpServer.layer(() => server, { port, host })))
  })
)

/**
 * The line that says the API serves, once everything is built: a setting out of range (read as its
 * service is built) stops the start, with its name, before the line says it serves.
 */
const ServingLine = Layer.effectDiscard(
  Effect.flatMap(
    AppConfig.server,
    ({ host, port }) =>
      Effect.logInfo(`Tracebridge API on http://${host}:${port} (docs at /docs, OpenAPI at /v1/openapi.json)`)
  )
)

const BootstrapLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const created = yield* Bootstrap.firstStart
    // Printed once, on first start, straight to stdout (not through the redacting logger): a
    // generated secret is stored only as a hash; a secret from the environment is not printed.
    // The dashboard's first owner gets a one-time link (issue #33; its token is stored as a hash).
    if (Option.isSome(created)) {
      const ownerLink = yield* Effect.orDie(Bootstrap.firstOwnerLink(created.value.client_id))
      process.stdout.write(Bootstrap.banner(created.value, ownerLink))
    }
  })
)

// Built last, so released first: on SIGTERM `/readyz` turns 503 before anything else closes.
// Traces over OTLP only when `OTEL_EXPORTER_OTLP_*ENDPOINT` is set (`Tracing.ts`): then the server
// span per request is on too.
const AppLive = ServingLine.pipe(
  Layer.provide(Readiness.drainOnShutdown),
  Layer.provide(Layer.unwrapEffect(Effect.map(Tracing.enabled, (tracing) => makeHttpLive({ tracing })))),
  Layer.provide(ServerLive),
  Layer.provide(BootstrapLive),
  Layer.provideMerge(Crypto.layer),
  // The configured database's stores (`Database.Persistence`), with the read cache for tokens, organisations
  // and connections on SQLite.
  Layer.provideMerge(Database.layer),
  Layer.provide(Tracing.layer)
)

/** The error of a listen on a port another process holds (`EADDRINUSE`), anywhere in `cause`. */
const addressInUse = (cause: Cause.Cause<unknown>): boolean =>
  [...Cause.failures(cause), ...Cause.defects(cause)].some((failure) => {
    for (let e: unknown = failure, depth = 0; typeof e === "object" && e !== null && depth < 5; depth++) {
      if ((e as { readonly code?: unknown }).code === "EADDRINUSE") return true
      e = (e as { readonly cause?: unknown }).cause
    }
    return false
  })

/** The one line a busy port gets (issue #30): what to change, not a stack trace. */
const busyPort = Effect.flatMap(
  Effect.orElseSucceed(AppConfig.server, () => ({ host: process.env.HOST ?? "127.0.0.1", port: process.env.PORT })),
  ({ host, port }) =>
    Effect.logError(
      `Port ${port} on ${host} is already in use (another Tracebridge, or another program). ` +
        `Stop it, or start on another port: PORT=${Number(port) + 1} npm start`
    )
)

// The failure of the whole program is logged here, inside the redacting console, rather than by
// `runMain` (which would log it outside); `runMain` still exits with code 1 on a failure.
Layer.launch(AppLive).pipe(
  Effect.tapErrorCause((cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.void
      : addressInUse(cause)
      ? busyPort
      : Effect.logError(cause)
  ),
  // `TRACEBRIDGE_LOG_FORMAT`: text (the pretty logger) or json, one object per line; both redacted
  LogFormat.logging,
  Redact.redacting,
  NodeRuntime.runMain({ disableErrorReporting: true })
)
