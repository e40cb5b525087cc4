/**
 * `tracebridge login --email` and `tracebridge logs tail`, run as the built command against the
 * built server: the first owner signs in to the dashboard from the terminal (a 0600 session file,
 * no password or cookie printed), then follows the request log while a sandbox connection's
 * state system refuses its login: the 409 is printed with Metrc's upstream 401 under it, in text
 * and with `--json`; the past is not printed, a filter holds, and an ended session says to sign in
 * again.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { TestServer } from "../../client/test/support/Server.js"
import { linkSandbox, startServer } from "../../client/test/support/Server.js"
import { configDir, run, start, until } from "./support/Cli.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

const email = "owner@example.com"
const password = "correct horse battery staple"

const post = async (path: string, body: unknown, token?: string) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as any }
}

describe("tracebridge logs tail", () => {
  it("signs in to the dashboard, then prints each new request with its upstream calls", async () => {
    const link = /\/dashboard\/accept\?token=(tbi_\S+)/.exec(server.stdout())
    assert.isNotNull(link, "the first start printed the first owner's link")
    const accepted = await post("/dashboard/api/invitations/accept", { token: link![1], email, password })
    assert.strictEqual(accepted.status, 200, JSON.stringify(accepted.body))

    const dir = configDir()
    const env = { TRACEBRIDGE_CONFIG_DIR: dir }
    const none = await run(["logs", "tail"], env)
    assert.strictEqual(none.code, 1)
    assert.match(none.stderr, /tracebridge login --email/)

    const wrong = await run(["login", "--email", email, "--password", "not it", "--api-url", server.baseUrl], env)
    assert.strictEqual(wrong.code, 1)
    assert.match(wrong.stderr, /dashboard sign-in failed: unauthorized/)
    const signedIn = await run(
      ["login", "--email", email, "--password", password, "--api-url", server.baseUrl, "--json"],
      env
    )
    assert.strictEqual(signedIn.code, 0, signedIn.stderr)
    const saved = JSON.parse(signedIn.stdout.trim())
    assert.strictEqual(saved.role, "owner")
    assert.strictEqual(saved.session_file, join(dir, "dashboard.json"))
    assert.strictEqual(statSync(saved.session_file).mode & 0o777, 0o600)
    const cookie = JSON.parse(readFileSync(saved.session_file, "utf8")).session as string
    assert.match(cookie, /^tbs_/)
    assert.notInclude(signedIn.stdout + signedIn.stderr, password)
    assert.notInclude(signedIn.stdout + signedIn.stderr, cookie)
    assert.notInclude(readFileSync(saved.session_file, "utf8"), password, "the password is never kept")

    // a request before the tail starts is the past: not printed
    const token = await post("/v1/oauth/token", {
      grant_type: "client_credentials",
      client_id: server.clientId,
      client_secret: server.clientSecret
    })
    const access = token.body.access_token as string
    const linked = await linkSandbox(server, access)

    const text = start(["logs", "tail", "--interval", "1"], env)
    const json = start(["logs", "tail", "--json", "--status", "4xx", "--interval", "1"], env)
    try {
      await until("both tails started", () => text.lines().length > 0 && json.child.pid !== undefined, 60_000)
      assert.match(text.lines()[0]!, new RegExp(`Following the request log of org_\\w+ as ${email}`))
      await new Promise((resolve) => setTimeout(resolve, 1500))

      const fault = await fetch(`${server.baseUrl}/v1/sandbox/${linked.connection_id}/faults`, {
        method: "PUT",
        headers: { "content-type": "application/json", authorization: `Bearer ${access}` },
        body: JSON.stringify({ kind: "expired_login" })
      })
      assert.strictEqual(fault.status, 200)
      const failed = await fetch(`${server.baseUrl}/v1/connections/${linked.connection_id}/facilities`, {
        headers: { authorization: `Bearer ${access}` }
      })
      assert.strictEqual(failed.status, 409)
      const requestId = failed.headers.get("x-request-id")!

      await until("the failed request in the JSON tail", () => json.lines().some((l) => l.includes(requestId)), 30_000)
      await until("the failed request in the text tail", () => text.lines().some((l) => l.includes(requestId)), 30_000)

      const printed = json.lines().map((l) => JSON.parse(l))
      assert.isTrue(printed.every((p) => p.status >= 400 && p.status < 500), "--status 4xx holds")
      const entry = printed.find((p) => p.request_id === requestId)
      assert.strictEqual(entry.route, "/v1/connections/:connection_id/facilities")
      assert.strictEqual(entry.error_code, "connection_login_required")
      assert.strictEqual(entry.upstream[0].provider, "provider_a")
      assert.strictEqual(entry.upstream[0].status, 401, "Metrc's answer to an expired login")
      assert.strictEqual(printed.filter((p) => p.request_id === requestId).length, 1, "printed once")

      const lines = text.lines()
      const at = lines.findIndex((l) => l.includes(requestId))
      assert.match(lines[at]!, /GET\s+409\s/)
      assert.match(lines[at + 1]!, /↳ provider_a CO GET\s+401 /)
      assert.isFalse(lines.some((l) => l.includes("/link/token/exchange")), "the past is not printed")
      assert.isTrue(lines.some((l) => l.includes("PUT") && l.includes("/faults")), "the text tail prints 2xx too")
      assert.notInclude(text.output() + json.output(), cookie)
      assert.notInclude(text.output() + json.output(), access)
    } finally {
      for (const command of [text, json]) {
        const exited = new Promise((resolve) => command.child.once("exit", resolve))
        command.child.kill("SIGTERM")
        await exited
      }
    }

    // an ended session (here: a cookie the server does not know) says to sign in again
    const file = join(dir, "dashboard.json")
    writeFileSync(file, readFileSync(file, "utf8").replace(cookie, "tbs_not_a_session"))
    const ended = await run(["logs", "tail"], env)
    assert.strictEqual(ended.code, 1)
    assert.match(ended.stderr, /session has ended; run `tracebridge login --email/)
  }, 120_000)
})
