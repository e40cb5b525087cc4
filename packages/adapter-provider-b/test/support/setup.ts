import { FetchHttpClient } from "@effect/platform"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import type { ProviderPort } from "@tracebridge/core"
import { Ids, Session } from "@tracebridge/core"
import { Effect } from "effect"
import { LICENSE, makeStore, PASSWORD, UBI, USERNAME } from "./BioTrackServer.js"

export const good = { ubi: UBI, username: USERNAME, password: PASSWORD }
export const facilityId = Ids.make("facility", "provider_b", LICENSE)

export const sessionFor = (baseUrl: string, key: string, credentials: Record<string, string> = good) =>
  Session.make({ key, provider: "provider_b", state: "AR", environment: "sandbox", credentials, baseUrl })

/** A port over a fresh store: its own host, its own data. */
export const world = (name: string) =>
  Effect.gen(function*() {
    const { baseUrl, store } = makeStore(name)
    const port: ProviderPort.Service = yield* ProviderB.make.pipe(Effect.provide(FetchHttpClient.layer))
    return { port, store, session: sessionFor(baseUrl, name), baseUrl }
  })
