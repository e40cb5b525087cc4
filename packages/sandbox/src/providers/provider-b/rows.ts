/**
 * From a sandbox world to the rows of BioTrack's `sync_*` tables, written as BioTrack writes them
 * (field names and value formats in `format.ts`, checked against the recorded answers by
 * `test/providers/provider-b/Fidelity.test.ts`). The emulator builds them itself: the adapter's
 * wire schemas are not used, so that a mistake in one of them shows as a decoding failure
 * instead of hiding behind an emulator that shares it. Where the world lacks something BioTrack
 * has, it is derived deterministically:
 *
 * - `inventorytype` from the item's category and unit ({@link inventoryTypeOf});
 * - rooms from the facility's locations (a plant room when plants stand in it, quarantine by
 *   name), a lot's room from its hold;
 * - harvests as `plant_derivative` rows: the yield spread over the lots made straight from the
 *   harvest, the waste over its plants, in hundredths of a gram so that the sums hold;
 * - `sessiontime` from `world.modified` (objects) or the object's own date (samples, sales);
 *   `transactionid` from the same second (so that later changes have higher ids), except where
 *   BioTrack groups rows by it (a harvest, a sale): there it is the object's provider id. The
 *   emulator keeps no history of a row, so `transactionid_original` is the current id;
 * - employees and vehicles (`sync_employee`, `sync_vehicle`) from the world's seed (`staff.ts`),
 *   outside the world.
 */
import { ProviderB } from "@tracebridge/adapter-provider-b"
import type { LabResult, Package, Transfer } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { Option } from "effect"
import * as Licensees from "../../Licensees.js"
import * as Seed from "../../Seed.js"
import type { FacilityData, Role, World } from "../../World.js"
import * as Worlds from "../../World.js"
import type { Json, JsonObject } from "./format.js"
import { barcodes, bit, code, decimal, epochText, flag, money, seconds } from "./format.js"
import * as Staff from "./staff.js"

export { seconds } from "./format.js"

// ---- vocabulary ------------------------------------------------------------------------------------

/** The `inventorytype` the emulator gives each category, by unit (BioTrack's classic codes). */
const typesByCategory: Readonly<Record<string, { readonly Grams?: number; readonly Each?: number }>> = {
  Flower: { Grams: 13, Each: 28 },
  "Shake/Trim": { Grams: 14 },
  Concentrate: { Grams: 17 },
  "Pre-Roll": { Each: 31 },
  Clone: { Each: 7 },
  Seeds: { Each: 10 },
  Plant: { Each: 12 },
  Infused: { Grams: 21 },
  Edible: { Each: 22 },
  Vape: { Each: 24 },
  Topical: { Each: 25 },
  Sample: { Each: 26 },
  Waste: { Grams: 27 }
}

/** A state-specific code the adapter reads as "Other", in grams. */
export const OTHER_TYPE = 99

/**
 * The `inventorytype` of a category and unit: the code of that category in that unit, else the
 * category's code in its own unit (BioTrack counts pre-rolls, for instance), else "Other".
 */
export const inventoryTypeOf = (category: string, unit: string): number => {
  const codes = typesByCategory[category]
  if (codes === undefined) return OTHER_TYPE
  return (unit === "Each" ? codes.Each : codes.Grams) ?? codes.Grams ?? codes.Each ?? OTHER_TYPE
}

/** How BioTrack measures lots of a type: bulk types in grams, unit types counted. */
export const unitOfType = (code: number): "Grams" | "Each" => {
  for (const codes of Object.values(typesByCategory)) {
    if (codes.Each === code) return "Each"
    if (codes.Grams === code) return "Grams"
  }
  return "Grams"
}

/** BioTrack's unit abbreviation. */
export const uomOf = (unit: "Grams" | "Each"): string => (unit === "Grams" ? "g" : "each")

const locationTypes: Record<Role, number | null> = {
  cultivation: 6, // T3P: a tier 3 producer/processor
  manufacturing: 7, // P
  testing: null, // labs have no producer/retail tier
  retail: 8, // R
  medical: 10 // R+MMJ
}

/** QA panel types by core category: the descriptor's facts (`ProviderB.facts.labPanels`), turned round. */
export const panelTypes: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(ProviderB.facts.labPanels).map(([type, panel]) => [panel.category, Number(type)])
)

/** The core category of a panel type. */
export const categoryOfPanel = (type: number): string => ProviderB.facts.labPanels[type]?.category ?? "other"

/**
 * Whether BioTrack judges a category: a failed sample fails on it (a contaminant), where potency
 * and moisture are only reported; the descriptor's facts say which.
 */
export const judged = (category: string): boolean =>
  !Object.values(ProviderB.facts.labPanels).some((panel) => panel.category === category && !panel.judged)

// ---- time and ids ----------------------------------------------------------------------------------

/** Epoch seconds of an ISO date or date-time, or null. */
export const epochOf = (iso: string | null): number | null => {
  if (iso === null) return null
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(iso) ? `${iso}T00:00:00Z` : iso)
  return Number.isNaN(ms) ? null : seconds(ms)
}

/** ISO 8601 of epoch seconds. */
export const isoOf = (epoch: number): string => new Date(epoch * 1000).toISOString()

const changedAt = (world: World, id: string): number | null => {
  const ms = world.modified.get(id)
  return ms === undefined ? null : seconds(ms)
}

/** A row's transaction id: the second of its last change (1 for rows that never changed). */
const txAt = (epoch: number | null): number => epoch ?? 1

const providerIdOf = (kind: Ids.Kind, id: string): string =>
  Option.getOrElse(Ids.decodeAs(kind, "provider_b", id), () => id)

/** The bookkeeping columns of a row whose transaction id is a string (most tables). */
const stamped = (epoch: number | null, tx: string = String(txAt(epoch))) => ({
  deleted: flag(false),
  sessiontime: epoch,
  transactionid: tx,
  transactionid_original: tx
})

// ---- lookups ---------------------------------------------------------------------------------------

/** A package anywhere in the world, with the facility that holds it. */
export const findLot = (
  world: World,
  barcode: string
): { readonly data: FacilityData; readonly pkg: Package.Package } | undefined => {
  for (const data of world.facilities) {
    const pkg = data.packages.find((p) => p.tag === barcode)
    if (pkg !== undefined) return { data, pkg }
  }
  return undefined
}

const packageById = (world: World, id: string): Package.Package | undefined => {
  for (const data of world.facilities) {
    const pkg = data.packages.find((p) => p.id === id)
    if (pkg !== undefined) return pkg
  }
  return undefined
}

/** The inventory type of a package. */
export const typeOfPackage = (pkg: Package.Package): number => inventoryTypeOf(pkg.item_category, pkg.unit_of_measure)

/** The rooms of a facility: its locations, as plant rooms (where plants stand) or inventory rooms. */
const roomsOf = (data: FacilityData) => {
  const plantRooms = new Set(data.plants.map((p) => p.location).filter((l): l is string => l !== null))
  return data.locations.map((location) => {
    const quarantine = /quarantine/i.test(location.name)
    return {
      kind: plantRooms.has(location.name) ? ("plant" as const) : ("inventory" as const),
      name: location.name,
      roomid: location.provider_location_id,
      quarantine,
      // As recorded, room rows carry no sessiontime; they never changed, so their id is 1.
      row: {
        roomid: location.provider_location_id,
        name: location.name,
        location: data.facility.license_number,
        quarantine: flag(quarantine),
        deleted: flag(false),
        transactionid: "1",
        transactionid_original: "1"
      } satisfies JsonObject
    }
  })
}

/** Whether a lot is held by its status (an administrative hold). */
const statusHeld = (world: World, pkg: Package.Package) => pkg.is_on_hold && !world.holds.has(pkg.id)

/** Whether a lot is seized (held for an investigation or a recall). */
const seizedLot = (world: World, pkg: Package.Package) => pkg.is_on_hold && world.holds.has(pkg.id)

const lotRoom = (data: FacilityData, pkg: Package.Package): string | null => {
  const rooms = roomsOf(data).filter((r) => r.kind === "inventory")
  const room = pkg.is_on_hold ? rooms.find((r) => r.quarantine) ?? rooms[0] : rooms.find((r) => !r.quarantine)
  return room?.roomid ?? null
}

// ---- tables ----------------------------------------------------------------------------------------

/** A row as it goes on the wire. */
export type Row = JsonObject

/**
 * The UBI of the world's `n`-th other licensee: a business of its own, never the login's.
 */
const licenseeUbi = (world: World, n: number, login: string): string => {
  const ubi = String(600_000_000 + (Seed.integer(world.seed, "licensee-ubi", n) % 99_999_999))
  return ubi === login ? String(Number(ubi) + 1) : ubi
}

/**
 * `vendor`: the login's facilities, all under its UBI, then the state's other licensees the world
 * knows (BioTrack lists every vendor; a transfer goes to one of them), each under a UBI of its own
 * (numbers and 0/1 flags, as recorded).
 */
export const vendors = (world: World, ubi: string): Array<Row> => [
  ...ownVendors(world, ubi),
  ...Licensees.of(world).map((l, n): Row => ({
    ubi: licenseeUbi(world, n, ubi),
    location: l.license_number,
    name: l.name,
    locationtype: locationTypes[l.role],
    address1: l.address,
    address2: null,
    city: l.city,
    state: world.state,
    zip: l.zip,
    producer: bit(l.role === "cultivation"),
    processor: bit(l.role === "manufacturing"),
    retail: bit(l.role === "retail" || l.role === "medical"),
    medical: bit(l.role === "medical"),
    deleted: bit(false),
    transactionid: 1,
    transactionid_original: 1
  }))
]

const ownVendors = (world: World, ubi: string): Array<Row> =>
  world.facilities.map((data) => {
    const f = data.facility
    const tx = txAt(changedAt(world, f.id))
    return {
      ubi,
      location: f.license_number,
      name: f.name,
      locationtype: locationTypes[data.role],
      address1: f.address,
      address2: null,
      city: f.city,
      state: f.state,
      zip: f.zip,
      producer: bit(data.role === "cultivation"),
      processor: bit(f.capabilities.includes("manufacturing")),
      retail: bit(data.role === "retail" || data.role === "medical" || data.sales.length > 0),
      medical: bit(data.role === "medical"),
      deleted: bit(f.status !== "active"),
      transactionid: tx,
      transactionid_original: tx
    }
  })

/** `inventory`: every lot of every facility (its transaction ids are numbers, as recorded). */
export const inventory = (world: World): Array<Row> =>
  world.facilities.flatMap((data) =>
    data.packages.map((pkg): Row => {
      const type = typeOfPackage(pkg)
      const item = data.items.find((i) => i.name === pkg.item_name)
      const epoch = changedAt(world, pkg.id)
      const usable = unitOfType(type) === "Each" ? item?.unit_weight ?? null : null
      return {
        id: pkg.tag,
        inventorytype: code(type),
        strain: pkg.item_strain,
        productname: pkg.item_name,
        remaining_quantity: decimal(pkg.quantity),
        usable_weight: usable === null ? null : decimal(usable),
        rec_usableweight: null,
        net_package: null,
        currentroom: lotRoom(data, pkg),
        location: data.facility.license_number,
        plantid: null,
        parentid: barcodes(pkg.source_package_ids.map((id) => providerIdOf("package", id))),
        inventoryparentid: null,
        source_id: null,
        is_sample: null,
        // an administrative hold is a status hold; an investigation or a recall, a seizure
        seized: seizedLot(world, pkg) ? flag(true) : null,
        wet: flag(false),
        inventorystatus: statusHeld(world, pkg) ? "1" : null,
        inventorystatustime: statusHeld(world, pkg) ? epoch : null,
        deleted: flag(false),
        sessiontime: epoch,
        transactionid: txAt(epoch),
        transactionid_original: txAt(epoch)
      }
    })
  )

const PLANT_GROWING = 0
const PLANT_HARVESTED = 2

/** `plant`: a growing plant is state 0 (flowering once its harvest is scheduled); a cut one 2. */
export const plants = (world: World): Array<Row> =>
  world.facilities.flatMap((data) => {
    const rooms = roomsOf(data)
    return data.plants.map((plant): Row => {
      const flowering = plant.growth_phase === "flowering" || plant.harvest_date !== null
      return {
        id: plant.tag,
        strain: plant.strain_name,
        room: rooms.find((r) => r.name === plant.location)?.roomid ?? null,
        location: data.facility.license_number,
        state: code(plant.harvest_date === null ? PLANT_GROWING : PLANT_HARVESTED),
        mother: flag(false),
        parentid: null,
        converted: flag(false),
        harvestscheduled: flag(flowering),
        harvestscheduletime: flowering ? epochOf(plant.flowering_date) : null,
        harvestcollect: null,
        curecollect: null,
        removescheduled: flag(false),
        removescheduletime: null,
        removereason: null,
        seized: null,
        deletetime: null,
        ...stamped(changedAt(world, plant.id))
      }
    })
  })

/** Splits a weight into `n` shares in hundredths that add up exactly. */
const shares = (total: number, n: number): Array<number> => {
  const cents = Math.round(total * 100)
  const each = Math.floor(cents / n)
  return Array.from({ length: n }, (_, i) => (i === n - 1 ? cents - each * (n - 1) : each) / 100)
}

const FLOWER = 6
const OTHER_MATERIAL = 9
const WASTE = 27

/** `plant_derivative`: each harvest's yield over the lots made from it, its waste over its plants. */
export const derivatives = (world: World): Array<Row> =>
  world.facilities.flatMap((data) =>
    data.harvests.flatMap((harvest): Array<Row> => {
      const plantTags = harvest.source_plant_ids.map((id) => providerIdOf("plant", id))
      const lots = world.facilities.flatMap((d) =>
        d.packages.filter((p) => p.source_package_ids.length === 0 && p.source_harvest_ids.includes(harvest.id))
      )
      const manicure = harvest.harvest_type === "Manicure"
      const row = (plantid: string, inventoryid: string | null, type: number, weight: number) => ({
        plantid,
        inventoryid,
        inventorytype: code(type),
        weight: decimal(weight),
        wholeweight: null,
        harvestcollect: flag(!manicure),
        curecollect: flag(false),
        collectadditional: flag(manicure),
        room: null,
        location: data.facility.license_number,
        ...stamped(epochOf(harvest.harvested_date), harvest.provider_harvest_id)
      })
      const yieldRows = lots.length > 0
        ? shares(harvest.current_weight, lots.length).map((w, i) =>
          row(
            plantTags[i % Math.max(1, plantTags.length)] ?? "",
            lots[i]!.tag,
            lots[i]!.item_category === "Flower" ? FLOWER : OTHER_MATERIAL,
            w
          )
        )
        : shares(harvest.current_weight, plantTags.length).map((w, i) => row(plantTags[i]!, null, FLOWER, w))
      const wasteRows = harvest.total_waste_weight > 0
        ? shares(harvest.total_waste_weight, plantTags.length).map((w, i) => row(plantTags[i]!, null, WASTE, w))
        : []
      return [...yieldRows, ...wasteRows].filter((r) => r.plantid.length > 0)
    })
  )

/** `inventory_room` and `plant_room`. */
export const rooms = (world: World): { readonly inventory: Array<Row>; readonly plant: Array<Row> } => {
  const all = world.facilities.flatMap(roomsOf)
  return {
    inventory: all.filter((r) => r.kind === "inventory").map((r) => r.row),
    plant: all.filter((r) => r.kind === "plant").map((r) => r.row)
  }
}

/** The manifest of a transfer and its stop: `<manifestid>/<stopnumber>`. */
export const manifestOf = (transfer: Pick<Transfer.Transfer, "provider_transfer_id" | "manifest_number">) => ({
  manifestid: transfer.manifest_number,
  stop: transfer.provider_transfer_id.split("/")[1] ?? "1"
})

/** The manifests made by `inventory_manifest` whose lines `inventory_transfer_outbound` has not sent yet. */
const unlined = Worlds.slot("provider_b/unlined", () => new Set<string>())

/**
 * The manifests of a world that have no transfer lines yet: `inventory_manifest` makes the
 * manifest (header, stop, items) and `inventory_transfer_outbound` its `inventory_transfer`
 * lines, so until then the manifest has none (`writeActions.ts` adds and removes ids here).
 */
export const awaitingLines = (world: World): Set<string> => Worlds.slotOf(world, unlined)

/** `employee`: the login's employees, as recorded (strings, no `location`, no `sessiontime`). */
export const employees = (world: World): Array<Row> =>
  Staff.of(world).employees.map((e) => ({
    birthday: Staff.two(e.birth.day),
    birthmonth: Staff.two(e.birth.month),
    birthyear: String(e.birth.year),
    deleted: flag(false),
    employee_id: e.employee_id,
    employee_name: e.name,
    hireday: Staff.two(e.hired.day),
    hiremonth: Staff.two(e.hired.month),
    hireyear: String(e.hired.year),
    transactionid: "1",
    transactionid_original: "1"
  }))

/**
 * `vehicle`: the vehicles of each location. No payload was found: the columns are inferred from
 * BioTrack's naming (`test/fixtures/provider-b/sync_vehicle.json` says so).
 */
export const vehicles = (world: World): Array<Row> =>
  Staff.of(world).vehicles.map((v) => ({
    vehicle_id: v.vehicle_id,
    location: v.license,
    nickname: v.nickname,
    make: v.make,
    model: v.model,
    color: v.color,
    plate: v.plate,
    vin: v.vin,
    deleted: flag(false),
    transactionid: "1",
    transactionid_original: "1"
  }))

/**
 * `manifest`, `manifest_stop_data`, `manifest_stop_items` (each row under the shipper's
 * `location`, as recorded) and the transfer lines: outbound lines under the shipper (once
 * `inventory_transfer_outbound` sent them), inbound ones (with `is_refund` and `refund_amount`)
 * under the recipient once the transfer arrived. A driver who is an employee of the login gets
 * its `transporter_id` and date of birth; a vehicle of the shipper, recorded by its description,
 * is split into its details and VIN (`transporter_vehicle_identification`).
 */
export const manifests = (world: World) => {
  const name = (license: string) => world.facilities.find((d) => d.facility.license_number === license)?.facility
  const staff = Staff.of(world)
  const waiting = awaitingLines(world)
  const out = {
    manifest: [] as Array<Row>,
    manifest_stop_data: [] as Array<Row>,
    manifest_stop_items: [] as Array<Row>,
    inventory_transfer: [] as Array<Row>,
    inventory_transfer_inbound: [] as Array<Row>
  }
  for (const { template, transfer } of world.transfers) {
    if (template || !/^\d{16}$/.test(transfer.manifest_number)) continue
    const { manifestid, stop } = manifestOf(transfer)
    const epoch = changedAt(world, transfer.id)
    const columns = stamped(epoch)
    const shipper = name(transfer.shipper_facility)
    const recipient = name(transfer.recipient_facility)
    const count = code(transfer.packages.length)
    const driver = staff.employees.find((e) => e.name === transfer.driver_name)
    const vehicle = staff.vehicles.find((v) =>
      v.license === transfer.shipper_facility && Staff.description(v) === transfer.vehicle_info
    )
    out.manifest.push({
      manifestid,
      location: transfer.shipper_facility,
      origination_license_number: transfer.shipper_facility,
      origination_name: shipper?.name ?? null,
      origination_street: shipper?.address ?? null,
      origination_city: shipper?.city ?? null,
      origination_state: shipper?.state ?? null,
      origination_zip: shipper?.zip ?? null,
      origination_phone: null,
      transporter_id: driver?.employee_id ?? null,
      transporter_name: transfer.driver_name,
      transporter_dob: driver === undefined ? null : Staff.mdy(driver.birth),
      transporter_vehicle_details: vehicle === undefined ? transfer.vehicle_info : Staff.details(vehicle),
      transporter_vehicle_identification: vehicle?.vin ?? null,
      stopcount: code(1),
      total_item_count: count,
      completion_date: epochText(transfer.status === "pending" ? null : epochOf(transfer.actual_departure)),
      fulfilled: flag(transfer.status === "received"),
      ...columns
    })
    out.manifest_stop_data.push({
      manifestid,
      stopnumber: stop,
      location: transfer.shipper_facility,
      license_number: transfer.recipient_facility,
      name: recipient?.name ?? null,
      street: recipient?.address ?? null,
      city: recipient?.city ?? null,
      state: recipient?.state ?? null,
      zip: recipient?.zip ?? null,
      phone: null,
      travel_route: null,
      depart_time: epochText(epochOf(transfer.estimated_departure)),
      arrive_time: epochText(epochOf(transfer.estimated_arrival)),
      item_count: count,
      ...columns
    })
    const arrived = transfer.status === "received" || transfer.status === "rejected"
    for (const line of transfer.packages) {
      const pkg = packageById(world, line.package_id)
      const type = pkg === undefined ? inventoryTypeOf("Other", line.unit_of_measure) : typeOfPackage(pkg)
      out.manifest_stop_items.push({
        manifestid,
        stopnumber: stop,
        location: transfer.shipper_facility,
        inventoryid: line.tag,
        description: line.item_name,
        quantity: decimal(line.quantity),
        requiresweighing: null,
        ...columns
      })
      const transferLine = {
        inventoryid: line.tag,
        inventorytype: code(type),
        strain: pkg?.item_strain ?? null,
        quantity: decimal(line.quantity),
        price: money(0),
        manifestid,
        manifest_stop: stop,
        outbound_license: transfer.shipper_facility
      }
      if (!waiting.has(manifestid)) {
        out.inventory_transfer.push({ ...transferLine, location: transfer.shipper_facility, ...columns })
      }
      if (arrived) {
        out.inventory_transfer_inbound.push({
          ...transferLine,
          location: transfer.recipient_facility,
          is_refund: flag(transfer.status === "rejected"),
          refund_amount: transfer.status === "rejected" ? money(0) : null,
          ...stamped(epochOf(transfer.actual_arrival) ?? epoch)
        })
      }
    }
  }
  return out
}

/** A QA sample not judged yet (kept by the emulator between `inventory_qa_sample` and its results). */
export interface PendingSample {
  readonly barcode: string
  readonly license: string
  readonly tag: string
  readonly labId: string
  readonly use: number
  readonly at: number
}

/** A QA sample as the emulator knows it: what its row and its `inventory_qa_check` are made of. */
export interface Sample {
  /** The sample's own barcode (`inventoryid`, `sample_id`). */
  readonly barcode: string
  /** The lot it was taken from (`parentid`). */
  readonly parent: string
  readonly inventorytype: number | null
  readonly lab: string
  readonly location: string
  readonly quantity: number | null
  /** 0 pending, 1 passed, -1 failed. */
  readonly result: -1 | 0 | 1
  readonly use: number
  readonly strain: string | null
  readonly sessiontime: number | null
  readonly transactionid: number
  /** The world's lab result, once judged. */
  readonly judged: LabResult.LabResult | undefined
}

/** Every judged result as a sample of its lot, then the pending ones. */
export const samples = (
  world: World,
  pending: ReadonlyArray<PendingSample>,
  aliases: ReadonlyMap<string, string>
): Array<Sample> => [
  ...world.facilities.flatMap((data) =>
    data.labResults.map((result): Sample => {
      const pkg = packageById(world, result.package_id)
      return {
        barcode: aliases.get(result.id) ?? result.provider_result_id,
        parent: providerIdOf("package", result.package_id),
        inventorytype: pkg === undefined ? null : typeOfPackage(pkg),
        lab: result.lab_license ?? result.lab_name,
        location: data.facility.license_number,
        quantity: null,
        result: result.overall_passed ? 1 : -1,
        use: result.test_type === "ResearchTesting" ? 2 : 1,
        strain: pkg?.item_strain ?? null,
        sessiontime: epochOf(result.test_date) ?? changedAt(world, result.id),
        transactionid: txAt(changedAt(world, result.id)),
        judged: result
      }
    })
  ),
  ...pending.map((p): Sample => {
    const lot = findLot(world, p.tag)
    return {
      barcode: p.barcode,
      parent: p.tag,
      inventorytype: lot === undefined ? null : typeOfPackage(lot.pkg),
      lab: p.labId,
      location: p.license,
      quantity: 0,
      result: 0,
      use: p.use,
      strain: lot?.pkg.item_strain ?? null,
      sessiontime: seconds(p.at),
      transactionid: txAt(seconds(p.at)),
      judged: undefined
    }
  })
]

/** `inventory_qa_sample`: one sample's row. */
export const sampleRow = (sample: Sample): Row => ({
  inventoryid: sample.barcode,
  parentid: sample.parent,
  inventorytype: sample.inventorytype === null ? null : code(sample.inventorytype),
  lab_license: sample.lab,
  location: sample.location,
  quantity: sample.quantity === null ? null : decimal(sample.quantity),
  result: code(sample.result),
  sample_use: code(sample.use),
  strain: sample.strain,
  ...stamped(sample.sessiontime, String(sample.transactionid))
})

/**
 * The `data` of a sample's `inventory_qa_check`: numbers for codes and transaction ids, the lot's
 * barcode again as `barcode_id`, and one panel per category with a panel type, its values as
 * strings (as recorded).
 */
export const check = (sample: Sample): Row => {
  const panels = new Map<number, Record<string, Json>>()
  for (const test of sample.judged?.results ?? []) {
    const type = panelTypes[test.category]
    if (type === undefined || test.name === "type") continue
    const panel = panels.get(type) ?? {}
    panel[test.name] = test.value === null ? null : decimal(test.value)
    panels.set(type, panel)
  }
  return {
    sample_id: sample.barcode,
    parent_id: sample.parent,
    barcode_id: sample.parent,
    lab_license: sample.lab,
    inventorytype: sample.inventorytype,
    result: sample.result,
    use: sample.use,
    transactionid: sample.transactionid,
    transactionid_original: sample.transactionid,
    test: [...panels.entries()].sort(([a], [b]) => a - b).map(([type, values]) => ({ type, ...values }))
  }
}

/** `sale`: one row per sold line; the sale is the `transactionid`. */
export const sales = (world: World): Array<Row> =>
  world.facilities.flatMap((data) =>
    data.sales.flatMap((sale) =>
      sale.items.map((line, i): Row => ({
        inventoryid: line.tag,
        itemnumber: code(i),
        price: money(line.total),
        quantity: decimal(line.quantity),
        terminal_id: "1",
        location: data.facility.license_number,
        card_id: sale.patient_license,
        ...stamped(epochOf(sale.sale_date), sale.provider_sale_id)
      }))
    )
  )

/**
 * The sync actions the emulator answers, and the tables of each.
 */
export const syncActions = {
  sync_vendor: ["vendor"],
  sync_employee: ["employee"],
  sync_vehicle: ["vehicle"],
  sync_inventory: ["inventory"],
  sync_plant: ["plant"],
  sync_plant_derivative: ["plant_derivative"],
  sync_inventory_room: ["inventory_room"],
  sync_plant_room: ["plant_room"],
  sync_manifest: ["manifest", "manifest_stop_data", "manifest_stop_items"],
  sync_inventory_transfer: ["inventory_transfer"],
  sync_inventory_transfer_inbound: ["inventory_transfer_inbound"],
  sync_inventory_qa_sample: ["inventory_qa_sample"],
  sync_sale: ["sale"]
} as const

/** A sync action. */
export type SyncAction = keyof typeof syncActions

/** Is this action a sync action the emulator answers? */
export const isSync = (action: string): action is SyncAction => Object.hasOwn(syncActions, action)

/** Every table of a sync action, as wire rows. */
export const tablesOf = (
  world: World,
  ubi: string,
  pending: ReadonlyArray<PendingSample>,
  aliases: ReadonlyMap<string, string>
): Record<SyncAction, () => Record<string, ReadonlyArray<Row>>> => ({
  sync_vendor: () => ({ vendor: vendors(world, ubi) }),
  sync_employee: () => ({ employee: employees(world) }),
  sync_vehicle: () => ({ vehicle: vehicles(world) }),
  sync_inventory: () => ({ inventory: inventory(world) }),
  sync_plant: () => ({ plant: plants(world) }),
  sync_plant_derivative: () => ({ plant_derivative: derivatives(world) }),
  sync_inventory_room: () => ({ inventory_room: rooms(world).inventory }),
  sync_plant_room: () => ({ plant_room: rooms(world).plant }),
  sync_manifest: () => {
    const m = manifests(world)
    return {
      manifest: m.manifest,
      manifest_stop_data: m.manifest_stop_data,
      manifest_stop_items: m.manifest_stop_items
    }
  },
  sync_inventory_transfer: () => ({ inventory_transfer: manifests(world).inventory_transfer }),
  sync_inventory_transfer_inbound: () => ({ inventory_transfer_inbound: manifests(world).inventory_transfer_inbound }),
  sync_inventory_qa_sample: () => ({ inventory_qa_sample: samples(world, pending, aliases).map(sampleRow) }),
  sync_sale: () => ({ sale: sales(world) })
})
