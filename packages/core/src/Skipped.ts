/**
 * Tolerant reads (DECISIONS "Tolerant reads"): one upstream row that cannot be mapped never fails
 * a page. The adapter leaves the row out and reports it here; the port gathers the reports of a
 * list call and the list's `meta.skipped` carries them (`[]` when nothing was skipped), so no row
 * is ever dropped silently.
 *
 * Reports travel with the fiber (a `FiberRef`), so an adapter reports from wherever it decodes a
 * row, however deep, without threading a list through its readers. Outside a {@link collect} a
 * report is dropped (the adapter still logs it).
 *
 * @since 0.1.0
 */
import { Effect, FiberRef, Schema } from "effect"

/**
 * One upstream row left out of a list: the provider's own id of the row (or its position when it
 * has none) and why it could not be read.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Skipped = Schema.Struct({
  upstream_id: Schema.String.annotations({ description: "The provider's id of the row (or its position)" }),
  reason: Schema.String.annotations({ description: "Why the row could not be read" })
}).annotations({
  identifier: "SkippedRow",
  description: "An upstream row left out of the list because it could not be mapped"
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Skipped extends Schema.Schema.Type<typeof Skipped> {}

const reports = FiberRef.unsafeMake<Array<Skipped> | undefined>(undefined, {
  // a forked fiber reports into the same list as its parent (the list is shared, not copied)
  fork: (list) => list,
  join: (parent) => parent
})

/**
 * Reports a row left out of the list being read.
 *
 * @since 0.1.0
 * @category reporting
 */
export const report = (row: Skipped): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(reports), (list) =>
    Effect.sync(() => {
      if (list !== undefined && !list.some((r) => r.upstream_id === row.upstream_id && r.reason === row.reason)) {
        list.push(row)
      }
    }))

/**
 * Runs a read and gathers the rows it reported as skipped (each once, in the order reported).
 *
 * @since 0.1.0
 * @category reporting
 */
export const collect = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<readonly [A, ReadonlyArray<Skipped>], E, R> =>
  Effect.suspend(() => {
    const list: Array<Skipped> = []
    return Effect.map(Effect.locally(self, reports, list), (a) => [a, list] as const)
  })

/**
 * The skipped rows of two reads, each once.
 *
 * @since 0.1.0
 * @category combinators
 */
export const union = (a: ReadonlyArray<Skipped>, b: ReadonlyArray<Skipped>): ReadonlyArray<Skipped> =>
  b.length === 0
    ? a
    : [...a, ...b.filter((row) => !a.some((r) => r.upstream_id === row.upstream_id && r.reason === row.reason))]
