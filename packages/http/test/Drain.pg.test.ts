/**
 * A node drained on Postgres (issue #32): two nodes of the built server on one schema; node A gets
 * SIGTERM with a slow request and webhook deliveries in flight. A's `/readyz` answers 503
 * `draining` at once while B's stays 200, A's slow request completes with 200, A exits 0, and
 * every event queued on either node is delivered (by A before it stopped, or by B), none lost.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { randomBytes } from "node:crypto"
import type { Answer, NodeSpec, RunningNode } from "./support/Nodes.js"
import { nodeSpec, removeData, start, tail } from "./support/Nodes.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { sleep, until } from "./support/Process.js"
import { receiver } from "./support/Receiver.js"

const url = testDatabaseUrl("Drain.pg.test.ts")

const CLIENT_ID = "tb_client_drain"
const CLIENT_SECRET = `drain-${randomBytes(12).toString("hex")}`

const scope = Effect.runSync(Scope.make())
let specs: ReadonlyArray<NodeSpec> = []
let nodes: Array<RunningNode> = []
let access = ""

const logs = () => nodes.map((n) => tail(n, 20)).join("\n\n")
const show = (answer: Answer) => `${answer.status} ${answer.text.slice(0, 400)}`

beforeAll(async () => {
  const database = await Effect.runPromise(Scope.extend(freshSchema(url, "drain"), scope))
  const env = {
    DATABASE_URL: database,
    TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    TRACEBRIDGE_CLIENT_ID: CLIENT_ID,
    TRACEBRIDGE_CLIENT_SECRET: CLIENT_SECRET,
    TRACEBRIDGE_WEBHOOK_TICK_MS: "100",
    TRACEBRIDGE_DRAIN_SECONDS: "2",
    TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS: "5",
    TRACEBRIDGE_RATE_LIMIT_RATE: "1000000",
    TRACEBRIDGE_RATE_LIMIT_BURST: "1000000"
  }
  specs = [await nodeSpec("A", env), await nodeSpec("B", env)]
  nodes = [await start(specs[0]!)]
  nodes.push(await start(specs[1]!))
  const token = await nodes[0]!.call("POST", "/v1/oauth/token", {
    json: { grant_type: "client_credentials", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }
  })
  assert.strictEqual(token.status, 200, show(token))
  access = (token.body as { readonly access_token: string }).access_token
}, 60_000)

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  for (const spec of specs) removeData(spec)
}, 30_000)

describe("a node drained on Postgres", () => {
  it(
    "turns 503 draining at once, finishes its slow request, and no delivery is lost across the two nodes",
    async () => {
      const [a, b] = nodes as [RunningNode, RunningNode]
      const call = (node: RunningNode, method: "GET" | "POST" | "PUT", path: string, json?: unknown) =>
        node.call(method, path, { token: access, ...(json === undefined ? {} : { json }) })
      const hooks = await Effect.runPromise(Scope.extend(receiver([200]), scope))
      hooks.delayMs = 300
      const webhook = await call(a, "POST", "/v1/webhooks", { url: hooks.url, events: ["lab_result.received"] })
      assert.strictEqual(webhook.status, 201, show(webhook))
      const webhookId = (webhook.body as { data: { id: string } }).data.id
      const pub = await call(a, "POST", "/v1/sandbox/public_token/create", { provider: "provider_a", state: "CO" })
      const exchanged = await call(a, "POST", "/v1/link/token/exchange", {
        public_token: (pub.body as { data: { public_token: string } }).data.public_token
      })
      assert.strictEqual(exchanged.status, 200, show(exchanged))
      const connection = (exchanged.body as { data: { connection_id: string } }).data.connection_id
      // a second connection, slow, for the request in flight on A
      const pub2 = await call(a, "POST", "/v1/sandbox/public_token/create", { provider: "provider_a", state: "CO" })
      const slow = (
        (await call(a, "POST", "/v1/link/token/exchange", {
          public_token: (pub2.body as { data: { public_token: string } }).data.public_token
        })).body as { data: { connection_id: string } }
      ).data.connection_id
      const fault = await call(a, "PUT", `/v1/sandbox/${slow}/faults`, { kind: "slow", delay_ms: 2500 })
      assert.strictEqual(fault.status, 200, show(fault))

      const fired: Array<string> = []
      for (let i = 0; i < 16; i++) {
        const node = i % 2 === 0 ? a : b
        const simulated = await call(node, "POST", `/v1/sandbox/${connection}/simulate`, {
          scenario: "lab_result_received",
          params: {}
        })
        assert.strictEqual(simulated.status, 200, show(simulated))
        fired.push((simulated.body as { data: { event: { id: string } } }).data.event.id)
      }
      await until("a delivery in flight", () => hooks.received.length > 0)

      const inFlight = call(a, "GET", `/v1/connections/${slow}/facilities`)
      await sleep(300)
      const signalled = Date.now()
      const stopped = a.stop(20_000)
      await sleep(200)
      const drained = await a.call("GET", "/readyz")
      assert.strictEqual(drained.status, 503, show(drained))
      assert.deepStrictEqual(drained.body, { status: "unavailable", reason: "draining" })
      const other = await b.call("GET", "/readyz")
      assert.strictEqual(other.status, 200, show(other))

      const answer = await inFlight
      assert.strictEqual(answer.status, 200, `${show(answer)}\n${logs()}`)
      assert.strictEqual(await stopped, 0, logs())
      assert.isBelow(Date.now() - signalled, 2_000 + 2 * 5_000 + 3_000, "within the drain delay and the grace")

      const ids = () => new Set(hooks.received.map((r) => String(r.headers["x-tracebridge-event-id"] ?? "")))
      await until(
        "every event delivered (by A, or by B after A stopped)",
        () => fired.every((id) => ids().has(id)),
        30_000
      )
        .catch((error: unknown) => {
          throw new Error(`${String(error)}; missing ${fired.filter((id) => !ids().has(id)).join(", ")}\n${logs()}`)
        })
      const log = await call(b, "GET", `/v1/webhooks/${webhookId}/deliveries?per_page=100`)
      assert.strictEqual(log.status, 200, show(log))
      const deliveries = (log.body as { data: ReadonlyArray<{ event_id: string; status: string }> }).data
      assert.deepStrictEqual(deliveries.map((d) => d.event_id).sort(), [...fired].sort(), "one delivery per event")
      for (const delivery of deliveries) assert.strictEqual(delivery.status, "succeeded", JSON.stringify(delivery))
    },
    90_000
  )
})
