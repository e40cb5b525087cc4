/**
 * Issue #28, "Only ids we issued".
 *
 * - Item 7: a facility id the connection does not have (a well-formed `fac_…` of the provider, for
 *   a licence it never listed) is 404 `resource_not_found` on every facility-level path, `/changes`
 *   included, and gets no sync row; the sync itself (`Jobs.start`) stores none either; a row stored
 *   before the check is dropped by the takeover instead of being restarted forever; `/sync` lists
 *   only the connection's facilities.
 * - Item 9a: the feed's cursor is signed and bound to the organisation, connection and facility: a
 *   forged one (the unsigned JSON of before), a changed one, and one of another organisation's or
 *   another connection's feed of the same licence are 400 `invalid_parameter` (`param: cursor`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Ids } from "@tracebridge/core"
import { Http, Server } from "@tracebridge/http"
import { Jobs, SyncStore } from "@tracebridge/sync"
import { Effect, Layer, Option } from "effect"
import * as Crypto from "../../src/services/Crypto.js"
import { call, linkSandbox, otherOrganisation, signIn } from "../support/TestApp.js"
import * as TestDatabase from "../support/TestDatabase.js"

/** The whole service (its jobs in reach), on SQLite; no scheduler, so the test drives the takeover. */
const TestApp = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

/** A well-formed facility id of provider_a for a licence no sandbox connection has. */
const madeUp = Ids.make("facility", "provider_a", "403-X9999")

const facilitiesOf = (token: string, connectionId: string) =>
  Effect.map(
    call("GET", `/v1/connections/${connectionId}/facilities`, { token }),
    (answer) => (answer.body.data as ReadonlyArray<{ readonly id: string }>).map((f) => f.id)
  )

const notFound = (answer: { status: number; body: any }, what: string) => {
  assert.strictEqual(answer.status, 404, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`)
  assert.strictEqual(answer.body.error.type, "not_found_error", what)
  assert.strictEqual(answer.body.error.code, "resource_not_found", what)
}

const badCursor = (answer: { status: number; body: any }, what: string) => {
  assert.strictEqual(answer.status, 400, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`)
  assert.strictEqual(answer.body.error.code, "invalid_parameter", what)
  assert.strictEqual(answer.body.error.param, "cursor", what)
}

describe("only ids we issued (issue #28)", () => {
  it.live(
    "item 7: a made-up facility is 404 on /changes and every facility-level path, and gets no sync row",
    () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const linked = yield* linkSandbox(me.access)
        const connection = linked.connection_id
        const real = yield* facilitiesOf(me.access, connection)
        assert.notInclude(real, madeUp)
        const base = `/v1/connections/${connection}/facilities/${madeUp}`
        notFound(yield* call("GET", `${base}/changes`, { token: me.access }), "changes")
        notFound(
          yield* call("GET", `${base}/changes?limit=5&types=packages`, { token: me.access }),
          "changes, filtered"
        )
        notFound(yield* call("GET", base, { token: me.access }), "the facility")
        notFound(yield* call("GET", `${base}/packages`, { token: me.access }), "packages")
        notFound(yield* call("GET", `${base}/packages/pkg_unknown`, { token: me.access }), "a package")
        notFound(yield* call("GET", `${base}/plants?per_page=1`, { token: me.access }), "plants")
        const store = yield* SyncStore.SyncStore
        assert.isTrue(Option.isNone(yield* store.facility(connection, madeUp)), "no sync row")
        const status = yield* call("GET", `/v1/connections/${connection}/sync`, { token: me.access })
        assert.strictEqual(status.status, 200, JSON.stringify(status.body))
        const listed = (status.body.data.facilities as ReadonlyArray<{ facility_id: string }>).map((f) => f.facility_id)
        assert.notInclude(listed, madeUp)
        assert.isAtMost(listed.length, real.length)
        for (const id of listed) assert.include(real, id)
      }).pipe(Effect.provide(TestApp)),
    60_000
  )

  it.live(
    "item 7: the sync stores no facility the connection lacks; a stored one is dropped, not restarted",
    () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const linked = yield* linkSandbox(me.access)
        const connection = linked.connection_id
        const real = yield* facilitiesOf(me.access, connection)
        const jobs = yield* Jobs.Jobs
        const store = yield* SyncStore.SyncStore
        // the service itself refuses it (not only the HTTP handler)
        yield* jobs.start(connection, [madeUp])
        assert.isTrue(Option.isNone(yield* store.facility(connection, madeUp)), "Jobs.start stored no row")
        // a row stored before the check (as `/changes` did): stuck `backfilling`, never storing a page
        yield* store.ensureFacility(connection, madeUp, 0)
        const status = yield* call("GET", `/v1/connections/${connection}/sync`, { token: me.access })
        const listed = (status.body.data.facilities as ReadonlyArray<{ facility_id: string }>).map((f) => f.facility_id)
        assert.notInclude(listed, madeUp, "/sync lists only the connection's facilities")
        assert.isAtMost(listed.length, real.length)
        // the takeover drops it instead of restarting it (again and again)
        yield* jobs.restartStalled
        assert.isTrue(Option.isNone(yield* store.facility(connection, madeUp)), "the takeover dropped the row")
        const again = yield* jobs.restartStalled
        const rows = yield* store.facilities(connection)
        assert.notInclude(rows.map((f) => f.facility_id), madeUp)
        assert.isAtMost(again, real.length)
      }).pipe(Effect.provide(TestApp)),
    60_000
  )

  it.live(
    "item 9a: a forged, changed, other-organisation or other-connection cursor is 400",
    () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const linked = yield* linkSandbox(me.access)
        const facility = (yield* facilitiesOf(me.access, linked.connection_id))[0]!
        const feed = `/v1/connections/${linked.connection_id}/facilities/${facility}/changes`
        const first = yield* call("GET", `${feed}?limit=1`, { token: me.access })
        assert.strictEqual(first.status, 200, JSON.stringify(first.body))
        const cursor = first.body.meta.next_cursor as string
        assert.strictEqual((yield* call("GET", `${feed}?limit=1&cursor=${cursor}`, { token: me.access })).status, 200)

        // forged: the unsigned JSON the cursor used to be, from the start and freshly "issued"
        const forged = Buffer.from(JSON.stringify({ v: 1, f: facility, s: 0, t: Date.now() })).toString("base64url")
        badCursor(yield* call("GET", `${feed}?cursor=${forged}`, { token: me.access }), "forged")
        // changed: the position rewritten (back to the start, issued now), the rest kept
        const fresh = Buffer.from(JSON.stringify({ s: 0, t: Date.now() })).toString("base64url")
        const parts = cursor.split(".")
        const changed = parts.length === 3
          ? `${parts[0]}.${fresh}.${parts[2]}`
          : Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(cursor, "base64url").toString()), s: 0 }))
            .toString("base64url")
        badCursor(yield* call("GET", `${feed}?cursor=${changed}`, { token: me.access }), "changed")
        const flipped = `${cursor.slice(0, -2)}${cursor.endsWith("AA") ? "BB" : "AA"}`
        badCursor(yield* call("GET", `${feed}?cursor=${flipped}`, { token: me.access }), "flipped")

        // another connection of the same organisation, same licence (same facility id)
        const second = yield* linkSandbox(me.access)
        const secondFeed = `/v1/connections/${second.connection_id}/facilities/${facility}/changes`
        const theirs = yield* call("GET", `${secondFeed}?limit=1`, { token: me.access })
        assert.strictEqual(theirs.status, 200, JSON.stringify(theirs.body))
        badCursor(
          yield* call("GET", `${feed}?cursor=${theirs.body.meta.next_cursor}`, { token: me.access }),
          "another connection's"
        )

        // another organisation's connection to the same licence
        const other = yield* otherOrganisation
        const foreign = yield* linkSandbox(other)
        const foreignFeed = `/v1/connections/${foreign.connection_id}/facilities/${facility}/changes`
        const foreignPage = yield* call("GET", `${foreignFeed}?limit=1`, { token: other })
        assert.strictEqual(foreignPage.status, 200, JSON.stringify(foreignPage.body))
        badCursor(
          yield* call("GET", `${feed}?cursor=${foreignPage.body.meta.next_cursor}`, { token: me.access }),
          "another organisation's"
        )
        // and ours in their feed
        badCursor(yield* call("GET", `${foreignFeed}?cursor=${cursor}`, { token: other }), "ours in theirs")
      }).pipe(Effect.provide(TestApp)),
    60_000
  )
})
