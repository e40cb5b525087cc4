/**
 * Graceful shutdown, as an operator's process manager does it: the built server (`dist/main.js`)
 * gets SIGTERM while a request and webhook deliveries are in flight. The request finishes, the
 * worker completes the attempt it started, the process exits 0, and a restart on the same data
 * folder delivers every queued event (each exactly once, none left waiting for a lease).
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, main, sleep, until } from "./support/Process.js"

interface Server {
  readonly api: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Starts `dist/main.js` on a free port with `env`, resolved once it answers `/healthz`. */
const start = async (env: Record<string, string>): Promise<Server> => {
  const port = await freePort()
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, DATABASE_URL: "", HOST: "127.0.0.1", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const api = `http://127.0.0.1:${port}`
  await until("the server to answer", async () => {
    if (child.exitCode !== null) throw new Error(`the server exited early:\n${output}`)
    return fetch(`${api}/healthz`).then((r) => r.ok, () => false)
  }, 20_000)
  return { api, child, output: () => output, exited }
}

const json = async (api: string, method: string, path: string, token?: string, body?: unknown) => {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? null : JSON.parse(text) }
}

/** Reads the credentials `npm start` prints on first start, takes a token and links a sandbox connection. */
const signIn = async (server: Server) => {
  await until("the printed credentials", () => /TRACEBRIDGE_CLIENT_SECRET=\S+/.test(server.output()))
  const client_id = /TRACEBRIDGE_CLIENT_ID=(\S+)/.exec(server.output())![1]!
  const client_secret = /TRACEBRIDGE_CLIENT_SECRET=(\S+)/.exec(server.output())![1]!
  const token = await json(server.api, "POST", "/v1/oauth/token", undefined, {
    grant_type: "client_credentials",
    client_id,
    client_secret
  })
  assert.strictEqual(token.status, 200, JSON.stringify(token.body))
  const access = token.body.access_token as string
  const pub = await json(server.api, "POST", "/v1/sandbox/public_token/create", access, {
    provider: "provider_a",
    state: "CO"
  })
  const exchanged = await json(server.api, "POST", "/v1/link/token/exchange", access, {
    public_token: pub.body.data.public_token
  })
  assert.strictEqual(exchanged.status, 200, JSON.stringify(exchanged.body))
  return { access, connection: exchanged.body.data.connection_id as string }
}

/** A loopback webhook receiver that answers 200 after `delayMs`, recording each event id it was sent. */
const receiver = async (delayMs: number) => {
  const started: Array<string> = []
  const answered: Array<string> = []
  const server = http.createServer((req, res) => {
    const id = String(req.headers["x-tracebridge-event-id"] ?? "")
    started.push(id)
    req.resume()
    req.on("end", () =>
      setTimeout(() => {
        answered.push(id)
        res.writeHead(200).end("ok")
      }, delayMs))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  return { url, started, answered, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const freshEnv = () => ({
  TRACEBRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "tb-shutdown-")),
  TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  TRACEBRIDGE_WEBHOOK_TICK_MS: "100"
})

describe("Shutdown", () => {
  it("finishes an in-flight request on SIGTERM, refuses new connections, and exits 0", async () => {
    const server = await start(freshEnv())
    try {
      const { access, connection } = await signIn(server)
      const facilities = await json(server.api, "GET", `/v1/connections/${connection}/facilities`, access)
      const facility = facilities.body.data[0].id as string
      const fault = await json(server.api, "PUT", `/v1/sandbox/${connection}/faults`, access, {
        kind: "slow",
        delay_ms: 1500
      })
      assert.strictEqual(fault.status, 200, JSON.stringify(fault.body))
      const sent = Date.now()
      const inFlight = json(
        server.api,
        "GET",
        `/v1/connections/${connection}/facilities/${facility}/packages?per_page=3`,
        access
      )
      await sleep(400)
      server.child.kill("SIGTERM")
      await sleep(200)
      const refused = await fetch(`${server.api}/healthz`).then(() => false, () => true)
      const answer = await inFlight
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      assert.strictEqual(answer.body.data.length, 3)
      assert.isAtLeast(Date.now() - sent, 1400)
      assert.isTrue(refused, "a new connection after SIGTERM was accepted")
      assert.strictEqual(await server.exited, 0, server.output())
    } finally {
      server.child.kill("SIGKILL")
    }
  }, 30_000)

  it("cuts a request still running after the grace period, so a hung upstream cannot hold the process", async () => {
    const server = await start({ ...freshEnv(), TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS: "1" })
    try {
      const { access, connection } = await signIn(server)
      const fault = await json(server.api, "PUT", `/v1/sandbox/${connection}/faults`, access, {
        kind: "slow",
        delay_ms: 120_000
      })
      assert.strictEqual(fault.status, 200, JSON.stringify(fault.body))
      const hung = json(server.api, "GET", `/v1/connections/${connection}/facilities`, access).then(
        () => "answered",
        () => "cut"
      )
      await sleep(300)
      const signalled = Date.now()
      server.child.kill("SIGTERM")
      assert.strictEqual(await hung, "cut")
      assert.strictEqual(await server.exited, 0, server.output())
      assert.isBelow(Date.now() - signalled, 10_000)
    } finally {
      server.child.kill("SIGKILL")
    }
  }, 30_000)

  it("lets the webhook worker finish its attempt, and loses no queued delivery across a restart", async () => {
    const env = freshEnv()
    const hooks = await receiver(1000)
    let server = await start(env)
    try {
      const { access, connection } = await signIn(server)
      const subscribed = await json(server.api, "POST", "/v1/webhooks/", access, {
        url: hooks.url,
        events: ["lab_result.received"]
      })
      assert.strictEqual(subscribed.status, 201, JSON.stringify(subscribed.body))
      const webhook = subscribed.body.data.id as string
      const events = 30
      for (let i = 0; i < events; i++) {
        const simulated = await json(server.api, "POST", `/v1/sandbox/${connection}/simulate`, access, {
          scenario: "lab_result_received",
          params: {}
        })
        assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
      }
      await until("an attempt in flight", () => hooks.started.length > 0)
      server.child.kill("SIGTERM")
      assert.strictEqual(await server.exited, 0, server.output())
      // Every attempt that had started was completed: the receiver answered it and the log says so.
      const startedBeforeExit = [...hooks.started]
      assert.deepStrictEqual([...hooks.answered].sort(), [...startedBeforeExit].sort())
      assert.isBelow(startedBeforeExit.length, events, "the test needs deliveries still queued at SIGTERM")

      server = await start(env)
      await until("every queued event delivered", () => new Set(hooks.answered).size === events, 15_000)
      const log = await json(server.api, "GET", `/v1/webhooks/${webhook}/deliveries?per_page=100`, access)
      assert.strictEqual(log.status, 200, JSON.stringify(log.body))
      const deliveries = log.body.data as Array<{ status: string; attempts: Array<{ status_code: number | null }> }>
      assert.strictEqual(deliveries.length, events)
      for (const delivery of deliveries) {
        assert.strictEqual(delivery.status, "succeeded")
        assert.deepStrictEqual(delivery.attempts.map((a) => a.status_code), [200])
      }
      assert.strictEqual(hooks.answered.length, events, "an event was delivered twice")
    } finally {
      server.child.kill("SIGKILL")
      await hooks.close()
    }
  }, 60_000)
})
