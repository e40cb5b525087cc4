import type { Page, ProviderPort, Query, Session } from "@tracebridge/core"
import type { Schema } from "effect"
import { Clock, Effect } from "effect"
import type { MapContext } from "../mappers/context.js"
import { toSale, toSalesDelivery } from "../mappers/toSale.js"
import { readAll, windows } from "../paging.js"
import type { FacilityRef, Reader } from "../reader.js"
import { map, mapRows, PAGE, readEnd } from "../reader.js"
import type { SalesReceipt as SalesReceiptRow } from "../wire/Sale.js"
import { SalesDeliveryV2, SalesReceipt } from "../wire/Sale.js"

const DAY = 86_400_000

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
    const spans = windows(start, yield* readEnd(now), settings.windowHours)
    const rows = yield* readAll(spans.map((span) => paged(session, facility, path, wire, operation, span)), PAGE)
    const ctx = ctxOf(session, facility)
    const mapped = yield* mapRows(session, operation, rows, (w: W) => toCore(w, ctx))
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

/** Where receipts are listed: the active ones and the inactive (voided) ones. */
const RECEIPT_LISTS = ["/sales/v2/receipts/active", "/sales/v2/receipts/inactive"] as const

/**
 * Sales: the receipts of `/sales/v2/receipts/active` and `/inactive`, in windows of at most 24 h:
 * by sales date (`salesDateStart`/`salesDateEnd`) for `from`/`to`, else by lastModified from
 * `updated_since` or the sales look-back. Metrc's list rows carry no line items, so each receipt
 * of the page asked for is read again by id (`/sales/v2/receipts/{id}`) for its `Transactions`.
 */
export const sales = (reader: Reader): ProviderPort.ResourceDriver<any, Query.Sales> => {
  const { ctxOf, getOne, paged, settings, withinLookback } = reader
  const operation = "sales.list"
  const get = reader.byId("/sales/v2/receipts", SalesReceipt, "sale", "sales.get", toSale)
  return {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const lookback = now - settings.salesLookbackDays * DAY
        const byDate = (q.from !== undefined || q.to !== undefined) && q.updated_since === undefined
        let spans: ReadonlyArray<Readonly<Record<string, string>>>
        if (byDate) {
          const start = q.from === undefined ? lookback : Date.parse(q.from)
          if (q.from !== undefined) yield* withinLookback(operation, "from", start, now)
          const end = q.to === undefined ? now : Math.min(Date.parse(q.to), now)
          spans = windows(start, end, settings.windowHours).map((w) => ({
            salesDateStart: w.lastModifiedStart,
            salesDateEnd: w.lastModifiedEnd
          }))
        } else {
          const start = q.updated_since === undefined ? lookback : Date.parse(q.updated_since)
          if (q.updated_since !== undefined) yield* withinLookback(operation, "updated_since", start, now)
          spans = windows(start, yield* readEnd(now), settings.windowHours)
        }
        const rows = yield* readAll(
          RECEIPT_LISTS.flatMap((path) =>
            spans.map((span) => paged(session, facility, path, SalesReceipt, operation, span))
          ),
          PAGE
        )
        const ctx = ctxOf(session, facility)
        const seen = new Set<number>()
        const unique = rows.filter((r) => !seen.has(r.Id) && seen.add(r.Id) !== undefined)
        const mapped = yield* mapRows(session, operation, unique, (w: SalesReceiptRow) => toSale(w, ctx))
        const fromMs = q.from === undefined ? undefined : Date.parse(q.from)
        const toMs = q.to === undefined ? undefined : Date.parse(q.to)
        const all = mapped.filter((sale) => {
          if (fromMs === undefined && toMs === undefined) return true
          const t = Date.parse(sale.sale_date)
          return (fromMs === undefined || t >= fromMs) && (toMs === undefined || t <= toMs)
        })
        const page = all.slice(window.offset, window.offset + window.limit)
        // the line items: each receipt of the page read by id
        const items = yield* Effect.forEach(
          page,
          (sale) =>
            Effect.flatMap(
              getOne(session, facility, `/sales/v2/receipts/${sale.provider_sale_id}`, SalesReceipt, operation, {
                resource: "sale",
                id: sale.id
              }),
              map(operation, (w: SalesReceiptRow) => toSale(w, ctx))
            ),
          { concurrency: 8 }
        )
        return { items, total: all.length }
      }),
    get
  }
}

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
