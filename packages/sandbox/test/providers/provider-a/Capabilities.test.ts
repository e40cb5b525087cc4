/**
 * What a Metrc facility can do, against its one fake: a split needs the package tags endpoint
 * (a paid extra in some states), answered as a clear capability error before anything is written;
 * finished harvests (Metrc's `/harvests/v2/inactive`) stay readable.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

describe("ProviderA capabilities", () => {
  it.effect("answers a split on a licence without the tags endpoint with CapabilityNotEnabled, writing nothing", () => {
    // the default world's cultivator licence, without the tags endpoint (worlds of one seed agree)
    const license = A.make().facility("cultivation").facility.license_number
    const a = A.make({ emulator: { withoutTagsEndpoint: [license] } })
    const cultivator = a.facility("cultivation")
    const source = cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!
    const item = cultivator.items.find((i) => i.unit_of_measure === source.unit_of_measure)!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(port.splitPackage(a.session(), cultivator.facility.id, {
          item_name: item.name,
          item_category: item.category,
          item_strain: item.strain,
          quantity: 1,
          unit_of_measure: source.unit_of_measure,
          source_package_ids: [source.id]
        }))
        assert.strictEqual(error._tag, "CapabilityNotEnabled")
        if (error._tag === "CapabilityNotEnabled") {
          assert.strictEqual(error.capability, "package_tags")
          assert.include(error.message, "/tags/v2/package/available")
          assert.include(error.message, license)
        }
        assert.isFalse(a.upstream.log.some((l) => l.startsWith("POST")), "nothing was written")
      })
    )
  })

  it.effect("lists and reads a finished harvest (Metrc's /harvests/v2/inactive)", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const finished = cultivator.harvests[0]!
    cultivator.harvests = cultivator.harvests.map((h) => (h.id === finished.id ? { ...h, current_weight: 0 } : h))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const all = yield* port.listAll("harvests", a.session(), cultivator.facility.id, {})
        assert.sameMembers(all.map((h) => h.id), cultivator.harvests.map((h) => h.id))
        const read = all.find((h) => h.id === finished.id)!
        assert.strictEqual(read.current_weight, 0)
        assert.isTrue(a.upstream.log.some((l) => l.startsWith("GET /harvests/v2/inactive?")))
        assert.deepStrictEqual(yield* port.get("harvests", a.session(), cultivator.facility.id, finished.id), read)
      })
    )
  })

  it.effect("a grower's lab result goes through a testing sample and the lab's licence; Metrc refuses the grower's", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const lab = a.facility("testing")
    const command = (packageId: string) => ({
      package_id: packageId as never,
      lab_name: lab.facility.name,
      overall_passed: true,
      results: [{ name: "THC", category: "potency", value: 20, unit: "%", passed: true, notes: null }],
      lab_license: null,
      test_type: "ComplianceTesting",
      test_date: null
    })
    return A.withPort((port) =>
      Effect.gen(function*() {
        // at the cultivator: a testing sample on its licence, the result recorded on the lab's
        const source = cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!
        const byLab = yield* port.recordLabResult(a.session(), cultivator.facility.id, command(source.id))
        assert.strictEqual(byLab.package_id, source.id)
        assert.strictEqual(byLab.lab_license, lab.facility.license_number)
        const posts = a.upstream.log.filter((l) => l.startsWith("POST"))
        assert.strictEqual(posts.length, 2, posts.join("\n"))
        assert.include(posts[0]!, `/packages/v2/testing?licenseNumber=${cultivator.facility.license_number}`)
        assert.include(posts[1]!, `/labtests/v2/record?licenseNumber=${lab.facility.license_number}`)
        // Metrc itself refuses a licence that may not record results
        const raw = yield* Effect.promise(() =>
          fetch(
            `${
              a.upstream.baseUrl("provider_a", "CO")
            }/labtests/v2/record?licenseNumber=${cultivator.facility.license_number}`,
            {
              method: "POST",
              headers: { authorization: `Basic ${btoa(`vendor:${A.good.user_key}`)}` },
              body: JSON.stringify([{
                Label: cultivator.packages[0]!.tag,
                ResultDate: "2026-03-15T00:00:00Z",
                Results: []
              }])
            }
          )
        )
        assert.strictEqual(raw.status, 403)
        // the lab records on the sample it holds
        const sample = lab.packages[0]!
        const created = yield* port.recordLabResult(a.session(), lab.facility.id, command(sample.id))
        assert.strictEqual(created.package_id, sample.id)
      })
    )
  })
})
