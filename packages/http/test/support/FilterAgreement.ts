/**
 * Issue #29's "every filter agrees with its field", at `/v1`: the filters of every facility-level
 * list are read from the OpenAPI document (so a filter added to a query schema is checked here
 * too, and fails until this file knows how), and each filtered list must hold exactly the items
 * of the full list whose field matches, each as the full list shows it, with a `pagination.total`
 * that counts what its pages deliver.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { call } from "./TestApp.js"

const FACILITY_LIST = /^\/v1\/connections\/\{connection_id\}\/facilities\/\{facility_id\}\/([a-z_]+)$/

/** A list endpoint of the document: its resource (path) and its filters (query parameters but paging). */
export interface ListOperation {
  readonly resource: string
  readonly operationId: string
  readonly filters: ReadonlyArray<{ readonly name: string; readonly schema: any }>
}

/** Every facility-level list of the OpenAPI document, with its filters. */
export const listOperations = (spec: any): ReadonlyArray<ListOperation> =>
  Object.entries(spec.paths as Record<string, any>).flatMap(([path, item]) => {
    const match = FACILITY_LIST.exec(path)
    if (match === null || item.get === undefined) return []
    const resolve = (p: any) => p.$ref === undefined ? p : spec.components.parameters[p.$ref.split("/").pop()]
    const params = ((item.get.parameters ?? []) as Array<any>).map(resolve)
    // a paged list (not the change feed, which is read by cursor)
    if (!params.some((p) => p.in === "query" && p.name === "page")) return []
    const schemaOf = (s: any): any =>
      s?.$ref === undefined ? s : schemaOf(spec.components.schemas[s.$ref.split("/").pop()])
    return [{
      resource: match[1]!,
      operationId: item.get.operationId as string,
      filters: params
        .filter((p) => p.in === "query" && p.name !== "page" && p.name !== "per_page")
        .map((p) => ({ name: p.name as string, schema: schemaOf(p.schema) }))
    }]
  })

/** Every item of a list (pages of `per_page`), checking that the totals count what the pages deliver. */
export const readAll = (token: string, base: string, resource: string, query: Record<string, string>, perPage = 100) =>
  Effect.gen(function*() {
    const items: Array<any> = []
    const skipped: Array<any> = []
    const qs = (page: number) => new URLSearchParams({ ...query, page: String(page), per_page: String(perPage) })
    let total = 0
    let pages = 1
    for (let page = 1; page <= pages; page++) {
      const answer = yield* call("GET", `${base}/${resource}?${qs(page)}`, { token })
      assert.strictEqual(answer.status, 200, `${resource}?${qs(page)}: ${JSON.stringify(answer.body)}`)
      if (page === 1) {
        total = answer.body.pagination.total
        pages = answer.body.pagination.total_pages
      }
      assert.deepStrictEqual(
        [answer.body.pagination.total, answer.body.pagination.total_pages],
        [total, pages],
        `${resource}?${qs(page)}: every page tells the same total`
      )
      items.push(...answer.body.data)
      skipped.push(...answer.body.meta.skipped)
    }
    assert.strictEqual(pages, Math.ceil(total / perPage), `${resource}?${qs(1)}: total_pages of total ${total}`)
    assert.strictEqual(items.length, total, `${resource}?${qs(1)}: total ${total} counts what the pages deliver`)
    const ids = items.map((i) => i.id as string)
    assert.strictEqual(new Set(ids).size, ids.length, `${resource}?${qs(1)}: no item twice`)
    return { items, total, skipped }
  })

interface Case {
  readonly query: Record<string, string>
  readonly matches: (item: any) => boolean
}

/** A filter the test cannot compare with a field of the object, and how the filtered list is checked. */
type Special = (items: ReadonlyArray<any>, facility: any) => ReadonlyArray<Case>

const ms = (iso: string) => Date.parse(iso)
const iso = (t: number) => new Date(t).toISOString()

/** `from` / `to`, inclusive, on a resource's date field: at a date, a millisecond past it, past every date. */
const dateFields: Readonly<Record<string, string>> = { sales: "sale_date", sales_deliveries: "delivery_date" }
const dateBound = (resource: string, bound: "from" | "to"): Special => (items) => {
  const field = dateFields[resource]
  assert.isDefined(field, `the test does not know which date ${resource}' ${bound} filters`)
  const dates = [...new Set(items.map((i) => i[field!]).filter((d) => d !== null).map(ms))].sort((a, b) => a - b)
  if (dates.length === 0) return []
  const inRange = (from: number | undefined, to: number | undefined) => (i: any) =>
    i[field!] !== null && (from === undefined || ms(i[field!]) >= from) && (to === undefined || ms(i[field!]) <= to)
  const late = dates[Math.max(0, dates.length - 2)]!
  const early = dates[Math.min(1, dates.length - 1)]!
  return bound === "from"
    ? [late, late + 1, dates[dates.length - 1]! + 1].map((t) => ({
      query: { from: iso(t) },
      matches: inRange(t, undefined)
    }))
    : [
      ...[early, early - 1, dates[0]! - 1].map((t) => ({ query: { to: iso(t) }, matches: inRange(undefined, t) })),
      { query: { from: iso(late), to: iso(late) }, matches: inRange(late, late) }
    ]
}

/** Filters with no field of their own name: what each means (DECISIONS "Paths"). */
const special = (resource: string, filter: string): Special | undefined => {
  switch (filter) {
    case "direction":
      // relative to the facility asked: outgoing when it ships the transfer
      return (_items, facility) => {
        const names = new Set([facility.id, facility.license_number, facility.name].filter((n) => n != null))
        return (["incoming", "outgoing"] as const).map((value) => ({
          query: { direction: value },
          matches: (t: any) => names.has(t.shipper_facility) === (value === "outgoing")
        }))
      }
    case "from":
    case "to":
      return dateBound(resource, filter)
    default:
      return undefined
  }
}

/** Values of a filter on a field: every value of a closed set, else up to 3 values of the data and one of none. */
const fieldCases = (filter: string, schema: any, items: ReadonlyArray<any>): ReadonlyArray<Case> => {
  const text = (v: unknown) => String(v)
  const values: ReadonlyArray<string> = Array.isArray(schema?.enum)
    ? schema.enum.map(text)
    : schema?.type === "boolean"
    ? ["true", "false"]
    : (() => {
      const present = [...new Set(items.map((i) => i[filter]).filter((v) => v !== null).map(text))]
      const picked = present.length <= 3
        ? present
        : [present[0]!, present[Math.floor(present.length / 2)]!, present[present.length - 1]!]
      return [...picked, "TRACEBRIDGE-NO-SUCH-VALUE"]
    })()
  return values.map((value) => ({
    query: { [filter]: value },
    matches: (item: any) => item[filter] !== null && text(item[filter]) === value
  }))
}

/**
 * Checks every filter of every list at one facility against the full list; answers, per
 * list and filter, whether some value kept some items and dropped others (so that a caller can
 * require that the data tells each filter from no filter somewhere).
 */
export const agreeAt = (
  token: string,
  connectionId: string,
  facility: any,
  operations: ReadonlyArray<ListOperation>,
  exempt: Readonly<Record<string, string>> = {}
) =>
  Effect.gen(function*() {
    const base = `/v1/connections/${connectionId}/facilities/${facility.id}`
    const discriminating = new Set<string>()
    const full = new Map<string, ReadonlyArray<any>>()
    for (const op of operations) {
      const first = yield* call("GET", `${base}/${op.resource}?per_page=1`, { token })
      // a list the facility (or the provider in its state) does not have
      if (first.status === 403 && first.body.error.code === "capability_not_enabled") continue
      const all = (yield* readAll(token, base, op.resource, {})).items
      full.set(op.resource, all)
      const byId = new Map(all.map((i) => [i.id, i]))
      for (const { name, schema } of op.filters) {
        if (name === "updated_since") {
          // No field of the object carries the state system's change marker (the conformance kit
          // checks it against the emulator's): the filtered list is a part of the full list, and a
          // date past every change lists nothing. (Within two days: a synced store holds what
          // changed within its horizon, and the filter is read from the provider.)
          for (const when of [iso(Date.now() - 2 * 86_400_000), iso(Date.now() - 3_600_000)]) {
            const got = (yield* readAll(token, base, op.resource, { updated_since: when })).items
            for (const item of got) assert.deepStrictEqual(item, byId.get(item.id), `${op.resource} since ${when}`)
          }
          const future = yield* readAll(token, base, op.resource, { updated_since: iso(Date.now() + 86_400_000) })
          if (exempt[`${op.resource}.${name}`] === undefined) {
            assert.strictEqual(future.items.length, 0, `${op.resource}: nothing changed after tomorrow`)
          }
          discriminating.add(`${op.resource}.${name}`)
          continue
        }
        const bespoke = special(op.resource, name)
        const known = bespoke !== undefined || all.some((i) => name in i)
        assert.isTrue(
          known || all.length === 0,
          `${op.operationId}: the test does not know how to check the ${name} filter (no ${name} field)`
        )
        const cases = bespoke !== undefined ? bespoke(all, facility) : fieldCases(name, schema, all)
        for (const { matches, query } of cases) {
          const shown = `${op.resource}?${new URLSearchParams(query)} at ${facility.id}`
          const expected = all.filter(matches).map((i) => i.id as string).sort()
          if (expected.length > 0 && expected.length < all.length) discriminating.add(`${op.resource}.${name}`)
          const got = (yield* readAll(token, base, op.resource, query, 50)).items
          assert.deepStrictEqual(
            got.map((i) => i.id as string).sort(),
            expected,
            `${shown}: exactly the matching items`
          )
          for (const item of got) assert.deepStrictEqual(item, byId.get(item.id), `${shown}: as the full list shows it`)
        }
      }
    }
    return { discriminating, full }
  })

/**
 * Every filter of every list at every facility of a connection; each filter must keep some items
 * and drop others somewhere (else the data cannot tell it from no filter), but for `exempt`
 * (`"resource.filter"`: why the provider cannot narrow the list by it).
 */
export const agree = (token: string, connectionId: string, exempt: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const spec = (yield* call("GET", "/v1/openapi.json")).body
    const operations = listOperations(spec)
    assert.isAtLeast(operations.length, 11, "every facility-level list is in the document")
    assert.isTrue(operations.some((op) => op.filters.some((f) => f.name === "is_on_hold")))
    const facilities = (yield* call("GET", `/v1/connections/${connectionId}/facilities?per_page=100`, { token })).body
      .data as Array<any>
    const discriminating = new Set<string>()
    const full = new Map<string, Map<string, ReadonlyArray<any>>>()
    // facilities side by side: their `updated_since` reads go upstream and wait for the governor
    const each = yield* Effect.forEach(
      facilities,
      (facility) => agreeAt(token, connectionId, facility, operations, exempt),
      { concurrency: 4 }
    )
    facilities.forEach((facility, i) => {
      for (const key of each[i]!.discriminating) discriminating.add(key)
      full.set(facility.id, new Map(each[i]!.full))
    })
    const served = new Set([...full.values()].flatMap((lists) => [...lists.keys()]))
    assert.include([...served], "packages")
    const untold = operations.filter((op) => served.has(op.resource))
      .flatMap((op) => op.filters.map((f) => `${op.resource}.${f.name}`))
      .filter((key) => !discriminating.has(key) && exempt[key] === undefined)
    assert.deepStrictEqual(untold, [], "filters the data cannot tell from no filter")
    return { operations, facilities, full }
  })

/** Filters a provider cannot narrow by, as its adapter's conformance fixture declares them. */
export const exempt = {
  provider_a: {
    "patients.updated_since": "Metrc documents neither a lastModified window on /patients/v2/active nor a " +
      "LastModified on a patient: every patient is returned"
  },
  provider_b: {}
} as const
