/**
 * The change feed and the sync status, answered from the synced store (no upstream call).
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Change as CoreChange, Ids, ProviderName } from "@tracebridge/core"
import { Cursor, Jobs, SyncStore } from "@tracebridge/sync"
import { Clock, Effect, Either, Option, Schema } from "effect"
import { Api } from "../Api.js"
import * as Errors from "../Errors.js"
import * as Envelope from "./envelope.js"
import { reachable, withConnection } from "./provider.js"

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

const isChangeType = Schema.is(CoreChange.ChangeType)

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
        let after = 0
        if (urlParams.cursor !== undefined) {
          const position = Cursor.decode(urlParams.cursor, path.facility_id, now)
          if (Either.isLeft(position)) return yield* invalid(position.left, "cursor")
          after = position.right.seq
        }
        let state = yield* store.facility(connection.id, path.facility_id)
        if (Option.isNone(state)) {
          // a facility the sync has not met (a connection linked before it existed): start it now
          const provider = ProviderName.isProviderName(connection.provider) ? connection.provider : undefined
          if (provider === undefined || Option.isNone(Ids.decodeAs("facility", provider, path.facility_id))) {
            return yield* Errors.fail(
              "not_found_error",
              "resource_not_found",
              `No facility with id ${path.facility_id}`
            )
          }
          yield* (yield* Jobs.Jobs).start(connection.id, [path.facility_id])
          state = yield* store.facility(connection.id, path.facility_id)
        }
        const rows = yield* store.feed(connection.id, path.facility_id, after, limit + 1, types)
        const page = rows.slice(0, limit)
        const last = page.length === 0 ? after : page[page.length - 1]!.seq
        const meta = {
          ...(yield* Envelope.meta({ provider: connection.provider, state: connection.state })),
          next_cursor: Cursor.encode({ facility_id: path.facility_id, seq: last, issued_at: now }),
          has_more: rows.length > limit,
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
        const data = page.map((c) =>
          `{"id":"chg_${c.seq}","type":${JSON.stringify(c.resource)},"action":"${
            c.body === null ? "removed" : "upserted"
          }","object_id":${JSON.stringify(c.object_id)},"object":${c.body ?? "null"},"changed_at":"${
            new Date(c.changed_at).toISOString()
          }"}`
        )
        return HttpServerResponse.text(`{"data":[${data.join(",")}],"meta":${JSON.stringify(meta)}}`, {
          contentType: "application/json"
        })
      }))
    .handle("getConnectionSync", ({ path }) =>
      Effect.gen(function*() {
        const connection = yield* reachable(path.connection_id)
        const store = yield* SyncStore.SyncStore
        let facilities = yield* store.facilities(connection.id)
        if (facilities.length === 0 && connection.status === "active") {
          // a connection the sync has not met yet (a sandbox one, or one linked before the sync
          // existed): its facilities start their backfill now
          const { value } = yield* withConnection(
            connection.id,
            (port, session) => port.listFacilities(session, { page: 1, per_page: 100 })
          )
          yield* (yield* Jobs.Jobs).start(connection.id, value.items.map((f) => f.id))
          facilities = yield* store.facilities(connection.id)
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
