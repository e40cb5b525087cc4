/**
 * What webhooks need kept: the endpoints (with their signing secret encrypted, since it must be
 * recoverable to sign), the event outbox, each endpoint's deliveries and their attempts, and the
 * poller's last snapshot of each connection.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { WebhookEvent } from "@tracebridge/core"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"
import type { Option } from "effect"

const { all, count, exec, one, rows, transaction } = SqlRow
const { NumberFromColumn, NumberOrNullFromColumn } = SqlRow

/** @since 0.1.0 @category models */
export interface WebhookEndpoint {
  readonly id: string
  readonly organisation_id: string
  readonly url: string
  /** JSON text of the event names. */
  readonly events: string
  readonly description: string | null
  readonly status: "enabled" | "disabled"
  /** AES-256-GCM ciphertext of the signing secret (it must be recoverable to sign). */
  readonly secret: string
  readonly key_id: string
  /** The secret before the last rotation, signing until `previous_expires_at`. */
  readonly previous_secret: string | null
  readonly previous_key_id: string | null
  readonly previous_expires_at: number | null
  readonly created_at: number
  readonly updated_at: number
}

/** @since 0.1.0 @category models */
export interface WebhookEventRow {
  readonly id: string
  readonly organisation_id: string
  readonly connection_id: string
  readonly type: string
  /** The delivery body, exactly the bytes every attempt signs and sends. */
  readonly body: string
  readonly created_at: number
  /**
   * The W3C `traceparent` of the span that caused the event (a request, a sync poll) when traces
   * are exported; each delivery attempt's span links to it.
   */
  readonly trace_parent: string | null
}

/** @since 0.1.0 @category models */
export type DeliveryStatus = "pending" | "succeeded" | "failed"

/** @since 0.1.0 @category models */
export interface WebhookDelivery {
  readonly id: string
  readonly organisation_id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: WebhookEvent.EventType
  readonly status: DeliveryStatus
  readonly attempts: number
  /**
   * The attempts started: counted before the POST (by the claim, or as 1 when queued held by this
   * process's worker), so it runs ahead of `attempts` while an attempt is in flight, and stays
   * ahead when the process died or hung mid-attempt.
   */
  readonly claims: number
  /** When the next attempt is due (null once succeeded or failed). */
  readonly next_attempt_at: number | null
  /** A worker's claim: no other worker takes the delivery before this time. */
  readonly locked_until: number | null
  readonly created_at: number
  readonly updated_at: number
}

/** @since 0.1.0 @category models */
export interface WebhookAttempt {
  readonly delivery_id: string
  /** 1 for the first attempt. */
  readonly n: number
  readonly at: number
  readonly status_code: number | null
  readonly error: string | null
  readonly duration_ms: number
  /**
   * The start of the receiver's answer: at most 2 KB, redacted (`WebhookDispatcher.previewOf`);
   * null when no answer came (and for attempts logged before migration 0017).
   */
  readonly response_preview?: string | null
}

/**
 * Where a delivery stands for the dashboard: `retrying` is a `pending` one with a failed attempt.
 *
 * @since 0.1.0
 * @category models
 */
export type DeliveryOutcome = "pending" | "retrying" | "succeeded" | "failed"

/**
 * How many of an endpoint's deliveries made since a time stand at each outcome.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutcomeCount {
  readonly endpoint_id: string
  readonly outcome: DeliveryOutcome
  readonly n: number
}

/**
 * An endpoint's deliveries that need a look: `failed` ones (for good: every retry spent, or
 * dead-lettered) and `retrying` ones, how many, and the oldest's time (`since`: when the failed
 * one ended, when the retrying one was made).
 *
 * @since 0.1.0
 * @category models
 */
export interface DeliveryProblem {
  readonly endpoint_id: string
  readonly kind: "failed" | "retrying"
  readonly n: number
  readonly since: number
}

/**
 * Where a page of deliveries starts: after this one, newest first.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeliveryCursor {
  readonly created_at: number
  readonly id: string
}

/**
 * What `searchDeliveries` keeps: every given field must match.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeliveryFilter {
  readonly status?: DeliveryStatus | undefined
  readonly outcome?: DeliveryOutcome | undefined
  /** Made at this time or later (epoch ms). */
  readonly createdFrom?: number | undefined
  /** Made at this time or earlier (epoch ms). */
  readonly createdTo?: number | undefined
}

/**
 * How `claimWebhookDeliveries` shares a claim among organisations and endpoints.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClaimFairness {
  readonly perOrganisation: number
  readonly perEndpoint: number
  readonly excludeOrganisations: ReadonlyArray<string>
  readonly excludeEndpoints: ReadonlyArray<string>
}

/** @since 0.1.0 @category models */
export interface PollSnapshot {
  readonly connection_id: string
  /** JSON text of what the poller saw last. */
  readonly snapshot: string
  readonly polled_at: number
}

/**
 * Webhook endpoints, events, deliveries, attempts and poll snapshots. Every method is atomic on
 * its own; `Transactions` runs several as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertWebhookEndpoint: (e: WebhookEndpoint) => Effect.Effect<void>
  readonly getWebhookEndpoint: (id: string) => Effect.Effect<Option.Option<WebhookEndpoint>>
  /** One organisation's endpoints, oldest first. */
  readonly listWebhookEndpoints: (organisationId: string) => Effect.Effect<ReadonlyArray<WebhookEndpoint>>
  readonly updateWebhookEndpoint: (
    id: string,
    patch: Partial<
      Pick<
        WebhookEndpoint,
        | "url"
        | "events"
        | "description"
        | "status"
        | "secret"
        | "key_id"
        | "previous_secret"
        | "previous_key_id"
        | "previous_expires_at"
        | "updated_at"
      >
    >
  ) => Effect.Effect<void>
  /** Deletes an endpoint with its deliveries and their attempts. */
  readonly deleteWebhookEndpoint: (id: string) => Effect.Effect<void>

  /** Records an event and its deliveries (the outbox), atomically. */
  readonly insertWebhookEvent: (
    event: WebhookEventRow,
    deliveries: ReadonlyArray<WebhookDelivery>
  ) => Effect.Effect<void>
  readonly getWebhookEvent: (id: string) => Effect.Effect<Option.Option<WebhookEventRow>>
  readonly getWebhookDelivery: (id: string) => Effect.Effect<Option.Option<WebhookDelivery>>
  /** An endpoint's deliveries, newest first, with the total. */
  readonly listWebhookDeliveries: (
    endpointId: string,
    offset: number,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WebhookDelivery>; readonly total: number }>
  /** The attempts of some deliveries, in order. */
  readonly listWebhookAttempts: (deliveryIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<WebhookAttempt>>
  /**
   * An endpoint's deliveries newest first (`created_at`, then id), after `cursor`, optionally of
   * one status, at most `limit` (the dashboard's delivery list).
   */
  readonly searchWebhookDeliveries: (
    endpointId: string,
    status: DeliveryStatus | undefined,
    cursor: DeliveryCursor | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
  /**
   * The deliveries of these endpoints (an organisation's), newest first (`created_at`, then id),
   * after `cursor`, matching every given filter (a status, an outcome, a creation time range with
   * both ends included), at most `limit` (the dashboard's deliveries across endpoints).
   */
  readonly searchDeliveries: (
    endpointIds: ReadonlyArray<string>,
    filter: DeliveryFilter,
    cursor: DeliveryCursor | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
  /**
   * Makes these deliveries due now again, as `retryWebhookDelivery` does, but only those still
   * `failed` (so a delivery that moved meanwhile is left alone); how many were.
   */
  readonly retryFailedDeliveries: (ids: ReadonlyArray<string>, now: number) => Effect.Effect<number>
  /** How many deliveries of these endpoints made at `since` or later stand at each outcome. */
  readonly deliveryOutcomes: (
    endpointIds: ReadonlyArray<string>,
    since: number
  ) => Effect.Effect<ReadonlyArray<OutcomeCount>>
  /**
   * These endpoints' deliveries still retrying, and those that failed for good at `failedSince` or
   * later, grouped per endpoint and kind.
   */
  readonly deliveryProblems: (
    endpointIds: ReadonlyArray<string>,
    failedSince: number
  ) => Effect.Effect<ReadonlyArray<DeliveryProblem>>
  /**
   * Claims up to `limit` pending deliveries due at `now` that no live claim holds, holding them
   * until `lockedUntil` and counting the attempt each is claimed for (`claims + 1`, before anything
   * is sent). Two concurrent claims never return the same delivery (Postgres:
   * `FOR UPDATE SKIP LOCKED`; SQLite: one writer at a time). With `fair`, at most
   * `perOrganisation` of one organisation's and `perEndpoint` of one endpoint's deliveries are
   * taken, round-robin over the organisations (each one's oldest first), and none of the
   * organisations and endpoints listed in `exclude…` (those the caller has no room for).
   */
  readonly claimWebhookDeliveries: (
    now: number,
    lockedUntil: number,
    limit: number,
    fair?: ClaimFairness
  ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
  /**
   * Whether a pending delivery is due at `now` that no lease holds: what a claim would find, had
   * no other claim locked it at that moment (a Postgres claim skips rows being claimed elsewhere).
   */
  readonly anyDueWebhookDelivery: (now: number) => Effect.Effect<boolean>
  /**
   * Gives back a claim whose attempt never started: `claims - 1`, and, with `due`, no lease and
   * due at `due` (claimable at once); without it the lease stays (it lapses on its own). Only if
   * the delivery is still as claimed (same lease and count): false otherwise, nothing written.
   */
  readonly releaseWebhookClaim: (delivery: WebhookDelivery, due: number | undefined) => Effect.Effect<boolean>
  /**
   * Logs attempt `attempt.n` and moves the delivery on, only if it still has `attempt.n - 1`
   * attempts (so an attempt is never recorded twice); false otherwise.
   */
  readonly recordWebhookAttempt: (
    attempt: WebhookAttempt,
    next: { readonly status: DeliveryStatus; readonly next_attempt_at: number | null }
  ) => Effect.Effect<boolean>
  /**
   * Makes a delivery due now again (redelivery), whatever its status; attempts that never finished
   * are forgiven (`claims = attempts`), so an operator's redelivery is always sent once more.
   */
  readonly retryWebhookDelivery: (id: string, now: number) => Effect.Effect<void>

  readonly getPollSnapshot: (connectionId: string) => Effect.Effect<Option.Option<PollSnapshot>>
  /**
   * Stores what a poll saw, only if the stored snapshot is still the one it started from (the one
   * polled at `previous`, or none for null): false, with nothing written, when another process
   * stored a poll of the connection meanwhile (compare-and-set, so each change is reported once).
   */
  readonly putPollSnapshot: (s: PollSnapshot, previous: number | null) => Effect.Effect<boolean>
  /**
   * Claims the poll of a connection until `until` when no claim is in force at `now`: true for the
   * one node that got it, false for every other (one statement, atomic across nodes).
   */
  readonly claimPoll: (connectionId: string, now: number, until: number) => Effect.Effect<boolean>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class WebhookStore extends Context.Tag("Persistence/WebhookStore")<WebhookStore, Service>() {}

/** A `webhook_endpoints` row. */
const EndpointRow = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  url: Schema.String,
  events: Schema.String,
  description: Schema.NullOr(Schema.String),
  status: Schema.Literal("enabled", "disabled"),
  secret: Schema.String,
  key_id: Schema.String,
  previous_secret: Schema.NullOr(Schema.String),
  previous_key_id: Schema.NullOr(Schema.String),
  previous_expires_at: NumberOrNullFromColumn,
  created_at: NumberFromColumn,
  updated_at: NumberFromColumn
})
const toEndpoint: (row: unknown) => WebhookEndpoint = SqlRow.decoder(EndpointRow)

/**
 * A `webhook_events` row, decoded (the events API reads them too, `EventStore.ts`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const EventRow = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  connection_id: Schema.String,
  type: Schema.String,
  body: Schema.String,
  created_at: NumberFromColumn,
  trace_parent: Schema.NullOr(Schema.String)
})
/**
 * @since 0.1.0
 * @category decoding
 */
export const toEvent: (row: unknown) => WebhookEventRow = SqlRow.decoder(EventRow)

/** A `webhook_deliveries` row; its event type is only ever written from an event's own. */
const DeliveryRow = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  event_type: WebhookEvent.EventType,
  status: Schema.Literal("pending", "succeeded", "failed"),
  attempts: NumberFromColumn,
  claims: NumberFromColumn,
  next_attempt_at: NumberOrNullFromColumn,
  locked_until: NumberOrNullFromColumn,
  created_at: NumberFromColumn,
  updated_at: NumberFromColumn
})
const toDelivery: (row: unknown) => WebhookDelivery = SqlRow.decoder(DeliveryRow)

/** A `webhook_attempts` row. */
const AttemptRow = Schema.Struct({
  delivery_id: Schema.String,
  n: NumberFromColumn,
  at: NumberFromColumn,
  status_code: NumberOrNullFromColumn,
  error: Schema.NullOr(Schema.String),
  duration_ms: NumberFromColumn,
  response_preview: Schema.NullOr(Schema.String)
})
const toAttempt: (row: unknown) => WebhookAttempt = SqlRow.decoder(AttemptRow)

const OutcomeRow = Schema.Struct({
  endpoint_id: Schema.String,
  outcome: Schema.Literal("pending", "retrying", "succeeded", "failed"),
  n: NumberFromColumn
})
const toOutcome: (row: unknown) => OutcomeCount = SqlRow.decoder(OutcomeRow)

const ProblemRow = Schema.Struct({
  endpoint_id: Schema.String,
  kind: Schema.Literal("failed", "retrying"),
  n: NumberFromColumn,
  since: NumberFromColumn
})
const toProblem: (row: unknown) => DeliveryProblem = SqlRow.decoder(ProblemRow)

/** A `poll_snapshots` row. */
const SnapshotRow = Schema.Struct({
  connection_id: Schema.String,
  snapshot: Schema.String,
  polled_at: NumberFromColumn
})
const toSnapshot: (row: unknown) => PollSnapshot = SqlRow.decoder(SnapshotRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => {
    /** A pending delivery due at `now` that no live claim holds: what a claim may take. */
    const dueUnleased = (now: number) =>
      sql`status = 'pending' AND next_attempt_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now})`
    const inTransaction = transaction(sql)
    return {
      insertWebhookEndpoint: (e) => exec(sql`INSERT INTO webhook_endpoints ${sql.insert({ ...e })}`),
      getWebhookEndpoint: (id) => one(sql`SELECT * FROM webhook_endpoints WHERE id = ${id}`, toEndpoint),
      listWebhookEndpoints: (organisationId) =>
        all(
          sql`SELECT * FROM webhook_endpoints WHERE organisation_id = ${organisationId} ORDER BY created_at, id`,
          toEndpoint
        ),
      updateWebhookEndpoint: (id, patch) => {
        const set: Record<string, unknown> = {}
        for (const [k, v] of Object.entries(patch)) if (v !== undefined) set[k] = v
        return Object.keys(set).length === 0
          ? Effect.void
          : exec(sql`UPDATE webhook_endpoints SET ${sql.update(set)} WHERE id = ${id}`)
      },
      deleteWebhookEndpoint: (id) =>
        inTransaction(Effect.gen(function*() {
          yield* exec(
            sql`DELETE FROM webhook_attempts WHERE delivery_id IN
                (SELECT id FROM webhook_deliveries WHERE endpoint_id = ${id})`
          )
          yield* exec(sql`DELETE FROM webhook_deliveries WHERE endpoint_id = ${id}`)
          yield* exec(sql`DELETE FROM webhook_endpoints WHERE id = ${id}`)
        })),
      insertWebhookEvent: (event, deliveries) =>
        inTransaction(Effect.gen(function*() {
          yield* exec(sql`INSERT INTO webhook_events ${sql.insert({ ...event })}`)
          if (deliveries.length > 0) {
            yield* exec(sql`INSERT INTO webhook_deliveries ${sql.insert(deliveries.map((d) => ({ ...d })))}`)
          }
        })),
      getWebhookEvent: (id) => one(sql`SELECT * FROM webhook_events WHERE id = ${id}`, toEvent),
      getWebhookDelivery: (id) => one(sql`SELECT * FROM webhook_deliveries WHERE id = ${id}`, toDelivery),
      listWebhookDeliveries: (endpointId, offset, limit) =>
        Effect.all({
          items: all(
            sql`SELECT * FROM webhook_deliveries WHERE endpoint_id = ${endpointId}
                ORDER BY created_at DESC, id DESC LIMIT ${Math.max(0, limit)} OFFSET ${Math.max(0, offset)}`,
            toDelivery
          ),
          total: count(sql`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`)
        }),
      listWebhookAttempts: (ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : all(
            sql`SELECT * FROM webhook_attempts WHERE ${sql.in("delivery_id", ids)} ORDER BY delivery_id, n`,
            toAttempt
          ),
      searchWebhookDeliveries: (endpointId, status, cursor, limit) => {
        const conditions = [sql`endpoint_id = ${endpointId}`]
        if (status !== undefined) conditions.push(sql`status = ${status}`)
        if (cursor !== undefined) {
          conditions.push(
            sql`(created_at < ${cursor.created_at} OR (created_at = ${cursor.created_at} AND id < ${cursor.id}))`
          )
        }
        return all(
          sql`SELECT * FROM webhook_deliveries WHERE ${sql.and(conditions)}
              ORDER BY created_at DESC, id DESC LIMIT ${Math.max(0, limit)}`,
          toDelivery
        )
      },
      searchDeliveries: (endpointIds, filter, cursor, limit) => {
        if (endpointIds.length === 0) return Effect.succeed([])
        const conditions = [sql.in("endpoint_id", endpointIds)]
        if (filter.status !== undefined) conditions.push(sql`status = ${filter.status}`)
        switch (filter.outcome) {
          case undefined:
            break
          case "pending":
            conditions.push(sql`status = 'pending' AND attempts = 0`)
            break
          case "retrying":
            conditions.push(sql`status = 'pending' AND attempts > 0`)
            break
          default:
            conditions.push(sql`status = ${filter.outcome}`)
        }
        if (filter.createdFrom !== undefined) conditions.push(sql`created_at >= ${filter.createdFrom}`)
        if (filter.createdTo !== undefined) conditions.push(sql`created_at <= ${filter.createdTo}`)
        if (cursor !== undefined) {
          conditions.push(
            sql`(created_at < ${cursor.created_at} OR (created_at = ${cursor.created_at} AND id < ${cursor.id}))`
          )
        }
        return all(
          sql`SELECT * FROM webhook_deliveries WHERE ${sql.and(conditions)}
              ORDER BY created_at DESC, id DESC LIMIT ${Math.max(0, limit)}`,
          toDelivery
        )
      },
      retryFailedDeliveries: (ids, now) =>
        ids.length === 0
          ? Effect.succeed(0)
          : Effect.map(
            rows(
              sql`UPDATE webhook_deliveries
                  SET status = 'pending', next_attempt_at = ${now}, locked_until = NULL, claims = attempts,
                      updated_at = ${now}
                  WHERE ${sql.in("id", ids)} AND status = 'failed'
                  RETURNING id`
            ),
            (rs) => rs.length
          ),
      deliveryOutcomes: (endpointIds, since) =>
        endpointIds.length === 0
          ? Effect.succeed([])
          : all(
            sql`SELECT endpoint_id, outcome, COUNT(*) AS n FROM (
                  SELECT endpoint_id,
                    CASE WHEN status = 'pending' AND attempts > 0 THEN 'retrying' ELSE status END AS outcome
                  FROM webhook_deliveries
                  WHERE ${sql.in("endpoint_id", endpointIds)} AND created_at >= ${since}
                ) d
                GROUP BY endpoint_id, outcome`,
            toOutcome
          ),
      deliveryProblems: (endpointIds, failedSince) =>
        endpointIds.length === 0
          ? Effect.succeed([])
          : all(
            sql`SELECT endpoint_id,
                  CASE WHEN status = 'failed' THEN 'failed' ELSE 'retrying' END AS kind,
                  COUNT(*) AS n,
                  MIN(CASE WHEN status = 'failed' THEN updated_at ELSE created_at END) AS since
                FROM webhook_deliveries
                WHERE ${sql.in("endpoint_id", endpointIds)}
                  AND ((status = 'failed' AND updated_at >= ${failedSince}) OR (status = 'pending' AND attempts > 0))
                GROUP BY endpoint_id, CASE WHEN status = 'failed' THEN 'failed' ELSE 'retrying' END`,
            toProblem
          ),
      // One statement: the CTE picks due rows once (Postgres materialises a locking CTE; a plain
      // IN (subquery … LIMIT) may be re-run and claim more than the limit); on Postgres it locks
      // them and skips rows another claim holds (FOR UPDATE SKIP LOCKED), and the outer WHERE
      // re-checks the claim after any wait. SQLite runs one writer at a time, so the statement
      // alone is atomic there.
      // With `fair`, a first CTE ranks the due rows within their organisation and their endpoint
      // (window functions, which Postgres does not lock), and the locking one takes the best
      // ranked: every organisation's oldest, then every one's second, and so on.
      claimWebhookDeliveries: (now, lockedUntil, limit, fair) => {
        const lock = sql.onDialectOrElse({
          pg: () => sql.literal(fair === undefined ? "FOR UPDATE SKIP LOCKED" : "FOR UPDATE OF d SKIP LOCKED"),
          orElse: () => sql.literal("")
        })
        const due = fair === undefined
          ? sql`SELECT id FROM webhook_deliveries
                WHERE ${dueUnleased(now)}
                ORDER BY next_attempt_at, id
                LIMIT ${Math.max(0, limit)}
                ${lock}`
          : sql`SELECT d.id FROM webhook_deliveries d JOIN ranked r ON r.id = d.id
                WHERE r.org_rank <= ${fair.perOrganisation} AND r.endpoint_rank <= ${fair.perEndpoint}
                ORDER BY r.org_rank, d.next_attempt_at, d.id
                LIMIT ${Math.max(0, limit)}
                ${lock}`
        const ranked = fair === undefined ? sql`` : sql`ranked AS (
                  SELECT id,
                    ROW_NUMBER() OVER (PARTITION BY organisation_id ORDER BY next_attempt_at, id) AS org_rank,
                    ROW_NUMBER() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS endpoint_rank
                  FROM webhook_deliveries
                  WHERE ${dueUnleased(now)}
                    ${
          fair.excludeOrganisations.length === 0
            ? sql``
            : sql`AND NOT ${sql.in("organisation_id", fair.excludeOrganisations)}`
        }
                    ${
          fair.excludeEndpoints.length === 0 ? sql`` : sql`AND NOT ${sql.in("endpoint_id", fair.excludeEndpoints)}`
        }
                ),`
        return Effect.map(
          all(
            sql`WITH ${ranked} due AS (${due})
                UPDATE webhook_deliveries SET locked_until = ${lockedUntil}, claims = claims + 1
                WHERE id IN (SELECT id FROM due)
                  AND status = 'pending' AND (locked_until IS NULL OR locked_until <= ${now})
                RETURNING *`,
            toDelivery
          ),
          (rs) => [...rs].sort((a, b) => a.next_attempt_at! - b.next_attempt_at! || a.id.localeCompare(b.id))
        )
      },
      anyDueWebhookDelivery: (now) =>
        Effect.map(
          rows(
            sql`SELECT id FROM webhook_deliveries
                WHERE ${dueUnleased(now)}
                LIMIT 1`
          ),
          (rs) => rs.length > 0
        ),
      recordWebhookAttempt: (attempt, next) =>
        inTransaction(Effect.gen(function*() {
          const moved = yield* rows(
            sql`UPDATE webhook_deliveries
                SET attempts = ${attempt.n}, status = ${next.status}, next_attempt_at = ${next.next_attempt_at},
                    locked_until = NULL, updated_at = ${attempt.at}
                WHERE id = ${attempt.delivery_id} AND attempts = ${attempt.n - 1}
                RETURNING id`
          )
          if (moved.length !== 1) return false
          yield* exec(sql`INSERT INTO webhook_attempts ${sql.insert({ ...attempt })}`)
          return true
        })),
      releaseWebhookClaim: (delivery, due) =>
        Effect.map(
          rows(
            due === undefined
              ? sql`UPDATE webhook_deliveries SET claims = claims - 1
                    WHERE id = ${delivery.id} AND status = 'pending' AND claims = ${delivery.claims}
                      AND locked_until = ${delivery.locked_until} RETURNING id`
              : sql`UPDATE webhook_deliveries
                    SET claims = claims - 1, locked_until = NULL, next_attempt_at = ${due}
                    WHERE id = ${delivery.id} AND status = 'pending' AND claims = ${delivery.claims}
                      AND locked_until = ${delivery.locked_until} RETURNING id`
          ),
          (rs) => rs.length === 1
        ),
      retryWebhookDelivery: (id, now) =>
        exec(
          sql`UPDATE webhook_deliveries
              SET status = 'pending', next_attempt_at = ${now}, locked_until = NULL, claims = attempts,
                  updated_at = ${now}
              WHERE id = ${id}`
        ),
      getPollSnapshot: (connectionId) =>
        one(sql`SELECT * FROM poll_snapshots WHERE connection_id = ${connectionId}`, toSnapshot),
      putPollSnapshot: (s, previous) =>
        Effect.map(
          rows(
            previous === null
              ? sql`INSERT INTO poll_snapshots ${sql.insert({ ...s })}
                    ON CONFLICT (connection_id) DO NOTHING RETURNING connection_id`
              : sql`UPDATE poll_snapshots SET snapshot = ${s.snapshot}, polled_at = ${s.polled_at}
                    WHERE connection_id = ${s.connection_id} AND polled_at = ${previous} RETURNING connection_id`
          ),
          (rs) => rs.length > 0
        ),
      claimPoll: (connectionId, now, until) =>
        Effect.map(
          rows(
            sql`INSERT INTO poll_claims (connection_id, claimed_until) VALUES (${connectionId}, ${until})
                ON CONFLICT (connection_id) DO UPDATE SET claimed_until = excluded.claimed_until
                WHERE poll_claims.claimed_until <= ${now}
                RETURNING connection_id`
          ),
          (rs) => rs.length > 0
        )
    }
  }
)

/**
 * `WebhookStore` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<WebhookStore, never, SqlClient.SqlClient> = Layer.effect(WebhookStore, make)
