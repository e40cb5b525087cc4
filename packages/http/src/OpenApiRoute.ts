/**
 * `GET /v1/openapi.json`: the document generated from the contract (`OpenApi.fromApi(Api)`), with
 * its `servers` entry naming where this request reached the API (`PublicOrigin`; issue #30), so
 * that a generated client or a copied example works whatever `PORT` or host serves it. The
 * document is serialised once; only the origin is filled in per request.
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { Effect } from "effect"
import * as PublicOrigin from "./PublicOrigin.js"

/** Stands for the origin in the serialised document. */
const MARK = "\u0000tracebridge-origin\u0000"

/**
 * The route, as a layer for `HttpApiBuilder.serve`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const publicUrl = yield* Effect.orDie(PublicOrigin.configured)
    const document = OpenApi.fromApi(Api)
    const first = document.servers?.[0]
    const text = JSON.stringify({ ...document, servers: [{ ...first, url: MARK }] })
    const [before, after] = text.split(JSON.stringify(MARK)) as [string, string]
    yield* router.get(
      "/v1/openapi.json",
      Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        HttpServerResponse.text(`${before}${JSON.stringify(PublicOrigin.of(request, publicUrl))}${after}`, {
          contentType: "application/json"
        }))
    )
  })
)
