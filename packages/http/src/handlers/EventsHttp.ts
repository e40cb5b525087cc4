/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import { Effect } from "effect"
import { Events } from "../services/Events.js"
import * as Envelope from "./envelope.js"

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpEventsLive = HttpApiBuilder.group(Api, "events", (handlers) =>
  handlers
    .handle("listEvents", ({ urlParams }) =>
      Effect.gen(function*() {
        const events = yield* Events
        return yield* Envelope.page(yield* events.list(yield* CurrentPrincipal, urlParams))
      }))
    .handle("getEvent", ({ path }) =>
      Effect.gen(function*() {
        const events = yield* Events
        return yield* Envelope.one(yield* events.get(yield* CurrentPrincipal, path.event_id))
      })))
