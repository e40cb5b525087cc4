/**
 * Issue #28, "the database never wedges", against the built server: the operator CLI's commands
 * (`set-plan`, `reencrypt`, `list-orgs`, `list-connections`) run in a loop, each a process of its
 * own on the server's database, while sandbox writes and reads keep coming.
 *
 * - Every request answers within its deadline: a success, a refusal of the write, or 503
 *   `service_unavailable` with `Retry-After`; never a 500, never a hang.
 * - Every CLI run ends by itself.
 * - After, the server is healthy: `/healthz` is 200 and a write and a read work.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Answer } from "../support/Nodes.js"
import type { AbuseServer, CliRun, Suite } from "./Harness.js"
import { startServer } from "./Harness.js"

/** The longest any one request may take: the database's wait (5 s) twice, with room for a slow machine. */
const DEADLINE_MS = 15_000

/** The CLI rounds: each runs every command once. */
const ROUNDS = 3

interface Timed {
  readonly what: string
  readonly status: number
  readonly ms: number
  readonly text: string
}

const body = (answer: Answer): any => answer.body

export const suite: Suite = (backend) =>
  describe.sequential(`the database never wedges on ${backend}`, () => {
    let server: AbuseServer
    beforeAll(async () => {
      server = await startServer(backend, "database")
    }, 60_000)
    afterAll(() => server?.close(), 30_000)

    it(
      "the operator CLI in a loop beside sandbox writes: every request answers in time, and the server stays healthy",
      async () => {
        const token = await server.accessToken()
        const { connection: connectionId, facilities } = await server.linkSandbox(token)
        const facility = facilities[0]!
        const base = `/v1/connections/${connectionId}/facilities/${facility}`
        const listed = await server.call("GET", `${base}/packages?per_page=100`, { token })
        const source = (body(listed).data as ReadonlyArray<any>).find((p) => !p.is_on_hold && p.quantity >= 50)
        assert.isDefined(source, "a seeded package to split from")
        const split = {
          item_name: source.item_name,
          item_category: source.item_category,
          item_strain: source.item_strain,
          quantity: 0.1,
          unit_of_measure: source.unit_of_measure,
          source_package_ids: [source.id]
        }

        const answers: Array<Timed> = []
        const timed = async (what: string, send: () => Promise<Answer>) => {
          const started = Date.now()
          try {
            const answer = await send()
            answers.push({ what, status: answer.status, ms: Date.now() - started, text: answer.text.slice(0, 300) })
          } catch (error) {
            // the request's own timeout (20 s) or a dropped socket: both are what this test forbids
            answers.push({ what, status: 0, ms: Date.now() - started, text: String(error) })
          }
        }
        let running = true
        const writer = async () => {
          while (running) await timed("split", () => server.call("POST", `${base}/packages`, { token, json: split }))
        }
        const reader = async () => {
          while (running) {
            await timed("list", () => server.call("GET", `${base}/packages?per_page=5`, { token }))
            await timed("health", () => server.call("GET", "/healthz"))
          }
        }
        const load = [writer(), writer(), reader()]

        const runs: Array<{ readonly args: ReadonlyArray<string>; readonly run: CliRun; readonly ms: number }> = []
        const org = server.organisationId
        try {
          for (let round = 0; round < ROUNDS; round++) {
            for (
              const args of [
                ["set-plan", org, "production"],
                ["reencrypt"],
                ["set-plan", org, "sandbox"],
                ["list-orgs"],
                ["list-connections", org]
              ]
            ) {
              const started = Date.now()
              runs.push({ args, run: await server.cli(args, 60_000), ms: Date.now() - started })
            }
          }
        } finally {
          running = false
          await Promise.all(load)
        }

        const statuses = answers.reduce<Record<number, number>>(
          (n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }),
          {}
        )
        console.log(
          `database abuse on ${backend}: ${answers.length} requests ${JSON.stringify(statuses)}, slowest ${
            Math.max(...answers.map((a) => a.ms))
          } ms; CLI runs ${runs.map((r) => r.ms).join(", ")} ms`
        )
        for (const { args, ms, run } of runs) {
          assert.isNotNull(run.code, `${args.join(" ")} was killed after ${ms} ms: it hung`)
          assert.strictEqual(run.code, 0, `${args.join(" ")}: ${run.stderr}${run.stdout}`)
        }
        const slow = answers.filter((a) => a.ms > DEADLINE_MS || a.status === 0)
        assert.deepStrictEqual(slow, [], "every request answers within its deadline")
        const unexpected = answers.filter((a) =>
          a.what === "split"
            ? ![201, 409, 422, 503].includes(a.status)
            : ![200, 503].includes(a.status)
        )
        assert.deepStrictEqual(unexpected, [], "a success, a refused write or 503: never a 500")
        for (const a of answers.filter((a) => a.status === 503)) {
          assert.include(a.text, "service_unavailable", `${a.what}: ${a.text}`)
        }
        assert.isAbove(answers.filter((a) => a.what === "split" && a.status === 201).length, 0, "writes went through")

        // After: healthy, and the database is not wedged
        const health = await server.call("GET", "/healthz", { timeoutMs: 5_000 })
        assert.strictEqual(health.status, 200, health.text)
        const relisted = await server.call("GET", `${base}/packages?per_page=100`, { token, timeoutMs: 10_000 })
        assert.strictEqual(relisted.status, 200, relisted.text)
        const fresh = (body(relisted).data as ReadonlyArray<any>).find((p) =>
          !p.is_on_hold && p.quantity >= 1 && p.unit_of_measure === source.unit_of_measure
        )
        const after = await server.call("POST", `${base}/packages`, {
          token,
          json: { ...split, item_name: fresh.item_name, source_package_ids: [fresh.id] },
          timeoutMs: 10_000
        })
        assert.strictEqual(after.status, 201, after.text)
        const read = await server.call("GET", `${base}/packages/${encodeURIComponent(body(after).data.id)}`, {
          token,
          timeoutMs: 10_000
        })
        assert.strictEqual(read.status, 200, read.text)
      },
      240_000
    )
  })
