/**
 * Helpers of the tests that run the built server (`dist/main.js`) as a process.
 */
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The built server's entry point. */
export const main = fileURLToPath(new URL("../../dist/main.js", import.meta.url))

/** A port nothing listens on now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 20 ms until it holds; the milliseconds it took, or an error after `ms`. */
export const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 10_000) => {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(20)
  }
  return Date.now() - started
}

/**
 * The built server started as `npm start` starts it, on SQLite in a fresh data folder (named from
 * `prefix`) on 127.0.0.1, with `env` over the test's environment: the process, everything it wrote
 * (stdout and stderr) so far, and its exit code when it ends.
 */
export const startMain = (env: Record<string, string>, prefix = "tb-main-") => {
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      DATABASE_URL: "",
      HOST: "127.0.0.1",
      TRACEBRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), prefix)),
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}
