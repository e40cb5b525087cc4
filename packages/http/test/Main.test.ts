/**
 * `npm start` as an operator runs it (the built `dist/main.js`), with the client credentials and the
 * server's timeouts from the environment: the first-start banner names the secret but does not print
 * it, the log lines (the access log, through the pretty logger `runMain` installs and the
 * redacting console) hold no token nor the configured secret, and a client trickling its headers is closed
 * within the configured headers timeout while a keep-alive client pausing between requests is served.
 */
import { assert, describe, it } from "@effect/vitest"
import * as net from "node:net"
import { freePort, startMain, until } from "./support/Process.js"

/** Sends `requests` on one connection, `pauseMs` apart, and returns the status of each answer. */
const keepAlive = (port: number, requests: ReadonlyArray<string>, pauseMs: number) =>
  new Promise<Array<number>>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    const statuses: Array<number> = []
    let buffer = ""
    const next = () => {
      const request = requests[statuses.length]
      if (request === undefined) {
        socket.destroy()
        resolve(statuses)
      } else socket.write(request)
    }
    socket.on("data", (chunk) => {
      buffer += chunk.toString("latin1")
      const end = buffer.indexOf("\r\n\r\n")
      if (end < 0) return
      const length = Number(/content-length: *([0-9]+)/i.exec(buffer.slice(0, end))?.[1] ?? 0)
      if (buffer.length < end + 4 + length) return
      statuses.push(Number(buffer.split(" ")[1]))
      buffer = buffer.slice(end + 4 + length)
      setTimeout(next, pauseMs)
    })
    socket.on("close", () => statuses.length < requests.length && reject(new Error(`closed after ${statuses}`)))
    socket.on("error", reject)
    next()
  })

describe("main", () => {
  it("keeps secrets out of its output and closes slow clients, as configured", async () => {
    const secret = "operator-chosen-secret-8d3f21c7"
    const linkSecret = "TWFpblRlc3RMaW5rVG9rZW5TZWNyZXRQYXJ0"
    const port = await freePort()
    const { child, exited, output } = startMain({
      PORT: String(port),
      TRACEBRIDGE_CLIENT_ID: "tb_client_main_test",
      TRACEBRIDGE_CLIENT_SECRET: secret,
      TRACEBRIDGE_ACCESS_LOG_EVERY: "1",
      TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS: "1",
      TRACEBRIDGE_REQUEST_TIMEOUT_SECONDS: "2"
    })
    const api = `http://127.0.0.1:${port}`
    try {
      await until("the server to answer", async () => {
        if (child.exitCode !== null) throw new Error(`the server exited early:\n${output()}`)
        return fetch(`${api}/healthz`).then((r) => r.ok, () => false)
      }, 20_000)

      // the banner names the secret from the environment, and the client accepts it
      assert.include(output(), "TRACEBRIDGE_CLIENT_ID=tb_client_main_test")
      assert.include(output(), "the secret from TRACEBRIDGE_CLIENT_SECRET")
      // and a one-time link that makes the dashboard's first owner (issue #33)
      const ownerLink = new RegExp(`${api}/dashboard/accept\\?token=(tbi_[A-Za-z0-9_-]{43})`).exec(output())
      assert.isNotNull(ownerLink, output())
      const accepted = await fetch(`${api}/dashboard/api/invitations/accept`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          token: ownerLink![1],
          email: "first@example.com",
          password: "the first owner's password"
        })
      })
      assert.strictEqual(accepted.status, 200)
      assert.strictEqual(((await accepted.json()) as { role: string }).role, "owner")
      assert.match(accepted.headers.get("set-cookie") ?? "", /^tb_session=tbs_.*HttpOnly/)
      const token = await fetch(`${api}/v1/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          grant_type: "client_credentials",
          client_id: "tb_client_main_test",
          client_secret: secret
        })
      })
      assert.strictEqual(token.status, 200)
      const access = ((await token.json()) as { access_token: string }).access_token

      // tokens in odd places of a URL, and the configured secret in a query string
      await fetch(`${api}/v1/nothing/${access}?lt=link-sandbox-${linkSecret}&note=${encodeURIComponent(secret)}`)
      await fetch(`${api}/connect/session?lt=link-sandbox-${linkSecret}`)
      await until("the access-log lines", () => (output().match(/link-sandbox-\[REDACTED\]/g) ?? []).length >= 2, 5_000)

      // a client trickling its headers is closed within the headers timeout (1 s, checked every 1 s)
      const slow = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true })
      let answer = ""
      let ended = false
      slow.on("data", (chunk) => (answer += chunk.toString("utf8")))
      slow.on("end", () => (ended = true))
      slow.on("error", () => {})
      const request = `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slow: ${"s".repeat(200)}\r\n\r\n`
      let sent = 0
      const trickle = setInterval(() => slow.writable && slow.write(request[sent++]!), 50)
      const took = await until("the server to close the trickling client", () => ended, 5_000).finally(() =>
        clearInterval(trickle)
      )
      slow.destroy()
      assert.isBelow(took, 3_500)
      assert.match(answer, /^HTTP\/1\.1 408 /)

      // a keep-alive client pausing 1.5 s (longer than the headers timeout) between requests
      const get = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
      assert.deepStrictEqual(await keepAlive(port, [get, get], 1_500), [200, 200])

      child.kill("SIGTERM")
      assert.strictEqual(await exited, 0)
      assert.notInclude(output(), secret)
      assert.notInclude(output(), encodeURIComponent(secret))
      assert.notInclude(output(), linkSecret.slice(0, 10))
      assert.notInclude(output(), access.slice("tb_at_".length, "tb_at_".length + 10))
      assert.include(output(), "tb_at_[REDACTED]")
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }, 60_000)

  it("a setting out of range stops the start naming it, before the line that says it serves", async () => {
    const port = await freePort()
    const { exited, output } = startMain(
      { PORT: String(port), TRACEBRIDGE_SANDBOX_SIZE: "default" },
      "tb-main-config-"
    )
    const code = await exited
    assert.strictEqual(code, 1, output())
    assert.include(output(), "TRACEBRIDGE_SANDBOX_SIZE", output())
    assert.include(output(), "must be small, large or a whole number of packages")
    assert.notInclude(output(), "Tracebridge API on", "it never said it served")
  }, 60_000)

  it("a port already in use is one line naming PORT, not a stack trace, and exit code 1", async () => {
    const port = await freePort()
    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve))
    try {
      const { exited, output } = startMain({ PORT: String(port) }, "tb-main-busy-")
      const code = await exited
      assert.strictEqual(code, 1, output())
      const lines = output().split("\n").filter((line) => /in use/i.test(line))
      assert.strictEqual(lines.length, 1, output())
      assert.include(lines[0], `PORT`)
      assert.include(lines[0], String(port))
      assert.notMatch(output(), /^\s+at /m, "no stack trace")
    } finally {
      holder.close()
    }
  }, 60_000)
})
