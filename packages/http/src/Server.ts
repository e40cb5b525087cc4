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
 * | `HPE_REQUEST_TIMEOUT` (headers not complete within the server's timeout) | 408 | `invalid_request_error` / `request_timeout` |
 * | any other (a malformed request) | 400 | `validation_error` / `malformed_request` |
 *
 * @since 0.1.0
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
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
    : code === "HPE_REQUEST_TIMEOUT"
    ? [408, "invalid_request_error", "request_timeout", "The request headers did not arrive in time"]
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

const onClientError = (error: Error & { readonly code?: string }, socket: Duplex) => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  socket.end(clientErrorResponse(error.code))
}

/**
 * A `node:http` server that answers parser refusals in the envelope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): http.Server => {
  const server = http.createServer()
  server.on("clientError", onClientError)
  return server
}

/**
 * The server on `host:port`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: { readonly port: number; readonly host: string }) => NodeHttpServer.layer(make, options)

/**
 * The server on a free port of 127.0.0.1 with an `HttpClient` aimed at it (tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = HttpServer.layerTestClient.pipe(
  Layer.provide(NodeHttpClient.layerWithoutAgent),
  Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
  Layer.provideMerge(NodeHttpServer.layer(make, { port: 0 }))
)
