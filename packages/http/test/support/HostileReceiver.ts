/**
 * Hostile webhook receivers on 127.0.0.1 (issue #28): one that answers with a huge body streamed
 * lazily (written only as fast as it is read, so a reader that stops stops it), one that sends its
 * headers and then trickles a byte a second, and one that never answers. Each counts what it
 * received and sent, and when a connection was closed on it.
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export type HostileMode = "huge" | "trickle" | "hang"

export interface HostileOptions {
  readonly mode: HostileMode
  /** The status of a "huge" or "trickle" answer. */
  readonly status?: number
  /** How many bytes a "huge" answer has (default 600 MB). */
  readonly totalBytes?: number
}

export interface Hostile {
  readonly url: string
  /** Requests received (their headers arrived). */
  requests: number
  /** Answers in progress (the request arrived, the connection is not closed yet). */
  open: number
  /** Body bytes written to the answers. */
  bytesSent: number
  /** Connections the client closed or aborted (or that ended). */
  closed: number
  readonly close: () => Promise<void>
}

const CHUNK = Buffer.alloc(64 * 1024, "x")

/** Starts a hostile receiver; `close` stops it and drops its connections. */
export const startHostile = (options: HostileOptions): Promise<Hostile> =>
  new Promise((resolve) => {
    const total = options.totalBytes ?? 600 * 1024 * 1024
    const timers = new Set<NodeJS.Timeout>()
    const state: Hostile = {
      url: "",
      requests: 0,
      open: 0,
      bytesSent: 0,
      closed: 0,
      close: () =>
        new Promise<void>((done) => {
          for (const t of timers) clearInterval(t)
          server.closeAllConnections()
          server.close(() => done())
        })
    }
    const server = http.createServer((req, res) => {
      state.requests++
      state.open++
      req.resume()
      res.once("close", () => {
        state.open--
        state.closed++
      })
      if (options.mode === "hang") return
      res.writeHead(options.status ?? 200, { "content-type": "text/plain" })
      res.flushHeaders()
      if (options.mode === "trickle") {
        const timer = setInterval(() => {
          if (res.destroyed) return clearInterval(timer)
          state.bytesSent++
          res.write("x")
        }, 1000)
        timers.add(timer)
        res.once("close", () => clearInterval(timer))
        return
      }
      let sent = 0
      const pump = () => {
        while (sent < total && !res.destroyed) {
          const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, total - sent))
          sent += chunk.length
          state.bytesSent += chunk.length
          if (!res.write(chunk)) return void res.once("drain", pump)
        }
        if (sent >= total && !res.destroyed) res.end()
      }
      pump()
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve(Object.assign(state, { url: `http://127.0.0.1:${port}/hooks` }))
    })
  })

/** `startHostile` for the scope of an Effect test. */
export const hostile = (options: HostileOptions) =>
  Effect.acquireRelease(Effect.promise(() => startHostile(options)), (h) => Effect.promise(() => h.close()))
