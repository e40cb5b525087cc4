/**
 * The system group: liveness for operators and load balancers (outside `/v1`, unversioned, and not in
 * the `/v1` document).
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Health" })

/**
 * @since 0.1.0
 * @category groups
 */
export class SystemApi extends HttpApiGroup.make("system")
  .annotate(OpenApi.Title, "System")
  .annotate(OpenApi.Description, "Liveness of the service.")
  .add(
    HttpApiEndpoint.get("health", "/healthz")
      .annotate(OpenApi.Transform, errors("public"))
      .annotate(OpenApi.Summary, "Check the service is up")
      .addSuccess(Health)
      .annotate(OpenApi.Description, "Answers 200 while the process serves requests")
      // For operators, outside the `/v1` document (DECISIONS "Turn 3 additions"), with `/livez` and
      // `/readyz`; still in the contract, so the typed client can call it.
      .annotate(OpenApi.Exclude, true)
  )
{}
