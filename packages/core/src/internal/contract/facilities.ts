/**
 * Facilities: paging walks every facility once and holds the fixture's, a get returns the listed
 * object with exactly the spec's fields, and an unknown or malformed id is `ResourceNotFound`.
 */
import { Effect } from "effect"
import { Facility } from "../../Facility.js"
import * as Ids from "../../Ids.js"
import * as Page from "../../Page.js"
import { deepEqual, firstDifference } from "../equal.js"
import { check, exactFields, expectFailure, idOf } from "./kit.js"
import type { Check } from "./model.js"

/** The facility checks. */
export const facilityChecks: ReadonlyArray<Check> = [
  check(
    "facilities: per_page 1 walks every facility once and holds the fixture facility",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const first = yield* port.listFacilities(fx.session, { page: 1, per_page: 1 })
        const total = first.pagination.total
        yield* assert(total >= 1, "the login reaches no facility")
        yield* assert(
          first.pagination.total_pages === total,
          `total_pages ${first.pagination.total_pages} at per_page 1`
        )
        const ids: Array<string> = []
        for (let n = 1; n <= total; n++) {
          const page = n === 1 ? first : yield* port.listFacilities(fx.session, { page: n, per_page: 1 })
          yield* assert(
            page.items.length === 1 && page.pagination.total === total,
            `facility page ${n} is inconsistent`
          )
          ids.push(...page.items.map(idOf))
        }
        yield* assert(new Set(ids).size === total, "facility ids repeat")
        yield* assert(ids.includes(fx.facilityId), `the fixture facility ${fx.facilityId} is not listed`)
        const past = yield* port.listFacilities(fx.session, { page: total + 1, per_page: 1 })
        yield* assert(past.items.length === 0 && past.pagination.total === total, "the page past the end is not empty")
        const max = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        yield* assert(
          deepEqual(max.items.slice(0, total).map(idOf), ids.slice(0, Page.MAX_PER_PAGE)),
          `per_page ${Page.MAX_PER_PAGE} lists other facilities, or another order, than per_page 1`
        )
      })
  ),
  check(
    "facilities: a get returns the listed object with exactly the spec's fields",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const page = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        for (const facility of page.items) {
          yield* exactFields(Facility, facility, assert)
          const got = yield* port.getFacility(fx.session, facility.id)
          yield* assert(deepEqual(got, facility), `getFacility differs at ${firstDifference(got, facility)}`)
        }
      })
  ),
  check("facilities: an unknown id is ResourceNotFound", (port, fx) =>
    Effect.gen(function*() {
      const missing = Ids.make("facility", port.descriptor.name, "tracebridge-contract-missing-0")
      yield* expectFailure(port.getFacility(fx.session, missing), "ResourceNotFound", "facility missing")
      yield* expectFailure(
        port.list("packages", fx.session, missing.replace(/^fac_/, "xyz_"), {}, Page.firstPage),
        "ResourceNotFound",
        "malformed facility"
      )
    }))
]
