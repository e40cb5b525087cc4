/**
 * The provider_b adapter (`ProviderB`) against the emulator, over msw (`FetchHttpClient`, as in
 * production): local paging from one download of a table (answered keyed by row number, as
 * BioTrack does), deleted rows and other locations' rows, `updated_since` from `sessiontime` and
 * transfers by direction, the table cache around writes, `inventory_split` against
 * `inventory_convert`, splits from unusable lots, and the conformance kit in AR with BioTrack's
 * failures answered as one-shots before the emulator (`Upstream.failNext`).
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import { Page, ProviderContract, ProviderPort } from "@tracebridge/core"
import type { World } from "@tracebridge/sandbox"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import * as Upstream from "../../support/Upstream.js"
import type { B } from "./Support.js"
import { changedAt, good, hang, json, make, NOW, onAction, rowsOf } from "./Support.js"

Upstream.useUpstream()

const portOf = ProviderB.make.pipe(Effect.provide(Upstream.httpClient))

const count = (b: B, action: string) => b.actions().filter((a) => a === action).length

/** A usable lot of a facility in grams with at least `quantity`. */
const gramLot = (b: B, quantity: number) => {
  const lot = b.facility("cultivation").packages.find((p) =>
    !p.is_on_hold && p.unit_of_measure === "Grams" && p.item_category === "Flower" && p.quantity >= quantity
  )
  if (lot === undefined) throw new Error(`no usable lot of ${quantity} g`)
  return lot
}

describe("ProviderB reads against the emulator", () => {
  it.effect("pages locally from one download of the table", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const session = b.session("paging")
      const cultivator = b.facility("cultivation")
      const id = cultivator.facility.id
      const tags = cultivator.packages.map((p) => p.tag)
      assert.isAbove(tags.length, 4, "enough lots for a page past the second")
      const pages = Math.ceil(tags.length / 2)
      const page1 = yield* port.list("packages", session, id, {}, { page: 1, per_page: 2 })
      const page2 = yield* port.list("packages", session, id, {}, { page: 2, per_page: 2 })
      const past = yield* port.list("packages", session, id, {}, { page: pages + 1, per_page: 2 })
      assert.deepStrictEqual(page1.pagination, { page: 1, per_page: 2, total: tags.length, total_pages: pages })
      assert.deepStrictEqual(page1.items.map((p) => p.tag), tags.slice(0, 2))
      assert.deepStrictEqual(page2.items.map((p) => p.tag), tags.slice(2, 4))
      assert.deepStrictEqual(past.items, [])
      assert.strictEqual(past.pagination.total, tags.length)
      assert.strictEqual(count(b, "sync_inventory"), 1)
      assert.strictEqual(count(b, "login"), 1)
    }))

  it.effect("reads a table BioTrack answers keyed by row number", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const cultivator = b.facility("cultivation")
      // What the emulator answers: `inventory` as {"0": row, "1": row, …}.
      const raw = yield* Effect.promise(async () => {
        const url = b.upstream.baseUrl("provider_b", b.state)
        const post = async (body: Record<string, unknown>) =>
          (await (await fetch(url, { method: "POST", body: JSON.stringify({ API: "4.0", ...body }) }))
            .json()) as Record<
              string,
              unknown
            >
        const login = await post({
          action: "login",
          license_number: good.ubi,
          username: good.username,
          password: good.password
        })
        return post({ action: "sync_inventory", sessionid: login["sessionid"], download: 1, transaction_start: 0 })
      })
      const inventory = raw["inventory"]
      assert.isFalse(Array.isArray(inventory))
      assert.deepStrictEqual(
        Object.keys(inventory as object),
        rowsOf(inventory).map((_, i) => String(i))
      )
      const all = yield* port.listAll("packages", b.session("keyed"), cultivator.facility.id, {})
      assert.deepStrictEqual(all.map((p) => p.tag), cultivator.packages.map((p) => p.tag))
    }))

  it.effect("skips deleted rows and other locations' rows", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const session = b.session("deleted")
      const cultivator = b.facility("cultivation")
      const license = cultivator.facility.license_number
      const other = b.facility("manufacturing")
      assert.isAbove(other.packages.length, 0, "another location's lots are in the same table")

      // A closed site of the company (deleted) and a lab of another company (another UBI).
      const vendorsEdited = b.editNext("sync_vendor", (answer) => ({
        ...answer,
        vendor: [
          ...rowsOf(answer["vendor"]),
          { ubi: good.ubi, location: "900199", name: "Closed Site", state: "AR", deleted: 1, transactionid: 103 },
          { ubi: "900000009", location: "900901", name: "Example QA Lab", state: "AR", deleted: 0, transactionid: 102 }
        ]
      }))
      const facilities = yield* port.listFacilities(session, Page.firstPage)
      assert.isTrue(vendorsEdited())
      assert.deepStrictEqual(
        facilities.items.map((f) => f.license_number),
        b.world.facilities.map((d) => d.facility.license_number)
      )

      // A lot of the facility that was deleted (a voided split, say).
      const deletedTag = "6999999999999999"
      const inventoryEdited = b.editNext("sync_inventory", (answer) => {
        const rows = rowsOf(answer["inventory"])
        const mine = rows.find((r) => r["location"] === license)!
        return { ...answer, inventory: [...rows, { ...mine, id: deletedTag, deleted: "1" }] }
      })
      const all = yield* port.listAll("packages", session, cultivator.facility.id, {})
      assert.isTrue(inventoryEdited())
      assert.deepStrictEqual(all.map((p) => p.tag), cultivator.packages.map((p) => p.tag))
      assert.notInclude(all.map((p) => p.tag), deletedTag)
      assert.notInclude(all.map((p) => p.tag), other.packages[0]!.tag)

      // A room of the facility that was deleted.
      const roomsEdited = b.editNext("sync_inventory_room", (answer) => ({
        ...answer,
        inventory_room: [
          ...rowsOf(answer["inventory_room"]),
          { roomid: "99", name: "Old Vault", location: license, quarantine: "0", deleted: "1", transactionid: "302" }
        ]
      }))
      const locations = yield* port.listAll("locations", session, cultivator.facility.id, {})
      assert.isTrue(roomsEdited())
      const plantRooms = new Set(cultivator.plants.map((p) => p.location))
      const names = cultivator.locations.map((l) => l.name)
      assert.deepStrictEqual(locations.map((l) => l.name), [
        ...names.filter((n) => !plantRooms.has(n)),
        ...names.filter((n) => plantRooms.has(n))
      ])
      assert.notInclude(locations.map((l) => l.name), "Old Vault")
    }))

  it.effect("filters by updated_since from the rows' sessiontime, and transfers by direction", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const session = b.session("since")
      const cultivator = b.facility("cultivation")
      const license = cultivator.facility.license_number
      const changed = (p: { readonly id: string }) => b.world.modified.get(p.id) ?? -Infinity
      const times = [...new Set(cultivator.packages.map(changed))].sort((x, y) => x - y)
      const since = times[Math.floor(times.length / 2)]!
      const expected = cultivator.packages.filter((p) => changed(p) >= since).map((p) => p.tag)
      assert.isTrue(expected.length > 0 && expected.length < cultivator.packages.length)
      const recent = yield* port.listAll("packages", session, cultivator.facility.id, {
        updated_since: new Date(since).toISOString()
      })
      assert.deepStrictEqual(recent.map((p) => p.tag), expected)

      // The seeded cultivator only ships: a transfer arrives for it.
      b.scenario("transfer_arrived", { facility_id: cultivator.facility.id })
      const transfers = b.world.transfers.filter((t) => !t.template).map((t) => t.transfer)
      const outgoing = yield* port.listAll("transfers", session, cultivator.facility.id, { direction: "outgoing" })
      const incoming = yield* port.listAll("transfers", session, cultivator.facility.id, { direction: "incoming" })
      assert.deepStrictEqual(
        outgoing.map((t) => t.manifest_number),
        transfers.filter((t) => t.shipper_facility === license).map((t) => t.manifest_number)
      )
      assert.deepStrictEqual(
        incoming.map((t) => t.manifest_number),
        transfers.filter((t) => t.recipient_facility === license).map((t) => t.manifest_number)
      )
      assert.isAbove(outgoing.length, 0)
      assert.isAbove(incoming.length, 0)
    }))

  it.effect("a room's sessiontime, when BioTrack sends one, is its change marker for updated_since", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const session = b.session("rooms")
      const cultivator = b.facility("cultivation")
      const T0 = Math.floor(NOW / 1000) - 86_400
      // As recorded, BioTrack's room rows carry no sessiontime, and neither do the emulator's; some
      // BioTrack answers do carry one on every row: give each room its own.
      const stamp = (offset: number) => (answer: Record<string, unknown>) =>
        Object.fromEntries(
          Object.entries(answer).map(([k, v]) => [
            k,
            k === "success" ? v : rowsOf(v).map((r, i) => ({ ...r, sessiontime: T0 + offset + 10 * i }))
          ])
        )
      b.editNext("sync_inventory_room", stamp(0))
      b.editNext("sync_plant_room", stamp(100))
      const all = yield* port.listAll("locations", session, cultivator.facility.id, {})
      const plantRooms = new Set(cultivator.plants.map((p) => p.location))
      assert.isTrue(all.some((l) => plantRooms.has(l.name)) && all.some((l) => !plantRooms.has(l.name)))
      const since = new Date((T0 + 100) * 1000).toISOString()
      const recent = yield* port.listAll("locations", session, cultivator.facility.id, { updated_since: since })
      assert.deepStrictEqual(recent.map((l) => l.name), all.filter((l) => plantRooms.has(l.name)).map((l) => l.name))
      // Past the table cache, the emulator's own rooms (no sessiontime) match no updated_since.
      yield* TestClock.adjust(ProviderB.CACHE_TTL)
      yield* TestClock.adjust("1 second")
      const unmarked = yield* port.listAll("locations", session, cultivator.facility.id, { updated_since: since })
      assert.deepStrictEqual(unmarked, [])
      assert.strictEqual(count(b, "sync_inventory_room"), 2)
    }))
})

describe("ProviderB writes against the emulator", () => {
  it.effect("a write clears the cached tables, so the next read downloads again", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const session = b.session("invalidate")
      const facilityId = b.facility("cultivation").facility.id
      const lot = gramLot(b, 150)
      const before = yield* port.get("packages", session, facilityId, lot.id)
      yield* port.splitPackage(session, facilityId, {
        item_name: before.item_name,
        item_category: before.item_category,
        item_strain: before.item_strain,
        quantity: 100,
        unit_of_measure: "Grams",
        source_package_ids: [before.id]
      })
      const after = yield* port.get("packages", session, facilityId, before.id)
      assert.strictEqual(after.quantity, Math.round((before.quantity - 100) * 10_000) / 10_000)
      assert.isAbove(count(b, "sync_inventory"), 1)
      const split = b.bodies().find((body) => body["action"] === "inventory_split")!
      assert.deepStrictEqual(split["data"], [{ barcodeid: lot.tag, remove_quantity: "100", remove_quantity_uom: "g" }])
    }))

  it.effect("a split into another item uses inventory_convert with the parent and quantity", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const cultivator = b.facility("cultivation")
      const lot = gramLot(b, 20)
      const preRoll = cultivator.items.find((i) =>
        i.category === "Pre-Roll" && lot.item_strain !== null && i.name.startsWith(lot.item_strain)
      )
      assert.isDefined(preRoll, "the facility knows a pre-roll of the lot's strain")
      const created = yield* port.splitPackage(b.session("convert"), cultivator.facility.id, {
        item_name: preRoll!.name,
        item_category: "Pre-Roll",
        item_strain: lot.item_strain,
        quantity: 0.5,
        unit_of_measure: "Ounces",
        source_package_ids: [lot.id]
      })
      const convert = b.bodies().find((body) => body["action"] === "inventory_convert")!
      assert.deepStrictEqual(convert["data"], [{
        barcodeid: lot.tag,
        remove_quantity: "14.174762",
        remove_quantity_uom: "g"
      }])
      assert.strictEqual(convert["derivative_type"], 31)
      assert.strictEqual(convert["derivative_product"], preRoll!.name)
      assert.strictEqual(created.item_name, preRoll!.name)
      assert.strictEqual(created.item_category, "Pre-Roll")
      assert.deepStrictEqual(created.source_package_ids, [lot.id])
      assert.isTrue(cultivator.packages.some((p) => p.id === created.id), "the world holds the new lot")
      assert.strictEqual(count(b, "inventory_split"), 0)
    }))

  it.effect("a split from a seized or held lot is InsufficientQuantity and sends nothing", () =>
    Effect.gen(function*() {
      const b = make()
      const port = yield* portOf
      const session = b.session("seized")
      const cultivator = b.facility("cultivation")
      const [seized, held] = cultivator.packages.filter((p) => !p.is_on_hold && p.unit_of_measure === "Grams")
      const command = (lot: typeof seized) => ({
        item_name: "Hash",
        item_category: "Concentrate",
        item_strain: lot!.item_strain,
        quantity: 1,
        unit_of_measure: "Grams",
        source_package_ids: [lot!.id]
      })
      // Seized by law enforcement: BioTrack's `seized` flag on the lot's row.
      b.editNext("sync_inventory", (answer) => ({
        ...answer,
        inventory: rowsOf(answer["inventory"]).map((r) => (r["id"] === seized!.tag ? { ...r, seized: "1" } : r))
      }))
      const error = yield* Effect.flip(port.splitPackage(session, cultivator.facility.id, command(seized)))
      assert.strictEqual(error._tag, "InsufficientQuantity")
      // On hold in the world: the emulator marks the lot with an inventory status.
      b.scenario("package_hold", { package_id: held!.id, on_hold: true })
      const onHold = yield* Effect.flip(port.splitPackage(session, cultivator.facility.id, command(held)))
      assert.strictEqual(onHold._tag, "InsufficientQuantity")
      assert.strictEqual(count(b, "sync_inventory"), 2)
      assert.notInclude(b.actions(), "inventory_split")
      assert.notInclude(b.actions(), "inventory_convert")
    }))
})

/**
 * Puts a lot of the facility on an investigation and another on a recall (BioTrack: seized lots),
 * each at its own last change, so that no change marker moves (the updated_since checks stay as
 * discriminating as the seeded world makes them).
 */
const holdEveryKind = (b: B, data: World.FacilityData) => {
  const free = data.packages.filter((p) => !p.is_on_hold)
  for (const [p, kind] of [[free[1]!, "investigation"], [free[2]!, "recall"]] as const) {
    b.scenario("package_hold", { package_id: p.id, on_hold: true, kind }, b.world.modified.get(p.id) ?? NOW)
  }
}

describe.sequential("ProviderB conformance (AR, the emulator over msw)", () => {
  const b = make()
  const cultivator = b.facility("cultivation")
  const retail = b.facility("retail")
  // only a testing laboratory records lab results, on a sample it holds
  const lab = b.facility("testing")
  const session = b.session("contract")
  const fresh = (n: string) => b.session(`contract-fresh-${n}`)
  // The seeded cultivator only ships: transfer_arrived gives it an incoming transfer, so that the
  // direction filter can be told from no filter.
  b.scenario("transfer_arrived", { facility_id: cultivator.facility.id })
  // every kind of hold (issue #29): a status hold (seeded), and lots seized for an investigation and a recall
  holdEveryKind(b, cultivator)
  const arrange = (action: string, respond: () => Response) =>
    Effect.sync(() => b.upstream.failNext(respond, { match: onAction(action) }))

  /** Runs a call while BioTrack stops answering, moving the clock past its timeout. */
  const unanswered = <A, E>(call: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      b.upstream.failNext(hang)
      const fiber = yield* Effect.fork(call)
      for (let i = 0; i < 200 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
        yield* TestClock.adjust("31 seconds")
      }
      return yield* Fiber.join(fiber)
    })

  const fixture: ProviderContract.Fixture = {
    session,
    invalidCredentials: { ...good, password: "wrong-password" },
    facilityId: cultivator.facility.id,
    // a cultivator sells nothing; the adult-use dispensary does
    facilityFor: { sales: retail.facility.id },
    writeFacilityFor: { record_lab_result: lab.facility.id },
    updatedAt: changedAt(b),
    notApplicable: {
      filters: {
        "locations.updated_since": "BioTrack's room rows carry no sessiontime (recorded; the emulator's neither), " +
          "so no updated_since returns a location; Adapter.test.ts gives rooms one to test the filter"
      }
    },
    failures: [
      {
        name: "an HTTP 500 becomes ProviderUnavailable",
        arrange: arrange("sync_inventory", () => new Response("oops", { status: 500 })),
        expected: "ProviderUnavailable",
        call: (port, fx) => port.list("packages", fresh("500"), fx.facilityId, {}, Page.firstPage)
      },
      {
        name: "no answer within the timeout becomes ProviderTimeout",
        arrange: Effect.void,
        expected: "ProviderTimeout",
        call: (port, fx) => unanswered(port.list("packages", fresh("timeout"), fx.facilityId, {}, Page.firstPage))
      },
      {
        name: "an HTTP 429 becomes ProviderRateLimited",
        arrange: arrange("sync_inventory", () => new Response("slow down", { status: 429 })),
        expected: "ProviderRateLimited",
        call: (port, fx) => port.list("packages", fresh("429"), fx.facilityId, {}, Page.firstPage)
      },
      {
        name: "errorcode 62 becomes ProviderPermissionDenied",
        arrange: arrange("sync_plant", () =>
          json({
            success: 0,
            error: "The current session does not possess access to the sync_plant privilege.",
            errorcode: 62
          })),
        expected: "ProviderPermissionDenied",
        call: (port, fx) => port.list("plants", fresh("62"), fx.facilityId, {}, Page.firstPage)
      },
      {
        name: "a login refused mid-connection becomes ProviderLoginRequired",
        arrange: arrange("login", () => json({ success: 0, error: "Invalid username or password." })),
        expected: "ProviderLoginRequired",
        call: (port, fx) => port.list("strains", fresh("login"), fx.facilityId, {}, Page.firstPage)
      },
      {
        name: "a table that is not a table becomes ProviderInvalidResponse (one odd row is skipped instead)",
        arrange: arrange("sync_sale", () =>
          json({
            success: 1,
            sale: "not a table"
          })),
        expected: "ProviderInvalidResponse",
        call: (port) => port.list("sales", fresh("bad"), retail.facility.id, {}, Page.firstPage)
      },
      {
        name: "a write BioTrack refuses on its merits becomes ProviderRejected",
        arrange: arrange("inventory_split", () => json({ success: 0, error: "The lot is on an open manifest." })),
        expected: "ProviderRejected",
        call: (port, fx) =>
          Effect.flatMap(
            port.get("packages", fresh("rejected"), fx.facilityId, gramLot(b, 2).id),
            (lot) =>
              port.splitPackage(fresh("rejected"), fx.facilityId, {
                item_name: lot.item_name,
                item_category: lot.item_category,
                item_strain: lot.item_strain,
                quantity: 1,
                unit_of_measure: lot.unit_of_measure,
                source_package_ids: [lot.id]
              })
          )
      }
    ]
  }

  const layer = Layer.mergeAll(
    Layer.effect(ProviderPort.ProviderPort, ProviderB.make),
    Layer.succeed(ProviderContract.ContractFixture, fixture)
  ).pipe(Layer.provide(Upstream.httpClient))
  for (const check of ProviderContract.checksFor(ProviderB.descriptor, "AR")) {
    it.effect(check.name, () => Effect.provide(Effect.zipRight(TestClock.setTime(NOW), check.run), layer))
  }
})

describe.sequential("ProviderB filters in production mode (the strict emulator as a production state system)", () => {
  const b = make()
  const cultivator = b.facility("cultivation")
  const retail = b.facility("retail")
  b.scenario("transfer_arrived", { facility_id: cultivator.facility.id })
  holdEveryKind(b, cultivator)
  const fixture: ProviderContract.Fixture = {
    session: { ...b.session("contract-production"), environment: "production" },
    invalidCredentials: { ...good, password: "wrong-password" },
    facilityId: cultivator.facility.id,
    facilityFor: { sales: retail.facility.id },
    updatedAt: changedAt(b),
    notApplicable: {
      filters: {
        "locations.updated_since": "BioTrack's room rows carry no sessiontime, so no updated_since returns a location"
      }
    },
    failures: []
  }
  const layer = Layer.mergeAll(
    Layer.effect(ProviderPort.ProviderPort, ProviderB.make),
    Layer.succeed(ProviderContract.ContractFixture, fixture)
  ).pipe(Layer.provide(Upstream.httpClient))
  it("the facility holds a lot on each kind of hold", () => {
    const held = cultivator.packages.filter((p) => p.is_on_hold).map((p) => b.world.holds.get(p.id) ?? "administrative")
    assert.sameMembers([...new Set(held)], ["administrative", "investigation", "recall"])
  })
  for (const check of ProviderContract.filterChecksFor(ProviderB.descriptor, "AR")) {
    it.effect(check.name, () => Effect.provide(Effect.zipRight(TestClock.setTime(NOW), check.run), layer))
  }
})
