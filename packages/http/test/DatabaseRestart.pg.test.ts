/**
 * The database goes away and comes back (issue #32): two nodes of the built server on Postgres,
 * under traffic on both, and the cluster stopped for about 10 s, then started again.
 *
 * - while it is down, `/readyz` answers 503 `database` and requests answer 503 `api_error` /
 *   `service_unavailable` with `Retry-After`, within the database wait: never a 500, never a hang;
 * - after it returns, both nodes are ready again within 10 s, with no restart, and their workers
 *   deliver again;
 * - no write that answered 201 is lost, and every event queued (an answer of 200) is delivered.
 *
 * It stops the local cluster with `pg_ctlcluster`, so it runs as root on the machine that holds
 * the cluster of `TEST_DATABASE_URL` (as CI does); elsewhere it is skipped, saying why.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import type { Answer, NodeSpec, RunningNode } from "./support/Nodes.js"
import { nodeSpec, removeData, start, tail } from "./support/Nodes.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { sleep, until } from "./support/Process.js"
import type { Receiver } from "./support/Receiver.js"
import { receiver } from "./support/Receiver.js"

const url = testDatabaseUrl("DatabaseRestart.pg.test.ts")

/** The local cluster serving `url` (`pg_lsclusters`), or why this test cannot stop and start it. */
const cluster = ((): { readonly version: string; readonly name: string } | string => {
  if (process.getuid?.() !== 0) return "it must run as root to stop and start the cluster (pg_ctlcluster)"
  const target = new URL(url)
  if (!["127.0.0.1", "localhost", "::1", "[::1]"].includes(target.hostname)) {
    return `TEST_DATABASE_URL's host ${target.hostname} is not this machine`
  }
  const port = target.port === "" ? "5432" : target.port
  let listed: string
  try {
    listed = execFileSync("pg_lsclusters", ["-h"], { encoding: "utf8" })
  } catch {
    return "pg_lsclusters is not installed (Debian's postgresql-common)"
  }
  for (const line of listed.split("\n")) {
    const [version, name, p, status] = line.trim().split(/\s+/)
    if (p === port && status === "online" && version !== undefined && name !== undefined) return { version, name }
  }
  return `no online cluster on port ${port} in pg_lsclusters`
})()
if (typeof cluster === "string") console.warn(`DatabaseRestart.pg.test.ts skipped: ${cluster}`)

const ctl = (action: "start" | "stop") => {
  if (typeof cluster === "string") throw new Error(cluster)
  execFileSync("pg_ctlcluster", [cluster.version, cluster.name, action], { stdio: "ignore" })
}

/** Whether the cluster is running (`pg_ctlcluster … status` exits 0). */
const online = () => {
  if (typeof cluster === "string") return false
  try {
    execFileSync("pg_ctlcluster", [cluster.version, cluster.name, "status"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const CLIENT_ID = "tb_client_restart"
const CLIENT_SECRET = `restart-${randomBytes(12).toString("hex")}`
/** The database wait of each node: a request that cannot have the database answers 503 after it. */
const WAIT_MS = 1500

const scope = Effect.runSync(Scope.make())
let specs: ReadonlyArray<NodeSpec> = []
let nodes: Array<RunningNode> = []
let hooks: Receiver
let access = ""

const logs = () => nodes.map((n) => tail(n, 20)).join("\n\n")
const show = (answer: Answer) => `${answer.status} ${answer.text.slice(0, 400)}`

describe.skipIf(typeof cluster === "string")("Postgres stopped for 10 s under traffic on two nodes", () => {
  beforeAll(async () => {
    const database = await Effect.runPromise(Scope.extend(freshSchema(url, "restart"), scope))
    hooks = await Effect.runPromise(Scope.extend(receiver([200]), scope))
    const env = {
      DATABASE_URL: database,
      TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      TRACEBRIDGE_CLIENT_ID: CLIENT_ID,
      TRACEBRIDGE_CLIENT_SECRET: CLIENT_SECRET,
      TRACEBRIDGE_WEBHOOK_TICK_MS: "100",
      TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS: "2",
      TRACEBRIDGE_DATABASE_WAIT_MS: String(WAIT_MS),
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
    // whatever happened, the cluster is left running for the other suites
    if (typeof cluster !== "string" && !online()) ctl("start")
    await Promise.all(nodes.map((n) => n.stop()))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    for (const spec of specs) removeData(spec)
  }, 30_000)

  it("answers 503 while it is down, recovers by itself within 10 s, and loses no 201 and no delivery", async () => {
    const [a, b] = nodes as [RunningNode, RunningNode]
    const call = (node: RunningNode, method: "GET" | "POST", path: string, json?: unknown) =>
      node.call(method, path, { token: access, timeoutMs: 15_000, ...(json === undefined ? {} : { json }) })
    const pub = await call(a, "POST", "/v1/sandbox/public_token/create", { provider: "provider_a", state: "CO" })
    const exchanged = await call(a, "POST", "/v1/link/token/exchange", {
      public_token: (pub.body as { data: { public_token: string } }).data.public_token
    })
    assert.strictEqual(exchanged.status, 200, show(exchanged))
    const connection = (exchanged.body as { data: { connection_id: string } }).data.connection_id
    const subscribed = await call(a, "POST", "/v1/webhooks", { url: hooks.url, events: ["lab_result.received"] })
    assert.strictEqual(subscribed.status, 201, show(subscribed))

    // Traffic on both nodes: a write that answers 201 (a webhook subscription, to nowhere) and an
    // event queued for delivery, in turn, until told to stop.
    const created: Array<{ readonly id: string; readonly node: string }> = []
    const queued: Array<string> = []
    const answers: Array<
      {
        readonly node: string
        readonly status: number
        readonly ms: number
        readonly at: number
        readonly retryAfter?: string
        readonly code?: string
      }
    > = []
    let running = true
    const traffic = async (node: RunningNode) => {
      for (let i = 0; running; i++) {
        const started = Date.now()
        const answer = i % 2 === 0
          ? await call(node, "POST", "/v1/webhooks", {
            url: "http://127.0.0.1:9/nowhere",
            events: ["transfer.arrived"]
          })
          : await call(node, "POST", `/v1/sandbox/${connection}/simulate`, {
            scenario: "lab_result_received",
            params: {}
          })
        const body = answer.body as
          | { data?: { id?: string; event?: { id: string } | null }; error?: { code: string } }
          | null
        answers.push({
          node: node.spec.name,
          status: answer.status,
          ms: Date.now() - started,
          at: started,
          ...(answer.headers["retry-after"] === undefined ? {} : { retryAfter: String(answer.headers["retry-after"]) }),
          ...(body?.error === undefined ? {} : { code: body.error.code })
        })
        if (answer.status === 201 && body?.data?.id !== undefined) {
          created.push({ id: body.data.id, node: node.spec.name })
        }
        if (answer.status === 200 && body?.data?.event) queued.push(body.data.event.id)
        await sleep(100)
      }
    }
    const loops = Promise.all([traffic(a), traffic(b)])
    await sleep(1500)

    const stopped = Date.now()
    ctl("stop")
    // while it is down: /readyz 503 database on both, /livez 200
    const down: Array<Answer> = []
    while (Date.now() - stopped < 10_000) {
      for (const node of [a, b]) {
        const started = Date.now()
        const ready = await node.call("GET", "/readyz", { timeoutMs: 10_000 })
        assert.isBelow(Date.now() - started, 5_000, `/readyz held on ${node.spec.name}`)
        down.push(ready)
        assert.strictEqual((await node.call("GET", "/livez")).status, 200)
      }
      await sleep(500)
    }
    const downUntil = Date.now()
    ctl("start")
    const back = Date.now()
    const recovered = await Promise.all(
      [a, b].map((node) =>
        until(
          `${node.spec.name} ready again`,
          () => node.call("GET", "/readyz", { timeoutMs: 3_000 }).then((r) => r.status === 200, () => false),
          10_000
        )
      )
    )
    await sleep(1500)
    running = false
    await loops

    assert.isTrue(a.alive() && b.alive(), `no node restarted or died\n${logs()}`)
    // /readyz said database while it was down (the first probe may still have caught a connection)
    const laterDown = down.slice(2)
    assert.isAbove(laterDown.length, 4)
    for (const ready of laterDown) {
      assert.strictEqual(ready.status, 503, show(ready))
      assert.deepStrictEqual(ready.body, { status: "unavailable", reason: "database" })
    }
    // every answer was a success or a 503 with Retry-After, and none was held past the wait
    const refused = answers.filter((x) => x.status === 503)
    assert.isAbove(refused.length, 4, `requests while it was down: ${JSON.stringify(answers.slice(-5))}`)
    for (const answer of answers) {
      assert.include([200, 201, 503], answer.status, `${JSON.stringify(answer)}\n${logs()}`)
      if (answer.status === 503) {
        assert.strictEqual(answer.code, "service_unavailable", JSON.stringify(answer))
        assert.isAtLeast(Number(answer.retryAfter), 1, JSON.stringify(answer))
        assert.isBelow(answer.ms, WAIT_MS + 3_000, `held past the wait: ${JSON.stringify(answer)}`)
      }
    }
    // both nodes answered writes again after it came back
    for (const name of ["A", "B"]) {
      assert.isTrue(
        answers.some((x) => x.node === name && x.at > back && (x.status === 201 || x.status === 200)),
        `node ${name} served again after the database came back`
      )
    }
    assert.isTrue(answers.some((x) => x.at > stopped && x.at < downUntil && x.status === 503))
    assert.isBelow(Math.max(...recovered), 10_000)

    // no 201 lost: every subscription answered 201 is there, on either node
    for (const [i, { id }] of created.entries()) {
      const got = await call(i % 2 === 0 ? a : b, "GET", `/v1/webhooks/${id}`)
      assert.strictEqual(got.status, 200, `webhook ${id} answered 201 and is gone: ${show(got)}`)
    }
    // the workers resumed: every event queued (before, during or after) reaches the receiver
    await until("every queued event delivered", () => {
      const delivered = new Set(hooks.received.map((r) => String(r.headers["x-tracebridge-event-id"])))
      return queued.every((id) => delivered.has(id))
    }, 30_000).catch((error) => {
      const delivered = new Set(hooks.received.map((r) => String(r.headers["x-tracebridge-event-id"])))
      throw new Error(`${error}: missing ${queued.filter((id) => !delivered.has(id)).join(", ")}\n${logs()}`)
    })
    assert.isAbove(queued.length, 2)
  }, 120_000)
})
