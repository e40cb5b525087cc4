/**
 * Connections and their facilities.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Connection, Envelope, Facility, Page } from "@tracebridge/core"
import { Schema } from "effect"
import { Authentication } from "../Security.js"

const ConnectionPath = Schema.Struct({ connection_id: Schema.String })
const FacilityPath = Schema.Struct({ connection_id: Schema.String, facility_id: Schema.String })

/**
 * @since 0.1.0
 * @category groups
 */
export class ConnectionsApi extends HttpApiGroup.make("connections")
  .add(
    HttpApiEndpoint.get("listConnections", "/v1/connections")
      .setUrlParams(Page.PageRequest)
      .addSuccess(Envelope.Paginated(Connection.Connection))
  )
  .add(
    HttpApiEndpoint.get("getConnection", "/v1/connections/:connection_id").setPath(ConnectionPath).addSuccess(
      Envelope.Envelope(Connection.Connection)
    )
  )
  .add(
    HttpApiEndpoint.del("deleteConnection", "/v1/connections/:connection_id").setPath(ConnectionPath).addSuccess(
      Envelope.Envelope(Connection.Connection)
    )
  )
  .add(
    HttpApiEndpoint.get("listFacilities", "/v1/connections/:connection_id/facilities")
      .setPath(ConnectionPath)
      .setUrlParams(Page.PageRequest)
      .addSuccess(Envelope.Paginated(Facility.Facility))
  )
  .add(
    HttpApiEndpoint.get("getFacility", "/v1/connections/:connection_id/facilities/:facility_id")
      .setPath(FacilityPath)
      .addSuccess(Envelope.Envelope(Facility.Facility))
  )
  .middleware(Authentication)
{}
