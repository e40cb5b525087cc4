/**
 * The rate limiter's token buckets, one per key, shared by every process on the same database:
 * a take refills and spends in one statement, so concurrent takes never spend the same token.
 * `RateLimit.ts` is the limiter that uses them (with `TRACEBRIDGE_RATE_LIMIT_STORE=database`).
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"

const { exec, first } = SqlRow

/**
 * How a rate-limit bucket behaves and when the caller is (`now`, epoch ms from Effect's `Clock`,
 * never the database's clock).
 *
 * @since 0.1.0
 * @category models
 */
export interface RateBucket {
  /** Tokens added per second. */
  readonly rate: number
  /** The bucket size (a new bucket starts full). */
  readonly burst: number
  readonly now: number
}

/**
 * The outcome of `takeRateToken`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateTake {
  /** Whether a token was taken (the refilled bucket held at least one). */
  readonly allowed: boolean
  /** Tokens left in the bucket after this call (after taking one, when allowed). */
  readonly tokens: number
}

/**
 * The rate-limit buckets. Every method is atomic on its own.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Refills the bucket `key` (`rate` tokens a second since it was last touched, up to `burst`; a
   * missing bucket is full) and takes one token if it holds at least one, atomically: concurrent
   * takes on one key, from any process on the same database, never take the same token twice.
   * A clock behind the stored time adds nothing and never moves the bucket's time back.
   */
  readonly takeRateToken: (key: string, bucket: RateBucket) => Effect.Effect<RateTake>
  /**
   * Deletes the buckets untouched since before `before` (epoch ms). A bucket idle for `burst /
   * rate` seconds is full, which is what a missing bucket means, so dropping it changes nothing.
   */
  readonly dropRateBuckets: (before: number) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class RateBuckets extends Context.Tag("Persistence/RateBuckets")<RateBuckets, Service>() {}

/** What a take returns: the tokens left and whether it took one. */
const TakeRow = Schema.Struct({ tokens: SqlRow.NumberFromColumn, allowed: SqlRow.BooleanFromColumn })
const toTake: (row: unknown) => RateTake = SqlRow.decoder(TakeRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
    // One statement: the refill is computed from the stored row and the caller's `now` (Effect's
    // Clock, never the database's). On Postgres, ON CONFLICT DO UPDATE locks the row and evaluates
    // the SET on its latest version, so concurrent takes on one key queue up and each sees the
    // previous one's result; SQLite runs one writer at a time. `allowed` records whether this
    // statement took a token (RETURNING sees only the new row). The stored row is named by its
    // table: on Postgres a bare `tokens` is ambiguous with EXCLUDED's.
    takeRateToken: (key, { burst, now, rate }) => {
      const least = sql.onDialectOrElse({ pg: () => sql.literal("LEAST"), orElse: () => sql.literal("MIN") })
      const greatest = sql.onDialectOrElse({ pg: () => sql.literal("GREATEST"), orElse: () => sql.literal("MAX") })
      const at = sql`CAST(${now} AS BIGINT)`
      const refilled = sql`${least}(
        CAST(${burst} AS DOUBLE PRECISION),
        rate_limit_buckets.tokens
          + ${greatest}(0, ${at} - rate_limit_buckets.updated_at) * CAST(${rate} AS DOUBLE PRECISION) / 1000.0
      )`
      return first(
        sql`INSERT INTO rate_limit_buckets (key, tokens, allowed, updated_at)
            VALUES (${key}, ${burst - 1}, 1, ${now})
            ON CONFLICT (key) DO UPDATE SET
              tokens = CASE WHEN ${refilled} >= 1 THEN ${refilled} - 1 ELSE ${refilled} END,
              allowed = CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
              updated_at = ${greatest}(rate_limit_buckets.updated_at, ${at})
            RETURNING tokens, allowed`,
        toTake
      )
    },
    dropRateBuckets: (before) => exec(sql`DELETE FROM rate_limit_buckets WHERE updated_at < ${before}`)
  })
)

/**
 * `RateBuckets` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RateBuckets, never, SqlClient.SqlClient> = Layer.effect(RateBuckets, make)
