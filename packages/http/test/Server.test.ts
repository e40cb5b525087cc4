/**
 * Requests Node's parser refuses before the app sees them are answered in the error envelope, and
 * slow clients cannot hold connections: headers that trickle in (or never come), a body that
 * trickles in, an idle keep-alive connection and a client that stops reading are all closed, while a
 * keep-alive client that pauses between requests and a slow handler are not disturbed.
 */
import { HttpServer } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { Effect, Layer } from "effect"
import type * as http from "node:http"
import * as net from "node:net"
import type { AddressInfo } from "node:net"
import * as Crypto from "../src/services/Crypto.js"
import * as TestDatabase from "./support/TestDatabase.js"

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

  it("holds a request that arrives before the app's handler is attached, and hands it over", async () => {
    // The server listens before the app's layers are built: a request in between must not hang.
    const server = Server.make()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const early = fetch(`http://127.0.0.1:${port}/healthz`).then(async (r) => `${r.status} ${await r.text()}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
      server.on("request", (_req: http.IncomingMessage, res: http.ServerResponse) => res.end("ready"))
      const answer = await Promise.race([
        early,
        new Promise<string>((resolve) => setTimeout(() => resolve("no answer within 5 s"), 5000))
      ])
      assert.strictEqual(answer, "200 ready")
      // and a later request is answered by the app once, as usual
      assert.strictEqual(await (await fetch(`http://127.0.0.1:${port}/x`)).text(), "ready")
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  it("serves a normal request as usual", async () => {
    const answer = await raw("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    assert.match(answer, /^HTTP\/1\.1 200/)
  })
})

/** Short timeouts, so that the slow-client tests take seconds. */
const fast: Server.Timeouts = {
  headers: "1 second",
  request: "2 seconds",
  keepAlive: "3 seconds",
  socketIdle: "1 second",
  checkInterval: "100 millis"
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A server from `Server.make(timeouts)` on a free port whose handler waits `?wait=ms` and can send `?bytes=n`. */
const listen = (timeouts: Partial<Server.Timeouts>) =>
  new Promise<{ readonly port: number; readonly server: http.Server; readonly connections: () => Promise<number> }>(
    (resolve) => {
      const server = Server.make(timeouts)
      server.on("request", (req, res) => {
        const url = new URL(req.url ?? "/", "http://x")
        req.resume()
        req.on("end", () =>
          setTimeout(
            () => res.end(url.searchParams.has("bytes") ? Buffer.alloc(Number(url.searchParams.get("bytes"))) : "ok"),
            Number(url.searchParams.get("wait") ?? 0)
          ))
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          port: (server.address() as AddressInfo).port,
          server,
          connections: () =>
            new Promise<number>((ok, ko) => server.getConnections((error, count) => (error ? ko(error) : ok(count))))
        }))
    }
  )

/** Waits until `check` holds, up to `ms`; returns the time it took. */
const until = async (what: string, check: () => boolean | Promise<boolean>, ms: number) => {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(25)
  }
  return Date.now() - started
}

/**
 * A client socket that does not close its side when the server ends (`allowHalfOpen`), as a slow
 * attacker would not: only the server closing the connection frees it.
 */
const connect = (port: number) => {
  const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true })
  const state = { answer: "", ended: false, closed: false }
  socket.on("data", (chunk) => (state.answer += chunk.toString("utf8")))
  socket.on("end", () => (state.ended = true))
  socket.on("close", () => (state.closed = true))
  socket.on("error", () => {})
  return { socket, state }
}

/** Reads one HTTP/1.1 response (with Content-Length) from `socket`. */
const response = (socket: net.Socket) =>
  new Promise<{ readonly status: number; readonly head: string; readonly body: string }>((resolve, reject) => {
    let buffer = ""
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("latin1")
      const end = buffer.indexOf("\r\n\r\n")
      if (end < 0) return
      const head = buffer.slice(0, end)
      const length = Number(/content-length: *([0-9]+)/i.exec(head)?.[1] ?? 0)
      if (buffer.length < end + 4 + length) return
      socket.off("data", onData)
      resolve({ status: Number(head.split(" ")[1]), head, body: buffer.slice(end + 4, end + 4 + length) })
    }
    socket.on("data", onData)
    socket.once("close", () => reject(new Error(`closed before a whole response: ${JSON.stringify(buffer)}`)))
  })

describe("Server timeouts", () => {
  it("closes connections whose headers trickle in one byte at a time, within the headers timeout", async () => {
    const { connections, port, server } = await listen(fast)
    const request = `GET /v1/connections HTTP/1.1\r\nHost: a\r\nX-Slow: ${"s".repeat(500)}\r\n\r\n`
    const clients = Array.from({ length: 50 }, () => connect(port))
    let sent = 0
    const trickle = setInterval(() => {
      for (const { socket } of clients) if (!socket.destroyed && socket.writable) socket.write(request[sent]!)
      sent++
    }, 50)
    try {
      await until("the server to hold the connections", async () => (await connections()) === 50, 2_000)
      // headers timeout (1 s) + checking interval (0.1 s) + the linger after the answer (1 s) + slack
      const took = await until("the server to close every connection", async () => (await connections()) === 0, 4_000)
      assert.isBelow(took, 4_000)
      assert.isBelow(sent, request.length, "the headers never completed")
      for (const { state } of clients) {
        assert.isTrue(state.ended, "the server ended the connection")
        assert.match(state.answer, /^HTTP\/1\.1 408 /)
        assert.strictEqual(JSON.parse(state.answer.split("\r\n\r\n")[1]!).error.code, "request_timeout")
      }
    } finally {
      clearInterval(trickle)
      for (const { socket } of clients) socket.destroy()
      server.close()
    }
  }, 15_000)

  it("closes a connection that sends nothing, within the headers timeout", async () => {
    const { connections, port, server } = await listen(fast)
    const { socket, state } = connect(port)
    try {
      await until("the connection", async () => (await connections()) === 1, 2_000)
      await until("the server to close it", async () => (await connections()) === 0, 4_000)
      // the client hears the close a moment after the server counts the socket gone
      await until("the client to see it closed", async () => state.ended, 2_000)
      assert.isTrue(state.ended)
    } finally {
      socket.destroy()
      server.close()
    }
  }, 15_000)

  it("closes a request whose body trickles in, within the request timeout", async () => {
    const { connections, port, server } = await listen(fast)
    const { socket, state } = connect(port)
    socket.write("POST /v1/x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    const trickle = setInterval(() => !socket.destroyed && socket.writable && socket.write(" "), 50)
    try {
      await until("the connection", async () => (await connections()) === 1, 2_000)
      const took = await until("the server to close it", async () => (await connections()) === 0, 5_000)
      assert.isAbove(took, 1_000, "not before the request timeout (2 s)")
      assert.isTrue(state.ended || state.closed)
    } finally {
      clearInterval(trickle)
      socket.destroy()
      server.close()
    }
  }, 15_000)

  it("answers a handler slower than the socket idle timeout", async () => {
    const { port, server } = await listen(fast)
    const { socket } = connect(port)
    try {
      const answer = response(socket)
      socket.write("GET /?wait=2000 HTTP/1.1\r\nHost: a\r\n\r\n")
      assert.strictEqual((await answer).status, 200)
    } finally {
      socket.destroy()
      server.close()
    }
  }, 15_000)

  it("closes a connection whose client stops reading the answer, after the socket idle timeout", async () => {
    const { connections, port, server } = await listen(fast)
    const { socket } = connect(port)
    socket.pause()
    socket.write("GET /?bytes=67108864 HTTP/1.1\r\nHost: a\r\n\r\n")
    try {
      await until("the connection", async () => (await connections()) === 1, 2_000)
      await until("the server to close it", async () => (await connections()) === 0, 6_000)
    } finally {
      socket.destroy()
      server.close()
    }
  }, 15_000)

  it("closes an idle keep-alive connection after the keep-alive timeout, not before", async () => {
    const { connections, port, server } = await listen(fast)
    const { socket } = connect(port)
    try {
      const answer = response(socket)
      socket.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
      assert.strictEqual((await answer).status, 200)
      const took = await until("the server to close it", async () => (await connections()) === 0, 6_000)
      assert.isAbove(took, 2_500, "kept for the keep-alive timeout (3 s)")
      assert.isBelow(took, 4_500, "and closed after it")
    } finally {
      socket.destroy()
      server.close()
    }
  }, 15_000)

  it("on close, finishes the request in flight and closes its keep-alive connection once answered", async () => {
    const { port, server } = await listen(fast)
    const { socket, state } = connect(port)
    try {
      const answer = response(socket)
      socket.write("GET /?wait=500 HTTP/1.1\r\nHost: a\r\n\r\n")
      await sleep(100)
      const started = Date.now()
      const closed = new Promise<number>((resolve) => server.close(() => resolve(Date.now() - started)))
      assert.strictEqual((await answer).status, 200)
      const took = await closed
      assert.isBelow(took, 1_500, "not kept for the keep-alive timeout (3 s)")
      await until("the client to see the connection end", () => state.ended || state.closed, 1_000)
    } finally {
      socket.destroy()
    }
  }, 15_000)

  it.effect(
    "serves a keep-alive client that pauses longer than the headers timeout between two requests",
    () =>
      Effect.gen(function*() {
        const address = (yield* HttpServer.HttpServer).address
        assert.strictEqual(address._tag, "TcpAddress")
        const port = address._tag === "TcpAddress" ? address.port : 0
        const [first, second, open] = yield* Effect.promise(async () => {
          const { socket, state } = connect(port)
          try {
            const one = response(socket)
            socket.write("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            const first = await one
            await sleep(2_000)
            const open = !state.ended && !state.closed
            const two = response(socket)
            socket.write("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            return [first, await two, open] as const
          } finally {
            socket.destroy()
          }
        })
        assert.isTrue(open, "the connection stayed open during the pause")
        assert.deepStrictEqual([first.status, second.status], [200, 200])
        assert.notMatch(first.head, /connection: close/i)
      }).pipe(
        Effect.provide(
          Http.HttpLive.pipe(
            Layer.provideMerge(Server.layerTestWith(fast)),
            Layer.provideMerge(Crypto.layerTest),
            Layer.provideMerge(TestDatabase.layer)
          )
        )
      ),
    15_000
  )

  it("maps Node's request timeout to 408 request_timeout", () => {
    for (const code of ["ERR_HTTP_REQUEST_TIMEOUT", "HPE_REQUEST_TIMEOUT"]) {
      const answer = parse(Server.clientErrorResponse(code))
      assert.strictEqual(answer.status, 408)
      assert.deepStrictEqual([answer.body.error.type, answer.body.error.code], [
        "invalid_request_error",
        "request_timeout"
      ])
    }
  })
})
