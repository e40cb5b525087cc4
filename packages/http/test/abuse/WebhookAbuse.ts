/**
 * Webhook delivery is bounded in every dimension (issue #28, `docs/security.md`), against the built
 * server: a receiver that answers 200 with a 600 MB body (streamed only as fast as it is read) does
 * not crash the server, which reads 64 KB of it, records the delivery and stays healthy; a
 * receiver of one organisation trickling a byte a second does not hold up another organisation's
 * delivery; and SIGTERM exits within the grace period (2 s here) and a little, leaving the
 * trickling attempts abandoned and due again, for the next start to retry.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Hostile } from "../support/HostileReceiver.js"
import { startHostile } from "../support/HostileReceiver.js"
import { tail } from "../support/Nodes.js"
import type { AbuseServer, Suite } from "./Harness.js"
import { startServer } from "./Harness.js"

/** The grace period the harness gives the server (`TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS`). */
const GRACE_MS = 2_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 10_000) => {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(50)
  }
}

interface Delivery {
  readonly status: string
  readonly attempts: ReadonlyArray<{ readonly status_code: number | null; readonly error: string | null }>
}

/** A receiver that answers 200 at once and notes when each request arrived. */
const quickReceiver = () =>
  new Promise<{ url: string; arrivals: Array<number>; close: () => Promise<void> }>((resolve) => {
    const arrivals: Array<number> = []
    const server = http.createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        arrivals.push(Date.now())
        res.writeHead(200, { "content-type": "text/plain" }).end("ok")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        url: `http://127.0.0.1:${port}/hooks`,
        arrivals,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

export const suite: Suite = (backend) =>
  describe.sequential(`webhook delivery is bounded on ${backend}`, () => {
    let server: AbuseServer
    const hostiles: Array<Hostile> = []
    beforeAll(async () => {
      server = await startServer(backend, "webhooks")
    }, 60_000)
    afterAll(async () => {
      await Promise.all(hostiles.map((h) => h.close()))
      await server?.close()
    }, 30_000)

    const ok = (what: string, answer: { status: number; text: string }, status = 200) =>
      assert.strictEqual(answer.status, status, `${what}: ${answer.text}\n${tail(server.node())}`)

    /** An organisation's sandbox connection and a subscription of `url`. */
    const setUp = async (token: string, url: string) => {
      const created = await server.call("POST", "/v1/sandbox/public_token/create", {
        token,
        json: { provider: "provider_a", state: "CO" }
      })
      ok("public token", created)
      const exchanged = await server.call("POST", "/v1/link/token/exchange", {
        token,
        json: { public_token: (created.body as { data: { public_token: string } }).data.public_token }
      })
      ok("exchange", exchanged)
      const connection = (exchanged.body as { data: { connection_id: string } }).data.connection_id
      const subscribed = await server.call("POST", "/v1/webhooks/", {
        token,
        json: { url, events: ["lab_result.received"] }
      })
      ok("subscribe", subscribed, 201)
      const webhook = (subscribed.body as { data: { id: string } }).data.id
      const simulate = async () => {
        const r = await server.call("POST", `/v1/sandbox/${connection}/simulate`, {
          token,
          json: { scenario: "lab_result_received", params: {} }
        })
        ok("simulate", r)
      }
      const deliveries = async () => {
        const r = await server.call("GET", `/v1/webhooks/${webhook}/deliveries?per_page=100`, { token })
        ok("deliveries", r)
        return (r.body as { data: Array<Delivery> }).data
      }
      return { simulate, deliveries }
    }

    /** A second organisation's access token, made with the operator CLI. */
    const otherOrganisation = async () => {
      const org = await server.cli(["create-org", "B"])
      assert.strictEqual(org.code, 0, org.stderr)
      const orgId = org.stdout.trim().split("\t")[0] ?? ""
      const client = await server.cli(["create-client", orgId])
      assert.strictEqual(client.code, 0, client.stderr)
      const clientId = /client_id=(\S+)/.exec(client.stdout)?.[1] ?? ""
      const clientSecret = /client_secret=(\S+)/.exec(client.stdout)?.[1] ?? ""
      const token = await server.call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }
      })
      ok("token of B", token)
      return (token.body as { access_token: string }).access_token
    }

    it(
      "a receiver answering 200 with a 600 MB body: 64 KB read, the delivery recorded, the server healthy",
      async () => {
        const huge = await startHostile({ mode: "huge", totalBytes: 600 * 1024 * 1024 })
        hostiles.push(huge)
        const org = await setUp(await server.accessToken(), huge.url)
        await org.simulate()
        await until("the delivery to be recorded", async () => (await org.deliveries())[0]?.status === "succeeded")
        const [delivery] = await org.deliveries()
        assert.deepStrictEqual(delivery?.attempts.map((a) => [a.status_code, a.error]), [[200, null]])
        // Streamed only as fast as it is read: buffering it would have sent all 600 MB.
        assert.isBelow(huge.bytesSent, 64 * 1024 * 1024, `sent ${huge.bytesSent} bytes`)
        await until("the connection to be dropped", () => huge.open === 0, 5_000)
        assert.isTrue(server.node().alive(), tail(server.node()))
        ok("healthz", await server.call("GET", "/healthz"))
        ok("an API call", await server.call("GET", "/v1/connections", { token: await server.accessToken() }))
      },
      30_000
    )

    it(
      "a trickling receiver of one organisation never delays another's; SIGTERM exits within the grace period, the attempt left to retry",
      async () => {
        const trickle = await startHostile({ mode: "trickle" })
        hostiles.push(trickle)
        const quick = await quickReceiver()
        try {
          // Both organisations set up first (the CLI is slow on a busy machine): the trickling
          // attempts must still be in flight, within their 10 s, at SIGTERM.
          const a = await setUp(await server.accessToken(), trickle.url)
          const b = await setUp(await otherOrganisation(), quick.url)
          for (let i = 0; i < 10; i++) await a.simulate()
          await until("the trickling attempts to start", () => trickle.open >= 4, 5_000)

          const sent = Date.now()
          await b.simulate()
          await until("the other organisation's delivery", () => quick.arrivals.length === 1, 5_000)
          assert.isBelow(quick.arrivals[0]! - sent, 3_000)
          assert.isAbove(trickle.open, 0, "the trickling attempts are still in flight")

          const signalled = Date.now()
          const code = await server.node().stop(15_000)
          const took = Date.now() - signalled
          assert.strictEqual(code, 0, tail(server.node()))
          assert.isBelow(took, GRACE_MS + 2_500, `exited ${took} ms after SIGTERM`)
          await until("the trickling connections to be dropped", () => trickle.open === 0, 2_000)

          // The abandoned attempts are recorded, the deliveries pending and due again: the next
          // start retries them at once.
          const before = trickle.requests
          await server.restart()
          const deliveries = await a.deliveries()
          assert.strictEqual(deliveries.length, 10)
          const abandoned = deliveries.filter((d) => d.attempts.some((t) => t.error?.startsWith("abandoned") === true))
          assert.isAtLeast(abandoned.length, 1, JSON.stringify(deliveries))
          for (const d of deliveries) assert.strictEqual(d.status, "pending", JSON.stringify(d))
          await until("the abandoned attempts to be retried", () => trickle.requests > before, 5_000)
        } finally {
          await quick.close()
        }
      },
      30_000
    )
  })
