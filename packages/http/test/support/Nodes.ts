/**
 * Several API processes of the built server (`dist/main.js`) on one database, as a deployment runs
 * them behind a load balancer: each node has its own port and data folder and the same environment
 * otherwise. A node can be stopped with SIGTERM and started again on the same port. Requests go out
 * on a fresh socket each (no keep-alive pool), so a restarted node is never sent a stale connection.
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, main, until } from "./Process.js"

/** A JSON answer: the status, the headers, the raw text and the parsed body (null when empty or not JSON). */
export interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
  readonly body: unknown
}

export interface RequestOptions {
  readonly token?: string
  readonly json?: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** Milliseconds before the request is abandoned (default 20 s). */
  readonly timeoutMs?: number
}

/** Sends one request to `base` on a socket of its own and reads the whole answer. */
export const request = (
  base: string,
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: RequestOptions = {}
): Promise<Answer> =>
  new Promise<Answer>((resolve, reject) => {
    const payload = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json), "utf8")
    const req = http.request(`${base}${path}`, {
      method,
      agent: false,
      headers: {
        accept: "application/json",
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": payload.length }),
        ...options.headers
      },
      timeout: options.timeoutMs ?? 20_000
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("error", reject)
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let body: unknown = null
        try {
          body = text === "" ? null : JSON.parse(text)
        } catch {
          // not JSON: the text is kept
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body })
      })
    })
    req.on("timeout", () =>
      req.destroy(new Error(`${method} ${path}: no answer within ${options.timeoutMs ?? 20_000} ms`)))
    req.on("error", reject)
    req.end(payload)
  })

/** One API node: where it listens and with what; `start` runs it (again) on that port. */
export interface NodeSpec {
  readonly name: string
  readonly port: number
  readonly url: string
  readonly dataDir: string
  readonly env: Readonly<Record<string, string>>
}

/** A running node process. */
export interface RunningNode {
  readonly spec: NodeSpec
  readonly child: ChildProcess
  /** Everything it wrote to stdout and stderr so far. */
  readonly output: () => string
  readonly alive: () => boolean
  /**
   * SIGTERM, then its exit code once it has exited (SIGKILL, and null, if it takes longer than `ms`).
   * Called again, it answers the first call's result.
   */
  readonly stop: (ms?: number) => Promise<number | null>
  readonly call: (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    options?: RequestOptions
  ) => Promise<Answer>
}

/** A node's place: a free port and a fresh data folder, with `env` on top of the test's environment. */
export const nodeSpec = async (name: string, env: Readonly<Record<string, string>>): Promise<NodeSpec> => {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), `tb-node-${name.toLowerCase()}-`))
  return { name, port, url: `http://127.0.0.1:${port}`, dataDir, env }
}

/** Removes a node's data folder (once it is stopped for good). */
export const removeData = (spec: NodeSpec) => rmSync(spec.dataDir, { recursive: true, force: true })

/** Request log lines and stack frames: left out of `tail`. */
const noise = /http\.(span|status|method|url)|Sent HTTP response|^\s+at |^\s+\.\.\. \d+ lines matching/

/** The end of a node's output, for failure messages (request log lines and stack frames left out). */
export const tail = (node: RunningNode, lines = 30) =>
  `node ${node.spec.name} (${node.alive() ? "running" : `exited ${node.child.exitCode ?? node.child.signalCode}`}):\n` +
  node.output().split("\n").filter((l) => !noise.test(l)).slice(-lines).join("\n")

/** Starts `dist/main.js` as the node `spec` describes; resolves once it answers `/healthz`. */
export const start = async (spec: NodeSpec, readyMs = 30_000): Promise<RunningNode> => {
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(spec.port),
      TRACEBRIDGE_DATA_DIR: spec.dataDir,
      // Node times a request's headers from when the connection is taken in. A node busy in a
      // backfill runs long synchronous turns (SQLite writes, page mapping); on a loaded two-core CI
      // machine one turn took over 10 s, and a connection taken in just before it was answered 408
      // although its request had been sent whole. These tests are not about slow clients
      // (`Server.test.ts` and `Main.test.ts` are), so they give the headers a minute.
      TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS: "60",
      ...spec.env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const alive = () => child.exitCode === null && child.signalCode === null
  const terminate = async (ms: number): Promise<number | null> => {
    if (!alive()) return exited
    child.kill("SIGTERM")
    let timer: ReturnType<typeof setTimeout> | undefined
    const killed = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        child.kill("SIGKILL")
        resolve(null)
      }, ms)
    })
    const code = await Promise.race([exited, killed])
    clearTimeout(timer)
    await exited
    return code
  }
  let stopping: Promise<number | null> | undefined
  const stop = (ms = 15_000): Promise<number | null> => (stopping ??= terminate(ms))
  const node: RunningNode = {
    spec,
    child,
    output: () => output,
    alive,
    stop,
    call: (method, path, options) => request(spec.url, method, path, options)
  }
  try {
    await until(`node ${spec.name} to answer /healthz`, async () => {
      if (!alive()) throw new Error(`node ${spec.name} exited early:\n${output}`)
      return request(spec.url, "GET", "/healthz", { timeoutMs: 2_000 }).then((r) => r.status === 200, () => false)
    }, readyMs)
  } catch (error) {
    await stop(2_000)
    throw error
  }
  return node
}
