/**
 * The served API: the contract's handlers, the request-id and error middleware, the OpenAPI
 * document at `/v1/openapi.json` and the offline docs page at `/docs`. The HTTP server is provided
 * by `main.ts` (or by tests); the repository and the encryption key by the caller.
 *
 * @since 0.1.0
 */
import type { HttpApiError, HttpServer } from "@effect/platform"
import { HttpApiBuilder, HttpApiSwagger, HttpApp, HttpMiddleware, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { Api } from "./Api.js"
import * as Errors from "./Errors.js"
import * as ConnectPages from "./connect/Pages.js"
import { HttpConnectLive } from "./handlers/ConnectHttp.js"
import { HttpConnectionsLive } from "./handlers/ConnectionsHttp.js"
import { HttpLinkLive } from "./handlers/LinkHttp.js"
import { HttpOAuthLive } from "./handlers/OAuthHttp.js"
import { HttpResourcesLive } from "./handlers/ResourcesHttp.js"
import { HttpSystemLive } from "./handlers/SystemHttp.js"
import type { Repo } from "./persistence/Repo.js"
import * as RequestId from "./RequestId.js"
import { Authentication } from "./Security.js"
import * as Auth from "./services/Auth.js"
import * as Connections from "./services/Connections.js"
import type { Crypto } from "./services/Crypto.js"
import * as Providers from "./services/Providers.js"

const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(Auth.Auth, (auth) => Authentication.of({ bearer: (token) => auth.authenticate(Redacted.value(token)) }))
)

/**
 * Every request gets an id (in `X-Request-Id`, `meta` and errors); a request that fails its schema
 * is a 400 `validation_error` naming the parameter, never the framework's default body; a defect is
 * a 500 `api_error` with no stack.
 */
const RequestMiddleware = HttpApiBuilder.middleware(Api, (app) =>
  Effect.gen(function*() {
    const id = RequestId.make()
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", id))
    )
    // Route failures reach this middleware before they are encoded (the types say never).
    const routed = app as unknown as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
    return yield* routed.pipe(
      Effect.catchIf(
        (e): e is HttpApiError.HttpApiDecodeError =>
          typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "HttpApiDecodeError",
        (e) => {
          const issue = e.issues[0]
          const path = issue?.path.filter((p) => p !== "payload" && p !== "urlParams" && p !== "path").map(String).join(
            "."
          )
          return Effect.flatMap(
            Errors.make(
              "validation_error",
              "invalid_parameter",
              issue?.message ?? e.message,
              path === "" || path === undefined ? undefined : path
            ),
            Effect.fail
          )
        }
      ),
      Effect.catchIf(
        (e): e is { readonly _tag: string; readonly reason?: string } =>
          typeof e === "object" && e !== null &&
          ((e as { _tag?: unknown })._tag === "RequestError" || (e as { _tag?: unknown })._tag === "RouteNotFound"),
        (e) =>
          Effect.flatMap(
            (e._tag === "RouteNotFound"
              ? Errors.make("not_found_error", "resource_not_found", "No such endpoint; see /v1/openapi.json")
              : Errors.make("validation_error", "invalid_json", "The body is not valid JSON")) as Effect.Effect<
                Errors.HttpError
              >,
            Effect.fail
          )
      ),
      Effect.catchAllDefect((defect) =>
        isBodyDecodeFailure(defect)
          ? Effect.flatMap(
            Errors.make("validation_error", "invalid_json", "The body is not valid JSON") as Effect.Effect<
              Errors.HttpError
            >,
            Effect.fail
          )
          : Effect.zipRight(
            Effect.logError("unexpected failure", defect),
            Effect.flatMap(
              Errors.make("api_error", "internal_error", "Something went wrong on our side; quote the request id"),
              Effect.fail
            )
          )
      ),
      Effect.locally(RequestId.current, id)
    ) as unknown as HttpServerResponse.HttpServerResponse
  }))

/** A body that could not be read as JSON surfaces as a defect of the request decoder. */
const isBodyDecodeFailure = (defect: unknown): boolean => {
  if (defect instanceof SyntaxError) return true
  if (typeof defect !== "object" || defect === null) return false
  const d = defect as { readonly _tag?: unknown; readonly reason?: unknown; readonly cause?: unknown }
  return (d._tag === "RequestError" && d.reason === "Decode") ||
    (d.cause !== undefined && d.cause !== defect && isBodyDecodeFailure(d.cause))
}

const ServicesLive = Connections.layer.pipe(
  Layer.provideMerge(Auth.layer),
  Layer.provideMerge(Providers.layer)
)

/**
 * The API implementation, without a server (needs the repository and the encryption key).
 *
 * @since 0.1.0
 * @category layers
 */
export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([HttpSystemLive, HttpOAuthLive, HttpLinkLive, HttpConnectionsLive, HttpResourcesLive, HttpConnectLive]),
  Layer.provide(RequestMiddleware),
  Layer.provide(AuthenticationLive),
  Layer.provideMerge(ServicesLive)
)

/**
 * Everything served, without a server: handlers, OpenAPI and docs.
 *
 * @since 0.1.0
 * @category layers
 */
export const HttpLive: Layer.Layer<never, never, Repo | Crypto | HttpServer.HttpServer> = HttpApiBuilder.serve(
  HttpMiddleware.logger
).pipe(
  Layer.provide(HttpApiSwagger.layer({ path: "/docs" })),
  Layer.provide(ConnectPages.layer),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" })),
  Layer.provide(ApiLive)
) as never
