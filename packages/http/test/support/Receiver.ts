/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (headers and raw body) and
 * answers with the next status of a script (then the last one again).
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  /** The body's bytes, for a binary body (an OTLP/protobuf batch). */
  readonly raw: Uint8Array
}

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** Statuses to answer with, in order; the last repeats. */
  readonly script: Array<number>
  /** Milliseconds to wait before answering. */
  delayMs: number
  /** The answer's body (default "ok"), and its content type (default text/plain). */
  body: string
  contentType: string
}

/** Starts a receiver for the scope of the test. */
export const receiver = (script: ReadonlyArray<number> = [200]) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: http.Server; readonly state: Receiver }>((resume) => {
      const state: Receiver = {
        url: "",
        received: [],
        script: [...script],
        delayMs: 0,
        body: "ok",
        contentType: "text/plain"
      }
      let served = 0
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const raw = Buffer.concat(chunks)
          state.received.push({ headers: req.headers, body: raw.toString("utf8"), raw })
          const status = state.script[Math.min(served++, state.script.length - 1)] ?? 200
          setTimeout(
            () => res.writeHead(status, { "content-type": state.contentType }).end(state.body),
            state.delayMs
          )
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({ server, state: Object.assign(state, { url: `http://127.0.0.1:${port}/hooks` }) }))
      })
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map(({ state }) => state))
