/**
 * A backfill whose process is killed (`kill -9`) half way resumes in the next process on the same
 * embedded database from its last stored page, without loss or duplicates: the next process's
 * scheduler takes over a backfill that stored nothing for `TRACEBRIDGE_SYNC_TAKEOVER_SECONDS`, and
 * the feed then holds every object of the facility exactly once, with change sequences 1…n and no
 * gap (a page stored twice would have used more). Runs the built server (`dist/main.js`).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import type { RunningNode } from "./support/Nodes.js"
import { nodeSpec, removeData, start, tail } from "./support/Nodes.js"
import { until } from "./support/Process.js"

const CLIENT_ID = "tb_client_syncresume"
const CLIENT_SECRET = `syncresume-${randomBytes(12).toString("hex")}`

type Status = {
  readonly facilities: ReadonlyArray<{
    readonly facility_id: string
    readonly status: string
    readonly resources: ReadonlyArray<{ readonly status: string }>
  }>
}

const running: Array<RunningNode> = []

afterAll(async () => {
  await Promise.all(running.map((n) => n.stop()))
})

describe("a backfill whose process is killed half way", () => {
  it("resumes in the next process from its last stored page: every object once, no sequence used twice", async () => {
    const spec = await nodeSpec("S", {
      TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      TRACEBRIDGE_CLIENT_ID: CLIENT_ID,
      TRACEBRIDGE_CLIENT_SECRET: CLIENT_SECRET,
      TRACEBRIDGE_SYNC_TAKEOVER_SECONDS: "1"
    })
    try {
      const first = await start(spec)
      running.push(first)
      const token = await first.call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }
      })
      const access = (token.body as { access_token: string }).access_token
      // A node busy backfilling on a loaded two-core machine can take long synchronous turns
      // (SQLite writes, page mapping; issue #35): a read waits for them, so it gets as long as
      // the node gives a request's headers (60 s, support/Nodes.ts), not the default 20 s. Seen
      // in CI: a status read got no answer within 20 s while the first backfill started.
      const call = (node: RunningNode, path: string, json?: unknown) =>
        node.call(json === undefined ? "GET" : "POST", path, {
          token: access,
          timeoutMs: 60_000,
          ...(json === undefined ? {} : { json })
        })
      const pub = await call(first, "/v1/sandbox/public_token/create", { provider: "provider_a", state: "CO" })
      const exchanged = await call(first, "/v1/link/token/exchange", {
        public_token: (pub.body as any).data.public_token
      })
      const connectionId = (exchanged.body as any).data.connection_id as string
      const statusOn = async (node: RunningNode) => {
        const answer = await call(node, `/v1/connections/${connectionId}/sync`)
        assert.strictEqual(answer.status, 200, `sync status: ${answer.text}\n${tail(node)}`)
        return (answer.body as { data: Status }).data
      }
      // a slow state system (40 ms an answer) keeps the backfill going long enough to kill it half way
      const slowed = await first.call("PUT", `/v1/sandbox/${connectionId}/faults`, {
        token: access,
        json: { kind: "slow", delay_ms: 40 }
      })
      assert.strictEqual(slowed.status, 200, JSON.stringify(slowed.body))
      await statusOn(first)
      await until("half way through the backfill", async () => {
        const status = await statusOn(first)
        return status.facilities.flatMap((f) => f.resources).filter((r) => r.status === "live").length >= 2
      }, 60_000)
      first.child.kill("SIGKILL")
      await until("the first process gone", () => !first.alive(), 5_000)

      const next = await start(spec)
      running.push(next)
      const stopped = await statusOn(next)
      const cleared = await next.call("DELETE", `/v1/sandbox/${connectionId}/faults`, { token: access })
      assert.strictEqual(cleared.status, 200, JSON.stringify(cleared.body))
      assert.isTrue(
        stopped.facilities.some((f) => f.status === "backfilling"),
        `killed before the backfill was done: ${JSON.stringify(stopped)}`
      )
      await until("every facility live", async () => {
        const status = await statusOn(next)
        return status.facilities.every((f) => f.status === "live")
      }, 90_000).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${tail(next)}`)
      })
      for (const facility of (await statusOn(next)).facilities) {
        const base = `/v1/connections/${connectionId}/facilities/${facility.facility_id}`
        const page = (await call(next, `${base}/changes?limit=500`)).body as {
          data: ReadonlyArray<{ id: string; type: string; object_id: string }>
          meta: { has_more: boolean }
        }
        assert.isFalse(page.meta.has_more)
        const changes = page.data
        assert.strictEqual(new Set(changes.map((c) => c.object_id)).size, changes.length, "every object once")
        assert.deepStrictEqual(
          changes.map((c) => Number(c.id.slice(4))),
          changes.map((_, i) => i + 1),
          "sequences 1…n: nothing stored twice"
        )
        const packages = (await call(next, `${base}/packages?per_page=100`)).body as {
          data: ReadonlyArray<{ id: string }>
        }
        assert.deepStrictEqual(
          changes.filter((c) => c.type === "packages").map((c) => c.object_id).sort(),
          packages.data.map((p) => p.id).sort(),
          "and nothing lost"
        )
      }
    } finally {
      await Promise.all(running.map((n) => n.stop()))
      removeData(spec)
    }
  }, 240_000)
})
