/**
 * Reads of a claimed resource: its list answers, a get returns the listed object, every object
 * carries exactly the spec's fields and validates against the core schema, and an unknown or
 * malformed id is `ResourceNotFound`.
 */
import { Effect } from "effect"
import * as Ids from "../../Ids.js"
import * as Page from "../../Page.js"
import type { ProviderDescriptor } from "../../ProviderDescriptor.js"
import type * as Resource from "../../Resource.js"
import { deepEqual, firstDifference } from "../equal.js"
import { check, definitionOf, exactFields, expectFailure, facilityOf, idOf, validates } from "./kit.js"

/** The resource is claimed in the state: its first page answers. */
export const claimedCheck = (name: Resource.Name, state: string) => {
  const definition = definitionOf(name)
  return check(
    `${name}: claimed in ${state} (${definition.capability}), its list answers`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const page = yield* port.list(name, fx.session, facilityOf(fx, name), {}, Page.firstPage)
        yield* assert(page.pagination.page === 1, "the first page does not say it is page 1")
      })
  )
}

/** A get returns the same object as the list, for the first and the last listed. */
export const getCheck = (name: Resource.Name) =>
  check(`${name}: a get returns the same object as the list`, (port, fx, assert) =>
    Effect.gen(function*() {
      const page = yield* port.list(name, fx.session, facilityOf(fx, name), {}, {
        page: 1,
        per_page: Page.MAX_PER_PAGE
      })
      const picks = [page.items[0], page.items[page.items.length - 1]].filter((x) => x !== undefined)
      yield* assert(picks.length > 0, `the fixture facility holds no ${name}`)
      for (const item of picks) {
        const got = yield* port.get(name, fx.session, facilityOf(fx, name), idOf(item))
        yield* assert(deepEqual(got, item), `get(${idOf(item)}) differs from the list at ${firstDifference(got, item)}`)
      }
    }))

/** Every listed object carries exactly the spec's fields and validates against the core schema. */
export const fieldsCheck = (name: Resource.Name) =>
  check(`${name}: objects carry exactly the spec's fields`, (port, fx, assert) =>
    Effect.gen(function*() {
      const definition = definitionOf(name)
      const page = yield* port.list(name, fx.session, facilityOf(fx, name), {}, {
        page: 1,
        per_page: Page.MAX_PER_PAGE
      })
      for (const item of page.items) {
        yield* exactFields(definition.schema, item, assert)
        yield* assert(
          validates(definition.schema, item),
          `${idOf(item)} does not validate against the core schema`
        )
      }
    }))

/** An unknown id and a malformed one are `ResourceNotFound`. */
export const notFoundCheck = (name: Resource.Name, descriptor: ProviderDescriptor) =>
  check(`${name}: an unknown id is ResourceNotFound`, (port, fx) =>
    Effect.gen(function*() {
      const definition = definitionOf(name)
      const missing = Ids.make(definition.kind, descriptor.name, "tracebridge-contract-missing-0")
      yield* expectFailure(
        port.get(name, fx.session, facilityOf(fx, name), missing),
        "ResourceNotFound",
        `${name} missing`
      )
      yield* expectFailure(
        port.get(name, fx.session, facilityOf(fx, name), "not-an-id"),
        "ResourceNotFound",
        `${name} malformed`
      )
    }))
