/**
 * 429 `rate_limited` from the real server's own limiter (started with a bucket of 3 and 1 token a
 * second): the SDK waits what `Retry-After` says and tries again; a write without an idempotency
 * key is never sent twice.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { Tracebridge, TracebridgeError } from "../src/index.js"
import { recordingFetch, startServer, type TestServer } from "./support/Server.js"

let server: TestServer

beforeAll(async () => {
  server = await startServer({ env: { TRACEBRIDGE_RATE_LIMIT_RATE: "1", TRACEBRIDGE_RATE_LIMIT_BURST: "3" } })
})

afterAll(async () => {
  await server?.stop()
})

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

it.sequential("waits the Retry-After of each 429 and gets every answer", async () => {
  const { log, fetch } = recordingFetch()
  const waits: Array<number> = []
  const tb = new Tracebridge({
    baseUrl: server.baseUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    fetch,
    retry: { maxAttempts: 10, sleep: (ms) => (waits.push(ms), sleep(ms)) }
  })
  const answers = await Promise.all(Array.from({ length: 6 }, () => tb.get("/v1/connections")))
  expect(answers.every((a) => a.pagination.page === 1)).toBe(true)
  const limited = log.filter((e) => e.status === 429)
  expect(limited.length).toBeGreaterThan(0)
  expect(waits).toHaveLength(limited.length)
  for (const [i, entry] of limited.entries()) {
    expect(entry.retryAfter).toMatch(/^\d+$/)
    expect(waits[i]).toBe(Number(entry.retryAfter) * 1000)
  }
  expect(log.filter((e) => e.path === "/v1/connections" && e.status === 200)).toHaveLength(6)
})

it.sequential("does not send a write without an idempotency key again after a 429", async () => {
  await sleep(3_000) // a full bucket again
  const { log, fetch } = recordingFetch()
  const waits: Array<number> = []
  const tb = new Tracebridge({
    baseUrl: server.baseUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    fetch,
    idempotencyKeys: false,
    retry: { maxAttempts: 5, sleep: async (ms) => void waits.push(ms) }
  })
  await tb.accessToken()
  const results = await Promise.allSettled(
    Array.from({ length: 5 }, () => tb.post("/v1/link/token/create", { body: {} }))
  )
  const refused = results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason)
  expect(refused.length).toBeGreaterThan(0)
  for (const error of refused) {
    expect(error).toBeInstanceOf(TracebridgeError)
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "rate_limited" })
    expect((error as TracebridgeError).retryAfter).toBeGreaterThan(0)
  }
  const writes = log.filter((e) => e.path === "/v1/link/token/create")
  expect(writes).toHaveLength(5)
  expect(writes.every((e) => !e.headers.has("idempotency-key"))).toBe(true)
  expect(waits).toEqual([])
})
