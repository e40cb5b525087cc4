import { FetchHttpClient } from "@effect/platform"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import type { Resource } from "@tracebridge/core"
import { Ids, Page, ProviderContract, ProviderDescriptor, ProviderPort } from "@tracebridge/core"
import { Effect, Either, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { handlers, LICENSE, makeStore, T0 } from "./support/BioTrackServer.js"
import { facilityId, good, sessionFor, world } from "./support/setup.js"

const server = setupServer(...handlers)
beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
afterAll(() => server.close())

describe("ProviderB descriptor", () => {
  it("has a complete descriptor that hands over whole tables", () => {
    assert.deepStrictEqual(ProviderDescriptor.problems(ProviderB.descriptor), [])
    assert.isNull(ProviderB.descriptor.providerPageSize)
    assert.deepStrictEqual(ProviderDescriptor.states(ProviderB.descriptor), ["AR", "CT", "HI", "IL"])
    assert.deepStrictEqual(ProviderB.descriptor.writes, ["split_package", "record_lab_result", "create_transfer"])
  })

  it("offers no sales deliveries or patients anywhere, and derives items, strains and locations", () => {
    for (const state of ProviderDescriptor.states(ProviderB.descriptor)) {
      const c = ProviderB.descriptor.capabilities[state]!
      assert.isFalse(c.sales_deliveries)
      assert.isFalse(c.patients)
      assert.isTrue(c.items && c.strains && c.locations && c.harvests && c.labs && c.transfers)
    }
  })

  it("asks for UBI, username and password", () => {
    const decode = Schema.decodeUnknownEither(ProviderB.Credentials, { onExcessProperty: "error" })
    assert.isTrue(Either.isRight(decode({ ubi: "123456789", username: "user@example.com", password: "pw" })))
    assert.isTrue(Either.isLeft(decode({ ubi: "12345", username: "u", password: "p" })))
    assert.isTrue(Either.isLeft(decode({ ubi: "123456789", username: "u" })))
    assert.deepStrictEqual(ProviderB.descriptor.credentialFields.map((f) => f.name), ["ubi", "username", "password"])
    assert.isTrue(ProviderB.descriptor.credentialFields.find((f) => f.name === "password")!.secret)
  })
})

describe("ProviderB reads", () => {
  it.effect("pages locally from one download of the table", () =>
    Effect.gen(function*() {
      const { port, session, store } = yield* world("paging")
      const page1 = yield* port.list("packages", session, facilityId, {}, { page: 1, per_page: 2 })
      const page2 = yield* port.list("packages", session, facilityId, {}, { page: 2, per_page: 2 })
      const past = yield* port.list("packages", session, facilityId, {}, { page: 4, per_page: 2 })
      assert.deepStrictEqual(page1.pagination, { page: 1, per_page: 2, total: 5, total_pages: 3 })
      assert.deepStrictEqual(page1.items.map((p) => p.tag), ["9000000000000001", "9000000000000002"])
      assert.deepStrictEqual(page2.items.map((p) => p.tag), ["9000000000000003", "9000000000000004"])
      assert.deepStrictEqual(past.items, [])
      assert.strictEqual(past.pagination.total, 5)
      assert.strictEqual(store.calls.filter((c) => c === "sync_inventory").length, 1)
      assert.strictEqual(store.calls.filter((c) => c === "login").length, 1)
    }))

  it.effect("skips deleted rows and other locations' rows", () =>
    Effect.gen(function*() {
      const { port, session } = yield* world("deleted")
      const all = yield* port.listAll("packages", session, facilityId, {})
      assert.notInclude(all.map((p) => p.tag), "9000000000000006")
      assert.notInclude(all.map((p) => p.tag), "9000000000000007")
      const locations = yield* port.listAll("locations", session, facilityId, {})
      assert.deepStrictEqual(locations.map((l) => l.name), ["Vault", "Quarantine", "Flower Room A"])
      const facilities = yield* port.listFacilities(session, Page.firstPage)
      assert.deepStrictEqual(facilities.items.map((f) => f.license_number), [LICENSE, "900102"])
    }))

  it.effect("filters by updated_since from the rows' sessiontime, and transfers by direction", () =>
    Effect.gen(function*() {
      const { port, session } = yield* world("since")
      const recent = yield* port.listAll("packages", session, facilityId, { updated_since: "2026-01-01T00:03:20Z" })
      assert.deepStrictEqual(recent.map((p) => p.tag), ["9000000000000003", "9000000000000004"])
      const outgoing = yield* port.listAll("transfers", session, facilityId, { direction: "outgoing" })
      const incoming = yield* port.listAll("transfers", session, facilityId, { direction: "incoming" })
      assert.deepStrictEqual(outgoing.map((t) => t.manifest_number), ["9000000000000501"])
      assert.deepStrictEqual(incoming.map((t) => t.manifest_number), ["9000000000000502"])
    }))

  it.effect("a write clears the cached tables, so the next read downloads again", () =>
    Effect.gen(function*() {
      const { port, session, store } = yield* world("invalidate")
      const before = yield* port.get(
        "packages",
        session,
        facilityId,
        Ids.make("package", "provider_b", "9000000000000001")
      )
      yield* port.splitPackage(session, facilityId, {
        item_name: before.item_name,
        item_category: before.item_category,
        item_strain: before.item_strain,
        quantity: 100,
        unit_of_measure: "Grams",
        source_package_ids: [before.id]
      })
      const after = yield* port.get("packages", session, facilityId, before.id)
      assert.strictEqual(after.quantity, 200)
      assert.isAbove(store.calls.filter((c) => c === "sync_inventory").length, 1)
      const split = store.bodies.find((b) => b["action"] === "inventory_split")!
      assert.deepStrictEqual(split["data"], [{
        barcodeid: "9000000000000001",
        remove_quantity: "100",
        remove_quantity_uom: "g"
      }])
    }))

  it.effect("a split into another item uses inventory_convert with the parent and quantity", () =>
    Effect.gen(function*() {
      const { port, session, store } = yield* world("convert")
      const created = yield* port.splitPackage(session, facilityId, {
        item_name: "Blue Dream Pre-Roll",
        item_category: "Pre-Roll",
        item_strain: "Blue Dream",
        quantity: 0.5,
        unit_of_measure: "Ounces",
        source_package_ids: [Ids.make("package", "provider_b", "9000000000000001")]
      })
      const convert = store.bodies.find((b) => b["action"] === "inventory_convert")!
      assert.deepStrictEqual(convert["data"], [{
        barcodeid: "9000000000000001",
        remove_quantity: "14.174762",
        remove_quantity_uom: "g"
      }])
      assert.strictEqual(convert["derivative_type"], 31)
      assert.strictEqual(created.item_name, "Blue Dream Pre-Roll")
      assert.strictEqual(created.item_category, "Pre-Roll")
      assert.deepStrictEqual(created.source_package_ids, [Ids.make("package", "provider_b", "9000000000000001")])
    }))

  it.effect("a split from a seized lot is InsufficientQuantity and sends nothing", () =>
    Effect.gen(function*() {
      const { port, session, store } = yield* world("seized")
      const error = yield* Effect.flip(port.splitPackage(session, facilityId, {
        item_name: "Hash",
        item_category: "Concentrate",
        item_strain: "Blue Dream",
        quantity: 1,
        unit_of_measure: "Grams",
        source_package_ids: [Ids.make("package", "provider_b", "9000000000000005")]
      }))
      assert.strictEqual(error._tag, "InsufficientQuantity")
      assert.notInclude(store.calls, "inventory_split")
      assert.notInclude(store.calls, "inventory_convert")
    }))
})

const contract = makeStore("contract")
const session = sessionFor(contract.baseUrl, "contract")
const arrangeFault = (action: string, respond: () => Response) =>
  Effect.sync(() => {
    contract.store.faults.push({ action, respond })
  })
const fresh = (n: string) => ({ ...session, key: `contract-fresh-${n}` })

// The fake's rooms carry no sessiontime: give them change markers apart, so that updated_since on
// locations can be told from no filter.
for (const table of ["inventory_room", "plant_room"]) {
  contract.store.tables[table]!.forEach((room, i) => {
    room["sessiontime"] = String(T0 + 50 + 10 * i + (table === "plant_room" ? 5 : 0))
  })
}

/**
 * BioTrack's change marker of an object: the newest `sessiontime` (epoch seconds) of the live rows
 * of the facility's licence behind it.
 */
const sessiontime = (resource: Resource.Name, item: any): number | null | undefined => {
  const tables = contract.store.tables
  const rows = (table: string, match: (row: Record<string, any>) => boolean) =>
    (tables[table] ?? []).filter((r) => String(r["deleted"]) !== "1" && match(r))
  const atLicence = (r: Record<string, any>) => r["location"] === LICENSE
  const newest = (found: ReadonlyArray<Record<string, any>>) => {
    const times = found.map((r) => r["sessiontime"]).filter((t) => t !== undefined && t !== null).map(Number)
    return found.length === 0 ? undefined : times.length === 0 ? null : Math.max(...times) * 1000
  }
  switch (resource) {
    case "packages":
      return newest(rows("inventory", (r) => atLicence(r) && r["id"] === item.provider_package_id))
    case "plants":
      return newest(rows("plant", (r) => atLicence(r) && r["id"] === item.provider_plant_id))
    case "harvests":
      return newest(
        rows("plant_derivative", (r) => atLicence(r) && String(r["transactionid"]) === item.provider_harvest_id)
      )
    case "lab_results":
      return newest(rows("inventory_qa_sample", (r) => atLicence(r) && r["inventoryid"] === item.provider_result_id))
    case "transfers": {
      const [manifest, stop] = String(item.provider_transfer_id).split("/")
      const onStop = (r: Record<string, any>) => String(r["manifestid"]) === manifest
      return newest([
        ...rows("manifest", onStop),
        ...rows("manifest_stop_data", (r) => onStop(r) && String(r["stopnumber"]) === stop),
        ...rows("manifest_stop_items", (r) => onStop(r) && String(r["stopnumber"]) === stop),
        ...rows("inventory_transfer", (r) => onStop(r) && String(r["manifest_stop"]) === stop),
        ...rows("inventory_transfer_inbound", (r) => onStop(r) && String(r["manifest_stop"]) === stop)
      ])
    }
    case "sales":
      return newest(rows("sale", (r) => atLicence(r) && String(r["transactionid"]) === item.provider_sale_id))
    case "items":
      return newest(rows("inventory", (r) =>
        atLicence(r) &&
        `${r["inventorytype"]}:${(r["productname"] as string | null)?.trim() || item.name}` === item.provider_item_id))
    case "strains":
      return newest([
        ...rows("inventory", (r) => atLicence(r) && (r["strain"] as string | null)?.trim() === item.name),
        ...rows("plant", (r) => atLicence(r) && (r["strain"] as string | null)?.trim() === item.name)
      ])
    case "locations": {
      const [kind, roomid] = String(item.provider_location_id).split(":")
      return newest(
        rows(kind === "plant" ? "plant_room" : "inventory_room", (r) => atLicence(r) && r["roomid"] === roomid)
      )
    }
    default:
      return undefined
  }
}

/** Runs a call while BioTrack stops answering, moving the clock past its timeout. */
const unanswered = <A, E>(call: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    server.use(
      http.post("*", ({ request }) =>
        new Promise<Response>((resolve) => {
          request.signal.addEventListener("abort", () => resolve(HttpResponse.error()))
        }))
    )
    const fiber = yield* Effect.fork(call)
    for (let i = 0; i < 200 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      yield* TestClock.adjust("31 seconds")
    }
    return yield* Fiber.join(fiber)
  }).pipe(Effect.ensuring(Effect.sync(() => server.resetHandlers())))

const fixture: ProviderContract.Fixture = {
  session,
  invalidCredentials: { ...good, password: "wrong-password" },
  facilityId,
  updatedAt: sessiontime,
  failures: [
    {
      name: "an HTTP 500 becomes ProviderUnavailable",
      arrange: arrangeFault("sync_inventory", () => HttpResponse.text("oops", { status: 500 })),
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
      arrange: arrangeFault("sync_inventory", () => HttpResponse.text("slow down", { status: 429 })),
      expected: "ProviderRateLimited",
      call: (port, fx) => port.list("packages", fresh("429"), fx.facilityId, {}, Page.firstPage)
    },
    {
      name: "errorcode 62 becomes ProviderPermissionDenied",
      arrange: arrangeFault("sync_plant", () =>
        HttpResponse.json({
          success: 0,
          error: "The current session does not possess access to the sync_plant privilege.",
          errorcode: 62
        })),
      expected: "ProviderPermissionDenied",
      call: (port, fx) => port.list("plants", fresh("62"), fx.facilityId, {}, Page.firstPage)
    },
    {
      name: "a login refused mid-connection becomes ProviderLoginRequired",
      arrange: arrangeFault("login", () => HttpResponse.json({ success: 0, error: "Invalid username or password." })),
      expected: "ProviderLoginRequired",
      call: (port, fx) => port.list("strains", fresh("login"), fx.facilityId, {}, Page.firstPage)
    },
    {
      name: "a malformed row becomes ProviderInvalidResponse",
      arrange: arrangeFault("sync_sale", () =>
        HttpResponse.json({
          success: 1,
          sale: [{
            inventoryid: "9000000000000002",
            price: "ten",
            quantity: "1",
            location: LICENSE,
            transactionid: "1"
          }]
        })),
      expected: "ProviderInvalidResponse",
      call: (port, fx) => port.list("sales", fresh("bad"), fx.facilityId, {}, Page.firstPage)
    },
    {
      name: "a write BioTrack refuses on its merits becomes ProviderRejected",
      arrange: arrangeFault(
        "inventory_split",
        () => HttpResponse.json({ success: 0, error: "The lot is on an open manifest." })
      ),
      expected: "ProviderRejected",
      call: (port, fx) =>
        Effect.flatMap(
          port.get("packages", fresh("rejected"), fx.facilityId, Ids.make("package", "provider_b", "9000000000000001")),
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

describe.sequential("ProviderB conformance (AR, msw-backed emulator)", () => {
  const layer = Layer.mergeAll(
    Layer.effect(ProviderPort.ProviderPort, ProviderB.make),
    Layer.succeed(ProviderContract.ContractFixture, fixture)
  ).pipe(Layer.provide(FetchHttpClient.layer))
  for (const check of ProviderContract.checksFor(ProviderB.descriptor, "AR")) {
    it.effect(check.name, () => Effect.provide(check.run, layer))
  }
})
