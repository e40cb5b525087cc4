/**
 * The upstream rate governor's buckets (ADR 0015), one per provider, vendor key fingerprint and
 * licence, shared by every process on the same database: a reservation refills and spends in one
 * statement, so concurrent reservations never get the same token. The sibling of `RateBuckets`
 * (the API's own limit per client), with reservations ahead (`tokens` below zero: the caller waits
 * its turn) and pauses (`updated_at` ahead of now: an upstream 429's `Retry-After`). The bucket
 * arithmetic is core's (`UpstreamGovernor.reserveIn`, `pauseIn`), here in SQL.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { UpstreamGovernor } from "@tracebridge/core"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"

const { exec, first } = SqlRow

/**
 * The governor's store (`reserve`, `pauseUntil`: each atomic on its own), and the sweep of idle
 * buckets.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service extends UpstreamGovernor.Store {
  /** Deletes the buckets that are full at `now` (a missing bucket is full: nothing changes). */
  readonly dropFullBuckets: (now: number) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class UpstreamBuckets extends Context.Tag("Persistence/UpstreamBuckets")<UpstreamBuckets, Service>() {}

/** What a reservation returns: the bucket after it (`at` is its `updated_at`). */
const BucketRow = Schema.Struct({
  tokens: SqlRow.NumberFromColumn,
  at: SqlRow.NumberFromColumn,
  rate: SqlRow.NumberFromColumn,
  burst: SqlRow.NumberFromColumn
})
const toBucket = SqlRow.decoder(BucketRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => {
    const least = sql.onDialectOrElse({ pg: () => sql.literal("LEAST"), orElse: () => sql.literal("MIN") })
    const greatest = sql.onDialectOrElse({ pg: () => sql.literal("GREATEST"), orElse: () => sql.literal("MAX") })
    const double = (n: number) => sql`CAST(${n} AS DOUBLE PRECISION)`
    const bigint = (n: number) => sql`CAST(${n} AS BIGINT)`
    return {
      // One statement, as RateBuckets.takeRateToken: on Postgres ON CONFLICT DO UPDATE locks the
      // row and evaluates the SET on its latest version, so concurrent reservations queue up and
      // each sees the previous one's; SQLite runs one writer at a time. Every SET expression reads
      // the stored row (named by its table: a bare column is ambiguous with EXCLUDED's on Postgres).
      reserve: (key, { burst, rate }, now) =>
        Effect.map(
          first(
            sql`INSERT INTO upstream_rate_buckets (key, tokens, updated_at, rate, burst)
                VALUES (${key}, ${double(burst - 1)}, ${bigint(now)}, ${double(rate)}, ${double(burst)})
                ON CONFLICT (key) DO UPDATE SET
                  tokens = ${least}(
                    ${double(burst)},
                    upstream_rate_buckets.tokens
                      + ${greatest}(0, ${bigint(now)} - upstream_rate_buckets.updated_at) * ${double(rate)} / 1000.0
                  ) - 1,
                  updated_at = ${greatest}(upstream_rate_buckets.updated_at, ${bigint(now)}),
                  rate = ${double(rate)},
                  burst = ${double(burst)}
                RETURNING tokens, updated_at AS at, rate, burst`,
            toBucket
          ),
          (bucket) => UpstreamGovernor.waitOf(bucket, now)
        ),
      pauseUntil: (key, until, now) => {
        const refilled = sql`${least}(
          upstream_rate_buckets.burst,
          upstream_rate_buckets.tokens
            + ${greatest}(0, ${bigint(now)} - upstream_rate_buckets.updated_at) * upstream_rate_buckets.rate / 1000.0
        )`
        return exec(
          sql`INSERT INTO upstream_rate_buckets (key, tokens, updated_at, rate, burst)
              VALUES (${key}, ${double(1)}, ${bigint(until)}, ${double(1)}, ${double(1)})
              ON CONFLICT (key) DO UPDATE SET
                tokens = CASE
                  WHEN upstream_rate_buckets.updated_at >= ${bigint(until)} THEN upstream_rate_buckets.tokens
                  WHEN ${refilled} < 0 THEN ${refilled}
                  ELSE upstream_rate_buckets.burst
                END,
                updated_at = ${greatest}(upstream_rate_buckets.updated_at, ${bigint(until)})`
        )
      },
      dropFullBuckets: (now) =>
        exec(
          sql`DELETE FROM upstream_rate_buckets
              WHERE updated_at + (burst - tokens) * 1000.0 / rate <= ${bigint(now)}`
        )
    }
  }
)

/**
 * `UpstreamBuckets` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<UpstreamBuckets, never, SqlClient.SqlClient> = Layer.effect(UpstreamBuckets, make)
