/**
 * Drain on shutdown (issue #32): the built server (`dist/main.js`) with a slow request in flight
 * gets SIGTERM. `/readyz` answers 503 `draining` at once (while `/livez` still answers), the slow
 * request completes with 200, and the process exits 0 within the drain delay and the grace period.
 */
import { assert, describe, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { freePort, sleep, startMain, until } from "./support/Process.js"

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
  return { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text) }
}

describe("Drain", () => {
  it("turns /readyz 503 on SIGTERM while a slow request in flight completes with 200", async () => {
    const port = await freePort()
    const { child, exited, output } = startMain({
      PORT: String(port),
      TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      TRACEBRIDGE_DRAIN_SECONDS: "2",
      TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS: "10"
    }, "tb-drain-")
    const api = `http://127.0.0.1:${port}`
    try {
      await until("the server to be ready", async () => {
        if (child.exitCode !== null) throw new Error(`the server exited early:\n${output()}`)
        return fetch(`${api}/readyz`).then((r) => r.ok, () => false)
      }, 20_000)
      await until("the printed credentials", () => /TRACEBRIDGE_CLIENT_SECRET=\S+/.test(output()))
      const token = await json(api, "POST", "/v1/oauth/token", undefined, {
        grant_type: "client_credentials",
        client_id: /TRACEBRIDGE_CLIENT_ID=(\S+)/.exec(output())![1]!,
        client_secret: /TRACEBRIDGE_CLIENT_SECRET=(\S+)/.exec(output())![1]!
      })
      assert.strictEqual(token.status, 200, JSON.stringify(token.body))
      const access = token.body.access_token as string
      const pub = await json(api, "POST", "/v1/sandbox/public_token/create", access, {
        provider: "provider_a",
        state: "CO"
      })
      const exchanged = await json(api, "POST", "/v1/link/token/exchange", access, {
        public_token: pub.body.data.public_token
      })
      assert.strictEqual(exchanged.status, 200, JSON.stringify(exchanged.body))
      const connection = exchanged.body.data.connection_id as string
      const fault = await json(api, "PUT", `/v1/sandbox/${connection}/faults`, access, { kind: "slow", delay_ms: 2500 })
      assert.strictEqual(fault.status, 200, JSON.stringify(fault.body))

      const inFlight = json(api, "GET", `/v1/connections/${connection}/facilities`, access)
      await sleep(400)
      const signalled = Date.now()
      child.kill("SIGTERM")
      await sleep(200)
      const ready = await json(api, "GET", "/readyz")
      assert.strictEqual(ready.status, 503, JSON.stringify(ready.body))
      assert.deepStrictEqual(ready.body, { status: "unavailable", reason: "draining" })
      assert.strictEqual(ready.headers.get("cache-control"), "no-store")
      assert.strictEqual((await json(api, "GET", "/livez")).status, 200)

      const answer = await inFlight
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      assert.isAbove(answer.body.data.length, 0)
      assert.strictEqual(await exited, 0, output())
      // the drain delay (2 s), then the rest closes; well within the grace period
      assert.isAtLeast(Date.now() - signalled, 1_900)
      assert.isBelow(Date.now() - signalled, 10_000)
      assert.include(output(), "draining")
    } finally {
      child.kill("SIGKILL")
    }
  }, 40_000)
})
