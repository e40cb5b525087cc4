// The built Tracebridge server (`packages/http/dist/main.js`) as a child process, signed in with
// the credentials it prints on first start, and a linked sandbox connection.
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort, start, until } from "./proc.mjs"

export const root = fileURLToPath(new URL("../..", import.meta.url))
const main = join(root, "packages", "http", "dist", "main.js")
/** The operator CLI (`tracebridge-admin`), run against the same database as the server. */
export const cli = join(root, "packages", "http", "dist", "cli.js")
// Extra node flags for the server only, e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"
// to profile a row (node refuses --cpu-prof in NODE_OPTIONS).
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "")

/** JSON over fetch; `body` is sent as JSON when given. */
export const call = async (api, method, path, token, body, headers = {}) => {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  let json = null
  try {
    json = text === "" ? null : JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, text, body: json }
}

export const expect = (answer, status, what) => {
  if (answer.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${answer.status}: ${answer.text.slice(0, 500)}`)
  }
  return answer
}

/**
 * Spawns the server on a free port with a fresh data folder, the rate limiter on but never
 * refusing, and `env` on top (e.g. `DATABASE_URL` for Postgres). Resolves once `/healthz` answers: no sign-in, no connection.
 */
export const startServer = async (env = {}) => {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), "tb-bench-"))
  const encryptionKey = env.TRACEBRIDGE_ENCRYPTION_KEY ?? randomBytes(32).toString("base64")
  const proc = start(process.execPath, [...serverNodeArgs, main], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: "production",
      DATABASE_URL: "",
      HOST: "127.0.0.1",
      PORT: String(port),
      TRACEBRIDGE_DATA_DIR: dataDir,
      TRACEBRIDGE_ENCRYPTION_KEY: encryptionKey,
      TRACEBRIDGE_RATE_LIMIT_RATE: "1000000000",
      TRACEBRIDGE_RATE_LIMIT_BURST: "1000000000",
      ...env
    }
  })
  const api = `http://127.0.0.1:${port}`
  const stop = async (graceMs) => {
    await proc.stop(graceMs)
    rmSync(dataDir, { recursive: true, force: true })
  }
  /** For error messages: whether the server still runs, and the end of its output. */
  const describe = () =>
    `server ${proc.alive() ? "still running" : `exited (${proc.child.exitCode ?? proc.child.signalCode})`}; ` +
    `its last output (request log lines left out):\n${
      proc.output().split("\n").filter((l) => !/http\.(span|status|method|url)|Sent HTTP response/.test(l)).slice(-30)
        .join("\n")
    }`
  try {
    await until("the server to answer /healthz", async () => {
      if (!proc.alive()) throw new Error(`the server exited early:\n${proc.output()}`)
      return fetch(`${api}/healthz`).then((r) => r.ok, () => false)
    }, 30_000)
  } catch (error) {
    await stop()
    throw error
  }
  return { api, port, proc, stop, describe, encryptionKey, dataDir }
}

/**
 * Starts the server (`startServer`), signs in with the credentials it prints on first start and
 * links a provider_a sandbox connection in CO.
 */
export const startApi = async (env = {}) => {
  const server = await startServer(env)
  const { api, proc, stop } = server
  try {
    await until("the printed credentials", () => /TRACEBRIDGE_CLIENT_SECRET=\S+/.test(proc.output()), 10_000)
    const client_id = /TRACEBRIDGE_CLIENT_ID=(\S+)/.exec(proc.output())[1]
    const client_secret = /TRACEBRIDGE_CLIENT_SECRET=(\S+)/.exec(proc.output())[1]
    const token = expect(
      await call(api, "POST", "/v1/oauth/token", undefined, {
        grant_type: "client_credentials",
        client_id,
        client_secret
      }),
      200,
      "POST /v1/oauth/token"
    ).body.access_token
    const pub = expect(
      await call(api, "POST", "/v1/sandbox/public_token/create", token, { provider: "provider_a", state: "CO" }),
      200,
      "POST /v1/sandbox/public_token/create"
    )
    const exchanged = expect(
      await call(api, "POST", "/v1/link/token/exchange", token, { public_token: pub.body.data.public_token }),
      200,
      "POST /v1/link/token/exchange"
    )
    const connection = exchanged.body.data.connection_id
    const facilities = expect(
      await call(api, "GET", `/v1/connections/${connection}/facilities`, token),
      200,
      "GET facilities"
    ).body.data.map((f) => f.id)
    return { ...server, token, connection, facilities }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The packages path of row 1 and 7 on the facility with the most packages (per_page=100). */
export const packagesPath = async (server) => {
  let best
  for (const facility of server.facilities) {
    const path = `/v1/connections/${server.connection}/facilities/${facility}/packages?per_page=100`
    const answer = expect(await call(server.api, "GET", path, server.token), 200, `GET ${path}`)
    const count = answer.body.data.length
    if (best === undefined || count > best.count) best = { path, count, answer }
  }
  return best
}
