/**
 * The `tracebridge` commands other than `listen`, run as the built command against the built
 * server: `login` (a 0600 config file, a wrong secret refused, the secret never printed),
 * `trigger` (on a new sandbox connection or a given one), `events list` (with `--failed`) and
 * `events resend`, each with `--json`.
 */
import { statSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { TestServer } from "../../client/test/support/Server.js"
import { startServer } from "../../client/test/support/Server.js"
import { configDir, run, start, until } from "./support/Cli.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

const jsonLines = (stdout: string) =>
  stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>)

describe("tracebridge login", () => {
  it("checks the credentials, saves them readable by the user only, and never prints the secret", async () => {
    const dir = configDir()
    const env = { TRACEBRIDGE_CONFIG_DIR: dir, TRACEBRIDGE_CLIENT_ID: "", TRACEBRIDGE_CLIENT_SECRET: "" }
    const clean = Object.fromEntries(Object.entries(env).filter(([k]) => k === "TRACEBRIDGE_CONFIG_DIR"))
    const wrong = await run(
      ["login", "--client-id", server.clientId, "--client-secret", "not-the-secret", "--api-url", server.baseUrl],
      clean
    )
    assert.strictEqual(wrong.code, 1)
    assert.match(wrong.stderr, /sign-in failed/)
    const ok = await run(
      [
        "login",
        "--client-id",
        server.clientId,
        "--client-secret",
        server.clientSecret,
        "--api-url",
        server.baseUrl,
        "--json"
      ],
      clean
    )
    assert.strictEqual(ok.code, 0, ok.stderr)
    const [saved] = jsonLines(ok.stdout)
    assert.strictEqual(saved!.client_id, server.clientId)
    assert.strictEqual(saved!.config_file, join(dir, "config.json"))
    assert.strictEqual(statSync(join(dir, "config.json")).mode & 0o777, 0o600)
    assert.strictEqual(statSync(dir).mode & 0o777, 0o700)
    assert.notInclude(ok.stdout + ok.stderr, server.clientSecret)

    // the other commands now run from the saved credentials
    const listed = await run(["events", "list", "--json"], clean)
    assert.strictEqual(listed.code, 0, listed.stderr)
  })

  it("says what to do when there are no credentials", async () => {
    const none = await run(["events", "list"], { TRACEBRIDGE_CONFIG_DIR: configDir() })
    assert.strictEqual(none.code, 1)
    assert.match(none.stderr, /tracebridge login/)
  })
})

describe("tracebridge trigger and events", () => {
  it("triggers on a new sandbox connection, lists failed events, and resends one", async () => {
    const env = {
      TRACEBRIDGE_API_URL: server.baseUrl,
      TRACEBRIDGE_CLIENT_ID: server.clientId,
      TRACEBRIDGE_CLIENT_SECRET: server.clientSecret,
      TRACEBRIDGE_CONFIG_DIR: configDir()
    }
    // a receiver that is not there: its deliveries wait to be retried
    const token = await fetch(`${server.baseUrl}/v1/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        grant_type: "client_credentials",
        client_id: server.clientId,
        client_secret: server.clientSecret
      })
    }).then((r) => r.json() as Promise<{ access_token: string }>)
    const hook = await fetch(`${server.baseUrl}/v1/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token.access_token}` },
      body: JSON.stringify({ url: "http://127.0.0.1:9/gone", events: ["transfer.arrived"] })
    }).then((r) => r.json() as Promise<{ data: { id: string } }>)

    const first = await run(["trigger", "transfer_arrived", "--json"], env)
    assert.strictEqual(first.code, 0, first.stderr)
    const [triggered] = jsonLines(first.stdout)
    assert.match(triggered!.connection_id, /^conn_/)
    assert.strictEqual(triggered!.event.type, "transfer.arrived")
    assert.strictEqual(triggered!.deliveries, 1)
    const second = await run(
      ["trigger", "lab_result_received", "--connection", triggered!.connection_id, "--param", "result=fail"],
      env
    )
    assert.strictEqual(second.code, 0, second.stderr)
    assert.match(
      second.stdout,
      new RegExp(`lab_result_received on ${triggered!.connection_id}: lab_result.received evt_`)
    )

    const failed = jsonLines((await run(["events", "list", "--failed", "--json"], env)).stdout)
    assert.deepStrictEqual(failed.map((e) => e.id), [triggered!.event.id], "only the undelivered one")
    const all = jsonLines((await run(["events", "list", "--json"], env)).stdout)
    assert.strictEqual(all.length, 2)
    const text = await run(["events", "list"], env)
    assert.include(text.stdout, triggered!.event.id)

    const resent = await run(["events", "resend", triggered!.event.id, "--json"], env)
    assert.strictEqual(resent.code, 0, resent.stderr)
    assert.deepStrictEqual(jsonLines(resent.stdout).map((r) => r.webhook_id), [hook.data.id])
    const labEvent = all.find((e) => e.type === "lab_result.received")!
    const nothing = await run(["events", "resend", labEvent.id], env)
    assert.strictEqual(nothing.code, 1, "an event no endpoint was sent has nothing to resend")
    assert.match(nothing.stderr, /no delivery to resend/)
    const unknown = await run(["events", "resend", "evt_unknown"], env)
    assert.strictEqual(unknown.code, 1)
    assert.match(unknown.stderr, /resource_not_found/)
  })
})

describe("tracebridge sandbox start", () => {
  it("runs the standalone emulator; --json prints where it listens as one JSON line", async () => {
    const command = start(["sandbox", "start", "--json", "--", "--port", "0", "--seed", "cli-json"], {})
    try {
      await until("the JSON line", () => command.lines().length > 0, 60_000)
      const [line] = command.lines()
      const started = JSON.parse(line!) as {
        origin: string
        seed: string
        providers: ReadonlyArray<{ provider: string; base_url: string; example_url: string }>
        control: { state: string }
      }
      assert.strictEqual(started.seed, "cli-json")
      assert.deepStrictEqual(started.providers.map((p) => p.provider), ["provider_a", "provider_b"])
      assert.strictEqual(started.providers[0]!.base_url, `${started.origin}/provider_a/{STATE}`)
      const state = await fetch(started.control.state)
      assert.strictEqual(state.status, 200)
    } finally {
      const exited = new Promise((resolve) => command.child.once("exit", resolve))
      command.child.kill("SIGTERM")
      await exited
    }
  }, 90_000)
})
