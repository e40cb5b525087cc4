/**
 * The MCP server at `/mcp` (issue #34; `@tracebridge/mcp`), over Streamable HTTP, stateless: each
 * request gets a server of its own, so any node answers any request. Authentication is `/v1`'s: an
 * access token or a connection token as `Authorization: Bearer …`; without a valid one the answer
 * is 401 with `WWW-Authenticate`, in the contract's error envelope. The tools call this node's own
 * `/v1` over loopback with the caller's token, so nothing is reachable through MCP that the token
 * cannot reach through `/v1`; the write tools (sandbox scenarios, reset) are offered only to a
 * sandbox organisation's token.
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { McpServer } from "@tracebridge/mcp"
import { Effect, Either } from "effect"
import * as RequestId from "./RequestId.js"
import { Auth } from "./services/Auth.js"

/** The origin of this node as the request reached it (the socket's local address). */
const loopbackOrigin = (request: HttpServerRequest.HttpServerRequest): string => {
  const socket = NodeHttpServerRequest.toIncomingMessage(request).socket
  const address = socket.localAddress ?? "127.0.0.1"
  const host = address.includes(":") ? (address.startsWith("::ffff:") ? address.slice(7) : `[${address}]`) : address
  return `http://${host}:${socket.localPort}`
}

const refused = (message: string) =>
  Effect.map(RequestId.get, (request_id) =>
    HttpServerResponse.unsafeJson(
      { error: { type: "authentication_error", code: "unauthorized", message, request_id } },
      { status: 401, headers: { "www-authenticate": "Bearer realm=\"tracebridge\"" } }
    ))

/**
 * `/mcp`: POST (JSON-RPC), and GET/DELETE answered by the transport (405 without sessions).
 *
 * @since 0.1.0
 * @category routes
 */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const serve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const header = request.headers.authorization
      const bearer = header !== undefined && header.slice(0, 7).toLowerCase() === "bearer " ? header.slice(7) : ""
      if (bearer === "") return yield* refused("A bearer token is required: an access token or a connection token")
      const principal = yield* Effect.either(auth.authenticate(bearer))
      if (Either.isLeft(principal)) return yield* refused("The bearer token is not valid")
      // the body is read here (the request's middleware may have read it already): a POST's JSON
      // is handed over parsed, and a body that is not JSON gets the transport's own parse error
      const parsed = request.method === "POST"
        ? yield* Effect.orElseSucceed(
          Effect.map(request.text, (text) => {
            try {
              return JSON.parse(text) as unknown
            } catch {
              return undefined
            }
          }),
          () => undefined
        )
        : undefined
      const web = new Request(`http://localhost${request.url}`, {
        method: request.method,
        headers: new Headers(request.headers as Record<string, string>),
        ...(request.method === "POST" ? { body: parsed === undefined ? "not json" : JSON.stringify(parsed) } : {})
      })
      const api = McpServer.fetchApi(loopbackOrigin(request), bearer)
      const answer = yield* Effect.promise(() =>
        McpServer.handle(web, api, { writes: principal.right.organisation.plan === "sandbox" }, parsed)
      )
      return HttpServerResponse.fromWeb(answer)
    })
    yield* router.post("/mcp", serve)
    yield* router.get("/mcp", serve)
    yield* router.del("/mcp", serve)
  })
)
