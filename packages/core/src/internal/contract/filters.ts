/**
 * Filters: every filter of every claimed list (the filters of `Query`, found from `Resource`).
 * For values taken from the unfiltered list, their edges, and values matching nothing, the
 * filtered list holds exactly the unfiltered items that pass `Query`'s predicate; a filter the
 * data cannot exercise is declared not applicable by the fixture, with a reason.
 */
import type { SchemaAST } from "effect"
import { Effect } from "effect"
import * as Ids from "../../Ids.js"
import type { LabResult } from "../../LabResult.js"
import type { Package } from "../../Package.js"
import * as Page from "../../Page.js"
import { GrowthPhase } from "../../Plant.js"
import type { ProviderError } from "../../ProviderError.js"
import * as Query from "../../Query.js"
import type * as Resource from "../../Resource.js"
import { TransferStatus } from "../../Transfer.js"
import { toEpochMillis } from "../calendar.js"
import { deepEqual, firstDifference } from "../equal.js"
import type { Port } from "./kit.js"
import { check, definitionOf, distinct, facilityOf, idOf, iso, listed, nonNull, spread } from "./kit.js"
import type { FilterKey, Fixture } from "./model.js"

/**
 * The filters of a resource's list, read from its query schema (`Query`), so a filter added there
 * gets a check here (which fails until the kit knows how to check it).
 */
export const filtersOf = (name: Resource.Name): ReadonlyArray<string> => {
  let ast: SchemaAST.AST = definitionOf(name).query.ast
  while (ast._tag === "Refinement") ast = ast.from
  return ast._tag === "TypeLiteral" ? ast.propertySignatures.map((p) => String(p.name)) : []
}

/** One query to try, and which items of the unfiltered list it must keep. */
interface FilterCase<Q, A> {
  readonly query: Q
  readonly matches: (item: A) => boolean
}

interface FilterPlan<Q, A> {
  readonly cases: ReadonlyArray<FilterCase<Q, A>>
  /** Why the data cannot exercise the filter, when it cannot. */
  readonly thin?: string
}

interface FilterEnv {
  readonly port: Port
  readonly fixture: Fixture
  readonly resource: Resource.Name
  readonly facilityId: string
}

/** How the kit tries one filter: from the unfiltered list `all`, the queries and what each keeps. */
type FilterSpec<Q, A> = (all: ReadonlyArray<A>, env: FilterEnv) => Effect.Effect<FilterPlan<Q, A>, ProviderError>

const caseOf = <Q, A>(query: Q, predicate: (q: Q) => (item: A) => boolean): FilterCase<Q, A> => ({
  query,
  matches: predicate(query)
})

/** Every value of a closed set, one query each. */
const oneOf = <Q, A>(queries: ReadonlyArray<Q>, predicate: (q: Q) => (item: A) => boolean): FilterSpec<Q, A> => () =>
  Effect.succeed({ cases: queries.map((query) => caseOf(query, predicate)) })

/** Up to `limit` values present in the data (the first, the last, evenly between), and values present nowhere. */
const sampled = <Q, A>(
  valueOf: (item: A) => string | null,
  queryOf: (value: string) => Q,
  nowhere: (env: FilterEnv) => ReadonlyArray<string>,
  predicate: (q: Q) => (item: A) => boolean,
  limit: number
): FilterSpec<Q, A> =>
(all, env) => {
  const present = distinct(all.map(valueOf).filter(nonNull))
  const absent = nowhere(env).filter((v) => !present.includes(v))
  return Effect.succeed({
    cases: [...spread(present, limit), ...absent].map((value) => caseOf(queryOf(value), predicate))
  })
}

/**
 * `updated_since` (at or after, DECISIONS "Paths"), from the fixture's `updatedAt`: at the second
 * newest change (so some objects fall before it), one millisecond later (the objects changed at
 * that instant drop out), and just after the newest change (nothing).
 */
const updatedSince: FilterSpec<{ readonly updated_since: string }, unknown> = (all, env) => {
  const oracle = env.fixture.updatedAt
  if (oracle === undefined) {
    return Effect.succeed({
      cases: [],
      thin: "the fixture gives no updatedAt, so the kit cannot tell which objects changed when"
    })
  }
  const times = new Map<string, number | null>()
  for (const item of all) {
    const at = oracle(env.resource, item)
    if (at === undefined) {
      return Effect.succeed({
        cases: [],
        thin: `the fixture's updatedAt does not say when ${env.resource} ${idOf(item)} changed`
      })
    }
    times.set(idOf(item), at === null ? null : typeof at === "number" ? at : toEpochMillis(at))
  }
  const known = distinct([...times.values()].filter(nonNull)).sort((a, b) => b - a)
  if (known.length === 0) {
    return Effect.succeed({ cases: [], thin: `no ${env.resource} of the fixture facility has a change marker` })
  }
  const since = (ms: number): FilterCase<{ readonly updated_since: string }, unknown> => ({
    query: { updated_since: iso(ms) },
    matches: (item) => {
      const t = times.get(idOf(item))
      return t !== undefined && t !== null && t >= ms
    }
  })
  const boundary = known[Math.min(1, known.length - 1)]!
  return Effect.succeed({ cases: [since(boundary), since(boundary + 1), since(known[0]! + 1)] })
}

/** The date bounds of a dated list. */
interface DateBounds {
  readonly from?: string
  readonly to?: string
}

/**
 * `from` or `to` (inclusive, DECISIONS "Paths") on a date-time field: at a date of the data, one
 * millisecond past it (the objects of that instant drop out), past every date (nothing), and for
 * `to` also `from` = `to` = one date (exactly the objects of that instant). Undated objects pass
 * no bound.
 */
const dateBound = <A>(
  bound: "from" | "to",
  dateOf: (item: A) => string | null,
  predicate: (q: DateBounds) => (item: A) => boolean
): FilterSpec<DateBounds, A> =>
(all, env) => {
  const dates = distinct(all.map(dateOf).filter(nonNull).map(toEpochMillis)).sort((a, b) => a - b)
  if (dates.length === 0) {
    return Effect.succeed({ cases: [], thin: `no ${env.resource} of the fixture facility is dated` })
  }
  const first = dates[0]!
  const last = dates[dates.length - 1]!
  const late = dates[Math.max(0, dates.length - 2)]!
  const early = dates[Math.min(1, dates.length - 1)]!
  return Effect.succeed({
    cases: bound === "from"
      ? [
        caseOf({ from: iso(late) }, predicate),
        caseOf({ from: iso(late + 1) }, predicate),
        caseOf({ from: iso(last + 1) }, predicate)
      ]
      : [
        caseOf({ to: iso(early) }, predicate),
        caseOf({ to: iso(early - 1) }, predicate),
        caseOf({ to: iso(first - 1) }, predicate),
        caseOf({ from: iso(late), to: iso(late) }, predicate)
      ]
  })
}

/**
 * `direction`, relative to the facility asked: outgoing when the transfer's `shipper_facility` names
 * it (by id, licence number or name, as the spec allows), incoming otherwise.
 */
const direction: FilterSpec<
  { readonly direction: "incoming" | "outgoing" },
  { readonly shipper_facility: string }
> = (_all, env) =>
  Effect.map(env.port.getFacility(env.fixture.session, env.facilityId), (facility) => {
    const names = new Set(
      [facility.id, facility.license_number, facility.name, facility.display_name, facility.alias].filter(nonNull)
    )
    return {
      cases: (["incoming", "outgoing"] as const).map((value) => ({
        query: { direction: value },
        matches: (t: { readonly shipper_facility: string }) => names.has(t.shipper_facility) === (value === "outgoing")
      }))
    }
  })

const missingPackage = (env: FilterEnv) => [
  Ids.make("package", env.port.descriptor.name, "tracebridge-contract-missing-0"),
  "not-an-id"
]

/** The filters of one list, with the list's query and object types. */
interface ListFilters<R extends Resource.Name> {
  /** The query of the unfiltered list. */
  readonly none: Resource.Filters<R>
  /** How the kit checks each filter. */
  readonly specs: Readonly<Record<string, FilterSpec<Resource.Filters<R>, Resource.Item<R>>>>
}

/** How the kit checks each filter of each list (the semantics are `Query`'s predicates). */
const filterSpecs: { readonly [R in Resource.Name]: ListFilters<R> } = {
  packages: {
    none: {},
    specs: {
      updated_since: updatedSince,
      is_on_hold: oneOf([{ is_on_hold: true }, { is_on_hold: false }], Query.matchesPackage),
      lab_testing_state: sampled(
        (p: Package) => p.lab_testing_state,
        (lab_testing_state) => ({ lab_testing_state }),
        () => ["TracebridgeContractNoSuchState"],
        Query.matchesPackage,
        6
      ),
      tag: sampled(
        (p: Package) => p.tag,
        (tag) => ({ tag }),
        () => ["TRACEBRIDGE-CONTRACT-NO-SUCH-TAG"],
        Query.matchesPackage,
        3
      )
    }
  },
  plants: {
    none: {},
    specs: {
      updated_since: updatedSince,
      growth_phase: oneOf(GrowthPhase.literals.map((growth_phase) => ({ growth_phase })), Query.matchesPlant)
    }
  },
  harvests: { none: {}, specs: { updated_since: updatedSince } },
  lab_results: {
    none: {},
    specs: {
      updated_since: updatedSince,
      package_id: sampled(
        (r: LabResult) => r.package_id,
        (package_id) => ({ package_id }),
        missingPackage,
        Query.matchesLabResult,
        3
      )
    }
  },
  transfers: {
    none: {},
    specs: {
      updated_since: updatedSince,
      status: oneOf(TransferStatus.literals.map((status) => ({ status })), Query.matchesTransfer),
      direction
    }
  },
  sales: {
    none: {},
    specs: {
      updated_since: updatedSince,
      from: dateBound("from", (s) => s.sale_date, Query.matchesSale),
      to: dateBound("to", (s) => s.sale_date, Query.matchesSale)
    }
  },
  sales_deliveries: {
    none: {},
    specs: {
      updated_since: updatedSince,
      from: dateBound("from", (d) => d.delivery_date, Query.matchesSalesDelivery),
      to: dateBound("to", (d) => d.delivery_date, Query.matchesSalesDelivery)
    }
  },
  items: { none: {}, specs: { updated_since: updatedSince } },
  strains: { none: {}, specs: { updated_since: updatedSince } },
  locations: { none: {}, specs: { updated_since: updatedSince } },
  patients: { none: {}, specs: { updated_since: updatedSince } }
}

/** The `filter` of the list `name` returns exactly the items of the unfiltered list that match. */
export const filterCheck = <R extends Resource.Name>(name: R, filter: string) =>
  check(
    `${name}: the ${filter} filter returns exactly the matching items`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const key: FilterKey = `${name}.${filter}`
        const { none, specs } = filterSpecs[name]
        const spec = specs[filter]
        yield* assert(spec !== undefined, `the kit does not know how to check the ${filter} filter of ${name}`)
        const facilityId = facilityOf(fx, name)
        const all = yield* port.listAll(name, fx.session, facilityId, none)
        yield* assert(all.length > 0, `the fixture facility holds no ${name}`)
        const byId = new Map(all.map((item) => [idOf(item), item]))
        const plan = yield* spec!(all, { port, fixture: fx, resource: name, facilityId })
        for (const { matches, query } of plan.cases) {
          const shown = JSON.stringify(query)
          const expected = all.filter(matches).map(idOf)
          const got = yield* port.listAll(name, fx.session, facilityId, query)
          const ids = got.map(idOf)
          yield* assert(new Set(ids).size === ids.length, `${shown} repeats items`)
          const missing = expected.filter((id) => !ids.includes(id))
          const extra = ids.filter((id) => !expected.includes(id))
          yield* assert(
            missing.length === 0 && extra.length === 0,
            `${shown} returned ${ids.length} of the ${all.length} unfiltered items, expected ${expected.length}: ` +
              `missing ${listed(missing)}, not matching ${listed(extra)}`
          )
          for (const item of got) {
            const unfiltered = byId.get(idOf(item))
            yield* assert(
              deepEqual(item, unfiltered),
              `${shown} returns ${idOf(item)} unlike the unfiltered list, at ${firstDifference(item, unfiltered)}`
            )
          }
          const page = yield* port.list(name, fx.session, facilityId, query, {
            page: 1,
            per_page: Page.MAX_PER_PAGE
          })
          const pageIds = page.items.map(idOf)
          yield* assert(
            page.pagination.total === expected.length &&
              page.pagination.total_pages === Math.ceil(expected.length / Page.MAX_PER_PAGE),
            `${shown}: page 1 says total ${page.pagination.total} in ${page.pagination.total_pages} pages, ` +
              `expected ${expected.length}`
          )
          yield* assert(
            pageIds.length === Math.min(expected.length, Page.MAX_PER_PAGE) &&
              pageIds.every((id) => expected.includes(id)),
            `${shown}: page 1 holds ${listed(pageIds)}, not the first matching items`
          )
        }
        const discriminating = plan.cases.some((c) => {
          const n = all.filter(c.matches).length
          return n > 0 && n < all.length
        })
        const thin = plan.thin ??
          (discriminating
            ? undefined
            : `no tried value of ${filter} keeps some ${name} and drops others, so it cannot be told from no filter`)
        const declared = fx.notApplicable?.filters?.[key]
        yield* assert(
          thin === undefined || (declared !== undefined && declared.trim().length > 0),
          `${thin}: give the fixture data that tells the values apart, or declare notApplicable.filters["${key}"] ` +
            "with a reason"
        )
        yield* assert(
          thin !== undefined || declared === undefined,
          `notApplicable.filters["${key}"] says "${declared}", but the data exercises the filter: remove it`
        )
      })
  )
