/**
 * A small stateful BioTrack classic emulator for msw: one POST endpoint per host, dispatching on
 * the body's `action`, demanding `"API":"4.0"` and a valid `sessionid`, and answering HTTP 200 with
 * `success: 0` errors the BioTrack way. Each test takes its own host (and so its own store).
 * The data is synthetic (no real licences or keys).
 */
import { http, HttpResponse } from "msw"

export const UBI = "900000001"
export const USERNAME = "grower@example.test"
export const PASSWORD = "correct-horse-battery"
export const LICENSE = "900101"
export const SISTER = "900102"
export const LAB = "900901"
export const RETAILER = "900501"
export const T0 = 1767225600 // 2026-01-01T00:00:00Z

type Row = Record<string, unknown>

export interface Fault {
  readonly action?: string
  readonly respond: () => Response
}

export interface Store {
  readonly tables: Record<string, Array<Row>>
  readonly checks: Map<string, Row>
  readonly sessions: Set<string>
  /** Every action received, in order. */
  readonly calls: Array<string>
  /** Every body received (to check what was sent). */
  readonly bodies: Array<Row>
  readonly faults: Array<Fault>
  counter: number
}

const lot = (
  id: string,
  type: number,
  strain: string,
  product: string | null,
  quantity: string,
  extra: Row = {}
): Row => ({
  id,
  inventorytype: String(type),
  strain,
  productname: product,
  remaining_quantity: quantity,
  usable_weight: quantity,
  net_package: null,
  currentroom: "1",
  location: LICENSE,
  plantid: null,
  parentid: null,
  is_sample: "0",
  seized: null,
  wet: "0",
  inventorystatus: null,
  deleted: "0",
  sessiontime: String(T0 + 100),
  transactionid: "5001",
  transactionid_original: "5001",
  ...extra
})

/** The seeded world: the facility LICENSE holds at least two of every resource. */
export const seed = (): Store => ({
  tables: {
    vendor: [
      {
        ubi: UBI,
        location: LICENSE,
        name: "Synthetic Grow Co",
        locationtype: "3",
        address1: "1 Test Way",
        address2: "",
        city: "Little Rock",
        state: "AR",
        zip: "72201",
        producer: "1",
        processor: "1",
        retail: "0",
        medical: "1",
        deleted: "0",
        transactionid: "100"
      },
      {
        ubi: UBI,
        location: SISTER,
        name: "Synthetic Grow Co East",
        locationtype: 8,
        address1: null,
        city: null,
        state: "XX",
        zip: null,
        producer: 0,
        processor: 0,
        retail: 1,
        medical: 0,
        deleted: 0,
        transactionid: 101
      },
      { ubi: "900000009", location: LAB, name: "Example QA Lab", state: "AR", deleted: "0", transactionid: "102" },
      { ubi: UBI, location: "900199", name: "Closed Site", state: "AR", deleted: "1", transactionid: "103" }
    ],
    inventory: [
      lot("9000000000000001", 13, "Blue Dream", null, "300.00", { parentid: "9000000000000009" }),
      lot("9000000000000002", 28, "Blue Dream", "Blue Dream 3.5g", "40", {
        usable_weight: "3.5",
        inventoryparentid: ["9000000000000001", "9000000000000002"]
      }),
      lot("9000000000000003", 22, "Sour Diesel", "Gummies 10pk", "12", { sessiontime: T0 + 200 }),
      lot("9000000000000004", 6, "Sour Diesel", null, "150.5", { currentroom: "2", sessiontime: T0 + 300 }),
      lot("9000000000000005", 16, "Blue Dream", null, "5", { seized: "1" }),
      lot("9000000000000006", 13, "Blue Dream", null, "1.00", { deleted: "1" }),
      lot("9000000000000007", 13, "Blue Dream", null, "10.00", { location: SISTER })
    ],
    plant: [
      {
        id: "9000000000000101",
        strain: "Blue Dream",
        room: "1",
        location: LICENSE,
        state: "0",
        mother: "0",
        harvestscheduled: "0",
        deleted: "0",
        sessiontime: String(T0 + 10),
        transactionid: "4001"
      },
      {
        id: "9000000000000102",
        strain: "Sour Diesel",
        room: "1",
        location: LICENSE,
        state: "0",
        mother: "0",
        harvestscheduled: "1",
        harvestscheduletime: String(T0 + 86400 * 3),
        deleted: "0",
        sessiontime: String(T0 + 20),
        transactionid: "4002"
      },
      {
        id: "9000000000000103",
        strain: "Sour Diesel",
        room: "9",
        location: LICENSE,
        state: 2,
        mother: 0,
        deleted: 0,
        sessiontime: T0 + 30,
        transactionid: 4003
      },
      {
        id: "9000000000000104",
        strain: "Gone",
        room: "1",
        location: LICENSE,
        state: "0",
        deleted: "1",
        sessiontime: T0,
        transactionid: "4004"
      }
    ],
    plant_derivative: [
      {
        plantid: "9000000000000103",
        inventoryid: "9000000000000004",
        inventorytype: "6",
        weight: "150.5",
        location: LICENSE,
        deleted: "0",
        sessiontime: String(T0 + 86400),
        transactionid: "6001"
      },
      {
        plantid: "9000000000000103",
        inventoryid: null,
        inventorytype: "27",
        weight: "20.25",
        location: LICENSE,
        deleted: "0",
        sessiontime: String(T0 + 86400),
        transactionid: "6001"
      },
      {
        plantid: "9000000000000102",
        inventoryid: "9000000000000001",
        inventorytype: "9",
        weight: "12",
        collectadditional: "1",
        location: LICENSE,
        deleted: "0",
        sessiontime: String(T0 + 86400 * 2),
        transactionid: "6002"
      }
    ],
    inventory_room: [
      { roomid: "1", name: "Vault", location: LICENSE, quarantine: "0", deleted: "0", transactionid: "300" },
      { roomid: "2", name: "Quarantine", location: LICENSE, quarantine: "1", deleted: "0", transactionid: "301" },
      { roomid: "3", name: "Old Vault", location: LICENSE, quarantine: "0", deleted: "1", transactionid: "302" }
    ],
    plant_room: [
      { roomid: "1", name: "Flower Room A", location: LICENSE, quarantine: "0", deleted: "0", transactionid: "310" }
    ],
    manifest: [
      {
        manifestid: "9000000000000501",
        location: LICENSE,
        origination_license_number: LICENSE,
        origination_name: "Synthetic Grow Co",
        transporter_name: "Driver One",
        transporter_vehicle_details: "White Van",
        transporter_vehicle_identification: "VIN0000000000001",
        stopcount: "1",
        completion_date: String(T0 + 3600),
        fulfilled: "0",
        deleted: "0",
        sessiontime: String(T0 + 3600),
        transactionid: "7001"
      },
      {
        manifestid: "9000000000000502",
        location: LICENSE,
        origination_license_number: RETAILER,
        origination_name: "Partner Retail",
        transporter_name: null,
        completion_date: "1767229200",
        fulfilled: 1,
        deleted: 0,
        sessiontime: T0 + 7200,
        transactionid: 7002
      }
    ],
    manifest_stop_data: [
      {
        manifestid: "9000000000000501",
        stopnumber: "1",
        license_number: RETAILER,
        name: "Partner Retail",
        depart_time: String(T0 + 3600),
        arrive_time: String(T0 + 7200),
        deleted: "0",
        sessiontime: String(T0 + 3600),
        transactionid: "7001"
      },
      {
        manifestid: "9000000000000502",
        stopnumber: 1,
        license_number: LICENSE,
        name: "Synthetic Grow Co",
        depart_time: null,
        arrive_time: null,
        deleted: 0,
        sessiontime: T0 + 7200,
        transactionid: 7002
      }
    ],
    manifest_stop_items: [
      {
        manifestid: "9000000000000501",
        stopnumber: "1",
        inventoryid: "9000000000000002",
        description: "Blue Dream 3.5g",
        quantity: "10",
        deleted: "0",
        transactionid: "7001"
      },
      {
        manifestid: "9000000000000502",
        stopnumber: "1",
        inventoryid: "9000000000000301",
        description: "Partner Flower",
        quantity: "100.00",
        deleted: "0",
        transactionid: "7002"
      }
    ],
    inventory_transfer: [
      {
        inventoryid: "9000000000000002",
        inventorytype: "28",
        quantity: "10",
        price: "0.00",
        manifestid: "9000000000000501",
        manifest_stop: "1",
        outbound_license: LICENSE,
        location: LICENSE,
        deleted: "0",
        sessiontime: String(T0 + 3600),
        transactionid: "7003"
      }
    ],
    inventory_transfer_inbound: [
      {
        inventoryid: "9000000000000301",
        inventorytype: 13,
        quantity: "100.00",
        price: "0.01",
        manifestid: "9000000000000502",
        manifest_stop: "1",
        outbound_license: RETAILER,
        location: LICENSE,
        is_refund: 0,
        refund_amount: null,
        deleted: 0,
        sessiontime: T0 + 9000,
        transactionid: 7004
      }
    ],
    inventory_qa_sample: [
      {
        inventoryid: "9000000000000201",
        parentid: "9000000000000001",
        inventorytype: "13",
        lab_license: LAB,
        location: LICENSE,
        quantity: "2.00",
        result: "1",
        sample_use: "1",
        deleted: "0",
        sessiontime: String(T0 + 500),
        transactionid: "8001"
      },
      {
        inventoryid: "9000000000000202",
        parentid: "9000000000000004",
        inventorytype: "6",
        lab_license: "900902",
        location: LICENSE,
        quantity: "2.00",
        result: "-1",
        sample_use: "1",
        deleted: "0",
        sessiontime: String(T0 + 600),
        transactionid: "8002"
      },
      {
        inventoryid: "9000000000000203",
        parentid: "9000000000000003",
        lab_license: LAB,
        location: LICENSE,
        result: "0",
        deleted: "0",
        sessiontime: String(T0 + 700),
        transactionid: "8003"
      }
    ],
    sale: [
      {
        inventoryid: "9000000000000002",
        itemnumber: "0",
        price: "60.00",
        quantity: "2",
        terminal_id: "1",
        location: LICENSE,
        deleted: "0",
        sessiontime: String(T0 + 40000),
        transactionid: "9001"
      },
      {
        inventoryid: "9000000000000003",
        itemnumber: "1",
        price: "20.00",
        quantity: "1",
        terminal_id: "1",
        location: LICENSE,
        deleted: "0",
        sessiontime: String(T0 + 40000),
        transactionid: "9001"
      },
      {
        inventoryid: "9000000000000003",
        price: "40.00",
        quantity: "2",
        location: LICENSE,
        card_id: "PAT-0001",
        deleted: "0",
        sessiontime: String(T0 + 90000),
        transactionid: "9002"
      }
    ]
  },
  checks: new Map<string, Row>([
    ["9000000000000201", {
      sample_id: "9000000000000201",
      parent_id: "9000000000000001",
      lab_license: LAB,
      inventorytype: 13,
      result: 1,
      use: 1,
      transactionid: 8101,
      test: [{ type: 1, moisture: "9.2" }, { type: 2, THC: "18.876", CBD: "0.5" }, {
        type: 4,
        yeast_and_mold: "0"
      }]
    }],
    ["9000000000000202", {
      sample_id: "9000000000000202",
      parent_id: "9000000000000004",
      lab_license: "900902",
      result: -1,
      use: 1,
      test: [{ type: 2, THC: "21" }, { type: 7, pesticide_residue: "0.4" }, { type: 8, heavy_metal: "0" }]
    }]
  ]),
  sessions: new Set(),
  calls: [],
  bodies: [],
  faults: [],
  counter: 0
})

const stores = new Map<string, Store>()
let hosts = 0

/** A fresh store behind a fresh host; returns its base URL. */
export const makeStore = (name: string): { readonly store: Store; readonly baseUrl: string } => {
  const host = `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${++hosts}.biotrack.test`
  const store = seed()
  stores.set(host, store)
  return { store, baseUrl: `https://${host}/serverjson.asp` }
}

const ok = (body: Row = {}) => HttpResponse.json({ success: 1, ...body })
const fail = (error: string, errorcode?: number) =>
  HttpResponse.json({ success: 0, error, ...(errorcode === undefined ? {} : { errorcode }) })

const syncTables: Record<string, ReadonlyArray<string>> = {
  sync_vendor: ["vendor"],
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
}

const next = (store: Store) => {
  store.counter += 1
  return { barcode: String(9100000000000000 + store.counter), tx: String(20000 + store.counter), time: T0 + 100000 }
}

const findLot = (store: Store, barcode: unknown) =>
  store.tables["inventory"]!.find((r) => r["id"] === barcode && String(r["deleted"]) !== "1")

const act = (store: Store, body: Row): Response => {
  const action = String(body["action"])
  const tables = syncTables[action]
  if (tables !== undefined) {
    const out: Row = {}
    // sync_inventory answers rows keyed by number, as BioTrack sometimes does
    for (const t of tables) out[t] = action === "sync_inventory" ? { ...store.tables[t]! } : store.tables[t]
    return ok(out)
  }
  switch (action) {
    case "inventory_qa_check": {
      const check = store.checks.get(String(body["sample_id"]))
      return check === undefined ? fail("Sample not found.", 602) : ok({ data: check })
    }
    case "inventory_split":
    case "inventory_convert": {
      const data = body["data"] as Array<Row> | undefined
      if (!Array.isArray(data) || data.length === 0) return fail("Please specify at least one identifier.", 602)
      const sources = data.map((d) => ({ lot: findLot(store, d["barcodeid"]), take: Number(d["remove_quantity"]) }))
      for (const s of sources) {
        if (s.lot === undefined) return fail("Barcode not found.", 602)
        if (!(s.take > 0) || s.take > Number(s.lot["remaining_quantity"])) {
          return fail("Insufficient quantity for this barcode.", 602)
        }
      }
      const { barcode, time, tx } = next(store)
      for (const s of sources) {
        s.lot!["remaining_quantity"] = String(Number(s.lot!["remaining_quantity"]) - s.take)
      }
      const first = sources[0]!.lot!
      const total = sources.reduce((n, s) => n + s.take, 0)
      store.tables["inventory"]!.push({
        ...first,
        id: barcode,
        remaining_quantity: String(action === "inventory_split" ? total : body["derivative_quantity"]),
        usable_weight: String(total),
        parentid: sources.map((s) => s.lot!["id"]),
        inventoryparentid: null,
        ...(action === "inventory_convert"
          ? {
            inventorytype: String(body["derivative_type"]),
            productname: body["derivative_product"],
            strain: body["derivative_strain"]
          }
          : {}),
        sessiontime: time,
        transactionid: tx,
        transactionid_original: tx
      })
      return ok({ transactionid: tx, sessiontime: time, barcode_id: [barcode] })
    }
    case "inventory_qa_sample": {
      const source = findLot(store, body["barcodeid"])
      if (source === undefined) return fail("Barcode not found.", 602)
      const { barcode, time, tx } = next(store)
      store.tables["inventory_qa_sample"]!.push({
        inventoryid: barcode,
        parentid: source["id"],
        inventorytype: source["inventorytype"],
        lab_license: body["lab_id"],
        location: source["location"],
        quantity: body["quantity"],
        result: "0",
        sample_use: String(body["use"]),
        deleted: "0",
        sessiontime: time,
        transactionid: tx
      })
      return ok({ transactionid: tx, sessiontime: time, barcode_id: [barcode] })
    }
    case "inventory_qa_sample_results": {
      const sample = store.tables["inventory_qa_sample"]!.find((s) => s["inventoryid"] === body["sample_id"])
      if (sample === undefined) return fail("Sample not found.", 602)
      sample["result"] = String(body["result"])
      store.checks.set(String(body["sample_id"]), {
        sample_id: sample["inventoryid"],
        parent_id: sample["parentid"],
        lab_license: sample["lab_license"],
        result: body["result"],
        use: sample["sample_use"],
        test: body["test"]
      })
      const { time, tx } = next(store)
      return ok({ transactionid: tx, sessiontime: time })
    }
    case "inventory_manifest": {
      const stops = body["stop_overview"] as Array<Row> | undefined
      if (!Array.isArray(stops) || stops.length === 0) return fail("Please specify at least one stop.", 602)
      const { barcode, time, tx } = next(store)
      const location = String(body["location"])
      store.tables["manifest"]!.push({
        manifestid: barcode,
        location,
        origination_license_number: location,
        origination_name: store.tables["vendor"]!.find((v) => v["location"] === location)?.["name"] ?? null,
        transporter_name: body["transporter_name"] ?? null,
        transporter_vehicle_details: body["transporter_vehicle_details"] ?? null,
        stopcount: String(stops.length),
        completion_date: null,
        fulfilled: "0",
        deleted: "0",
        sessiontime: time,
        transactionid: tx
      })
      for (const stop of stops) {
        store.tables["manifest_stop_data"]!.push({
          manifestid: barcode,
          stopnumber: String(stop["stop_number"]),
          license_number: stop["vendor_license"],
          depart_time: stop["approximate_departure"] ?? null,
          arrive_time: stop["approximate_arrival"] ?? null,
          deleted: "0",
          sessiontime: time,
          transactionid: tx
        })
        for (const id of stop["barcodeid"] as Array<string>) {
          const found = findLot(store, id)
          if (found === undefined) return fail("Barcode not found.", 602)
          store.tables["manifest_stop_items"]!.push({
            manifestid: barcode,
            stopnumber: String(stop["stop_number"]),
            inventoryid: id,
            description: found["productname"] ?? null,
            quantity: found["remaining_quantity"],
            deleted: "0",
            sessiontime: time,
            transactionid: tx
          })
        }
      }
      return ok({ transactionid: tx, sessiontime: time, manifest_id: barcode })
    }
    case "inventory_transfer_outbound": {
      const manifest = store.tables["manifest"]!.find((m) => m["manifestid"] === body["manifest_id"])
      if (manifest === undefined) return fail("Manifest not found.", 602)
      const { time, tx } = next(store)
      for (const line of body["data"] as Array<Row>) {
        const found = findLot(store, line["barcodeid"])
        if (found === undefined) return fail("Barcode not found.", 602)
        const item = store.tables["manifest_stop_items"]!.find((i) =>
          i["manifestid"] === body["manifest_id"] && i["inventoryid"] === line["barcodeid"]
        )
        if (item !== undefined) item["quantity"] = line["quantity"]
        store.tables["inventory_transfer"]!.push({
          inventoryid: line["barcodeid"],
          inventorytype: found["inventorytype"],
          quantity: line["quantity"],
          price: line["price"],
          manifestid: body["manifest_id"],
          manifest_stop: "1",
          outbound_license: manifest["location"],
          location: manifest["location"],
          deleted: "0",
          sessiontime: time,
          transactionid: tx
        })
      }
      return ok({ transactionid: tx, sessiontime: time })
    }
    default:
      return fail(`Unknown action ${action}.`, 1)
  }
}

/** The msw handlers: every host under `.biotrack.test` routes to its own store. */
export const handlers = [
  http.post(/^https:\/\/[^/]+\.biotrack\.test\/serverjson\.asp$/, async ({ request }) => {
    const store = stores.get(new URL(request.url).host)
    if (store === undefined) return HttpResponse.text("no such host", { status: 404 })
    const body = (await request.json()) as Row
    store.bodies.push(body)
    const action = String(body["action"])
    store.calls.push(action)
    const faultAt = store.faults.findIndex((f) => f.action === undefined || f.action === action)
    if (faultAt >= 0) return store.faults.splice(faultAt, 1)[0]!.respond()
    if (body["API"] !== "4.0") return fail("Invalid API Version", 17)
    if (action === "login") {
      if (body["license_number"] === UBI && body["username"] === USERNAME && body["password"] === PASSWORD) {
        store.counter += 1
        const sessionid = `sess${String(store.counter).padStart(12, "0")}`
        store.sessions.add(sessionid)
        return ok({ admin: 1, sessionid, time: T0 })
      }
      return fail("Invalid username or password.")
    }
    if (typeof body["sessionid"] !== "string" || !store.sessions.has(body["sessionid"])) {
      return fail("Your session has expired.", 63)
    }
    return act(store, body)
  })
]
