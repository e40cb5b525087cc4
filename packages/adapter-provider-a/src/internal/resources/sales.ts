import type { Page, ProviderPort, Query, Session } from "@tracebridge/core"
import type { Schema } from "effect"
import { Clock, Effect } from "effect"
import type { MapContext } from "../mappers/context.js"
import { toSale, toSalesDelivery } from "../mappers/toSale.js"
import { readAll, windows } from "../paging.js"
import type { FacilityRef, Reader } from "../reader.js"
import { map, PAGE } from "../reader.js"
import { SalesDeliveryV2, SalesReceipt } from "../wire/Sale.js"

/**
 * A list Metrc serves only in lastModified windows: every window from the start asked for (or the
 * sales look-back) to now, then the `from`/`to` filter on the record's own date.
 */
const dated = <W, I, A extends { readonly [k: string]: unknown }>(
  { ctxOf, paged, settings, withinLookback }: Reader,
  path: string,
  wire: Schema.Schema<W, I>,
  operation: string,
  toCore: (w: W, ctx: MapContext) => A,
  dateOf: (a: A) => string | null
) =>
(session: Session.Session, facility: FacilityRef, q: Query.Sales, window: Page.Window) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const lookback = now - settings.salesLookbackDays * 86_400_000
    const from = Math.min(
      ...[q.from, q.updated_since].filter((s): s is string => s !== undefined).map(Date.parse),
      lookback
    )
    const start = q.from !== undefined || q.updated_since !== undefined
      ? Math.max(...[q.from, q.updated_since].filter((s): s is string => s !== undefined).map(Date.parse))
      : from
    if (q.from !== undefined || q.updated_since !== undefined) {
      yield* withinLookback(
        operation,
        q.updated_since !== undefined && q.from === undefined ? "updated_since" : "from",
        start,
        now
      )
    }
    const spans = windows(start, now, settings.windowHours)
    const rows = yield* readAll(spans.map((span) => paged(session, facility, path, wire, operation, span)), PAGE)
    const ctx = ctxOf(session, facility)
    const mapped = yield* Effect.forEach(rows, map(operation, (w: W) => toCore(w, ctx)))
    const fromMs = q.from === undefined ? undefined : Date.parse(q.from)
    const toMs = q.to === undefined ? undefined : Date.parse(q.to)
    const all = mapped.filter((a) => {
      if (fromMs === undefined && toMs === undefined) return true
      const date = dateOf(a)
      if (date === null) return false
      const t = Date.parse(date)
      return (fromMs === undefined || t >= fromMs) && (toMs === undefined || t <= toMs)
    })
    return { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
  })

/** Sales: the receipts of `/sales/v2/receipts/active` (in windows), and by id. */
export const sales = (reader: Reader): ProviderPort.ResourceDriver<any, Query.Sales> => ({
  list: dated(reader, "/sales/v2/receipts/active", SalesReceipt, "sales.list", toSale, (s) => s.sale_date),
  get: reader.byId("/sales/v2/receipts", SalesReceipt, "sale", "sales.get", toSale)
})

/** Sales deliveries: `/sales/v2/deliveries/active` (in windows), and by id. */
export const salesDeliveries = (reader: Reader): ProviderPort.ResourceDriver<any, Query.SalesDeliveries> => ({
  list: dated(
    reader,
    "/sales/v2/deliveries/active",
    SalesDeliveryV2,
    "sales_deliveries.list",
    toSalesDelivery,
    (d) => d.delivery_date
  ),
  get: reader.byId("/sales/v2/deliveries", SalesDeliveryV2, "sales_delivery", "sales_deliveries.get", toSalesDelivery)
})
