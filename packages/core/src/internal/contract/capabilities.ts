/**
 * What the descriptor does not claim is refused: an unclaimed resource's list, each of its
 * filters and a get, and every undeclared write, are `CapabilityNotEnabled`.
 */
import { Effect } from "effect"
import * as Ids from "../../Ids.js"
import * as Page from "../../Page.js"
import type { WriteName } from "../../ProviderDescriptor.js"
import type { ProviderError } from "../../ProviderError.js"
import type { ProviderName } from "../../ProviderName.js"
import type * as Resource from "../../Resource.js"
import { filtersOf } from "./filters.js"
import { check, definitionOf, expectFailure, facilityOf } from "./kit.js"

/** A value of each filter, for the calls that must be refused whatever they ask. */
const sampleFilterValue = (filter: string, provider: ProviderName): unknown =>
  ({
    updated_since: "2026-01-01T00:00:00Z",
    from: "2026-01-01T00:00:00Z",
    to: "2026-12-31T23:59:59Z",
    is_on_hold: true,
    lab_testing_state: "TestPassed",
    tag: "TRACEBRIDGE-CONTRACT-TAG",
    growth_phase: "vegetative",
    status: "pending",
    direction: "incoming",
    package_id: Ids.make("package", provider, "tracebridge-contract-missing-0")
  } as Record<string, unknown>)[filter]

/**
 * An unclaimed resource: its list, the list with each of its filters, and a get are
 * `CapabilityNotEnabled`, naming the resource's capability and the state.
 */
export const disabledCheck = (name: Resource.Name, state: string) => {
  const definition = definitionOf(name)
  return check(
    `${name}: not claimed in ${state}, its list, each filter and a get answer CapabilityNotEnabled`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facilityId = facilityOf(fx, name)
        const refused = (error: ProviderError, what: string) => {
          const e = error as { readonly capability?: unknown; readonly state?: unknown }
          return assert(
            e.capability === definition.capability && e.state === state,
            `${what}: CapabilityNotEnabled names capability ${String(e.capability)} in ${
              String(e.state)
            }, expected ${definition.capability} in ${state}`
          )
        }
        const list = yield* expectFailure(
          port.list(name, fx.session, facilityId, {}, Page.firstPage),
          "CapabilityNotEnabled",
          `${name} disabled`
        )
        yield* refused(list, "the list")
        for (const filter of filtersOf(name)) {
          const value = sampleFilterValue(filter, port.descriptor.name)
          yield* assert(value !== undefined, `the kit has no sample value for the ${filter} filter`)
          // why the cast: the filter's name is read from the query schema at run time (`filtersOf`),
          // so the query's type cannot be stated; `sampleFilterValue` gives a value of its type
          const query = { [filter]: value } as Resource.Filters<Resource.Name>
          const error = yield* expectFailure(
            port.list(name, fx.session, facilityId, query, Page.firstPage),
            "CapabilityNotEnabled",
            `${name} disabled, filtered by ${filter}`
          )
          yield* refused(error, `the ${filter} filter`)
        }
        const missing = Ids.make(definition.kind, port.descriptor.name, "tracebridge-contract-missing-0")
        const get = yield* expectFailure(
          port.get(name, fx.session, facilityId, missing),
          "CapabilityNotEnabled",
          `${name} get disabled`
        )
        yield* refused(get, "a get")
      })
  )
}

/** A write the descriptor does not declare is `CapabilityNotEnabled`. */
export const undeclaredWrite = (name: WriteName) =>
  check(`writes: ${name} is not declared, answers CapabilityNotEnabled`, (port, fx) => {
    const calls: Record<WriteName, Effect.Effect<unknown, ProviderError>> = {
      split_package: port.splitPackage(fx.session, fx.facilityId, {
        item_name: "x",
        item_category: "x",
        item_strain: null,
        quantity: 1,
        unit_of_measure: "Grams",
        source_package_ids: [Ids.make("package", port.descriptor.name, "1")]
      }),
      record_lab_result: port.recordLabResult(fx.session, fx.facilityId, {
        package_id: Ids.make("package", port.descriptor.name, "1"),
        lab_name: "x",
        overall_passed: true,
        results: [{ name: "THC", category: "potency", value: 1, unit: "%", passed: true, notes: null }],
        lab_license: null,
        test_type: "ComplianceTesting",
        test_date: null
      }),
      create_transfer: port.createTransfer(fx.session, fx.facilityId, {
        transfer_type: "Transfer",
        shipper_facility: "x",
        recipient_facility: "y",
        packages: [{
          package_id: Ids.make("package", port.descriptor.name, "1"),
          tag: "x",
          item_name: "x",
          quantity: 1,
          unit_of_measure: "Grams"
        }],
        estimated_departure: null,
        estimated_arrival: null,
        transporter: null,
        driver_name: null,
        vehicle_info: null
      })
    }
    return expectFailure(calls[name], "CapabilityNotEnabled", `${name} undeclared`)
  })
