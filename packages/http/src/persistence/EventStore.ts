/**
 * The events as `GET /v1/events` reads them (issue #34): the webhook outbox's events with where
 * their deliveries stand, filtered and paged newest first, and their pruning after the retention.
 * The rows are the ones `WebhookStore` writes (`webhook_events`, `webhook_deliveries`,
 * `webhook_attempts`); this module only reads and prunes them.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"
import type { Option } from "effect"
import type { DeliveryStatus, WebhookEventRow } from "./WebhookStore.js"
import { toEvent } from "./WebhookStore.js"

const { all, count, exec, one, transaction } = SqlRow
const { NumberFromColumn, NumberOrNullFromColumn } = SqlRow

/**
 * What to list: always one organisation, optionally one connection, type and time range, and
 * whether every endpoint received the event (`false`: at least one delivery is not `succeeded`).
 *
 * @since 0.1.0
 * @category models
 */
export interface EventFilter {
  readonly organisationId: string
  readonly connectionId?: string | undefined
  readonly type?: string | undefined
  /** Any of these types (the event stream's `types`). */
  readonly types?: ReadonlyArray<string> | undefined
  readonly createdFrom?: number | undefined
  readonly createdTo?: number | undefined
  readonly deliverySuccess?: boolean | undefined
}

/**
 * One delivery of an event, as its summary shows it.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventDelivery {
  readonly id: string
  readonly event_id: string
  readonly endpoint_id: string
  readonly status: DeliveryStatus
  readonly attempts: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** A page of events, newest first (`created_at`, then id), and how many match in all. */
  readonly list: (
    filter: EventFilter,
    offset: number,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WebhookEventRow>; readonly total: number }>
  /**
   * Up to `limit` events from `filter.createdFrom` on, oldest first (`created_at`, then id): what
   * the event stream sends next.
   */
  readonly since: (filter: EventFilter, limit: number) => Effect.Effect<ReadonlyArray<WebhookEventRow>>
  /** One event of the organisation. */
  readonly get: (organisationId: string, id: string) => Effect.Effect<Option.Option<WebhookEventRow>>
  /** The deliveries of these events, oldest first per event. */
  readonly deliveries: (eventIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<EventDelivery>>
  /**
   * Deletes up to `limit` events created before `before`, with their deliveries and attempts; an
   * event a delivery is still trying (`pending`) is kept until it ends. How many were deleted.
   */
  readonly prune: (before: number, limit: number) => Effect.Effect<number>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class EventStore extends Context.Tag("Persistence/EventStore")<EventStore, Service>() {}

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  event_id: Schema.String,
  endpoint_id: Schema.String,
  status: Schema.Literal("pending", "succeeded", "failed"),
  attempts: NumberFromColumn
})
const toDelivery: (row: unknown) => EventDelivery = SqlRow.decoder(DeliveryRow)

const IdRow = Schema.Struct({ id: Schema.String, created_at: NumberOrNullFromColumn })
const toId: (row: unknown) => typeof IdRow.Type = SqlRow.decoder(IdRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => {
    const inTransaction = transaction(sql)
    const where = (filter: EventFilter) => {
      const clauses: Array<Statement.Fragment> = [sql`e.organisation_id = ${filter.organisationId}`]
      if (filter.connectionId !== undefined) clauses.push(sql`e.connection_id = ${filter.connectionId}`)
      if (filter.type !== undefined) clauses.push(sql`e.type = ${filter.type}`)
      if (filter.types !== undefined && filter.types.length > 0) clauses.push(sql.in("e.type", filter.types))
      if (filter.createdFrom !== undefined) clauses.push(sql`e.created_at >= ${filter.createdFrom}`)
      if (filter.createdTo !== undefined) clauses.push(sql`e.created_at <= ${filter.createdTo}`)
      const unreceived = sql`EXISTS (SELECT 1 FROM webhook_deliveries d
        WHERE d.event_id = e.id AND d.status <> 'succeeded')`
      if (filter.deliverySuccess === false) clauses.push(unreceived)
      if (filter.deliverySuccess === true) clauses.push(sql`NOT ${unreceived}`)
      return sql.and(clauses)
    }
    return {
      list: (filter, offset, limit) =>
        Effect.all({
          items: all(
            sql`SELECT e.* FROM webhook_events e WHERE ${where(filter)}
                ORDER BY e.created_at DESC, e.id DESC LIMIT ${Math.max(0, limit)} OFFSET ${Math.max(0, offset)}`,
            toEvent
          ),
          total: count(sql`SELECT COUNT(*) AS n FROM webhook_events e WHERE ${where(filter)}`)
        }),
      since: (filter, limit) =>
        all(
          sql`SELECT e.* FROM webhook_events e WHERE ${where(filter)}
              ORDER BY e.created_at, e.id LIMIT ${Math.max(0, limit)}`,
          toEvent
        ),
      get: (organisationId, id) =>
        one(sql`SELECT * FROM webhook_events WHERE id = ${id} AND organisation_id = ${organisationId}`, toEvent),
      deliveries: (eventIds) =>
        eventIds.length === 0
          ? Effect.succeed([])
          : all(
            sql`SELECT id, event_id, endpoint_id, status, attempts FROM webhook_deliveries
                WHERE ${sql.in("event_id", eventIds)} ORDER BY event_id, created_at, id`,
            toDelivery
          ),
      prune: (before, limit) =>
        inTransaction(Effect.gen(function*() {
          const ids = (yield* all(
            sql`SELECT e.id, e.created_at FROM webhook_events e WHERE e.created_at < ${before}
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
                ORDER BY e.created_at LIMIT ${Math.max(0, limit)}`,
            toId
          )).map((row) => row.id)
          if (ids.length === 0) return 0
          yield* exec(
            sql`DELETE FROM webhook_attempts WHERE delivery_id IN
                (SELECT id FROM webhook_deliveries WHERE ${sql.in("event_id", ids)})`
          )
          yield* exec(sql`DELETE FROM webhook_deliveries WHERE ${sql.in("event_id", ids)}`)
          yield* exec(sql`DELETE FROM webhook_events WHERE ${sql.in("id", ids)}`)
          return ids.length
        }))
    }
  }
)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<EventStore, never, SqlClient.SqlClient> = Layer.effect(EventStore, make)
