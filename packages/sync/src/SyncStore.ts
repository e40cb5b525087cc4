/**
 * The synced store: each facility's normalised objects with a change sequence, each resource's
 * backfill and poll cursor, and each facility's sync state, over the `SqlClient` in context (the
 * same statements on Postgres and SQLite).
 *
 * The feed reads objects by sequence. An object that changes again moves to a new sequence, so a
 * feed page holds each object at most once, as it is now, and a reader that already passed it
 * meets it again. Sequences are handed out under the facility row's lock (`UPDATE … RETURNING`)
 * inside the transaction that stores the objects, so they commit in order: a reader never sees a
 * sequence before a lower one that is still to commit, and so never skips a change.
 *
 * A page is stored in one transaction with the cursor that says where the next read starts, so a
 * job that stops between pages resumes after the last stored page and stores nothing twice; an
 * object stored again unchanged adds no change.
 *
 * @since 0.1.0
 */
import type { SqlError, Statement } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as SqlRow from "./SqlRow.js"

/**
 * A facility's state in the sync.
 *
 * @since 0.1.0
 * @category models
 */
export type Status = "backfilling" | "live" | "error"

/**
 * @since 0.1.0
 * @category models
 */
export interface FacilityState {
  readonly connection_id: string
  readonly facility_id: string
  /** Raised by a relink or a sandbox reset: a new backfill, which then removes what it did not see. */
  readonly generation: number
  /** The last change sequence handed out. */
  readonly seq: number
  readonly status: Status
  readonly next_poll_at: number
  readonly last_synced_at: number | null
  readonly backfilled_through: number | null
  /** Since when the upstream has failed without a success in between (`connection.degraded`). */
  readonly failing_since: number | null
  readonly degraded_notified: boolean
  readonly last_error: string | null
  /** Raised each time the scheduler restarts a stalled or failed backfill (part of its job key). */
  readonly attempt: number
  /** When the running backfill last stored a page (a stalled one is restarted). */
  readonly heartbeat_at: number | null
}

/**
 * A resource's cursor within a facility.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceState {
  readonly connection_id: string
  readonly facility_id: string
  readonly resource: string
  readonly generation: number
  readonly status: Status | "unavailable"
  /** Where the current backfill ends (its start time); null once live. */
  readonly target: number | null
  /** The start of the window the backfill reads next (null: the first). */
  readonly window_from: number | null
  /** The next page (1-based) of that window. */
  readonly page: number
  readonly backfilled_through: number | null
  /** Every change up to here is stored; the next poll reads from here. */
  readonly synced_through: number | null
  readonly last_synced_at: number | null
  readonly count: number
  readonly last_error: string | null
}

/**
 * An object as read from the provider, ready to store.
 *
 * @since 0.1.0
 * @category models
 */
export interface Incoming {
  readonly object_id: string
  /** The object as the resource's GET returns it, as JSON. */
  readonly body: string
}

/**
 * One row of the feed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Change {
  readonly seq: number
  readonly resource: string
  readonly object_id: string
  /** null when removed. */
  readonly body: string | null
  readonly changed_at: number
}

/**
 * What `apply` stores with a page.
 *
 * @since 0.1.0
 * @category models
 */
export interface Apply {
  readonly connection_id: string
  readonly facility_id: string
  readonly resource: string
  readonly generation: number
  readonly objects: ReadonlyArray<Incoming>
  /**
   * Object ids to mark removed (a whole-table read that no longer holds them, or the departures a
   * windowed provider reports); ids not stored, or already removed, are passed over.
   */
  readonly removed?: ReadonlyArray<string>
  /** Mark removed every object of the resource not stored by this generation (a backfill's end). */
  readonly sweep?: boolean
  /** The resource's cursor after this page. */
  readonly cursor: Partial<Omit<ResourceState, "connection_id" | "facility_id" | "resource">>
  readonly now: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The facility's state, created `backfilling` at generation 0 when missing. */
  readonly ensureFacility: (connectionId: string, facilityId: string, now: number) => Effect.Effect<FacilityState>
  readonly facility: (connectionId: string, facilityId: string) => Effect.Effect<Option.Option<FacilityState>>
  readonly facilities: (connectionId: string) => Effect.Effect<ReadonlyArray<FacilityState>>
  readonly updateFacility: (
    connectionId: string,
    facilityId: string,
    patch: Partial<Omit<FacilityState, "connection_id" | "facility_id" | "seq" | "generation">>
  ) => Effect.Effect<void>
  /** Starts a new generation (a new backfill) for the facility; its resources start again. */
  readonly newGeneration: (connectionId: string, facilityId: string, now: number) => Effect.Effect<FacilityState>
  readonly resources: (connectionId: string, facilityId: string) => Effect.Effect<ReadonlyArray<ResourceState>>
  readonly putResource: (state: ResourceState) => Effect.Effect<void>
  /** Stores a page with the resource's next cursor, in one transaction; the number of changes. */
  readonly apply: (input: Apply) => Effect.Effect<number>
  /** Changes after `after`, oldest first, at most `limit`, of the resources named (all when empty). */
  readonly feed: (
    connectionId: string,
    facilityId: string,
    after: number,
    limit: number,
    resources: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Change>>
  /** The ids of the stored objects of a resource (not removed). */
  readonly ids: (connectionId: string, facilityId: string, resource: string) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Takes over the backfills that stopped: still backfilling, and no page stored since
   * `staleBefore` (a node died, or the last attempt failed). Each is claimed once (its attempt
   * rises), so nodes racing here restart it once.
   */
  readonly claimStalled: (
    staleBefore: number,
    now: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<FacilityState>>
  /** The stored objects of a resource (not removed), in the order first seen. */
  readonly list: (connectionId: string, facilityId: string, resource: string) => Effect.Effect<ReadonlyArray<string>>
  /** A window of `list` and the total, without reading the rest. */
  /**
   * The facility's state with one resource's status and count (the objects stored and not
   * removed, kept by `apply`), in one statement: what a read from the store checks first.
   */
  readonly readState: (
    connectionId: string,
    facilityId: string,
    resource: string
  ) => Effect.Effect<
    Option.Option<{
      readonly facility: FacilityState
      readonly resource: Option.Option<{ readonly status: ResourceState["status"]; readonly count: number }>
    }>
  >
  /** A window of a resource's stored objects (not removed), in the order they were first stored. */
  readonly listWindow: (
    connectionId: string,
    facilityId: string,
    resource: string,
    offset: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>>
  readonly get: (
    connectionId: string,
    facilityId: string,
    resource: string,
    objectId: string
  ) => Effect.Effect<Option.Option<string>>
  /**
   * Claims the live facilities whose poll is due (`FOR UPDATE SKIP LOCKED` on Postgres, so nodes
   * claiming at once get different ones) and moves their next poll on by `interval`.
   */
  readonly claimDue: (
    now: number,
    interval: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<{ readonly connection_id: string; readonly facility_id: string }>>
  /** Forgets a facility's sync: one the connection does not have (issue #28). */
  readonly dropFacility: (connectionId: string, facilityId: string) => Effect.Effect<void>
  /** Forgets a connection's sync (a disconnect). */
  readonly dropConnection: (connectionId: string) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class SyncStore extends Context.Tag("@tracebridge/sync/SyncStore")<SyncStore, Service>() {}

const { BooleanFromColumn, NumberFromColumn, NumberOrNullFromColumn } = SqlRow

/** A `sync_facilities` row. */
const FacilityRow = Schema.Struct({
  connection_id: Schema.String,
  facility_id: Schema.String,
  generation: NumberFromColumn,
  seq: NumberFromColumn,
  status: Schema.Literal("backfilling", "live", "error"),
  next_poll_at: NumberFromColumn,
  last_synced_at: NumberOrNullFromColumn,
  backfilled_through: NumberOrNullFromColumn,
  failing_since: NumberOrNullFromColumn,
  degraded_notified: BooleanFromColumn,
  last_error: Schema.NullOr(Schema.String),
  attempt: NumberFromColumn,
  heartbeat_at: NumberOrNullFromColumn
})
const toFacility: (row: unknown) => FacilityState = SqlRow.decoder(FacilityRow)

/** A `sync_resources` row. */
const ResourceRow = Schema.Struct({
  connection_id: Schema.String,
  facility_id: Schema.String,
  resource: Schema.String,
  generation: NumberFromColumn,
  status: Schema.Literal("backfilling", "live", "error", "unavailable"),
  target: NumberOrNullFromColumn,
  window_from: NumberOrNullFromColumn,
  page: NumberFromColumn,
  backfilled_through: NumberOrNullFromColumn,
  synced_through: NumberOrNullFromColumn,
  last_synced_at: NumberOrNullFromColumn,
  count: NumberFromColumn,
  last_error: Schema.NullOr(Schema.String)
})
const toResource: (row: unknown) => ResourceState = SqlRow.decoder(ResourceRow)

/** A `sync_facilities` row with one resource's status and count (`readState`; null: no such row). */
const ReadStateRow = Schema.Struct({
  resource_status: Schema.NullOr(ResourceRow.fields.status),
  resource_count: NumberOrNullFromColumn
})
const decodeReadState = SqlRow.decoder(ReadStateRow)
const toReadState = (row: unknown) => ({ facility: toFacility(row), ...decodeReadState(row) })

/** A feed row of `sync_objects`. */
const ChangeRow = Schema.Struct({
  seq: NumberFromColumn,
  resource: Schema.String,
  object_id: Schema.String,
  body: Schema.NullOr(Schema.String),
  changed_at: NumberFromColumn
})
const toChange: (row: unknown) => Change = SqlRow.decoder(ChangeRow)

/** What `apply` compares an incoming object with: its stored hash, whether removed, its generation. */
const StoredRow = Schema.Struct({
  object_id: Schema.String,
  hash: Schema.String,
  removed: BooleanFromColumn,
  generation: NumberFromColumn
})
const toStored = SqlRow.decoder(StoredRow)

const ObjectIdRow = Schema.Struct({ object_id: Schema.String })
const toObjectId = SqlRow.decoder(ObjectIdRow)
const toResourceName = SqlRow.decoder(Schema.Struct({ resource: Schema.String }))

/** The cursor's columns that hold times (BIGINT). */
const BIGINT_COLUMNS = new Set(["target", "window_from", "backfilled_through", "synced_through", "last_synced_at"])

/** A stored object's body (only rows not removed are read this way). */
const BodyRow = Schema.Struct({ body: Schema.String })
const toBody = SqlRow.decoder(BodyRow)

const FacilityKeyRow = Schema.Struct({ connection_id: Schema.String, facility_id: Schema.String })
const toFacilityKey = SqlRow.decoder(FacilityKeyRow)

const SeqRow = Schema.Struct({ seq: NumberFromColumn })
const toSeq = SqlRow.decoder(SeqRow)

const { all, count, exec, first, one } = SqlRow

/** FNV-1a, 64 bits as hex: enough to tell a changed object from an unchanged one. */
const hashOf = (text: string): string => {
  let h = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i))
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return h.toString(16)
}

/**
 * The tables, for the caller's migrator (`@effect/sql`'s Migrator runs it once).
 *
 * @since 0.1.0
 * @category migrations
 */
export const migration: Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE sync_facilities (
    connection_id TEXT NOT NULL,
    facility_id TEXT NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    seq BIGINT NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    next_poll_at BIGINT NOT NULL,
    last_synced_at BIGINT,
    backfilled_through BIGINT,
    failing_since BIGINT,
    degraded_notified INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    attempt INTEGER NOT NULL DEFAULT 0,
    heartbeat_at BIGINT,
    PRIMARY KEY (connection_id, facility_id)
  )`
  yield* sql`CREATE INDEX sync_facilities_due ON sync_facilities (next_poll_at)`
  yield* sql`CREATE TABLE sync_resources (
    connection_id TEXT NOT NULL,
    facility_id TEXT NOT NULL,
    resource TEXT NOT NULL,
    generation INTEGER NOT NULL,
    status TEXT NOT NULL,
    target BIGINT,
    window_from BIGINT,
    page INTEGER NOT NULL,
    backfilled_through BIGINT,
    synced_through BIGINT,
    last_synced_at BIGINT,
    count INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    PRIMARY KEY (connection_id, facility_id, resource)
  )`
  yield* sql`CREATE TABLE sync_objects (
    connection_id TEXT NOT NULL,
    facility_id TEXT NOT NULL,
    resource TEXT NOT NULL,
    object_id TEXT NOT NULL,
    hash TEXT NOT NULL,
    body TEXT,
    seq BIGINT NOT NULL,
    first_seq BIGINT NOT NULL,
    generation INTEGER NOT NULL,
    changed_at BIGINT NOT NULL,
    PRIMARY KEY (connection_id, facility_id, resource, object_id)
  )`
  yield* sql`CREATE UNIQUE INDEX sync_objects_feed ON sync_objects (connection_id, facility_id, seq)`
  yield* sql`CREATE INDEX sync_objects_list ON sync_objects (connection_id, facility_id, resource, first_seq)`
})

const CHUNK = 200

const chunks = <A>(as: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < as.length; i += size) out.push(as.slice(i, i + size))
  return out
}

/**
 * The store over the `SqlClient` in context (its tables migrated: `migration`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(SqlClient.SqlClient, (sql) => {
  const skipLocked = sql.onDialectOrElse({
    pg: () => sql.literal("FOR UPDATE SKIP LOCKED"),
    orElse: () => sql.literal("")
  })
  const bigint = (n: number) => sql`CAST(${n} AS BIGINT)`
  const bigintOrNull = (n: number | null) => (n === null ? sql`NULL` : bigint(n))

  const facility: Service["facility"] = (connectionId, facilityId) =>
    one(
      sql`SELECT * FROM sync_facilities WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}`,
      toFacility
    )

  const ensureFacility: Service["ensureFacility"] = (connectionId, facilityId, now) =>
    Effect.flatMap(
      exec(sql`INSERT INTO sync_facilities (connection_id, facility_id, status, next_poll_at)
        VALUES (${connectionId}, ${facilityId}, 'backfilling', ${bigint(now)})
        ON CONFLICT (connection_id, facility_id) DO NOTHING`),
      () => Effect.map(facility(connectionId, facilityId), Option.getOrThrow)
    )

  const putResource: Service["putResource"] = (s) =>
    exec(sql`INSERT INTO sync_resources (connection_id, facility_id, resource, generation, status, target,
        window_from, page, backfilled_through, synced_through, last_synced_at, count, last_error)
      VALUES (${s.connection_id}, ${s.facility_id}, ${s.resource}, ${s.generation}, ${s.status},
        ${bigintOrNull(s.target)}, ${bigintOrNull(s.window_from)}, ${s.page}, ${bigintOrNull(s.backfilled_through)},
        ${bigintOrNull(s.synced_through)}, ${bigintOrNull(s.last_synced_at)}, ${s.count}, ${s.last_error})
      ON CONFLICT (connection_id, facility_id, resource) DO UPDATE SET
        generation = EXCLUDED.generation, status = EXCLUDED.status, target = EXCLUDED.target,
        window_from = EXCLUDED.window_from, page = EXCLUDED.page,
        backfilled_through = EXCLUDED.backfilled_through, synced_through = EXCLUDED.synced_through,
        last_synced_at = EXCLUDED.last_synced_at, count = EXCLUDED.count, last_error = EXCLUDED.last_error`)

  const resources: Service["resources"] = (connectionId, facilityId) =>
    all(
      sql`SELECT * FROM sync_resources WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}
        ORDER BY resource`,
      toResource
    )

  const updateFacility: Service["updateFacility"] = (connectionId, facilityId, patch) => {
    const set: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(patch)) {
      if (v !== undefined) set[k] = typeof v === "boolean" ? SqlRow.flag(v) : v
    }
    if (Object.keys(set).length === 0) return Effect.void
    return exec(
      sql`UPDATE sync_facilities SET ${sql.update(set)}
        WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}`
    )
  }

  /** Hands out `n` sequences under the facility row's lock: the first of them. */
  const allocate = (connectionId: string, facilityId: string, n: number, now: number) =>
    Effect.map(
      first(
        sql`UPDATE sync_facilities SET seq = seq + ${n}, heartbeat_at = ${bigint(now)}
          WHERE connection_id = ${connectionId} AND facility_id = ${facilityId} RETURNING seq`,
        toSeq
      ),
      (row) => row.seq - n + 1
    )

  /**
   * A poll's page that found nothing (no object, no removal, no sweep, the cursor `live`): only the
   * resource's cursor moves, in one statement. It reads no stored object, so it needs neither the
   * facility's row lock nor its heartbeat (which only a backfill's takeover reads), and the count
   * stays. False when the resource has no row yet (the whole path makes it).
   */
  const moveCursor = (input: Apply): Effect.Effect<boolean> => {
    const set: Array<Statement.Fragment> = []
    for (const [column, value] of Object.entries(input.cursor)) {
      if (value === undefined) continue
      set.push(
        BIGINT_COLUMNS.has(column)
          ? sql`${sql(column)} = ${bigintOrNull(value as number | null)}`
          : sql`${sql(column)} = ${value as string | number | null}`
      )
    }
    return Effect.map(
      all(
        sql`UPDATE sync_resources SET ${sql.csv(set)}
          WHERE connection_id = ${input.connection_id} AND facility_id = ${input.facility_id}
            AND resource = ${input.resource}
          RETURNING resource`,
        toResourceName
      ),
      (rows) => rows.length > 0
    )
  }

  const apply: Service["apply"] = (input) =>
    input.objects.length === 0 && (input.removed ?? []).length === 0 && input.sweep !== true &&
      input.cursor.status === "live"
      ? Effect.flatMap(moveCursor(input), (moved) => moved ? Effect.succeed(0) : applyPage(input))
      : applyPage(input)

  const applyPage: Service["apply"] = (input) =>
    sql.withTransaction(Effect.gen(function*() {
      const { connection_id: c, facility_id: f, generation: g, now, resource: r } = input
      // The facility's row lock first, before reading what is stored: two runners of one backfill
      // (a takeover of one that was only slow) storing the same page then see each other's rows,
      // and an object already stored takes no second sequence number.
      yield* exec(sql`UPDATE sync_facilities SET heartbeat_at = ${bigint(now)}
        WHERE connection_id = ${c} AND facility_id = ${f}`)
      const byId = new Map<string, { readonly body: string; readonly hash: string }>()
      for (const o of input.objects) byId.set(o.object_id, { body: o.body, hash: hashOf(o.body) })
      const ids = [...byId.keys()]
      const stored = new Map<
        string,
        { readonly hash: string; readonly removed: boolean; readonly generation: number }
      >()
      for (const chunk of chunks(ids, CHUNK)) {
        const rows = yield* all(
          sql`SELECT object_id, hash, body IS NULL AS removed, generation FROM sync_objects
          WHERE connection_id = ${c} AND facility_id = ${f} AND resource = ${r} AND ${sql.in("object_id", chunk)}`,
          toStored
        )
        for (const row of rows) stored.set(row.object_id, row)
      }
      const changed = ids.filter((id) => {
        const s = stored.get(id)
        return s === undefined || s.removed || s.hash !== byId.get(id)!.hash
      })
      const same = ids.filter((id) => !changed.includes(id) && stored.get(id)!.generation !== g)
      const removedIds = new Set(input.removed ?? [])
      if (input.sweep === true) {
        const rows = yield* all(
          sql`SELECT object_id FROM sync_objects
          WHERE connection_id = ${c} AND facility_id = ${f} AND resource = ${r} AND generation < ${g}
            AND body IS NOT NULL`,
          toObjectId
        )
        for (const { object_id } of rows) if (!byId.has(object_id)) removedIds.add(object_id)
      }
      // only what is stored and not removed yet: a departure read again (the polls' overlap) or
      // of an object never stored takes no sequence number
      const removed: Array<string> = []
      for (const chunk of chunks([...removedIds].filter((id) => !byId.has(id)), CHUNK)) {
        const rows = yield* all(
          sql`SELECT object_id FROM sync_objects
          WHERE connection_id = ${c} AND facility_id = ${f} AND resource = ${r} AND body IS NOT NULL
            AND ${sql.in("object_id", chunk)}`,
          toObjectId
        )
        for (const row of rows) removed.push(row.object_id)
      }
      const total = changed.length + removed.length
      let next = yield* allocate(c, f, total, now)
      for (const id of changed) {
        const { body, hash } = byId.get(id)!
        yield* exec(sql`INSERT INTO sync_objects
            (connection_id, facility_id, resource, object_id, hash, body, seq, first_seq, generation, changed_at)
          VALUES (${c}, ${f}, ${r}, ${id}, ${hash}, ${body}, ${bigint(next)}, ${bigint(next)}, ${g}, ${bigint(now)})
          ON CONFLICT (connection_id, facility_id, resource, object_id) DO UPDATE SET
            hash = EXCLUDED.hash, body = EXCLUDED.body, seq = EXCLUDED.seq, generation = EXCLUDED.generation,
            changed_at = EXCLUDED.changed_at`)
        next++
      }
      for (const id of removed) {
        yield* exec(sql`UPDATE sync_objects SET body = NULL, hash = '', seq = ${bigint(next)},
            generation = ${g}, changed_at = ${bigint(now)}
          WHERE connection_id = ${c} AND facility_id = ${f} AND resource = ${r} AND object_id = ${id}`)
        next++
      }
      for (const chunk of chunks(same, CHUNK)) {
        yield* exec(sql`UPDATE sync_objects SET generation = ${g}
          WHERE connection_id = ${c} AND facility_id = ${f} AND resource = ${r} AND ${sql.in("object_id", chunk)}`)
      }
      const current = yield* resources(c, f).pipe(Effect.map((rs) => rs.find((x) => x.resource === r)))
      const counted = yield* count(sql`SELECT COUNT(*) AS n FROM sync_objects
        WHERE connection_id = ${c} AND facility_id = ${f} AND resource = ${r} AND body IS NOT NULL`)
      yield* putResource({
        connection_id: c,
        facility_id: f,
        resource: r,
        generation: g,
        status: "backfilling",
        target: null,
        window_from: null,
        page: 1,
        backfilled_through: null,
        synced_through: null,
        last_synced_at: null,
        last_error: null,
        ...current,
        ...input.cursor,
        count: counted
      })
      return total
    })).pipe(Effect.orDie)

  const feed: Service["feed"] = (connectionId, facilityId, after, limit, types) =>
    all(
      sql`SELECT seq, resource, object_id, body, changed_at FROM sync_objects
        WHERE connection_id = ${connectionId} AND facility_id = ${facilityId} AND seq > ${bigint(after)}
        ${types.length === 0 ? sql`` : sql`AND ${sql.in("resource", types)}`}
        ORDER BY seq LIMIT ${limit}`,
      toChange
    )

  return {
    ensureFacility,
    facility,
    facilities: (connectionId) =>
      all(sql`SELECT * FROM sync_facilities WHERE connection_id = ${connectionId} ORDER BY facility_id`, toFacility),
    updateFacility,
    newGeneration: (connectionId, facilityId, now) =>
      Effect.gen(function*() {
        yield* ensureFacility(connectionId, facilityId, now)
        yield* exec(sql`UPDATE sync_facilities SET generation = generation + 1, status = 'backfilling',
            last_error = NULL WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}`)
        yield* exec(sql`DELETE FROM sync_resources WHERE connection_id = ${connectionId}
            AND facility_id = ${facilityId}`)
        return Option.getOrThrow(yield* facility(connectionId, facilityId))
      }),
    resources,
    putResource,
    apply,
    feed,
    list: (connectionId, facilityId, resource) =>
      Effect.map(
        all(
          sql`SELECT body FROM sync_objects WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}
          AND resource = ${resource} AND body IS NOT NULL ORDER BY first_seq`,
          toBody
        ),
        (rows) => rows.map((row) => row.body)
      ),
    readState: (connectionId, facilityId, resource) =>
      Effect.map(
        one(
          sql`SELECT f.*, r.status AS resource_status, r.count AS resource_count
          FROM sync_facilities f LEFT JOIN sync_resources r
            ON r.connection_id = f.connection_id AND r.facility_id = f.facility_id AND r.resource = ${resource}
          WHERE f.connection_id = ${connectionId} AND f.facility_id = ${facilityId}`,
          toReadState
        ),
        Option.map((row) => ({
          facility: row.facility,
          resource: row.resource_status === null
            ? Option.none()
            : Option.some({ status: row.resource_status, count: row.resource_count ?? 0 })
        }))
      ),
    listWindow: (connectionId, facilityId, resource, offset, limit) =>
      Effect.map(
        all(
          sql`SELECT body FROM sync_objects WHERE connection_id = ${connectionId}
          AND facility_id = ${facilityId} AND resource = ${resource} AND body IS NOT NULL
          ORDER BY first_seq LIMIT ${limit} OFFSET ${offset}`,
          toBody
        ),
        (rows) => rows.map((row) => row.body)
      ),
    get: (connectionId, facilityId, resource, objectId) =>
      Effect.map(
        one(
          sql`SELECT body FROM sync_objects WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}
          AND resource = ${resource} AND object_id = ${objectId} AND body IS NOT NULL`,
          toBody
        ),
        Option.map((row) => row.body)
      ),
    claimDue: (now, interval, limit) =>
      sql.withTransaction(Effect.gen(function*() {
        const due = yield* all(
          sql`SELECT connection_id, facility_id FROM sync_facilities
          WHERE status <> 'backfilling' AND next_poll_at <= ${bigint(now)}
          ORDER BY next_poll_at LIMIT ${limit} ${skipLocked}`,
          toFacilityKey
        )
        for (const row of due) {
          // The next poll is an interval after this one was due, not after it was claimed: a
          // claim's delay then does not push every later poll back. A claim more than an interval
          // late starts again from now (no burst to catch up).
          yield* exec(sql`UPDATE sync_facilities SET next_poll_at = CASE
              WHEN next_poll_at + ${bigint(interval)} > ${bigint(now)} THEN next_poll_at + ${bigint(interval)}
              ELSE ${bigint(now + interval)} END
            WHERE connection_id = ${row.connection_id} AND facility_id = ${row.facility_id}`)
        }
        return due
      })).pipe(Effect.orDie),
    ids: (connectionId, facilityId, resource) =>
      Effect.map(
        all(
          sql`SELECT object_id FROM sync_objects WHERE connection_id = ${connectionId}
          AND facility_id = ${facilityId} AND resource = ${resource} AND body IS NOT NULL`,
          toObjectId
        ),
        (rows) => rows.map((row) => row.object_id)
      ),
    claimStalled: (staleBefore, now, limit) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* all(
          sql`SELECT * FROM sync_facilities WHERE status = 'backfilling'
          AND COALESCE(heartbeat_at, 0) < ${bigint(staleBefore)} ORDER BY connection_id LIMIT ${limit} ${skipLocked}`,
          toFacility
        )
        const out: Array<FacilityState> = []
        for (const f of rows) {
          yield* exec(sql`UPDATE sync_facilities SET attempt = attempt + 1, heartbeat_at = ${bigint(now)}
            WHERE connection_id = ${f.connection_id} AND facility_id = ${f.facility_id}`)
          out.push({ ...f, attempt: f.attempt + 1, heartbeat_at: now })
        }
        return out
      })).pipe(Effect.orDie),
    dropFacility: (connectionId, facilityId) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM sync_objects WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}`
        yield* sql`DELETE FROM sync_resources WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}`
        yield* sql`DELETE FROM sync_facilities WHERE connection_id = ${connectionId} AND facility_id = ${facilityId}`
      })).pipe(Effect.orDie),
    dropConnection: (connectionId) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM sync_objects WHERE connection_id = ${connectionId}`
        yield* sql`DELETE FROM sync_resources WHERE connection_id = ${connectionId}`
        yield* sql`DELETE FROM sync_facilities WHERE connection_id = ${connectionId}`
      })).pipe(Effect.orDie)
  }
})

/**
 * `SyncStore` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SyncStore, never, SqlClient.SqlClient> = Layer.effect(SyncStore, make)
