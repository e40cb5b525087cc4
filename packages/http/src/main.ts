/**
 * The process entry point of `npm start`: serves the API on `HOST:PORT`.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import * as AppConfig from "./AppConfig.js"
import { HttpLive } from "./Http.js"

const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig.server, ({ host, port }) =>
    Layer.mergeAll(
      NodeHttpServer.layer(createServer, { port, host }),
      Layer.effectDiscard(Effect.logInfo(`Tracebridge API on http://${host}:${port} (docs at /docs)`))
    ))
)

HttpLive.pipe(Layer.provide(ServerLive), Layer.launch, NodeRuntime.runMain)
