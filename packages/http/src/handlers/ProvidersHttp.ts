/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { ProviderModule } from "@tracebridge/core"
import { Effect } from "effect"
import { Providers } from "../services/Providers.js"
import * as Envelope from "./envelope.js"

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpProvidersLive = HttpApiBuilder.group(
  Api,
  "providers",
  (handlers) =>
    handlers.handle("listProviders", () =>
      Effect.gen(function*() {
        const providers = yield* Providers
        return yield* Envelope.one(providers.descriptors.map(ProviderModule.summary))
      }))
)
