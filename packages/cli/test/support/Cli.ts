/**
 * The built `tracebridge` command as a child process, and a local receiver of forwarded events.
 */
import type { ChildProcess } from "node:child_process"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../bin/tracebridge.mjs", import.meta.url))

/** A fresh config folder, so that no test reads another's (or the developer's) credentials. */
export const configDir = () => mkdtempSync(join(tmpdir(), "tracebridge-cli-test-"))

export interface Command {
  readonly child: ChildProcess
  /** Every full line printed on stdout so far. */
  readonly lines: () => ReadonlyArray<string>
  readonly output: () => string
}

/** Starts the command; it runs until killed. */
export const start = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Command => {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  return {
    child,
    lines: () => stdout.split("\n").slice(0, -1),
    output: () => `${stdout}\n${stderr}`
  }
}

/** Runs the command to its end. */
export const run = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
    )
  })

/** Polls `check` every 50 ms until it holds, for at most `ms`. */
export const until = async (what: string, check: () => boolean, ms = 20_000) => {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export interface Forwarded {
  readonly eventId: string
  readonly eventType: string
  readonly signature: string
  readonly body: string
}

/** A local receiver of forwarded events: answers 200 and keeps each request. */
export const receiver = () =>
  new Promise<{ readonly url: string; readonly received: Array<Forwarded>; readonly close: () => Promise<void> }>(
    (resolve) => {
      const received: Array<Forwarded> = []
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          received.push({
            eventId: String(req.headers["x-tracebridge-event-id"]),
            eventType: String(req.headers["x-tracebridge-event-type"]),
            signature: String(req.headers["x-tracebridge-signature"]),
            body: Buffer.concat(chunks).toString("utf8")
          })
          res.writeHead(200).end("ok")
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resolve({
          url: `http://127.0.0.1:${port}/webhooks`,
          received,
          close: () => new Promise((done) => server.close(() => done()))
        })
      })
    }
  )
