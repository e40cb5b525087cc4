import type { Page } from "@tracebridge/core"
import { ProviderName } from "@tracebridge/core"
import { Clock, Effect, Schema } from "effect"
import * as RequestId from "../RequestId.js"

/** The ISO text of the last instant asked for: requests served in the same millisecond share it. */
let lastMillis = Number.NaN
let lastIso = ""
const isoOf = (millis: number): string => {
  if (millis !== lastMillis) {
    lastIso = new Date(millis).toISOString()
    lastMillis = millis
  }
  return lastIso
}

const isUsState = Schema.is(ProviderName.UsState)

/** `meta` of a response. */
export interface Context {
  readonly provider?: string
  readonly state?: string
  /** How fresh a read answered from the synced store is (`meta.sync`). */
  readonly sync?: { readonly status: "backfilling" | "live" | "error"; readonly last_synced_at: string | null }
}

/** `meta` of a response. */
export const meta = (context: Context = {}) =>
  Effect.gen(function*() {
    const request_id = yield* RequestId.get
    const now = yield* Clock.currentTimeMillis
    return {
      request_id,
      timestamp: isoOf(now),
      ...(context.provider === undefined ? {} : { provider: context.provider }),
      // a stored connection's state was checked when it was linked
      ...(context.state === undefined || !isUsState(context.state) ? {} : { state: context.state }),
      ...(context.sync === undefined ? {} : { sync: context.sync })
    }
  })

/** The envelope of one object. */
export const one = <A>(data: A, context: Context = {}) => Effect.map(meta(context), (m) => ({ data, meta: m }))

/** The envelope of a page: `meta.skipped` lists the upstream rows left out (DECISIONS "Tolerant reads"). */
export const page = <A>(p: Page.Page<A>, context: Context = {}) =>
  Effect.map(
    meta(context),
    (m) => ({ data: p.items, meta: { ...m, skipped: p.skipped ?? [] }, pagination: p.pagination })
  )
