/**
 * `ProviderPort.departures` for provider_a, against its one fake: a package received by another
 * facility leaves the shipper's `/packages/v2/inactive`-listed records, and the port reports its
 * id within the window it left in (and not in a window before); a harvested plant departs through
 * `/plants/v2/inactive`, a deleted item through `/items/v2/inactive` (read whole); lists without
 * departures answer none.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

const iso = (ms: number) => new Date(ms).toISOString()

describe("ProviderA departures", () => {
  it.effect("reports a package received elsewhere as departed from the shipper, in its window only", () => {
    const a = A.make()
    // the world's cultivator ships to another of its facilities: arrive, then receive
    a.scenario("transfer_arrived", {}, A.NOW - 2 * A.HOUR)
    const transfer = a.world.transfers.find((t) => t.transfer.status === "in_transit")!.transfer
    const shipper = a.world.facilities.find((d) => d.facility.license_number === transfer.shipper_facility)!
    const moved = transfer.packages.map((line) => line.package_id)
    assert.isNotEmpty(moved)
    a.scenario("transfer_completed", { transfer_id: transfer.id, outcome: "received" }, A.NOW - A.HOUR)
    const page = { page: 1, per_page: 100 }
    return A.withPort((port) =>
      Effect.gen(function*() {
        const left = yield* port.departures(
          "packages",
          a.session(),
          shipper.facility.id,
          { from: iso(A.NOW - 90 * 60_000), to: iso(A.NOW) },
          page
        )
        assert.sameMembers([...left.items], moved)
        assert.strictEqual(left.pagination.total, moved.length)
        const before = yield* port.departures(
          "packages",
          a.session(),
          shipper.facility.id,
          { from: iso(A.NOW - 5 * A.HOUR), to: iso(A.NOW - 90 * 60_000) },
          page
        )
        assert.deepStrictEqual(before.items, [], "not in a window that ends before it left")
        const active = yield* port.listAll("packages", a.session(), shipper.facility.id, {})
        for (const id of moved) assert.notInclude(active.map((p) => p.id), id, "and no longer active there")
        const patients = yield* port.departures("patients", a.session(), shipper.facility.id, { to: iso(A.NOW) }, page)
        assert.deepStrictEqual([patients.items, patients.pagination.total], [[], 0], "a list without departures")
      })
    )
  })

  it.effect("reports a harvested plant as departed (Metrc's /plants/v2/inactive), and no longer lists it", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const plant = cultivator.plants.find((p) => p.harvest_date === null && p.growth_phase === "flowering")!
    cultivator.plants = cultivator.plants.map((p) =>
      p.id === plant.id ? { ...p, harvest_date: iso(A.NOW - A.HOUR).slice(0, 10) } : p
    )
    a.world.modified.set(plant.id, A.NOW - A.HOUR)
    return A.withPort((port) =>
      Effect.gen(function*() {
        const range = { from: iso(A.NOW - 2 * A.HOUR), to: iso(A.NOW) }
        const left = yield* port.departures("plants", a.session(), cultivator.facility.id, range, {
          page: 1,
          per_page: 100
        })
        assert.deepStrictEqual([...left.items], [plant.id])
        const listed = yield* port.listAll("plants", a.session(), cultivator.facility.id, {})
        assert.notInclude(listed.map((p) => p.id), plant.id)
      })
    )
  })

  it.effect("reads an item deleted in Metrc (its /items/v2/inactive, read whole: no window) as departed", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const item = cultivator.items[0]!
    // the world deletes no item: Metrc's answer lists one
    a.edit(
      /\/items\/v2\/inactive$/,
      (answer) => A.withRows(answer, [{ Id: Number(item.provider_item_id), Name: item.name }])
    )
    return A.withPort((port) =>
      Effect.gen(function*() {
        const range = { from: iso(A.NOW - A.HOUR), to: iso(A.NOW) }
        const left = yield* port.departures("items", a.session(), cultivator.facility.id, range, {
          page: 1,
          per_page: 100
        })
        assert.deepStrictEqual([...left.items], [item.id])
        const reads = a.queries("/items/v2/inactive")
        assert.lengthOf(reads, 1, "one request")
        assert.isNull(reads[0]!.get("lastModifiedStart"), "with no window")
      })
    )
  })
})
