/**
 * The database reads behind the metrics' gauges (`Metrics.ts`): one bounded statement per table,
 * run once per scrape, never per request. Each groups by a status column (a handful of rows) over
 * an index or a small table, so a scrape costs the same whatever the traffic.
 *
 * The same statements, narrowed to one organisation (`organisationSnapshot`: its connections'
 * facilities, its deliveries), give the dashboard's Overview its sync lag and webhook backlog
 * (`DashboardHealth.ts`), so the page and the gauges never disagree on what they count.
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
  /** Sync facilities whose sync fails: in `error`, or whose reads fail now (`failing_since` set). */
  readonly failingFacilities: number
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
  /** Every organisation's: what the gauges show. */
  readonly snapshot: Effect.Effect<Snapshot>
  /** One organisation's only: its connections' facilities and its deliveries (the dashboard's Overview). */
  readonly organisationSnapshot: (organisationId: string) => Effect.Effect<Snapshot>
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
  readonly failing?: unknown
}

const group = (rows: ReadonlyArray<Grouped>) => {
  const counts: Record<string, number> = {}
  const oldest: Record<string, number | null> = {}
  let failing = 0
  for (const row of rows) {
    counts[row.status] = num(row.n) ?? 0
    oldest[row.status] = num(row.oldest)
    failing += num(row.failing) ?? 0
  }
  return { counts, oldest, failing }
}

/**
 * How far behind now the oldest live facility's last sync is, in seconds (never below 0); null
 * when no live facility has synced. The gauge `tracebridge_sync_lag_seconds` shows it as 0 then.
 *
 * @since 0.1.0
 * @category utils
 */
export const syncLagSeconds = (snapshot: Snapshot, now: number): number | null =>
  snapshot.oldestLiveSync === null ? null : Math.max(0, (now - snapshot.oldestLiveSync) / 1000)

/**
 * The age of the oldest pending delivery, in seconds (never below 0); null when none is pending.
 * The gauge `tracebridge_webhook_oldest_pending_seconds` shows it as 0 then.
 *
 * @since 0.1.0
 * @category utils
 */
export const oldestPendingSeconds = (snapshot: Snapshot, now: number): number | null =>
  snapshot.oldestPending === null ? null : Math.max(0, (now - snapshot.oldestPending) / 1000)

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(SqlClient.SqlClient, (sql) => {
  /** The two statements, over every organisation or (`organisationId`) one. */
  const read = (organisationId: string | undefined) =>
    Effect.gen(function*() {
      const facilities = group(
        yield* sql<Grouped>`SELECT f.status AS status, COUNT(*) AS n, MIN(f.last_synced_at) AS oldest,
            SUM(CASE WHEN f.status = 'error' OR f.failing_since IS NOT NULL THEN 1 ELSE 0 END) AS failing
          FROM sync_facilities f ${
          organisationId === undefined
            ? sql``
            : sql`JOIN connections c ON c.id = f.connection_id WHERE c.organisation_id = ${organisationId}`
        }
          GROUP BY f.status`
      )
      const deliveries = group(
        yield* sql<Grouped>`SELECT status, COUNT(*) AS n, MIN(created_at) AS oldest
          FROM webhook_deliveries ${
          organisationId === undefined ? sql`` : sql`WHERE organisation_id = ${organisationId}`
        }
          GROUP BY status`
      )
      return {
        facilities: facilities.counts,
        failingFacilities: facilities.failing,
        oldestLiveSync: facilities.oldest.live ?? null,
        deliveries: deliveries.counts,
        oldestPending: deliveries.oldest.pending ?? null
      }
    }).pipe(Effect.orDie)
  return { snapshot: read(undefined), organisationSnapshot: (organisationId) => read(organisationId) }
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<MetricsStore, never, SqlClient.SqlClient> = Layer.effect(MetricsStore, make)
