/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpSystemLive = HttpApiBuilder.group(
  Api,
  "system",
  (handlers) => handlers.handle("health", () => Effect.succeed({ status: "ok" as const }))
)
