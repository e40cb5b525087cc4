/**
 * `tracebridge listen` end to end (issue #34): the built command (`bin/tracebridge.mjs`) against the
 * built server, forwarding to a local receiver. A triggered scenario reaches the receiver signed as
 * a webhook delivery (verified with `verifyWebhook` and the secret `listen` printed); the CLI
 * killed with SIGKILL and started again forwards every event stored while it was down.
 */
import { verifyWebhook } from "@tracebridge/core/WebhookSignature"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { TestServer } from "../../client/test/support/Server.js"
import { startServer } from "../../client/test/support/Server.js"
import { type Command, configDir, receiver, run, start, until } from "./support/Cli.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

describe("tracebridge listen", () => {
  it("forwards a triggered event signed as a delivery; a killed and restarted listener loses nothing", async () => {
    const local = await receiver()
    const env = {
      TRACEBRIDGE_API_URL: server.baseUrl,
      TRACEBRIDGE_CLIENT_ID: server.clientId,
      TRACEBRIDGE_CLIENT_SECRET: server.clientSecret,
      TRACEBRIDGE_CONFIG_DIR: configDir()
    }
    const running: Array<Command> = []
    try {
      const first = start(["listen", "--forward-to", local.url, "--json"], env)
      running.push(first)
      await until("the listener ready", () => first.lines().some((l) => l.includes("\"ready\":true")), 30_000)
      const ready = JSON.parse(first.lines().find((l) => l.includes("\"ready\":true"))!) as { signing_secret: string }
      assert.match(ready.signing_secret, /^whsec_/)

      const triggered = JSON.parse(
        (await run(["trigger", "lab_result_received", "--param", "result=fail", "--json"], env)).stdout.trim()
      ) as { connection_id: string; event: { id: string; type: string } }
      assert.strictEqual(triggered.event.type, "lab_result.received")
      await until("the event forwarded", () => local.received.some((r) => r.eventId === triggered.event.id))
      const delivered = local.received.find((r) => r.eventId === triggered.event.id)!
      const verified = await verifyWebhook(delivered.body, delivered.signature, [ready.signing_secret])
      assert.strictEqual(verified.id, triggered.event.id, "a valid signature over the delivery body")
      assert.strictEqual(delivered.eventType, "lab_result.received")
      await until("the line printed", () => first.lines().some((l) => l.includes(triggered.event.id)))
      const printed = JSON.parse(first.lines().find((l) => l.includes(`"event_id":"${triggered.event.id}"`))!)
      assert.strictEqual(printed.status, 200)
      assert.isNumber(printed.latency_ms)

      // killed: the events triggered now are stored while nobody listens
      first.child.kill("SIGKILL")
      await until("the listener gone", () => first.child.exitCode !== null || first.child.signalCode !== null)
      const missed: Array<string> = []
      for (const scenario of ["transfer_arrived", "lab_result_received"]) {
        const out = await run(["trigger", scenario, "--connection", triggered.connection_id, "--json"], env)
        missed.push((JSON.parse(out.stdout.trim()) as { event: { id: string } }).event.id)
      }
      const second = start(["listen", "--forward-to", local.url, "--json"], env)
      running.push(second)
      await until(
        "the missed events forwarded",
        () => missed.every((id) => local.received.some((r) => r.eventId === id)),
        30_000
      )
      const again = JSON.parse(second.lines().find((l) => l.includes("\"ready\":true"))!) as { signing_secret: string }
      assert.strictEqual(again.signing_secret, ready.signing_secret, "the same secret at every start")
      for (const id of missed) {
        const r = local.received.find((x) => x.eventId === id)!
        assert.strictEqual((await verifyWebhook(r.body, r.signature, [again.signing_secret])).id, id)
      }
      assert.notInclude(first.output() + second.output(), server.clientSecret, "never prints the client secret")
    } finally {
      for (const command of running) command.child.kill("SIGKILL")
      await local.close()
    }
  })
})
