import { FetchHttpClient } from "@effect/platform"
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import { Ids, ProviderPort, Session } from "@tracebridge/core"
import { Effect, Layer, TestClock } from "effect"
import type { FakeMetrc } from "./FakeMetrc.js"
import { LICENSE, NOW, USER_KEY } from "./FakeMetrc.js"

export const facilityId = Ids.make("facility", "provider_a", LICENSE)

export const sessionFor = (server: FakeMetrc, userKey = USER_KEY): Session.Session =>
  Session.make({
    key: server.host,
    provider: "provider_a",
    state: "CO",
    environment: "sandbox",
    credentials: { user_key: userKey },
    baseUrl: server.baseUrl
  })

/** The provider_a port over msw, with test settings. */
export const portLayer = (settings: Partial<ProviderAConfig.Settings> = {}) =>
  ProviderA.layer.pipe(Layer.provide(ProviderAConfig.layerTest(settings)), Layer.provide(FetchHttpClient.layer))

/** Runs `f` with the port, the clock at the fake world's "now". */
export const withPort = <A, E>(
  f: (port: ProviderPort.Service) => Effect.Effect<A, E>,
  settings: Partial<ProviderAConfig.Settings> = {}
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(NOW)
    const port = yield* ProviderPort.ProviderPort
    return yield* f(port)
  }).pipe(Effect.provide(portLayer(settings)))
