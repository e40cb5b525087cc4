/**
 * The change feed and the sync status, answered from the synced store (no upstream call).
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { Change as CoreChange } from "@tracebridge/core"
import { Cursor, Jobs, SyncStore } from "@tracebridge/sync"
import { Clock, Effect, Either, Option, Schema } from "effect"
import * as Errors from "../Errors.js"
import * as Crypto from "../services/Crypto.js"
import { Providers } from "../services/Providers.js"
import * as Envelope from "./envelope.js"
import { ownFacility, reachable, refused } from "./provider.js"

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** Each change type's JSON text (a fixed set of names), made once. */
const quotedTypes = new Map<string, string>(CoreChange.ChangeType.literals.map((t) => [t, JSON.stringify(t)]))

const isChangeType = Schema.is(CoreChange.ChangeType)

/**
 * The `Retry-After` (seconds) of a feed page that reached the end of what a filling facility has
 * stored so far.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILLING_RETRY_AFTER_SECONDS = 2

const invalid = (message: string, param: string) => Errors.fail("validation_error", "invalid_parameter", message, param)

/** The `types` filter: known list names, or a 400 naming the first unknown one. */
const typesOf = (text: string | undefined) => {
  if (text === undefined || text.trim() === "") return Effect.succeed([] as ReadonlyArray<string>)
  const names = [...new Set(text.split(",").map((t) => t.trim()).filter((t) => t !== ""))]
  const unknown = names.find((t) => !isChangeType(t))
  return unknown === undefined
    ? Effect.succeed(names)
    : invalid(`types names ${unknown}, which is not one of ${CoreChange.ChangeType.literals.join(", ")}`, "types")
}

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpSyncLive = HttpApiBuilder.group(Api, "sync", (handlers) =>
  handlers
    .handle("listChanges", ({ path, urlParams }) =>
      Effect.gen(function*() {
        const connection = yield* reachable(path.connection_id)
        const store = yield* SyncStore.SyncStore
        const now = yield* Clock.currentTimeMillis
        const types = yield* typesOf(urlParams.types)
        const limit = urlParams.limit ?? 100
        // only a facility the connection has (issue #28): any other is 404, and gets no sync row
        let state = yield* store.facility(connection.id, path.facility_id)
        yield* ownFacility(connection, path.facility_id, state)
        const binding = {
          organisation_id: connection.organisation_id,
          connection_id: connection.id,
          facility_id: path.facility_id
        }
        // signed with a key derived from the encryption key: every node shares it (issue #28)
        const key = (yield* Crypto.Crypto).derive(Cursor.KEY_LABEL)
        let after = 0
        if (urlParams.cursor !== undefined) {
          const position = Cursor.decode(key, urlParams.cursor, binding, now)
          if (Either.isLeft(position)) return yield* invalid(position.left, "cursor")
          after = position.right.seq
        }
        if (Option.isNone(state)) {
          // a facility the sync has not met (a connection linked before it existed): start it now
          yield* (yield* Jobs.Jobs).start(connection.id, [path.facility_id])
          state = yield* store.facility(connection.id, path.facility_id)
        }
        const rows = yield* store.feed(connection.id, path.facility_id, after, limit + 1, types)
        const page = rows.slice(0, limit)
        const last = page.length === 0 ? after : page[page.length - 1]!.seq
        // While the facility fills, the feed is never "up to date" (issue #30): a page that reached
        // what is stored so far says more is to come, and when to ask again.
        const filling = Option.match(state, { onNone: () => true, onSome: (s) => s.status === "backfilling" })
        const caughtUp = rows.length <= limit
        const meta = {
          ...(yield* Envelope.meta({ provider: connection.provider, state: connection.state })),
          next_cursor: Cursor.encode(key, binding, { seq: last, issued_at: now }),
          has_more: !caughtUp || filling,
          sync: Option.match(state, {
            onNone: () => ({ status: "backfilling", backfilled_through: null, last_synced_at: null }),
            onSome: (s) => ({
              status: s.status,
              backfilled_through: isoOrNull(s.backfilled_through),
              last_synced_at: isoOrNull(s.last_synced_at)
            })
          })
        }
        // The stored objects are already the JSON their GET answers: spliced in, not parsed again.
        let lastAt = Number.NaN
        let lastIso = ""
        const data = page.map((c) => {
          // a page's changes mostly share their instant (one stored page of a list)
          if (c.changed_at !== lastAt) {
            lastAt = c.changed_at
            lastIso = new Date(c.changed_at).toISOString()
          }
          return `{"id":"chg_${c.seq}","type":${quotedTypes.get(c.resource) ?? JSON.stringify(c.resource)},"action":"${
            c.body === null ? "removed" : "upserted"
          }","object_id":${JSON.stringify(c.object_id)},"object":${c.body ?? "null"},"changed_at":"${lastIso}"}`
        })
        const response = HttpServerResponse.text(`{"data":[${data.join(",")}],"meta":${JSON.stringify(meta)}}`, {
          contentType: "application/json"
        })
        return caughtUp && filling
          ? HttpServerResponse.setHeader(response, "retry-after", String(FILLING_RETRY_AFTER_SECONDS))
          : response
      }))
    .handle("getConnectionSync", ({ path }) =>
      Effect.gen(function*() {
        const connection = yield* reachable(path.connection_id)
        const store = yield* SyncStore.SyncStore
        // only the facilities the connection has, as its provider lists them (issue #28): a row of
        // any other (stored before the check existed) is not shown, so the answer is bounded by the
        // connection's facility count. When the provider cannot answer, the stored rows are shown
        // (every row the sync creates now is checked, and the scheduler drops the older ones).
        const listed = yield* Effect.either((yield* Providers).facilityIds(connection))
        const stored = yield* store.facilities(connection.id)
        let facilities = Either.isRight(listed) ? stored.filter((f) => listed.right.has(f.facility_id)) : stored
        if (facilities.length === 0 && connection.status === "active") {
          // a connection the sync has not met yet (a sandbox one, or one linked before the sync
          // existed): its facilities start their backfill now
          if (Either.isLeft(listed)) return yield* refused(connection, listed.left)
          yield* (yield* Jobs.Jobs).start(connection.id, [...listed.right])
          facilities = (yield* store.facilities(connection.id)).filter((f) => listed.right.has(f.facility_id))
        }
        const data = {
          connection_id: connection.id,
          facilities: yield* Effect.forEach(facilities, (f) =>
            Effect.map(store.resources(connection.id, f.facility_id), (resources) => ({
              facility_id: f.facility_id,
              status: f.status,
              backfilled_through: isoOrNull(f.backfilled_through),
              last_synced_at: isoOrNull(f.last_synced_at),
              last_error: f.last_error,
              resources: resources.filter((r) => isChangeType(r.resource)).map((r) => ({
                type: r.resource as CoreChange.ChangeType,
                status: r.status,
                count: r.count,
                backfilled_through: isoOrNull(r.backfilled_through),
                last_synced_at: isoOrNull(r.last_synced_at),
                last_error: r.last_error
              }))
            })))
        }
        return yield* Envelope.one(data, { provider: connection.provider, state: connection.state })
      })))
