/**
 * The provider_a adapter's conformance, against its one fake: the whole kit (`ProviderContract`)
 * over fetch and msw, on the emulator's world, with each provider-side failure arranged as a
 * one-shot answer in Metrc's own format before the emulator sees the request.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import type { Resource } from "@tracebridge/core"
import { Ids, Page, ProviderContract } from "@tracebridge/core"
import type { World } from "@tracebridge/sandbox"
import { Effect, Layer, TestClock } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

const msw = useUpstream()

/** A GET's tries: the first and every retry. */
const TRIES = ProviderAConfig.defaults.maxRetries + 1

/** Puts a package of the facility on an investigation and another on a recall, an hour ago. */
const holdEveryKind = (a: A.A, data: World.FacilityData) => {
  const free = data.packages.filter((p) => !p.is_on_hold)
  a.scenario("package_hold", { package_id: free[1]!.id, on_hold: true, kind: "investigation" }, A.NOW - A.HOUR)
  a.scenario("package_hold", { package_id: free[2]!.id, on_hold: true, kind: "recall" }, A.NOW - A.HOUR)
}

describe.sequential("ProviderA conformance (CO, over msw)", () => {
  const a = A.make()
  const cultivator = a.facility("cultivation")
  const retail = a.facility("retail")
  // only a testing laboratory records lab results, on a sample it holds
  const lab = a.facility("testing")
  const medical = a.facility("medical")
  // The seeded cultivator only ships: transfer_arrived gives it an incoming transfer, so that the
  // direction filter can be told from no filter.
  a.scenario("transfer_arrived", { facility_id: cultivator.facility.id }, A.NOW - A.HOUR)
  // Metrc's other holds beside the seeded administrative one: each reads as is_on_hold, so the
  // is_on_hold filter must count them too (issue #29)
  holdEveryKind(a, cultivator)
  /**
   * Metrc's change marker (`LastModified`) of the record behind an object, as the emulator serves
   * it. Metrc keeps none per lab result (results are read per package changed in the window), nor
   * on a patient.
   */
  const lastModified = (resource: Resource.Name, item: any): number | null | undefined =>
    resource === "patients"
      ? undefined
      : a.world.modified.get(resource === "lab_results" ? item.package_id : item.id) ?? null
  const fail = (status: number, count: number, headers: Record<string, string> = {}) =>
    Effect.sync(() =>
      a.upstream.failNext(
        () =>
          status === 401
            ? new Response(null, { status })
            : A.json({ Message: `status ${status}` }, status, headers),
        { count }
      )
    )
  const layer = Layer.mergeAll(
    A.portLayer(),
    Layer.succeed(ProviderContract.ContractFixture, {
      session: a.session(),
      invalidCredentials: A.bad,
      facilityId: cultivator.facility.id,
      facilityFor: { sales: retail.facility.id, sales_deliveries: retail.facility.id, patients: medical.facility.id },
      writeFacilityFor: { record_lab_result: lab.facility.id },
      updatedAt: lastModified,
      notApplicable: {
        filters: {
          "patients.updated_since": "Metrc documents neither a lastModified window on /patients/v2/active nor a " +
            "LastModified on a patient: updated_since cannot narrow them, and every patient is returned"
        }
      },
      failures: [
        {
          name: "500s past the retries become ProviderUnavailable",
          arrange: fail(500, TRIES),
          expected: "ProviderUnavailable"
        },
        {
          name: "no answer within the timeout, past the retries, becomes ProviderTimeout",
          arrange: Effect.void,
          expected: "ProviderTimeout",
          call: (port, fx) =>
            A.unanswered(msw, a.upstream, port.list("items", fx.session, fx.facilityId, {}, Page.firstPage))
        },
        { name: "a 401 becomes ProviderLoginRequired", arrange: fail(401, 1), expected: "ProviderLoginRequired" },
        { name: "a 403 becomes ProviderPermissionDenied", arrange: fail(403, 1), expected: "ProviderPermissionDenied" },
        {
          name: "429s past the retries become ProviderRateLimited",
          arrange: fail(429, TRIES, { "retry-after": "0" }),
          expected: "ProviderRateLimited"
        },
        {
          name: "a body off the wire schema becomes ProviderInvalidResponse",
          arrange: Effect.sync(() => a.upstream.failNext(() => A.json({ Data: [{ Id: "x" }], Total: 1 }))),
          expected: "ProviderInvalidResponse"
        },
        {
          name: "a write refused with validation rows becomes ProviderRejected",
          arrange: Effect.void,
          expected: "ProviderRejected",
          call: (port, fx) =>
            port.splitPackage(fx.session, fx.facilityId, {
              item_name: "No Such Item",
              item_category: "Flower",
              item_strain: null,
              quantity: 1,
              unit_of_measure: "Grams",
              source_package_ids: [cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!.id]
            })
        },
        {
          name: "a 404 on a get becomes ResourceNotFound",
          arrange: Effect.void,
          expected: "ResourceNotFound",
          call: (port, fx) => port.get("items", fx.session, fx.facilityId, Ids.make("item", "provider_a", "999999"))
        }
      ]
    })
  )
  for (const check of ProviderContract.checksFor(ProviderA.descriptor, "CO")) {
    it.effect(check.name, () => Effect.provide(Effect.zipRight(TestClock.setTime(A.NOW), check.run), layer))
  }
})

describe.sequential("ProviderA filters in production mode (the strict emulator as a production state system)", () => {
  const a = A.make()
  const cultivator = a.facility("cultivation")
  const retail = a.facility("retail")
  const medical = a.facility("medical")
  a.scenario("transfer_arrived", { facility_id: cultivator.facility.id }, A.NOW - A.HOUR)
  holdEveryKind(a, cultivator)
  const layer = Layer.mergeAll(
    A.portLayer(),
    Layer.succeed(ProviderContract.ContractFixture, {
      session: { ...a.session(), environment: "production" as const },
      invalidCredentials: A.bad,
      facilityId: cultivator.facility.id,
      facilityFor: { sales: retail.facility.id, sales_deliveries: retail.facility.id, patients: medical.facility.id },
      updatedAt: (resource: Resource.Name, item: any) =>
        resource === "patients"
          ? undefined
          : a.world.modified.get(resource === "lab_results" ? item.package_id : item.id) ?? null,
      notApplicable: {
        filters: {
          "patients.updated_since": "Metrc documents neither a lastModified window on /patients/v2/active nor a " +
            "LastModified on a patient"
        }
      },
      failures: []
    })
  )
  it("the facility holds a package on each kind of hold", () => {
    const held = cultivator.packages.filter((p) => p.is_on_hold).map((p) => a.world.holds.get(p.id) ?? "administrative")
    assert.sameMembers([...new Set(held)], ["administrative", "investigation", "recall"])
  })
  for (const check of ProviderContract.filterChecksFor(ProviderA.descriptor, "CO")) {
    it.effect(check.name, () => Effect.provide(Effect.zipRight(TestClock.setTime(A.NOW), check.run), layer))
  }
})
