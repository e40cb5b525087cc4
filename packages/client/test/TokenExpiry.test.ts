/**
 * A 401 `token_expired` from the real server: the server's clock is moved two hours on (the test
 * server is started with a preload that shifts `Date.now` on SIGUSR2), so the SDK's access token
 * has expired there while the SDK still thinks it fresh.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { Tracebridge, TracebridgeError } from "../src/index.js"
import { recordingFetch, startServer, type TestServer } from "./support/Server.js"

let server: TestServer

beforeAll(async () => {
  server = await startServer({ shiftableClock: true })
})

afterAll(async () => {
  await server?.stop()
})

it("refreshes once on 401 token_expired and replays every waiting call", async () => {
  const { log, fetch } = recordingFetch()
  const tb = new Tracebridge({
    baseUrl: server.baseUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    fetch
  })
  await tb.get("/v1/connections")
  const before = await tb.accessToken()
  const fixed = new Tracebridge({ baseUrl: server.baseUrl, token: before })

  server.shiftClock()
  for (let i = 0; i < 100; i++) {
    const probe = await globalThis.fetch(`${server.baseUrl}/v1/connections`, {
      headers: { authorization: `Bearer ${before}` }
    })
    if (probe.status === 401) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  // A fixed token is not refreshed: its 401 is the caller's.
  const expired = await fixed.get("/v1/connections").catch((e: unknown) => e)
  expect(expired).toBeInstanceOf(TracebridgeError)
  expect(expired).toMatchObject({ status: 401, type: "authentication_error", code: "token_expired" })

  const answers = await Promise.all([
    tb.get("/v1/connections"),
    tb.get("/v1/providers"),
    tb.get("/v1/webhooks"),
    tb.get("/v1/webhooks")
  ])
  expect(answers).toHaveLength(4)
  const grants = log.filter((e) => e.path === "/v1/oauth/token").map((e) => JSON.parse(e.body).grant_type)
  expect(grants).toEqual(["client_credentials", "refresh_token"])
  const after = await tb.accessToken()
  expect(after).not.toBe(before)
  const calls = log.filter((e) => e.path !== "/v1/oauth/token").slice(1)
  expect(calls.filter((e) => e.status === 401)).toHaveLength(4)
  expect(calls.filter((e) => e.status === 200)).toHaveLength(4)
  for (const call of calls.filter((e) => e.status === 200)) {
    expect(call.headers.get("authorization")).toBe(`Bearer ${after}`)
  }
})
