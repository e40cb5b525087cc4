/**
 * `ownFacility`, the check every facility-level path runs first (issue #28), in the order that
 * makes it cheap (issue #35): a facility of the connection's list kept in memory
 * (`Providers.cachedFacilityIds`, the provider's own ids) passes with no further work, not even
 * decoding its id; any other id is decoded first (not a facility id of the connection's provider:
 * 404 with no read), then checked against the stored sync row or the provider's list.
 */
import { assert, describe, it } from "@effect/vitest"
import { Ids } from "@tracebridge/core"
import { SyncStore } from "@tracebridge/sync"
import { Effect } from "effect"
import { ownFacility } from "../src/handlers/provider.js"
import type { Connection } from "../src/persistence/ConnectionStore.js"
import { Connections } from "../src/services/Connections.js"
import type * as ProvidersModule from "../src/services/Providers.js"
import { Providers } from "../src/services/Providers.js"

const connection: Connection = {
  id: "conn_check",
  organisation_id: "org_1",
  provider: "provider_a",
  state: "CO",
  status: "active",
  is_sandbox: true,
  external_id: null,
  credentials: "sealed",
  key_id: "k1",
  token_issued: true,
  created_at: 0,
  updated_at: 0,
  sandbox_version: 0,
  sandbox_fault: null
}

/** A service with only these members: anything else the check asks for fails the test. */
const only = <S extends object>(name: string, members: Partial<S>): S =>
  new Proxy(members, {
    get: (target, key) => {
      if (key in target) return target[key as keyof typeof target]
      throw new Error(`the check asked ${name} for ${String(key)}`)
    }
  }) as S

describe("ownFacility", () => {
  it.effect("a facility of the list kept in memory passes as it is; another id is decoded first", () =>
    Effect.gen(function*() {
      const listed = Ids.make("facility", "provider_a", "LIC-1")
      // an id that only the kept list can vouch for (the provider's own list holds it as it is)
      const opaque = "fac_kept_as_listed"
      const kept: ReadonlySet<string> = new Set([listed, opaque])
      const check = (id: string) =>
        ownFacility(connection, id).pipe(
          Effect.provideService(
            Providers,
            only<ProvidersModule.Service>("Providers", { cachedFacilityIds: () => kept })
          ),
          Effect.provideService(SyncStore.SyncStore, only<SyncStore.SyncStore["Type"]>("SyncStore", {})),
          Effect.provideService(Connections, only<Connections["Type"]>("Connections", {}))
        )
      yield* check(listed)
      yield* check(opaque)
      // not a facility id of provider_a, and not in the list: 404 before anything is read
      for (
        const bad of [
          "fac_not_an_id",
          Ids.make("facility", "provider_b", "LIC-1"),
          Ids.make("package", "provider_a", "P1")
        ]
      ) {
        const refused = yield* Effect.flip(check(bad))
        assert.strictEqual(refused?.error.code, "resource_not_found", bad)
      }
    }))
})
