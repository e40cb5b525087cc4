/**
 * The harness itself: a built server on the backend answers, its CLI reaches the same database,
 * and a restart keeps the data.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { AbuseServer, Suite } from "./Harness.js"
import { startServer } from "./Harness.js"

export const suite: Suite = (backend) =>
  describe.sequential(`the abuse harness on ${backend}`, () => {
    let server: AbuseServer
    beforeAll(async () => {
      server = await startServer(backend, "harness")
    }, 60_000)
    afterAll(() => server?.close(), 30_000)

    it("serves, shares its database with the CLI, and keeps it across a restart", async () => {
      const token = await server.accessToken()
      const listed = await server.call("GET", "/v1/connections", { token })
      assert.strictEqual(listed.status, 200, listed.text)
      const orgs = await server.cli(["list-orgs"])
      assert.strictEqual(orgs.code, 0, orgs.stderr)
      assert.include(orgs.stdout, server.organisationId)
      await server.restart()
      const again = await server.call("GET", "/v1/connections", { token })
      assert.strictEqual(again.status, 200, again.text)
    }, 60_000)
  })
