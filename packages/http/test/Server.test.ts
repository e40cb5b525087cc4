/**
 * Requests Node's parser refuses before the app sees them are answered in the error envelope.
 */
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@tracebridge/http"
import * as net from "node:net"
import type { AddressInfo } from "node:net"

const raw = (request: string) =>
  new Promise<string>((resolve, reject) => {
    const server = Server.make()
    server.on("request", (_req, res) => res.end("ok"))
    server.listen(0, "127.0.0.1", () => {
      const socket = net.connect((server.address() as AddressInfo).port, "127.0.0.1")
      let answer = ""
      socket.on("data", (chunk) => (answer += chunk.toString("utf8")))
      socket.on("error", reject)
      socket.on("close", () => server.close(() => resolve(answer)))
      socket.end(request)
    })
  })

const parse = (answer: string) => {
  const [head, body] = answer.split("\r\n\r\n")
  return { status: Number(head!.split(" ")[1]), head: head!, body: JSON.parse(body!) }
}

describe("Server", () => {
  it("answers a request line over 16 KiB with 431 in the envelope", async () => {
    const answer = parse(await raw(`GET /v1/x?q=${"x".repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`))
    assert.strictEqual(answer.status, 431)
    assert.strictEqual(answer.body.error.type, "invalid_request_error")
    assert.strictEqual(answer.body.error.code, "headers_too_large")
    assert.match(answer.body.error.request_id, /^req_[0-9a-f]{24}$/)
    assert.include(answer.head, `X-Request-Id: ${answer.body.error.request_id}`)
    assert.include(answer.head, "Connection: close")
  })

  it("answers a request that is not HTTP with 400 malformed_request", async () => {
    const answer = parse(await raw("HELLO THERE\r\n\r\n"))
    assert.strictEqual(answer.status, 400)
    assert.deepStrictEqual([answer.body.error.type, answer.body.error.code], ["validation_error", "malformed_request"])
  })

  it("serves a normal request as usual", async () => {
    const answer = await raw("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    assert.match(answer, /^HTTP\/1\.1 200/)
  })
})
