/**
 * The process entry point of `npm start`: migrates the database, makes sure a sandbox organisation
 * and client exist (printing their credentials the first time), and serves the API on `HOST:PORT`.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import * as AppConfig from "./AppConfig.js"
import * as Bootstrap from "./Bootstrap.js"
import { HttpLive } from "./Http.js"
import * as Database from "./persistence/Database.js"
import * as RepoCache from "./persistence/RepoCache.js"
import * as Server from "./Server.js"
import * as Crypto from "./services/Crypto.js"

/**
 * The HTTP server. On SIGTERM or SIGINT (`NodeRuntime.runMain` interrupts the program) the layers
 * close in reverse: the webhook worker finishes the attempts it started and hands back the rest,
 * the server stops accepting connections and waits for the requests in flight, and only then does
 * the database close. Requests still running after `TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS` have their
 * connections cut, so a hung upstream cannot hold the process forever.
 */
const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig.server, ({ host, port, shutdownGrace }) => {
    const server = Server.make()
    // Built after the server, so released before it: the grace period starts as the server closes.
    const grace = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.forkDaemon(Effect.delay(Effect.sync(() => server.closeAllConnections()), shutdownGrace))
      )
    )
    return Layer.mergeAll(
      grace,
      Layer.effectDiscard(
        Effect.logInfo(`Tracebridge API on http://${host}:${port} (docs at /docs, OpenAPI at /v1/openapi.json)`)
      )
    ).pipe(Layer.provideMerge(NodeHttpServer.layer(() => server, { port, host })))
  })
)

const BootstrapLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const created = yield* Bootstrap.ensureSandboxClient
    if (Option.isSome(created)) {
      // Printed once, on first start: the secret is stored only as a hash.
      process.stdout.write(
        [
          "",
          "A sandbox organisation and API client were created. Keep these; the secret is not shown again:",
          `  TRACEBRIDGE_CLIENT_ID=${created.value.client_id}`,
          `  TRACEBRIDGE_CLIENT_SECRET=${created.value.client_secret}`,
          ""
        ].join("\n") + "\n"
      )
    }
  })
)

const AppLive = HttpLive.pipe(
  Layer.provide(ServerLive),
  Layer.provide(BootstrapLive),
  Layer.provideMerge(Crypto.layer),
  // The configured database, with the short read cache for tokens, organisations and connections.
  Layer.provideMerge(RepoCache.layer.pipe(Layer.provide(Database.layer)))
)

Layer.launch(AppLive).pipe(NodeRuntime.runMain)
