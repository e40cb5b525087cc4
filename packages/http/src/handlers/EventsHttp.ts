/**
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import type { WebhookEvent } from "@tracebridge/core"
import { Effect, Stream } from "effect"
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
    .handle("streamEvents", ({ headers, urlParams }) =>
      Effect.gen(function*() {
        const events = yield* Events
        const request = yield* HttpServerRequest.HttpServerRequest
        const authorization = request.headers.authorization ?? ""
        const stream = yield* events.stream(yield* CurrentPrincipal, authorization.slice(7), {
          types: urlParams.types?.split(",") as ReadonlyArray<WebhookEvent.EventType> | undefined,
          connectionId: urlParams.connection_id,
          lastEventId: headers["last-event-id"]
        })
        return HttpServerResponse.stream(Stream.encodeText(stream), {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      }))
    .handle("getEvent", ({ path }) =>
      Effect.gen(function*() {
        const events = yield* Events
        return yield* Envelope.one(yield* events.get(yield* CurrentPrincipal, path.event_id))
      })))
