// Row 1's framework ceiling: the smallest Effect HttpApi server answering the packages path with
// the exact bytes Tracebridge gave, prebuilt (no auth, no port, no encoding, tracer off). What it
// serves is the most any HttpApi service can serve on this machine; row 1 reports our share of it.
//   node bench/lib/effect-server.mjs <port> <body-file> <content-type>
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpMiddleware,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const [port, bodyFile, contentType] = process.argv.slice(2)
const body = readFileSync(bodyFile, "utf8")

const Api = HttpApi.make("ceiling").add(
  HttpApiGroup.make("g").add(
    HttpApiEndpoint.get("packages", "/v1/connections/:c/facilities/:f/packages")
      .setPath(Schema.Struct({ c: Schema.String, f: Schema.String }))
      .addSuccess(Schema.Unknown)
  )
)
const Group = HttpApiBuilder.group(
  Api,
  "g",
  (handlers) => handlers.handle("packages", () => Effect.succeed(HttpServerResponse.text(body, { contentType })))
)

const Live = HttpApiBuilder.serve().pipe(
  HttpMiddleware.withTracerDisabledWhen(() => true),
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(Group))),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(port), host: "127.0.0.1" }))
)
process.stdout.write("ready\n")
Layer.launch(Live).pipe(NodeRuntime.runMain)
