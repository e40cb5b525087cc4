/**
 * From decoded sync tables to the core objects of one facility, each with the time it last
 * changed (the newest `sessiontime` of its rows) for `updated_since`. Deleted rows are dropped
 * before anything is derived.
 */
import type { Harvest, Item, LabResult, Location, Package, Plant, Sale, Strain, Transfer } from "@tracebridge/core"
import type { Context } from "./mappers/context.js"
import { toHarvest } from "./mappers/toHarvest.js"
import { itemKey, toItem } from "./mappers/toItem.js"
import { toLabResult } from "./mappers/toLabResult.js"
import { toLocation } from "./mappers/toLocation.js"
import { toPackage } from "./mappers/toPackage.js"
import { toPlant } from "./mappers/toPlant.js"
import { toSale } from "./mappers/toSale.js"
import { toStrain } from "./mappers/toStrain.js"
import { toTransfer } from "./mappers/toTransfer.js"
import type { Inventory } from "./wire/Inventory.js"
import type { Manifest, ManifestStop, ManifestStopItem, TransferLine } from "./wire/Manifest.js"
import type { Plant as PlantRow, PlantDerivative } from "./wire/Plant.js"
import type { QaCheck, QaSample } from "./wire/QaSample.js"
import type { Room } from "./wire/Room.js"
import type { Sale as SaleRow } from "./wire/Sale.js"
import type { Vendor } from "./wire/Vendor.js"

/** A derived object and when its rows last changed (epoch seconds). */
export interface Entry<A> {
  readonly value: A
  readonly updated: number | null
}

type Row = { readonly deleted: boolean; readonly location: string; readonly sessiontime: number | null }

/** Live rows of one location. */
export const live = <R extends Row>(rows: ReadonlyArray<R>, license: string): Array<R> =>
  rows.filter((r) => !r.deleted && r.location === license)

const newest = (rows: ReadonlyArray<{ readonly sessiontime: number | null }>): number | null => {
  const times = rows.map((r) => r.sessiontime).filter((t): t is number => t !== null)
  return times.length === 0 ? null : Math.max(...times)
}

const groupBy = <A>(rows: ReadonlyArray<A>, key: (a: A) => string): Map<string, Array<A>> => {
  const out = new Map<string, Array<A>>()
  for (const row of rows) {
    const k = key(row)
    const list = out.get(k)
    if (list === undefined) out.set(k, [row])
    else list.push(row)
  }
  return out
}

/** Lab names by licence, from the vendor table. */
export const labNames = (vendors: ReadonlyArray<Vendor>): Map<string, string> =>
  new Map(vendors.filter((v) => !v.deleted).map((v) => [v.location, v.name]))

export const labResults = (
  samples: ReadonlyArray<QaSample>,
  checks: ReadonlyMap<string, QaCheck>,
  vendors: ReadonlyArray<Vendor>,
  license: string,
  ctx: Context
): Array<Entry<LabResult.LabResult>> => {
  const names = labNames(vendors)
  return live(samples, license).flatMap((sample) => {
    const check = checks.get(sample.inventoryid)
    return sample.result === 0 || check === undefined ? [] : [{
      value: toLabResult(sample, check, ctx, names.get(sample.lab_license)),
      updated: sample.sessiontime
    }]
  })
}

export const packages = (
  inventory: ReadonlyArray<Inventory>,
  derivatives: ReadonlyArray<PlantDerivative>,
  samples: ReadonlyArray<QaSample>,
  results: ReadonlyArray<LabResult.LabResult>,
  license: string,
  ctx: Context
): Array<Entry<Package.Package>> => {
  const liveDerivatives = derivatives.filter((d) => !d.deleted)
  const liveSamples = samples.filter((s) => !s.deleted)
  return live(inventory, license).map((row) => ({
    value: toPackage(row, ctx, { derivatives: liveDerivatives, samples: liveSamples, labResults: results }),
    updated: row.sessiontime
  }))
}

export const plants = (
  rows: ReadonlyArray<PlantRow>,
  rooms: ReadonlyArray<Room>,
  derivatives: ReadonlyArray<PlantDerivative>,
  license: string,
  ctx: Context
): Array<Entry<Plant.Plant>> => {
  const names = new Map(live(rooms, license).map((r) => [r.roomid, r.name]))
  const liveDerivatives = derivatives.filter((d) => !d.deleted)
  return live(rows, license).map((row) => ({
    value: toPlant(row, ctx, {
      roomName: row.room === null ? undefined : names.get(row.room),
      derivatives: liveDerivatives
    }),
    updated: row.sessiontime
  }))
}

export const harvests = (
  derivatives: ReadonlyArray<PlantDerivative>,
  plantRows: ReadonlyArray<PlantRow>,
  license: string,
  ctx: Context
): Array<Entry<Harvest.Harvest>> => {
  const byId = new Map(plantRows.map((p) => [p.id, p]))
  return [...groupBy(live(derivatives, license), (d) => d.transactionid).values()].map((rows) => ({
    value: toHarvest(rows, ctx, byId),
    updated: newest(rows)
  }))
}

export const transfers = (
  tables: {
    readonly manifest: ReadonlyArray<Manifest>
    readonly manifest_stop_data: ReadonlyArray<ManifestStop>
    readonly manifest_stop_items: ReadonlyArray<ManifestStopItem>
    readonly inventory_transfer: ReadonlyArray<TransferLine>
    readonly inventory_transfer_inbound: ReadonlyArray<TransferLine>
  },
  license: string,
  ctx: Context
): Array<Entry<Transfer.Transfer>> => {
  const stopKey = (m: string, s: string) => `${m}/${s}`
  const stops = groupBy(tables.manifest_stop_data.filter((s) => !s.deleted), (s) => s.manifestid)
  const items = groupBy(
    tables.manifest_stop_items.filter((i) => !i.deleted),
    (i) => stopKey(i.manifestid, i.stopnumber)
  )
  const outbound = groupBy(
    tables.inventory_transfer.filter((l) => !l.deleted),
    (l) => stopKey(l.manifestid, l.manifest_stop)
  )
  const inbound = groupBy(
    tables.inventory_transfer_inbound.filter((l) => !l.deleted),
    (l) => stopKey(l.manifestid, l.manifest_stop)
  )
  return tables.manifest.filter((m) => !m.deleted).flatMap((manifest) =>
    (stops.get(manifest.manifestid) ?? [])
      .filter((stop) =>
        manifest.location === license || manifest.origination_license_number === license ||
        stop.license_number === license
      )
      .map((stop) => {
        const key = stopKey(manifest.manifestid, stop.stopnumber)
        const rows = {
          manifest,
          stop,
          items: items.get(key) ?? [],
          outbound: outbound.get(key) ?? [],
          inbound: inbound.get(key) ?? []
        }
        return {
          value: toTransfer(rows, ctx, license),
          updated: newest([manifest, stop, ...rows.items, ...rows.outbound, ...rows.inbound])
        }
      })
  )
}

export const sales = (
  rows: ReadonlyArray<SaleRow>,
  inventory: ReadonlyArray<Inventory>,
  license: string,
  ctx: Context
): Array<Entry<Sale.Sale>> => {
  const lots = new Map(inventory.map((i) => [i.id, i]))
  return [...groupBy(live(rows, license), (r) => r.transactionid).values()].map((lines) => ({
    value: toSale(lines, ctx, lots),
    updated: newest(lines)
  }))
}

export const items = (inventory: ReadonlyArray<Inventory>, license: string, ctx: Context): Array<Entry<Item.Item>> =>
  [...groupBy(live(inventory, license), itemKey).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, rows]) => ({ value: toItem(rows, ctx), updated: newest(rows) }))

export const strains = (
  inventory: ReadonlyArray<Inventory>,
  plantRows: ReadonlyArray<PlantRow>,
  license: string,
  ctx: Context
): Array<Entry<Strain.Strain>> => {
  const used = [
    ...live(inventory, license).map((r) => ({ name: r.strain?.trim() ?? "", t: r.sessiontime })),
    ...live(plantRows, license).map((r) => ({ name: r.strain.trim(), t: r.sessiontime }))
  ].filter((u) => u.name.length > 0)
  return [...groupBy(used, (u) => u.name).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, uses]) => ({ value: toStrain(name, ctx), updated: newest(uses.map((u) => ({ sessiontime: u.t }))) }))
}

export const locations = (
  inventoryRooms: ReadonlyArray<Room>,
  plantRooms: ReadonlyArray<Room>,
  license: string,
  ctx: Context
): Array<Entry<Location.Location>> => [
  ...live(inventoryRooms, license).map((r) => ({ value: toLocation(r, "inventory", ctx), updated: r.sessiontime })),
  ...live(plantRooms, license).map((r) => ({ value: toLocation(r, "plant", ctx), updated: r.sessiontime }))
]
