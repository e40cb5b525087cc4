/**
 * The provider_b driver behind the provider port: the sync tables of each connection
 * (`tables.ts`), the reads derived from them (`reads.ts`) and the writes (`writes.ts`), over the
 * session client.
 */
import type { ProviderPort, Resource } from "@tracebridge/core"
import type { Duration } from "effect"
import { Effect } from "effect"
import type { Client } from "../ProviderBClient.js"
import { descriptor } from "./descriptor.js"
import * as Reads from "./reads.js"
import * as Tables from "./tables.js"
import * as Writes from "./writes.js"

/** The resources provider_b serves. */
const names: ReadonlyArray<Resource.Name> = [
  "packages",
  "plants",
  "harvests",
  "lab_results",
  "transfers",
  "sales",
  "items",
  "strains",
  "locations"
]

/**
 * The provider_b driver: every read and write of the port, over the session client, its sync
 * tables kept for `tableTtl` (`Tables.CACHE_TTL` by default).
 */
export const makeDriver = (client: Client, tableTtl?: Duration.Duration): ProviderPort.Driver => {
  const tables = Tables.make(client, tableTtl)
  const reads = Reads.make(tables)
  return {
    descriptor,
    checkCredentials: (session) => Effect.zipRight(tables.invalidate(session), client.login(session)),
    listFacilities: reads.listFacilities,
    resources: Object.fromEntries(names.map((n) => [n, reads.resourceDriver(n)])) as ProviderPort.ResourceDrivers,
    writes: Writes.make(client, tables, reads)
  }
}
