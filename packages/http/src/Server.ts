/**
 * The Node HTTP server the API runs on: `node:http`, plus an answer in the error envelope for the
 * requests Node refuses before the app sees them. Node's HTTP parser rejects a request whose
 * request line and headers pass 16 KiB (431), or that is not HTTP at all (400), and by default
 * answers with an empty body; here the answer is
 * `{"error": {"type", "code", "message", "request_id"}}` like every other refusal, and the
 * connection is closed.
 *
 * | Node's parser error | status | type / code |
 * |---|---|---|
 * | `HPE_HEADER_OVERFLOW` (request line and headers over 16 KiB) | 431 | `invalid_request_error` / `headers_too_large` |
 * | `ERR_HTTP_REQUEST_TIMEOUT` (headers or body not complete in time, below) | 408 | `invalid_request_error` / `request_timeout` |
 * | any other (a malformed request) | 400 | `validation_error` / `malformed_request` |
 *
 * Slow clients cannot hold connections ({@link Timeouts}): a connection whose request headers are
 * not complete within `headers` (10 s) of its first byte, or of the connection when nothing comes,
 * is answered 408 and closed, however steadily the bytes trickle in; a request body not complete
 * within `request` (60 s) likewise; an idle keep-alive connection is closed after `keepAlive`
 * (65 s); and a connection on which nothing moves for `socketIdle` (120 s) while no request is being
 * worked on (a client that stopped reading its answer) is closed. The time a handler takes is not
 * limited here: the provider timeouts and the shutdown grace bound it. Once the server is closing,
 * a keep-alive connection is closed as soon as its answer is out.
 *
 * @since 0.1.0
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Duration, Layer } from "effect"
import * as http from "node:http"
import type { Duplex } from "node:stream"
import * as RequestId from "./RequestId.js"

const reasons: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large"
}

/**
 * The answer to a request Node's parser refused: status line, headers and envelope, as bytes.
 *
 * @since 0.1.0
 * @category refusals
 */
export const clientErrorResponse = (code: string | undefined): string => {
  const [status, type, errorCode, message] = code === "HPE_HEADER_OVERFLOW"
    ? [431, "invalid_request_error", "headers_too_large", "The request line and headers are larger than 16 KiB"]
    : code === "ERR_HTTP_REQUEST_TIMEOUT" || code === "HPE_REQUEST_TIMEOUT" || code === "HPE_HEADER_TIMEOUT"
    ? [408, "invalid_request_error", "request_timeout", "The request did not arrive in time"]
    : [400, "validation_error", "malformed_request", "The request is not valid HTTP/1.1"]
  const request_id = RequestId.make()
  const body = JSON.stringify({ error: { type, code: errorCode, message, request_id } })
  return [
    `HTTP/1.1 ${status} ${reasons[status]}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${request_id}`,
    "Connection: close",
    "",
    body
  ].join("\r\n")
}

/**
 * The server's timeouts. How Node (18 and later, we run 20) applies them:
 *
 * - `headers` (`server.headersTimeout`): from the first byte of a request, or from the connection
 *   while nothing has come, until its headers are complete. Bytes arriving do not extend it, so a
 *   client trickling its headers one byte at a time is cut. Node checks it every `checkInterval`
 *   (`connectionsCheckingInterval`, 30 s by default, hence 1 s here): a connection is closed at most
 *   `headers + checkInterval` after it started.
 * - `request` (`server.requestTimeout`): the same, until the whole request (headers and body) has
 *   arrived; not the time the handler takes. Node requires `headers <= request`.
 * - `keepAlive` (`server.keepAliveTimeout`): how long a connection may idle between a response and
 *   the next request. Longer than the idle timeout of the load balancers in front (60 s on AWS),
 *   so that they, not we, close idle connections (else a request sent as we close is lost: a 502).
 * - `socketIdle` (`server.timeout`): a connection on which nothing moves for this long is closed,
 *   unless a request on it is still being worked on (a slow provider is the handler's business and
 *   is bounded there); this closes a client that stopped reading its answer. 0: off.
 *
 * `headers` is far shorter than `keepAlive`, and must be. The old advice to set the headers timeout
 * above the keep-alive timeout comes from Node before 18, where the headers timer of a reused
 * connection could count its idle time since the previous response. Since Node 18 an idle
 * keep-alive connection is not in the list the headers check walks at all; the timer starts at the
 * next request's first byte, so a keep-alive client may pause longer than `headers` between
 * requests (`Server.test.ts` pauses 2 s against a 1 s headers timeout).
 *
 * @since 0.1.0
 * @category models
 */
export interface Timeouts {
  readonly headers: Duration.DurationInput
  readonly request: Duration.DurationInput
  readonly keepAlive: Duration.DurationInput
  readonly socketIdle: Duration.DurationInput
  readonly checkInterval: Duration.DurationInput
}

/**
 * The defaults: headers 10 s, request 60 s, keep-alive 65 s, socket idle 120 s, checked every 1 s.
 * `AppConfig.serverTimeouts` reads the first four from the environment.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTimeouts: Timeouts = {
  headers: "10 seconds",
  request: "60 seconds",
  keepAlive: "65 seconds",
  socketIdle: "120 seconds",
  checkInterval: "1 second"
}

/** After answering a refused request, how long the client has to read the answer and close. */
const lingerMillis = 1000

const millis = (d: Duration.DurationInput) => Math.round(Duration.toMillis(Duration.decode(d)))

/**
 * A `node:http` server that answers parser refusals in the envelope and closes slow clients
 * ({@link Timeouts}; the defaults for any not given).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (timeouts: Partial<Timeouts> = {}): http.Server => {
  const t = { ...defaultTimeouts, ...timeouts }
  const server = http.createServer({
    headersTimeout: millis(t.headers),
    requestTimeout: millis(t.request),
    connectionsCheckingInterval: millis(t.checkInterval)
  })
  server.keepAliveTimeout = millis(t.keepAlive)
  server.timeout = millis(t.socketIdle)

  // The response being worked on per connection, until it is finished or the connection closes.
  const current = new WeakMap<Duplex, http.ServerResponse>()
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket
    current.set(socket, res)
    res.once("close", () => {
      if (current.get(socket) === res) current.delete(socket)
      // Shutting down (`server.close()` stops listening at once, then waits for every connection):
      // a connection whose answer is out is closed now rather than kept alive for `keepAlive`.
      if (!server.listening) server.closeIdleConnections()
    })
  })

  // The server listens before the app's layers are built, and the app attaches its handler only
  // then: a request that arrives in between (a health check polling a starting process) would have
  // no handler and hang for good. It waits for the app's handler and is handed to it.
  const ownRequestListeners = server.listenerCount("request") + 1
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (server.listenerCount("request") > ownRequestListeners) return
    const handOver = (event: string | symbol, listener: (...args: Array<any>) => void) => {
      if (event !== "request") return
      server.off("newListener", handOver)
      // `newListener` comes before the listener is added: hand over once it is in place.
      process.nextTick(() => listener(req, res))
    }
    server.on("newListener", handOver)
  })

  // With a listener here Node no longer closes a connection that timed out (socket idle or
  // keep-alive): this does, unless its request is still being worked on (no answer started yet).
  server.on("timeout", (socket: Duplex) => {
    const res = current.get(socket)
    if (res !== undefined && !res.headersSent) return
    socket.destroy()
  })

  server.on("clientError", (error: Error & { readonly code?: string }, socket: Duplex) => {
    // Nothing to answer on a connection that is gone or whose answer has started.
    if (error.code === "ECONNRESET" || !socket.writable || current.get(socket)?.headersSent === true) {
      socket.destroy()
      return
    }
    socket.end(clientErrorResponse(error.code))
    // A client that keeps its side open (a slow attacker would) must not keep the connection.
    const linger = setTimeout(() => socket.destroy(), lingerMillis).unref()
    socket.once("close", () => clearTimeout(linger))
  })
  return server
}

/**
 * The server on `host:port`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: {
  readonly port: number
  readonly host: string
  readonly timeouts?: Partial<Timeouts> | undefined
}) => NodeHttpServer.layer(() => make(options.timeouts), { port: options.port, host: options.host })

/**
 * The server with these timeouts on a free port of 127.0.0.1, with an `HttpClient` aimed at it
 * (tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTestWith = (timeouts: Partial<Timeouts>) =>
  HttpServer.layerTestClient.pipe(
    Layer.provide(NodeHttpClient.layerWithoutAgent),
    Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
    Layer.provideMerge(NodeHttpServer.layer(() => make(timeouts), { port: 0 }))
  )

/**
 * The server on a free port of 127.0.0.1 with an `HttpClient` aimed at it (tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = layerTestWith({})
