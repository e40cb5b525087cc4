/**
 * The managed sync on sandbox connections (DECISIONS "Change feed and managed sync"): a
 * connection's facilities are backfilled in the background; the feed (`GET P/changes`) then holds
 * exactly what the facility's lists hold; a write and a scenario show up once; cursors are
 * checked; `GET /v1/connections/{id}/sync` says how far each facility and list has come.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

/** Real time, for the background jobs to run. */
const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Waits until every facility of the connection is live: its sync status. */
const waitLive = (token: string, connectionId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600; i++) {
      const status = yield* call("GET", `/v1/connections/${connectionId}/sync`, { token })
      assert.strictEqual(status.status, 200, JSON.stringify(status.body))
      const facilities = status.body.data.facilities as Array<any>
      if (facilities.length > 0 && facilities.every((f) => f.status === "live")) return status.body.data
      yield* pause(50)
    }
    assert.fail("the backfill did not finish")
  })

/** Every change of a facility's feed from `cursor`, page by page: the changes and the last cursor. */
const drain = (token: string, base: string, cursor?: string, limit = 100) =>
  Effect.gen(function*() {
    const changes: Array<any> = []
    let next = cursor
    for (;;) {
      const query = [`limit=${limit}`, ...(next === undefined ? [] : [`cursor=${next}`])].join("&")
      const page = yield* call("GET", `${base}/changes?${query}`, { token })
      assert.strictEqual(page.status, 200, JSON.stringify(page.body))
      changes.push(...page.body.data)
      next = page.body.meta.next_cursor
      if (!page.body.meta.has_more) return { changes, cursor: next!, meta: page.body.meta }
    }
  })

/** A split of 5 off `source`. */
const splitOf = (source: any) => ({
  item_name: source.item_name,
  item_category: source.item_category,
  item_strain: source.item_strain,
  quantity: 5,
  unit_of_measure: source.unit_of_measure,
  source_package_ids: [source.id]
})

/** Every object of a list, through the pass-through API. */
const listAll = (token: string, base: string, list: string) =>
  Effect.gen(function*() {
    const out: Array<any> = []
    for (let page = 1;; page++) {
      const r = yield* call("GET", `${base}/${list}?per_page=100&page=${page}`, { token })
      if (r.status !== 200) return out
      out.push(...r.body.data)
      if (page * 100 >= r.body.pagination.total) return out
    }
  })

for (const provider of ["provider_a", "provider_b"] as const) {
  describe.sequential(`managed sync (${provider} sandbox)`, () => {
    it.live(
      "while a facility fills, the feed never says it is up to date: has_more with Retry-After",
      () =>
        Effect.gen(function*() {
          const me = yield* signIn
          const linked = yield* linkSandbox(me.access, provider)
          // a slow state system keeps the backfill going for a while
          const slowed = yield* call("PUT", `/v1/sandbox/${linked.connection_id}/faults`, {
            token: me.access,
            json: { kind: "slow", delay_ms: 30 }
          })
          assert.strictEqual(slowed.status, 200, JSON.stringify(slowed.body))
          const facilities = yield* call("GET", `/v1/connections/${linked.connection_id}/facilities`, {
            token: me.access
          })
          const base = `/v1/connections/${linked.connection_id}/facilities/${facilities.body.data[0].id}`
          const first = yield* call("GET", `${base}/changes`, { token: me.access })
          assert.strictEqual(first.status, 200, JSON.stringify(first.body))
          assert.strictEqual(first.body.meta.sync.status, "backfilling")
          assert.isTrue(first.body.meta.has_more, "a filling feed has more to come")
          assert.isAtLeast(Number(first.headers["retry-after"]), 1)
          let cursor = first.body.meta.next_cursor as string
          let seen = first.body.data.length
          yield* call("DELETE", `/v1/sandbox/${linked.connection_id}/faults`, { token: me.access })
          for (let i = 0; i < 600; i++) {
            const page = yield* call("GET", `${base}/changes?cursor=${cursor}`, { token: me.access })
            assert.strictEqual(page.status, 200, JSON.stringify(page.body))
            seen += page.body.data.length
            cursor = page.body.meta.next_cursor
            if (!page.body.meta.has_more) {
              assert.strictEqual(page.body.meta.sync.status, "live", "up to date only once the backfill is done")
              assert.isAbove(seen, 0)
              return
            }
            if (page.body.meta.sync.status === "backfilling" && page.body.data.length === 0) yield* pause(50)
          }
          assert.fail("the feed never caught up")
        }).pipe(Effect.provide(TestApp)),
      60_000
    )

    it.live(
      "the feed holds exactly what the facility's lists hold, then a write shows up once",
      () =>
        Effect.gen(function*() {
          const me = yield* signIn
          const linked = yield* linkSandbox(me.access, provider)
          const status = yield* waitLive(me.access, linked.connection_id)
          const facility = status.facilities[0].facility_id as string
          const base = `/v1/connections/${linked.connection_id}/facilities/${facility}`
          const { changes, cursor, meta } = yield* drain(me.access, base, undefined, 37)
          assert.strictEqual(meta.sync.status, "live")
          assert.isNotNull(meta.sync.last_synced_at)
          const ids = changes.map((c) => c.id)
          assert.strictEqual(new Set(ids).size, ids.length, "no change twice")
          for (const list of ["packages", "plants", "lab_results", "transfers", "items", "strains", "locations"]) {
            const upstream = yield* listAll(me.access, base, list)
            const fed = changes.filter((c) => c.type === list)
            assert.deepStrictEqual(
              fed.map((c) => c.object_id).sort(),
              upstream.map((o) => o.id).sort(),
              `${list}: the feed has exactly the list's objects`
            )
            for (const c of fed) {
              assert.strictEqual(c.action, "upserted")
              assert.deepStrictEqual(c.object, upstream.find((o) => o.id === c.object_id))
            }
          }
          const resources = status.facilities[0].resources as Array<any>
          const packagesRow = resources.find((r) => r.type === "packages")
          assert.strictEqual(packagesRow.status, "live")
          assert.strictEqual(packagesRow.count, changes.filter((c) => c.type === "packages").length)

          // nothing new: an empty page, and the same place
          const idle = yield* call("GET", `${base}/changes?cursor=${cursor}`, { token: me.access })
          assert.deepStrictEqual(idle.body.data, [])
          assert.isFalse(idle.body.meta.has_more)

          // a write: the new package once, and its source once (its quantity fell)
          const packages = yield* listAll(me.access, base, "packages")
          const source = packages.find((p) => !p.is_on_hold && p.quantity > 10)
          if (source !== undefined) {
            const created = yield* call("POST", `${base}/packages`, {
              token: me.access,
              json: splitOf(source)
            })
            assert.strictEqual(created.status, 201, JSON.stringify(created.body))
            let after: Array<any> = []
            for (let i = 0; i < 200 && !after.some((c) => c.object_id === created.body.data.id); i++) {
              yield* pause(25)
              after = (yield* drain(me.access, base, cursor)).changes
            }
            const mine = after.filter((c) => c.object_id === created.body.data.id)
            assert.strictEqual(mine.length, 1, "the new package once")
            assert.deepStrictEqual(mine[0].object, created.body.data)
            yield* pause(100)
            const again = (yield* drain(me.access, base, cursor)).changes
            assert.strictEqual(again.filter((c) => c.object_id === created.body.data.id).length, 1, "and only once")
          }

          // a simulated scenario: the package it puts on hold shows up once, on hold
          const { cursor: beforeHold } = yield* drain(me.access, base, cursor)
          const target = (yield* listAll(me.access, base, "packages")).find((p) => !p.is_on_hold)
          if (target !== undefined) {
            const held = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
              token: me.access,
              json: { scenario: "package_hold", params: { package_id: target.id, on_hold: true } }
            })
            assert.strictEqual(held.status, 200, JSON.stringify(held.body))
            let mine: Array<any> = []
            for (let i = 0; i < 200 && mine.length === 0; i++) {
              yield* pause(25)
              mine = (yield* drain(me.access, base, beforeHold)).changes.filter((c) => c.object_id === target.id)
            }
            // the feed shows the change exactly when the state system's read shows it (BioTrack keeps no holds)
            const read = (yield* call("GET", `${base}/packages/${target.id}`, { token: me.access })).body.data
            yield* pause(100)
            const settled = (yield* drain(me.access, base, beforeHold)).changes.filter((c) => c.object_id === target.id)
            if (read.is_on_hold) {
              assert.strictEqual(settled.length, 1, "the held package once")
              assert.deepStrictEqual(settled[0].object, read)
            } else {
              assert.deepStrictEqual(settled, [], "no change the state system does not show")
            }
          }
        }).pipe(Effect.provide(TestApp)),
      60_000
    )

    it.live(
      "a received transfer moves its packages: `removed` once from the shipper's feed, `upserted` once in the recipient's",
      () =>
        Effect.gen(function*() {
          const me = yield* signIn
          const linked = yield* linkSandbox(me.access, provider)
          yield* waitLive(me.access, linked.connection_id)
          const connection = `/v1/connections/${linked.connection_id}`
          const arrived = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
            token: me.access,
            json: { scenario: "transfer_arrived", params: {} }
          })
          assert.strictEqual(arrived.status, 200, JSON.stringify(arrived.body))
          const transfer = arrived.body.data.event.data.transfer
          const facilities = (yield* call("GET", `${connection}/facilities?per_page=100`, { token: me.access })).body
            .data as Array<any>
          const shipper = facilities.find((f) => f.license_number === transfer.shipper_facility)
          const recipient = facilities.find((f) => f.license_number === transfer.recipient_facility)
          assert.isDefined(shipper, "the transfer ships from a facility of the connection")
          assert.isDefined(recipient, "to another of its facilities")
          const moved = (transfer.packages as Array<any>).map((line) => line.package_id as string).sort()
          assert.isNotEmpty(moved)
          const from = `${connection}/facilities/${shipper.id}`
          const to = `${connection}/facilities/${recipient.id}`
          const shipped = (yield* listAll(me.access, from, "packages")).map((p) => p.id)
          for (const id of moved) assert.include(shipped, id, "the shipper holds the package before")
          const before = { from: (yield* drain(me.access, from)).cursor, to: (yield* drain(me.access, to)).cursor }

          const done = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
            token: me.access,
            json: { scenario: "transfer_completed", params: { transfer_id: transfer.id, outcome: "received" } }
          })
          assert.strictEqual(done.status, 200, JSON.stringify(done.body))
          const of = (changes: Array<any>) =>
            changes.filter((c) => c.type === "packages" && moved.includes(c.object_id))
          // each facility's sync takes the change in on its own: wait for both feeds
          let left: Array<any> = []
          let there: Array<any> = []
          for (let i = 0; i < 400 && (left.length < moved.length || there.length < moved.length); i++) {
            yield* pause(25)
            left = of((yield* drain(me.access, from, before.from)).changes)
            there = of((yield* drain(me.access, to, before.to)).changes)
          }
          yield* pause(100)
          left = of((yield* drain(me.access, from, before.from)).changes)
          assert.deepStrictEqual(
            left.map((c) => [c.object_id, c.action, c.object]).sort(),
            moved.map((id) => [id, "removed", null]),
            "each moved package removed once from the shipper's feed"
          )
          const after = (yield* listAll(me.access, from, "packages")).map((p) => p.id)
          for (const id of moved) assert.notInclude(after, id, "as the shipper's list no longer has it")
          const arrivedThere = of((yield* drain(me.access, to, before.to)).changes)
          assert.deepStrictEqual(
            arrivedThere.map((c) => [c.object_id, c.action]).sort(),
            moved.map((id) => [id, "upserted"]),
            "and upserted once in the recipient's"
          )
        }).pipe(Effect.provide(TestApp)),
      60_000
    )

    it.live(
      "a lab result at a grower's facility (recorded by the world's lab) is in the feed once, with the package it changes once",
      () =>
        Effect.gen(function*() {
          const me = yield* signIn
          const linked = yield* linkSandbox(me.access, provider)
          yield* waitLive(me.access, linked.connection_id)
          const connection = `/v1/connections/${linked.connection_id}`
          const facilities = (yield* call("GET", `${connection}/facilities?per_page=100`, { token: me.access })).body
            .data as Array<any>
          // a facility without labs (a grower's) and a package of it a sample can be drawn from
          let base = ""
          let pkg: any
          for (const f of facilities.filter((f) => !f.capabilities.includes("labs"))) {
            base = `${connection}/facilities/${f.id}`
            pkg = (yield* listAll(me.access, base, "packages")).find((p) => !p.is_on_hold && p.quantity >= 2)
            if (pkg !== undefined) break
          }
          assert.isDefined(pkg, "a package off hold with quantity >= 2 at a facility without labs")
          const { cursor } = yield* drain(me.access, base)
          const created = yield* call("POST", `${base}/lab_results`, {
            token: me.access,
            json: {
              package_id: pkg.id,
              // the world's lab records it, under its own name
              lab_name: facilities.find((f) => f.capabilities.includes("labs")).name,
              overall_passed: false,
              results: [{
                name: "Pesticides",
                category: "pesticides",
                value: 0.9,
                unit: "ppm",
                passed: false,
                notes: null
              }]
            }
          })
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          const result = created.body.data
          let after: Array<any> = []
          for (let i = 0; i < 200 && !after.some((c) => c.object_id === result.id); i++) {
            yield* pause(25)
            after = (yield* drain(me.access, base, cursor)).changes
          }
          // settled: nothing more comes later
          yield* pause(100)
          after = (yield* drain(me.access, base, cursor)).changes
          const seen = JSON.stringify(after.map((c) => [c.type, c.object_id, c.action]))
          const results = after.filter((c) => c.type === "lab_results")
          assert.deepStrictEqual(results.map((c) => [c.object_id, c.action]), [[result.id, "upserted"]], seen)
          assert.deepStrictEqual(results[0].object, result)
          const read = (yield* call("GET", `${base}/packages/${encodeURIComponent(pkg.id)}`, { token: me.access })).body
            .data
          assert.strictEqual(read.lab_testing_state, "TestFailed")
          const source = after.filter((c) => c.type === "packages" && c.object_id === pkg.id)
          assert.deepStrictEqual(source.map((c) => c.action), ["upserted"], `the package it changes, once: ${seen}`)
          assert.deepStrictEqual(source[0].object, read)
        }).pipe(Effect.provide(TestApp)),
      90_000
    )
  })
}

describe("managed sync after a sandbox reset", () => {
  it.live(
    "backfills again and removes what the reset took away: the written package is `removed` once",
    () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const linked = yield* linkSandbox(me.access)
        const status = yield* waitLive(me.access, linked.connection_id)
        const facility = status.facilities[0].facility_id as string
        const base = `/v1/connections/${linked.connection_id}/facilities/${facility}`
        const packages = yield* listAll(me.access, base, "packages")
        const source = packages.find((p) => !p.is_on_hold && p.quantity > 10)
        const created = yield* call("POST", `${base}/packages`, {
          token: me.access,
          json: splitOf(source)
        })
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        let seen = false
        for (let i = 0; i < 200 && !seen; i++) {
          yield* pause(25)
          seen = (yield* drain(me.access, base)).changes.some((c) => c.object_id === created.body.data.id)
        }
        assert.isTrue(seen, "the write is in the feed")
        const { cursor } = yield* drain(me.access, base)
        const reset = yield* call("POST", `/v1/sandbox/${linked.connection_id}/reset`, { token: me.access })
        assert.strictEqual(reset.status, 200, JSON.stringify(reset.body))
        yield* waitLive(me.access, linked.connection_id)
        const after = (yield* drain(me.access, base, cursor)).changes
        const gone = after.filter((c) => c.object_id === created.body.data.id)
        assert.deepStrictEqual(gone.map((c) => [c.action, c.object]), [["removed", null]])
        // the source's quantity is back to its seeded value: one upsert of it
        const back = after.filter((c) => c.object_id === source.id)
        assert.strictEqual(back.length, 1)
        assert.deepStrictEqual(back[0].object, source)
      }).pipe(Effect.provide(TestApp)),
    90_000
  )
})

describe("GET P/changes", () => {
  it.live("refuses a damaged cursor, another facility's, and an unknown type", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const status = yield* waitLive(me.access, linked.connection_id)
      const [a, b] = status.facilities.map((f: any) => f.facility_id as string)
      const baseA = `/v1/connections/${linked.connection_id}/facilities/${a}`
      const first = yield* call("GET", `${baseA}/changes?limit=1`, { token: me.access })
      assert.strictEqual(first.body.data.length, 1)
      const damaged = yield* call("GET", `${baseA}/changes?cursor=notacursor`, { token: me.access })
      assert.strictEqual(damaged.status, 400)
      assert.strictEqual(damaged.body.error.code, "invalid_parameter")
      assert.strictEqual(damaged.body.error.param, "cursor")
      if (b !== undefined) {
        const other = yield* call(
          "GET",
          `/v1/connections/${linked.connection_id}/facilities/${b}/changes?cursor=${first.body.meta.next_cursor}`,
          { token: me.access }
        )
        assert.strictEqual(other.status, 400)
        assert.strictEqual(other.body.error.param, "cursor")
      }
      const types = yield* call("GET", `${baseA}/changes?types=packages,widgets`, { token: me.access })
      assert.strictEqual(types.status, 400)
      assert.strictEqual(types.body.error.param, "types")
      const limit = yield* call("GET", `${baseA}/changes?limit=501`, { token: me.access })
      assert.strictEqual(limit.status, 400)
      const onlyPackages = yield* call("GET", `${baseA}/changes?types=packages&limit=500`, { token: me.access })
      assert.isTrue((onlyPackages.body.data as Array<any>).every((c) => c.type === "packages"))
    }).pipe(Effect.provide(TestApp)), 60_000)
})
