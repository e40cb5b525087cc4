/**
 * Issue #28, "Only ids we issued", against the built server: a facility id the connection does not
 * have (a well-formed `fac_…` for a licence it never listed) is 404 `resource_not_found` on
 * `/changes`, on `/sync`'s facility paths and the resource paths, and leaves no sync row (`GET /sync`
 * never lists it); a forged feed cursor, a changed one, and one of another connection's feed of the
 * same licence are 400 `invalid_parameter` (`param: cursor`).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Ids } from "@tracebridge/core"
import type { Answer } from "../support/Nodes.js"
import type { AbuseServer, Suite } from "./Harness.js"
import { startServer } from "./Harness.js"

/** A well-formed facility id of provider_a for a licence no sandbox connection has. */
const madeUp = Ids.make("facility", "provider_a", "403-X9999")

type Body = { readonly data?: any; readonly meta?: any; readonly error?: any }
const bodyOf = (answer: Answer) => answer.body as Body

const expectNotFound = (answer: Answer, what: string) => {
  assert.strictEqual(answer.status, 404, `${what}: ${answer.text.slice(0, 300)}`)
  assert.strictEqual(bodyOf(answer).error?.code, "resource_not_found", what)
}

const expectBadCursor = (answer: Answer, what: string) => {
  assert.strictEqual(answer.status, 400, `${what}: ${answer.text.slice(0, 300)}`)
  assert.strictEqual(bodyOf(answer).error?.code, "invalid_parameter", what)
  assert.strictEqual(bodyOf(answer).error?.param, "cursor", what)
}

export const suite: Suite = (backend) =>
  describe.sequential(`only ids we issued on ${backend} (issue #28)`, () => {
    let server: AbuseServer
    let token: string

    const link = () => server.linkSandbox(token)

    const syncedFacilities = async (connection: string) => {
      const status = await server.call("GET", `/v1/connections/${connection}/sync`, { token })
      assert.strictEqual(status.status, 200, status.text)
      return (bodyOf(status).data.facilities as Array<{ facility_id: string }>).map((f) => f.facility_id)
    }

    beforeAll(async () => {
      server = await startServer(backend, "ids")
      token = await server.accessToken()
    }, 60_000)
    afterAll(() => server?.close(), 30_000)

    it("a made-up facility is 404 on /changes and the facility paths, and /sync never lists it", async () => {
      const { connection, facilities } = await link()
      assert.notInclude(facilities, madeUp)
      const base = `/v1/connections/${connection}/facilities/${madeUp}`
      for (let i = 0; i < 3; i++) {
        expectNotFound(await server.call("GET", `${base}/changes`, { token }), `changes ${i}`)
      }
      expectNotFound(await server.call("GET", `${base}/changes?limit=1&types=packages`, { token }), "changes, filtered")
      expectNotFound(await server.call("GET", `${base}/packages?per_page=1`, { token }), "packages")
      expectNotFound(await server.call("GET", `${base}/packages/pkg_unknown`, { token }), "a package")
      expectNotFound(await server.call("GET", base, { token }), "the facility")
      const listed = await syncedFacilities(connection)
      assert.notInclude(listed, madeUp, "no sync row for it")
      assert.isAtMost(listed.length, facilities.length, "bounded by the connection's facilities")
      for (const id of listed) assert.include(facilities, id)
      // and still none after a restart (nothing was stored for it to resume)
      await server.restart()
      token = await server.accessToken()
      expectNotFound(await server.call("GET", `${base}/changes`, { token }), "changes after a restart")
      assert.notInclude(await syncedFacilities(connection), madeUp)
    }, 90_000)

    it("a forged, a changed and another connection's cursor are 400", async () => {
      const mine = await link()
      const facility = mine.facilities[0]!
      const feed = `/v1/connections/${mine.connection}/facilities/${facility}/changes`
      const first = await server.call("GET", `${feed}?limit=1`, { token })
      assert.strictEqual(first.status, 200, first.text.slice(0, 300))
      const cursor = bodyOf(first).meta.next_cursor as string
      const next = await server.call("GET", `${feed}?limit=1&cursor=${encodeURIComponent(cursor)}`, { token })
      assert.strictEqual(next.status, 200, next.text.slice(0, 300))

      const forged = Buffer.from(JSON.stringify({ v: 1, f: facility, s: 0, t: Date.now() })).toString("base64url")
      expectBadCursor(await server.call("GET", `${feed}?cursor=${forged}`, { token }), "forged")
      const parts = cursor.split(".")
      const rewritten = Buffer.from(JSON.stringify({ s: 0, t: Date.now() })).toString("base64url")
      const changed = parts.length === 3 ? `${parts[0]}.${rewritten}.${parts[2]}` : `${cursor.slice(0, -2)}xx`
      expectBadCursor(await server.call("GET", `${feed}?cursor=${encodeURIComponent(changed)}`, { token }), "changed")
      const flipped = `${cursor.slice(0, -2)}${cursor.endsWith("AA") ? "BB" : "AA"}`
      expectBadCursor(await server.call("GET", `${feed}?cursor=${encodeURIComponent(flipped)}`, { token }), "flipped")

      // another connection to the same licence (the same facility id)
      const theirs = await link()
      assert.include(theirs.facilities, facility)
      const theirFeed = `/v1/connections/${theirs.connection}/facilities/${facility}/changes`
      const page = await server.call("GET", `${theirFeed}?limit=1`, { token })
      assert.strictEqual(page.status, 200, page.text.slice(0, 300))
      const theirCursor = encodeURIComponent(bodyOf(page).meta.next_cursor as string)
      expectBadCursor(await server.call("GET", `${feed}?cursor=${theirCursor}`, { token }), "another connection's")
      expectBadCursor(
        await server.call("GET", `${theirFeed}?cursor=${encodeURIComponent(cursor)}`, { token }),
        "ours in theirs"
      )
      // a genuine cursor still works after a restart: every node (and a restarted one) shares the key
      await server.restart()
      token = await server.accessToken()
      const after = await server.call("GET", `${feed}?limit=1&cursor=${encodeURIComponent(cursor)}`, { token })
      assert.strictEqual(after.status, 200, after.text.slice(0, 300))
    }, 90_000)
  })
