/**
 * The real Tracebridge server for the SDK's tests: the built `packages/http/dist/main.js` (`npm test`
 * builds it first) as a child process on a free port, on SQLite in a temporary folder, with fixed
 * sandbox client credentials.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../../../http/dist/main.js", import.meta.url))
const shiftClock = fileURLToPath(new URL("./ShiftClock.mjs", import.meta.url))

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

export interface TestServer {
  readonly baseUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /** What the server printed on stdout (its first-start banner, with the first owner's link). */
  readonly stdout: () => string
  /** Moves the server's clock two hours on (only with `shiftableClock`). */
  readonly shiftClock: () => void
  readonly stop: () => Promise<void>
}

/** Starts the server and waits for `/healthz`. */
export const startServer = async (
  options: { readonly shiftableClock?: boolean; readonly env?: Readonly<Record<string, string>> } = {}
): Promise<TestServer> => {
  const dataDir = mkdtempSync(join(tmpdir(), "tracebridge-client-test-"))
  const port = await freePort()
  const clientId = `tb_client_sdk_${randomBytes(6).toString("hex")}`
  const clientSecret = `tb_secret_${randomBytes(24).toString("base64url")}`
  let output = ""
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.shiftableClock ? ["--import", shiftClock] : []), main],
    {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: "",
        TRACEBRIDGE_DATA_DIR: dataDir,
        TRACEBRIDGE_CLIENT_ID: clientId,
        TRACEBRIDGE_CLIENT_SECRET: clientSecret,
        TRACEBRIDGE_WEBHOOK_TICK_MS: "100",
        ...options.env
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let stdout = ""
  child.stdout!.on("data", (chunk) => (stdout += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const baseUrl = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
  for (let attempt = 0;; attempt++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}: ${output}`)
    if (await fetch(`${baseUrl}/healthz`).then((r) => r.ok, () => false)) break
    if (attempt > 300) {
      await stop()
      throw new Error(`the server did not answer /healthz: ${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { baseUrl, clientId, clientSecret, stdout: () => stdout, shiftClock: () => child.kill("SIGUSR2"), stop }
}

/** A `fetch` that records every request and answer it passes on. */
export const recordingFetch = () => {
  const log: Array<{
    readonly method: string
    readonly path: string
    readonly headers: Headers
    readonly body: string
    status: number
    retryAfter: string | null
  }> = []
  const fetch = async (request: Request): Promise<Response> => {
    const entry = {
      method: request.method,
      path: new URL(request.url).pathname,
      headers: new Headers(request.headers),
      body: request.method === "GET" ? "" : await request.clone().text(),
      status: 0,
      retryAfter: null as string | null
    }
    log.push(entry)
    const response = await globalThis.fetch(request)
    entry.status = response.status
    entry.retryAfter = response.headers.get("retry-after")
    return response
  }
  return { log, fetch }
}

/** Links a sandbox connection with plain fetch; its id and connection token. */
export const linkSandbox = async (server: TestServer, accessToken: string) => {
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
      body: JSON.stringify(body)
    })
    return (await response.json()) as any
  }
  const created = await post("/v1/sandbox/public_token/create", { provider: "provider_a", state: "CO" })
  const exchanged = await post("/v1/link/token/exchange", { public_token: created.data.public_token })
  return exchanged.data as { connection_id: string; connection_token: string }
}
