import type { Page } from "@tracebridge/core"
import { Clock, Effect } from "effect"
import * as RequestId from "../RequestId.js"

/** `meta` of a response. */
export const meta = (context: { readonly provider?: string; readonly state?: string } = {}) =>
  Effect.gen(function*() {
    const request_id = yield* RequestId.get
    const now = yield* Clock.currentTimeMillis
    return {
      request_id,
      timestamp: new Date(now).toISOString(),
      ...(context.provider === undefined ? {} : { provider: context.provider as never }),
      ...(context.state === undefined ? {} : { state: context.state as never })
    }
  })

/** The envelope of one object. */
export const one = <A>(data: A, context: { readonly provider?: string; readonly state?: string } = {}) =>
  Effect.map(meta(context), (m) => ({ data, meta: m }))

/** The envelope of a page. */
export const page = <A>(p: Page.Page<A>, context: { readonly provider?: string; readonly state?: string } = {}) =>
  Effect.map(meta(context), (m) => ({ data: p.items, meta: m, pagination: p.pagination }))
