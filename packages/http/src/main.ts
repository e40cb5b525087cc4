/**
 * The process entry point of `npm start`: migrates the database, makes sure a sandbox organisation
 * and client exist (printing their credentials the first time), and serves the API on `HOST:PORT`.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import * as AppConfig from "./AppConfig.js"
import * as Bootstrap from "./Bootstrap.js"
import { HttpLive } from "./Http.js"
import * as Database from "./persistence/Database.js"
import * as Crypto from "./services/Crypto.js"

const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig.server, ({ host, port }) =>
    Layer.mergeAll(
      NodeHttpServer.layer(createServer, { port, host }),
      Layer.effectDiscard(
        Effect.logInfo(`Tracebridge API on http://${host}:${port} (docs at /docs, OpenAPI at /v1/openapi.json)`)
      )
    ))
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
  Layer.provideMerge(Database.layer)
)

Layer.launch(AppLive).pipe(NodeRuntime.runMain)
