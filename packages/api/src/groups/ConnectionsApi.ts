/**
 * Connections and their facilities.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Connection, Envelope, Facility, Page } from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"

const ConnectionPath = Schema.Struct({ connection_id: Schema.String })
const FacilityPath = Schema.Struct({ connection_id: Schema.String, facility_id: Schema.String })

/**
 * @since 0.1.0
 * @category groups
 */
export class ConnectionsApi extends HttpApiGroup.make("connections")
  .annotate(OpenApi.Title, "Connections")
  .annotate(OpenApi.Description, "Linked state logins (connections) and the licensed facilities each reaches.")
  .add(
    HttpApiEndpoint.get("listConnections", "/v1/connections")
      .annotate(OpenApi.Transform, errors("params"))
      .annotate(OpenApi.Summary, "List connections")
      .annotate(
        OpenApi.Description,
        "The organisation's connections, oldest first, paged. A connection token sees its own connection only."
      )
      .setUrlParams(Page.PageRequest)
      .addSuccess(Envelope.Paginated(Connection.Connection))
  )
  .add(
    HttpApiEndpoint.get("getConnection", "/v1/connections/:connection_id")
      .annotate(OpenApi.Transform, errors("owned"))
      .annotate(OpenApi.Summary, "Get a connection")
      .annotate(OpenApi.Description, "A connection's provider, state, environment and status.").setPath(ConnectionPath)
      .addSuccess(
        Envelope.Envelope(Connection.Connection)
      )
  )
  .add(
    HttpApiEndpoint.del("deleteConnection", "/v1/connections/:connection_id")
      .annotate(OpenApi.Transform, errors("owned"))
      .annotate(OpenApi.Summary, "Disconnect a connection")
      .annotate(
        OpenApi.Description,
        "Moves the connection to `inactive`, revokes its connection token and erases its stored login. Its resources then answer 409 `connection_inactive`."
      ).setPath(ConnectionPath).addSuccess(
        Envelope.Envelope(Connection.Connection)
      )
  )
  .add(
    HttpApiEndpoint.get("listFacilities", "/v1/connections/:connection_id/facilities")
      .annotate(OpenApi.Transform, errors("params", "owned", "upstream"))
      .annotate(OpenApi.Summary, "List a connection's facilities")
      .annotate(
        OpenApi.Description,
        "The licensed facilities the connection's login reaches, with their licence numbers and capabilities."
      )
      .setPath(ConnectionPath)
      .setUrlParams(Page.PageRequest)
      .addSuccess(Envelope.Paginated(Facility.Facility))
  )
  .add(
    HttpApiEndpoint.get("getFacility", "/v1/connections/:connection_id/facilities/:facility_id")
      .annotate(OpenApi.Transform, errors("owned", "upstream"))
      .annotate(OpenApi.Summary, "Get a facility")
      .annotate(OpenApi.Description, "One licensed facility of the connection.")
      .setPath(FacilityPath)
      .addSuccess(Envelope.Envelope(Facility.Facility))
  )
  .middleware(Authentication)
{}
