/**
 * The database reads behind the metrics' gauges (`Metrics.ts`): one bounded statement per table,
 * run once per scrape, never per request. Each groups by a status column (a handful of rows) over
 * an index or a small table, so a scrape costs the same whatever the traffic.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

/**
 * What a scrape reads from the database.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  /** Sync facilities by status (`backfilling`, `live`, `error`). */
  readonly facilities: Readonly<Record<string, number>>
  /** The oldest `last_synced_at` (ms) among live facilities; null when none is live or synced. */
  readonly oldestLiveSync: number | null
  /** Webhook deliveries by status (`pending`, `succeeded`, `failed`: dead-lettered). */
  readonly deliveries: Readonly<Record<string, number>>
  /** When the oldest pending delivery was created (ms); null when none is pending. */
  readonly oldestPending: number | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly snapshot: Effect.Effect<Snapshot>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class MetricsStore extends Context.Tag("Persistence/MetricsStore")<MetricsStore, Service>() {}

const num = (u: unknown): number | null => (u === null || u === undefined ? null : Number(u))

interface Grouped {
  readonly status: string
  readonly n: unknown
  readonly oldest: unknown
}

const group = (rows: ReadonlyArray<Grouped>) => {
  const counts: Record<string, number> = {}
  const oldest: Record<string, number | null> = {}
  for (const row of rows) {
    counts[row.status] = num(row.n) ?? 0
    oldest[row.status] = num(row.oldest)
  }
  return { counts, oldest }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(SqlClient.SqlClient, (sql) => ({
  snapshot: Effect.gen(function*() {
    const facilities = group(
      yield* sql<Grouped>`SELECT status, COUNT(*) AS n, MIN(last_synced_at) AS oldest
        FROM sync_facilities GROUP BY status`
    )
    const deliveries = group(
      yield* sql<Grouped>`SELECT status, COUNT(*) AS n, MIN(created_at) AS oldest
        FROM webhook_deliveries GROUP BY status`
    )
    return {
      facilities: facilities.counts,
      oldestLiveSync: facilities.oldest.live ?? null,
      deliveries: deliveries.counts,
      oldestPending: deliveries.oldest.pending ?? null
    }
  }).pipe(Effect.orDie)
}))

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<MetricsStore, never, SqlClient.SqlClient> = Layer.effect(MetricsStore, make)
