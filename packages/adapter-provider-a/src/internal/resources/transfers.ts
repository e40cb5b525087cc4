import type { ProviderPort, Query, Session } from "@tracebridge/core"
import { Ids, ProviderError } from "@tracebridge/core"
import { Effect } from "effect"
import { PROVIDER } from "../mappers/context.js"
import type { TransferSource } from "../mappers/toTransfer.js"
import { toTransfer, transferDirection, transferProviderId } from "../mappers/toTransfer.js"
import { readAll } from "../paging.js"
import type { FacilityRef, Reader } from "../reader.js"
import { map, PAGE, unwindowed } from "../reader.js"
import type { DeliveryPackage, TransferRow } from "../wire/Transfer.js"
import {
  DeliveryPackage as DeliveryPackageWire,
  TransferDelivery,
  TransferRow as TransferRowWire
} from "../wire/Transfer.js"

type Tagged = { readonly row: TransferRow; readonly source: TransferSource }

const transferSources = (
  direction: Query.Transfers["direction"]
): ReadonlyArray<readonly [string, TransferSource]> => {
  // `/rejected` holds manifests of either direction: each row's direction is read from it.
  const incoming = [["/transfers/v2/incoming", "incoming"], ["/transfers/v2/rejected", "rejected"]] as const
  const outgoing = [
    ["/transfers/v2/outgoing", "outgoing"],
    ["/transfers/v2/rejected", "rejected"],
    ["/transfers/v2/templates/outgoing", "template"]
  ] as const
  return direction === "incoming"
    ? incoming
    : direction === "outgoing"
    ? outgoing
    : [incoming[0], ...outgoing]
}

/**
 * Transfers: the incoming, outgoing, rejected and template lists, one row per transfer × delivery,
 * grouped into transfers; each with the packages of its deliveries.
 */
export const transfers = (
  { ctxOf, license, paged, windowed }: Reader
): ProviderPort.ResourceDriver<any, Query.Transfers> => {
  const transferRows = (
    session: Session.Session,
    facility: FacilityRef,
    direction: Query.Transfers["direction"],
    since: string | undefined
  ) =>
    Effect.gen(function*() {
      const groups = new Map<string, { rows: Array<TransferRow>; source: TransferSource }>()
      for (const [path, source] of transferSources(direction)) {
        const sources = yield* windowed(session, facility, [path], TransferRowWire, "transfers.list", since)
        const read = yield* readAll(sources, PAGE)
        // A list read whole (no windows) is narrowed to `updated_since` here, by each row's LastModified.
        const rows = since === undefined || !unwindowed.has(path)
          ? read
          : read.filter((row) => row.LastModified != null && Date.parse(row.LastModified) >= Date.parse(since))
        for (const row of rows) {
          // A manifest rejected by its recipient shows in both /outgoing and /rejected: rejected wins.
          const key = source === "template" ? transferProviderId(row.Id, "template") : String(row.Id)
          const group = groups.get(key)
          if (group === undefined) groups.set(key, { rows: [row], source })
          else if (source === "rejected") groups.set(key, { rows: group.rows, source })
          else if (source === group.source && !group.rows.some((r) => r.DeliveryId === row.DeliveryId)) {
            group.rows.push(row)
          }
        }
      }
      return [...groups.values()]
        .filter((g) => direction === undefined || transferDirection(g.rows, license(facility), g.source) === direction)
        .map((g): ReadonlyArray<Tagged> => g.rows.map((row) => ({ row, source: g.source })))
    })

  /** The rows of a transfer with its deliveries resolved, and the packages of those deliveries. */
  const transferDetail = (session: Session.Session, facility: FacilityRef, tagged: ReadonlyArray<Tagged>) =>
    Effect.gen(function*() {
      const { row: first, source } = tagged[0]!
      if (source === "template") {
        const deliveries = yield* readAll([
          paged(
            session,
            facility,
            `/transfers/v2/templates/outgoing/${first.Id}/deliveries`,
            TransferDelivery,
            "transfers.deliveries"
          )
        ], PAGE)
        const rows: Array<TransferRow> = deliveries.length === 0
          ? [first]
          : deliveries.map((d) => ({
            ...first,
            DeliveryId: d.Id,
            RecipientFacilityLicenseNumber: d.RecipientFacilityLicenseNumber,
            RecipientFacilityName: d.RecipientFacilityName,
            ShipmentTypeName: d.ShipmentTypeName ?? first.ShipmentTypeName,
            EstimatedDepartureDateTime: d.EstimatedDepartureDateTime,
            EstimatedArrivalDateTime: d.EstimatedArrivalDateTime
          }))
        const packages = yield* Effect.forEach(deliveries, (d) =>
          readAll([
            paged(
              session,
              facility,
              `/transfers/v2/templates/outgoing/deliveries/${d.Id}/packages`,
              DeliveryPackageWire,
              "transfers.packages"
            )
          ], PAGE), { concurrency: 4 })
        return { rows, packages: packages.flat(), source }
      }
      const deliveryIds = [
        ...new Set(tagged.map((t) => t.row.DeliveryId).filter((id): id is number => id !== null && id > 0))
      ]
      const packages = yield* Effect.forEach(deliveryIds, (id) =>
        readAll([
          paged(session, facility, `/transfers/v2/deliveries/${id}/packages`, DeliveryPackageWire, "transfers.packages")
        ], PAGE), { concurrency: 4 })
      return { rows: tagged.map((t) => t.row), packages: packages.flat() as ReadonlyArray<DeliveryPackage>, source }
    })

  const buildTransfer = (session: Session.Session, facility: FacilityRef, tagged: ReadonlyArray<Tagged>) =>
    Effect.flatMap(
      transferDetail(session, facility, tagged),
      ({ packages, rows, source }) =>
        map("transfers.list", () => toTransfer(rows, packages, { ...ctxOf(session, facility), source }))(rows)
    )

  return {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        const groups = yield* transferRows(session, facility, q.direction, q.updated_since)
        if (q.status === undefined) {
          const page = groups.slice(window.offset, window.offset + window.limit)
          const items = yield* Effect.forEach(page, (g) => buildTransfer(session, facility, g), { concurrency: 4 })
          return { items, total: groups.length }
        }
        // The rows tell the status but for one case (`transferStatus`): a transfer whose every
        // package was rejected is rejected. Only a template's or a /rejected row's status is final
        // from its rows; any other transfer that may match is read with its packages, so that the
        // filter agrees with the status the list shows (issue #29).
        const ctx = ctxOf(session, facility)
        const possible = groups.filter((g) => {
          const source = g[0]!.source
          const fromRows = toTransfer(g.map((t) => t.row), [], { ...ctx, source }).status
          return fromRows === q.status || (q.status === "rejected" && source !== "template")
        })
        const built = yield* Effect.forEach(possible, (g) => buildTransfer(session, facility, g), { concurrency: 4 })
        const matching = built.filter((t) => t.status === q.status)
        return { items: matching.slice(window.offset, window.offset + window.limit), total: matching.length }
      }),
    get: (session, facility, providerId) =>
      Effect.gen(function*() {
        const isTemplate = providerId.startsWith("template-")
        const groups = yield* transferRows(session, facility, isTemplate ? "outgoing" : undefined, undefined)
        const found = groups.find((g) => transferProviderId(g[0]!.row.Id, g[0]!.source) === providerId)
        if (found === undefined) {
          return yield* ProviderError.ResourceNotFound.of("transfer", Ids.make("transfer", PROVIDER, providerId))
        }
        return yield* buildTransfer(session, facility, found)
      })
  }
}
