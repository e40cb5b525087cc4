/**
 * The served API: the contract's handlers, the OpenAPI document at `/v1/openapi.json` and the
 * offline docs page at `/docs`. The HTTP server itself is provided by `main.ts` (or by tests).
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpApiSwagger, HttpMiddleware } from "@effect/platform"
import { Layer } from "effect"
import { Api } from "./Api.js"
import { HttpSystemLive } from "./handlers/SystemHttp.js"

/**
 * The API implementation, without a server.
 *
 * @since 0.1.0
 * @category layers
 */
export const ApiLive = HttpApiBuilder.api(Api).pipe(Layer.provide(HttpSystemLive))

/**
 * Everything served, without a server: handlers, OpenAPI and docs.
 *
 * @since 0.1.0
 * @category layers
 */
export const HttpLive = HttpApiBuilder.serve(HttpMiddleware.logger).pipe(
  Layer.provide(HttpApiSwagger.layer({ path: "/docs" })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" })),
  Layer.provide(ApiLive)
)
