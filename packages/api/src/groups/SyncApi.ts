/**
 * The managed sync (DECISIONS "Change feed and managed sync"): a facility's change feed and a
 * connection's sync status.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Change, Envelope } from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"

const FacilityPath = Schema.Struct({ connection_id: Schema.String, facility_id: Schema.String })
const ConnectionPath = Schema.Struct({ connection_id: Schema.String })

const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500)).annotations({
  description: "Changes per page, 1 to 500 (default 100)",
  message: () => "limit must be a whole number from 1 to 500"
})

/**
 * The feed's query string.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChangesQuery = Schema.Struct({
  cursor: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(512))).annotations({
    description: "The `meta.next_cursor` of the last page (signed; valid 30 days, for this feed only); " +
      "leave it out to start at the beginning"
  }),
  limit: Schema.optional(Limit),
  types: Schema.optional(Schema.String.pipe(Schema.maxLength(500))).annotations({
    description: "A comma list of the lists to include, e.g. `packages,lab_results` (default: all)"
  })
})

/**
 * @since 0.1.0
 * @category groups
 */
export class SyncApi extends HttpApiGroup.make("sync")
  .annotate(OpenApi.Title, "Sync")
  .annotate(
    OpenApi.Description,
    "The managed sync: every object a facility has, then every change after, from Tracebridge's store, " +
      "with a cursor; and how far each facility's sync has come. See docs/sync.md."
  )
  .add(
    HttpApiEndpoint.get("listChanges", "/v1/connections/:connection_id/facilities/:facility_id/changes")
      .annotate(OpenApi.Summary, "List a facility's changes")
      .annotate(
        OpenApi.Description,
        "Without a cursor: every object the facility has, then every change after. Each page hands over " +
          "changes in order and never skips or repeats one; an object that changed again since appears once, " +
          "as it is now. Keep `meta.next_cursor` (valid 30 days) and call again, at once while `has_more`, " +
          "later (or on `sync.updates_available`) when not. The cursor is signed and belongs to this " +
          "organisation's connection and facility: one changed, of another feed, or older than 30 days is 400 " +
          "`invalid_parameter` (`param: cursor`). A facility the connection does not have (as its state system " +
          "lists them) is 404 `resource_not_found`."
      )
      .annotate(OpenApi.Transform, errors("params", "owned", "upstream"))
      .setPath(FacilityPath)
      .setUrlParams(ChangesQuery)
      .addSuccess(Change.Changes)
  )
  .add(
    HttpApiEndpoint.get("getConnectionSync", "/v1/connections/:connection_id/sync")
      .annotate(OpenApi.Summary, "Get a connection's sync status")
      .annotate(
        OpenApi.Description,
        "Per facility and list: status, objects stored, how far the backfill has read, the last sync and the last error. " +
          "Only the facilities the connection has, as its state system lists them."
      )
      .annotate(OpenApi.Transform, errors("owned", "upstream"))
      .setPath(ConnectionPath)
      .addSuccess(Envelope.Envelope(Change.ConnectionSync))
  )
  .middleware(Authentication)
{}
