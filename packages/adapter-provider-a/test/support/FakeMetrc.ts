/**
 * A small, stateful stand-in for a Metrc-style server, built from the fixtures in `../fixtures`
 * (synthetic records in the shapes of the research payloads). One instance per host, so tests
 * running concurrently never share state; `handler` routes every request to the instance of its
 * host. It rejects what the real API rejects: a wrong Basic header (401), a missing or foreign
 * `licenseNumber` (400/403), `pageSize` over 20, lastModified windows over 24 h, receipts without a
 * window, and write bodies that are not arrays.
 */
import { Units } from "@tracebridge/core"
import { Option } from "effect"
import { http, HttpResponse } from "msw"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const fixtures = join(fileURLToPath(new URL(".", import.meta.url)), "../fixtures")
export const fixture = (name: string): any => JSON.parse(readFileSync(join(fixtures, `${name}.json`), "utf8"))

export const VENDOR_KEY = "test-vendor-key"
export const USER_KEY = "user-key-good-0001"
export const LICENSE = "CO-TEST-0001"
export const OTHER_LICENSE = "CO-TEST-0002"
/** The fixed "now" of the fake world; tests set the TestClock to it. */
export const NOW = Date.parse("2026-03-15T12:00:00Z")

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00")
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const label = (n: number) => `1A4FF0000000000000${String(n).padStart(6, "0")}`
const clone = <A>(a: A): A => JSON.parse(JSON.stringify(a))
const HOUR = 3_600_000

type Rec = Record<string, any>

interface FacilityData {
  packages: Array<Rec>
  inactivePackages: Array<Rec>
  labRows: Map<number, Array<Rec>>
  sourceHarvests: Map<number, Array<Rec>>
  plants: { vegetative: Array<Rec>; flowering: Array<Rec>; inactive: Array<Rec> }
  harvests: Array<Rec>
  transfers: { incoming: Array<Rec>; outgoing: Array<Rec>; rejected: Array<Rec>; templates: Array<Rec> }
  deliveryPackages: Map<number, Array<Rec>>
  templateDeliveries: Map<number, Array<Rec>>
  receipts: Array<Rec>
  deliveries: Array<Rec>
  items: Array<Rec>
  strains: Array<Rec>
  locations: Array<Rec>
  patients: Array<Rec>
  tags: Array<string>
}

const itemNames = ["Test Kush Buds", "Test Kush Pre-Roll", "Test Kush Gummies"]

const makeFacility = (base: number, packageCount: number): FacilityData => {
  const items = itemNames.map((name, i) => ({
    ...clone(fixture("item")),
    Id: base + 10 + i,
    Name: name,
    ProductCategoryName: ["Buds", "Pre-Roll", "Edible"][i],
    UnitOfMeasureName: i === 2 ? "Each" : "Grams",
    StrainName: i === 2 ? null : "Test Kush",
    UnitWeight: i === 2 ? 10 : null
  }))
  const harvests = [0, 1, 2].map((i) => ({
    ...clone(fixture("harvest")),
    Id: base + 200 + i,
    Name: `2026-02-0${i + 1}-Test Kush-${i}`,
    HarvestType: i === 1 ? "Manicure" : "WholePlant",
    SourceStrainNames: "Test Kush",
    HarvestStartDate: `2026-02-0${i + 1}`,
    CurrentWeight: 1000 + i,
    TotalWasteWeight: 100,
    PlantCount: i === 0 ? 2 : 0,
    UnitOfWeightName: "Grams",
    LastModified: iso(NOW - (10 + i) * HOUR)
  }))
  const packages: Array<Rec> = []
  const labRows = new Map<number, Array<Rec>>()
  const sourceHarvests = new Map<number, Array<Rec>>()
  for (let i = 1; i <= packageCount; i++) {
    const id = base + 1000 + i
    const item = items[i % 3]!
    const tested = i % 3 === 0 ? "TestPassed" : i % 3 === 1 ? "NotSubmitted" : "TestFailed"
    const pkg = {
      ...clone(fixture("package")),
      Id: id,
      Label: label(base + i),
      Quantity: item.UnitOfMeasureName === "Each" ? 20 + i : 10 * i,
      OriginalPackageQuantity: item.UnitOfMeasureName === "Each" ? 20 + i : 10 * i,
      UnitOfMeasureName: item.UnitOfMeasureName,
      UnitOfMeasureAbbreviation: item.UnitOfMeasureName === "Each" ? "ea" : "g",
      ItemFromFacilityLicenseNumber: null,
      ItemFromFacilityName: null,
      PackagedDate: day(NOW - (60 - i) * 24 * HOUR),
      LabTestingState: tested,
      IsOnHold: i % 10 === 7,
      SourceHarvestCount: i <= 5 ? 1 : 0,
      SourceHarvestNames: i <= 5 ? harvests[0]!.Name : "",
      SourcePackageCount: i === 2 ? 1 : 0,
      SourcePackageLabels: i === 2 ? label(base + 1) : "",
      LastModified: iso(NOW - i * HOUR),
      Item: {
        ...clone(fixture("package").Item),
        Id: item.Id,
        Name: item.Name,
        ProductCategoryName: item.ProductCategoryName,
        StrainName: item.StrainName
      }
    }
    packages.push(pkg)
    if (i <= 5) {
      sourceHarvests.set(id, [{
        HarvestId: harvests[0]!.Id,
        HarvestName: harvests[0]!.Name,
        HarvestStartDate: "2026-02-01"
      }])
    }
    if (tested !== "NotSubmitted") {
      const failed = tested === "TestFailed"
      labRows.set(
        id,
        [
          ["THC", 21.5 + (i % 4), true],
          ["Microbiologicals", 0.1, true],
          ["Pesticides", failed ? 0.9 : 0.01, !failed]
        ].map(([name, level, passed]) => ({
          ...clone(fixture("labtest-row")),
          PackageId: id,
          LabTestResultId: base + 5000 + i,
          SourcePackageLabel: pkg.Label,
          ProductName: item.Name,
          TestPerformedDate: day(NOW - (20 - (i % 10)) * 24 * HOUR),
          ResultReleaseDateTime: iso(NOW - (18 - (i % 10)) * 24 * HOUR),
          OverallPassed: !failed,
          TestTypeName: name,
          TestResultLevel: level,
          TestPassed: passed,
          TestComment: passed ? null : "Above action limit"
        }))
      )
    }
  }
  const plant = (kind: "vegetative" | "flowering" | "inactive", n: number, id: number, extra: Rec = {}) => ({
    ...clone(fixture(`plant-${kind}`)),
    Id: id,
    Label: label(base + 900 + n),
    StrainName: "Test Kush",
    LocationName: "Flower Room",
    PlantedDate: "2025-12-01",
    VegetativeDate: "2025-12-20",
    LastModified: iso(NOW - n * HOUR),
    ...extra
  })
  const plants = {
    vegetative: [0, 1, 2].map((n) =>
      plant("vegetative", n, base + 300 + n, { GrowthPhase: "Vegetative", FloweringDate: null, HarvestId: null })
    ),
    flowering: [3, 4, 5].map((n) =>
      plant("flowering", n, base + 310 + n, { GrowthPhase: "Flowering", FloweringDate: "2026-01-10", HarvestId: null })
    ),
    inactive: [6, 7].map((n) =>
      plant("inactive", n, base + 320 + n, {
        GrowthPhase: "Flowering",
        State: "Harvested",
        HarvestId: harvests[0]!.Id,
        HarvestedDate: "2026-02-01"
      })
    )
  }
  const deliveryPackages = new Map<number, Array<Rec>>()
  const line = (pkg: Rec, state: string) => ({
    ...clone(fixture("delivery-package")),
    PackageId: pkg.Id,
    PackageLabel: pkg.Label,
    ItemName: pkg.Item.Name,
    ItemCategoryName: pkg.Item.ProductCategoryName,
    ShipmentPackageState: state,
    ShippedQuantity: 5,
    ShippedUnitOfMeasureName: pkg.UnitOfMeasureName,
    ReceivedQuantity: state === "Accepted" ? 5 : 0,
    ReceivedUnitOfMeasureName: pkg.UnitOfMeasureName
  })
  const transfer = (kind: "incoming" | "outgoing", id: number, deliveryId: number, extra: Rec) => ({
    ...clone(fixture(`transfer-${kind}`)),
    Id: id,
    ManifestNumber: String(id).padStart(10, "0"),
    DeliveryId: deliveryId,
    DeliveryCount: 1,
    ShipmentTypeName: "Transfer",
    EstimatedDepartureDateTime: "2026-03-10T09:00:00.000",
    EstimatedArrivalDateTime: "2026-03-10T13:00:00.000",
    ActualDepartureDateTime: null,
    ActualArrivalDateTime: null,
    ReceivedDateTime: null,
    LastModified: iso(NOW - 30 * HOUR),
    ...extra
  })
  const transfers = {
    incoming: [
      transfer("incoming", base + 400, base + 4000, {
        ShipperFacilityLicenseNumber: "CO-TEST-0003",
        RecipientFacilityLicenseNumber: base === 0 ? LICENSE : OTHER_LICENSE,
        ActualDepartureDateTime: "2026-03-10T09:05:00.000",
        ActualArrivalDateTime: "2026-03-10T12:55:00.000",
        ReceivedDateTime: "2026-03-10T13:10:00-06:00",
        ReceivedPackageCount: 2,
        DeliveryReceivedPackageCount: 2
      }),
      transfer("incoming", base + 401, base + 4010, {
        ShipperFacilityLicenseNumber: "CO-TEST-0003",
        RecipientFacilityLicenseNumber: base === 0 ? LICENSE : OTHER_LICENSE,
        ActualDepartureDateTime: "2026-03-14T08:00:00.000"
      })
    ],
    outgoing: [
      transfer("outgoing", base + 410, base + 4100, {
        ShipperFacilityLicenseNumber: base === 0 ? LICENSE : OTHER_LICENSE,
        RecipientFacilityLicenseNumber: "CO-TEST-0005",
        RecipientFacilityName: "Test Receiver LLC"
      }),
      transfer("outgoing", base + 411, base + 4110, {
        ShipperFacilityLicenseNumber: base === 0 ? LICENSE : OTHER_LICENSE,
        RecipientFacilityLicenseNumber: "CO-TEST-0005",
        RecipientFacilityName: "Test Receiver LLC",
        ActualDepartureDateTime: "2026-03-09T08:00:00.000",
        ReceivedDateTime: "2026-03-09T12:00:00-06:00",
        ReceivedPackageCount: 0
      })
    ],
    rejected: [] as Array<Rec>,
    templates: [] as Array<Rec>
  }
  transfers.rejected.push(clone(transfers.outgoing[1]!))
  deliveryPackages.set(base + 4000, [line(packages[0]!, "Accepted"), line(packages[1]!, "Accepted")])
  deliveryPackages.set(base + 4010, [line(packages[2]!, "Shipped")])
  deliveryPackages.set(base + 4100, [line(packages[3]!, "Shipped")])
  deliveryPackages.set(base + 4110, [line(packages[4]!, "Rejected")])
  const transaction = (pkg: Rec, qty: number, total: number) => ({
    PackageId: pkg.Id,
    PackageLabel: pkg.Label,
    ProductName: pkg.Item.Name,
    ProductCategoryName: pkg.Item.ProductCategoryName,
    ItemStrainName: pkg.Item.StrainName,
    QuantitySold: qty,
    UnitOfMeasureName: pkg.UnitOfMeasureName,
    UnitOfMeasureAbbreviation: pkg.UnitOfMeasureAbbreviation,
    TotalPrice: total,
    SalesDeliveryState: null,
    ArchivedDate: null,
    RecordedDateTime: iso(NOW - HOUR),
    LastModified: iso(NOW - HOUR)
  })
  const receipts = [0, 1, 2, 3, 4, 5].map((i) => ({
    ...clone(fixture("sales-receipt")),
    Id: base + 600 + i,
    ReceiptNumber: i === 0 ? null : `R-${base + 600 + i}`,
    ExternalReceiptNumber: i === 0 ? "EXT-0001" : null,
    SalesDateTime: `2026-03-${String(5 + i).padStart(2, "0")}T17:35:45.000`,
    SalesCustomerType: i === 5 ? "Patient" : "Consumer",
    PatientLicenseNumber: i === 5 ? "PT-TEST-0001" : null,
    TotalPackages: 1,
    TotalPrice: 30 + i,
    Transactions: [transaction(packages[(i % 4) + 1]!, 3, 30 + i)],
    RecordedDateTime: iso(NOW - (9 - i) * 24 * HOUR),
    LastModified: iso(NOW - (9 - i) * 24 * HOUR)
  }))
  const deliveries = [0, 1, 2].map((i) => ({
    ...clone(fixture("sales-delivery")),
    Id: base + 700 + i,
    SalesDateTime: `2026-03-1${i}T10:00:00.000`,
    RecipientName: `Test Recipient ${i}`,
    RecipientAddressCity: "Denver",
    RecipientAddressState: "CO",
    CompletedDateTime: i === 0 ? "2026-03-10T11:30:00-06:00" : null,
    EstimatedArrivalDateTime: `2026-03-1${i}T12:00:00.000`,
    SalesDeliveryState: i === 0 ? "Completed" : "InProgress",
    Transactions: [transaction(packages[6]!, 1, 10)],
    LastModified: iso(NOW - (3 - i) * 24 * HOUR)
  }))
  return {
    packages,
    inactivePackages: [],
    labRows,
    sourceHarvests,
    plants,
    harvests,
    transfers,
    deliveryPackages,
    templateDeliveries: new Map(),
    receipts,
    deliveries,
    items,
    strains: [0, 1].map((i) => ({
      ...clone(fixture("strain")),
      Id: base + 20 + i,
      Name: i === 0 ? "Test Kush" : "Test Haze",
      IndicaPercentage: i === 0 ? 60 : 20,
      SativaPercentage: i === 0 ? 40 : 80,
      Genetics: i === 0 ? "60% Indica / 40% Sativa" : null
    })),
    locations: [0, 1, 2].map((i) => ({
      ...clone(fixture("location")),
      Id: base + 30 + i,
      Name: ["Vault", "Flower Room", "Drying Room"][i]
    })),
    patients: [0, 1].map((i) => ({
      ...clone(fixture("patient")),
      PatientId: base + 40 + i,
      LicenseNumber: `PT-TEST-000${i + 1}`
    })),
    tags: Array.from({ length: 20 }, (_, i) => label(base + 5000 + i))
  }
}

interface Fault {
  readonly path?: RegExp
  readonly respond: () => Response
}

/** One fake server, reachable at `https://<host>`. */
export class FakeMetrc {
  readonly baseUrl: string
  readonly facilities: Array<Rec>
  readonly data: Map<string, FacilityData>
  readonly faults: Array<Fault> = []
  /** Every request seen, as `METHOD path?query`. */
  readonly log: Array<string> = []
  private nextId = 90_000

  constructor(
    readonly host: string,
    readonly options: { readonly packages?: number; readonly camelCase?: boolean } = {}
  ) {
    this.baseUrl = `https://${host}`
    this.facilities = fixture("facilities")
    this.data = new Map([
      [LICENSE, makeFacility(0, options.packages ?? 45)],
      [OTHER_LICENSE, makeFacility(100_000, 8)]
    ])
  }

  /** The next `count` requests (optionally only those whose path matches) get `respond()`. */
  failNext(respond: () => Response, options: { readonly count?: number; readonly path?: RegExp } = {}): void {
    for (let i = 0; i < (options.count ?? 1); i++) {
      this.faults.push({ respond, ...(options.path ? { path: options.path } : {}) })
    }
  }

  handle(request: Request, body: unknown): Response {
    const url = new URL(request.url)
    const path = url.pathname
    const q = url.searchParams
    this.log.push(`${request.method} ${path}${url.search}`)
    const fault = this.faults.findIndex((f) => f.path === undefined || f.path.test(path))
    if (fault >= 0) return this.faults.splice(fault, 1)[0]!.respond()

    const expected = `Basic ${btoa(`${VENDOR_KEY}:${USER_KEY}`)}`
    if (request.headers.get("authorization") !== expected) return new HttpResponse(null, { status: 401 })
    if (request.method === "GET" && path === "/facilities/v2/") return HttpResponse.json(this.facilities)

    const license = q.get("licenseNumber")
    if (license === null) return HttpResponse.json({ Message: "No licenseNumber was specified." }, { status: 400 })
    const data = this.data.get(license)
    if (data === undefined) {
      return HttpResponse.json({ Message: "The authenticated user does not have access to the requested resource." }, {
        status: 403
      })
    }
    if (request.method === "POST") return this.write(path, body, data, license)
    return this.read(path, q, data)
  }

  private page(records: ReadonlyArray<Rec>, q: URLSearchParams, requireWindow = false): Response {
    const start = q.get("lastModifiedStart")
    const end = q.get("lastModifiedEnd")
    let rows = records
    if (start !== null || end !== null) {
      const s = Date.parse(start ?? "")
      const e = Date.parse(end ?? "")
      if (Number.isNaN(s) || Number.isNaN(e) || e < s) {
        return HttpResponse.json({ Message: "Invalid lastModified window." }, { status: 400 })
      }
      if (e - s > 24 * HOUR) {
        return HttpResponse.json({ Message: "The lastModified window may not exceed 24 hours." }, { status: 400 })
      }
      rows = rows.filter((r) => {
        const t = Date.parse(r.LastModified)
        return t >= s && t < e
      })
    } else if (requireWindow) {
      return HttpResponse.json({ Message: "lastModifiedStart and lastModifiedEnd are required." }, { status: 400 })
    }
    const size = q.get("pageSize")
    if (size === null) {
      return HttpResponse.json({
        Data: rows,
        Total: rows.length,
        TotalRecords: rows.length,
        PageSize: rows.length,
        RecordsOnPage: rows.length,
        Page: 1,
        CurrentPage: 1,
        TotalPages: 1
      })
    }
    const pageSize = Number(size)
    if (!(pageSize >= 1 && pageSize <= 20)) {
      return HttpResponse.json({ Message: "pageSize may not exceed 20." }, { status: 400 })
    }
    const pageNumber = Number(q.get("pageNumber") ?? "1")
    const data = rows.slice((pageNumber - 1) * pageSize, pageNumber * pageSize)
    return HttpResponse.json({
      Data: data,
      Total: rows.length,
      TotalRecords: rows.length,
      PageSize: pageSize,
      RecordsOnPage: data.length,
      Page: pageNumber,
      CurrentPage: pageNumber,
      TotalPages: Math.ceil(rows.length / pageSize)
    })
  }

  private notFound(): Response {
    return HttpResponse.json({ Message: "The requested resource could not be found (incorrect or invalid URI)." }, {
      status: 404
    })
  }

  private one(found: Rec | undefined): Response {
    return found === undefined ? this.notFound() : HttpResponse.json(found)
  }

  private read(path: string, q: URLSearchParams, d: FacilityData): Response {
    const all = [...d.packages, ...d.inactivePackages]
    let m: RegExpExecArray | null
    if (path === "/packages/v2/active") return this.page(d.packages, q)
    if (path === "/packages/v2/onhold") return this.page(d.packages.filter((p) => p.IsOnHold), q)
    if ((m = /^\/packages\/v2\/(\d+)\/source\/harvests$/.exec(path))) {
      return this.page(d.sourceHarvests.get(Number(m[1])) ?? [], q)
    }
    if ((m = /^\/packages\/v2\/([^/]+)$/.exec(path))) {
      const key = decodeURIComponent(m[1]!)
      return this.one(all.find((p) => String(p.Id) === key || p.Label === key))
    }
    if (path === "/tags/v2/package/available") {
      return HttpResponse.json(d.tags.map((Label, i) => ({ Id: 70_000 + i, Label })))
    }
    if (path === "/plants/v2/vegetative") return this.page(d.plants.vegetative, q)
    if (path === "/plants/v2/flowering") return this.page(d.plants.flowering, q)
    if (path === "/plants/v2/inactive") return this.page(d.plants.inactive, q)
    if ((m = /^\/plants\/v2\/([^/]+)$/.exec(path))) {
      const key = decodeURIComponent(m[1]!)
      const plants = [...d.plants.vegetative, ...d.plants.flowering, ...d.plants.inactive]
      return this.one(plants.find((p) => String(p.Id) === key || p.Label === key))
    }
    if (path === "/harvests/v2/active") return this.page(d.harvests, q)
    if ((m = /^\/harvests\/v2\/(\d+)$/.exec(path))) return this.one(d.harvests.find((h) => h.Id === Number(m![1])))
    if (path === "/labtests/v2/results") {
      const id = q.get("packageId")
      if (id === null) return HttpResponse.json({ Message: "packageId is required." }, { status: 400 })
      return this.page(d.labRows.get(Number(id)) ?? [], q)
    }
    if (path === "/transfers/v2/incoming") return this.page(d.transfers.incoming, q)
    if (path === "/transfers/v2/outgoing") return this.page(d.transfers.outgoing, q)
    if (path === "/transfers/v2/rejected") return this.page(d.transfers.rejected, q)
    if (path === "/transfers/v2/templates/outgoing") return this.page(d.transfers.templates, q)
    if ((m = /^\/transfers\/v2\/deliveries\/(\d+)\/packages$/.exec(path))) {
      return this.page(d.deliveryPackages.get(Number(m[1])) ?? [], q)
    }
    if ((m = /^\/transfers\/v2\/templates\/outgoing\/(\d+)\/deliveries$/.exec(path))) {
      return this.page(d.templateDeliveries.get(Number(m[1])) ?? [], q)
    }
    if ((m = /^\/transfers\/v2\/templates\/outgoing\/deliveries\/(\d+)\/packages$/.exec(path))) {
      return this.page(d.deliveryPackages.get(Number(m[1])) ?? [], q)
    }
    if (path === "/sales/v2/receipts/active") return this.page(d.receipts, q, true)
    if ((m = /^\/sales\/v2\/receipts\/(\d+)$/.exec(path))) {
      return this.one(d.receipts.find((r) => r.Id === Number(m![1])))
    }
    if (path === "/sales/v2/deliveries/active") return this.page(d.deliveries, q, true)
    if ((m = /^\/sales\/v2\/deliveries\/(\d+)$/.exec(path))) {
      return this.one(d.deliveries.find((r) => r.Id === Number(m![1])))
    }
    for (const area of ["items", "strains", "locations", "patients"] as const) {
      if (path === `/${area}/v2/active`) return this.page(d[area], q)
      if ((m = new RegExp(`^/${area}/v2/(\\d+)$`).exec(path))) {
        return this.one((d[area] as Array<Rec>).find((r) => (r.Id ?? r.PatientId) === Number(m![1])))
      }
    }
    return this.notFound()
  }

  private rows(messages: ReadonlyArray<string>): Response {
    return HttpResponse.json(messages.map((message) => ({ row: 0, message })), { status: 400 })
  }

  private write(path: string, body: unknown, d: FacilityData, license: string): Response {
    if (!Array.isArray(body)) return HttpResponse.json({ Message: "No data was submitted." }, { status: 400 })
    if (body.length > 10) return new HttpResponse(null, { status: 413 })
    const [obj] = body as Array<Rec>
    if (obj === undefined) return HttpResponse.json({ Message: "No data was submitted." }, { status: 400 })
    if (path === "/packages/v2/") {
      const tagIndex = d.tags.indexOf(obj.Tag)
      if (tagIndex < 0) return this.rows([`Tag ${obj.Tag} is not available.`])
      const item = d.items.find((i) => i.Name === obj.Item)
      if (item === undefined) return this.rows([`Item ${obj.Item} does not exist.`])
      const plan: Array<[Rec, number]> = []
      for (const ing of obj.Ingredients as Array<Rec>) {
        const source = d.packages.find((p) => p.Label === ing.Package)
        if (source === undefined) return this.rows([`Package ${ing.Package} was not found.`])
        if (source.IsOnHold) return this.rows([`Package ${ing.Package} is on hold.`])
        const take = Option.getOrUndefined(Units.convert(ing.Quantity, ing.UnitOfMeasure, source.UnitOfMeasureName))
        if (take === undefined || take > source.Quantity + 1e-9) {
          return this.rows([`Package ${ing.Package} does not have enough quantity.`])
        }
        plan.push([source, take])
      }
      for (const [source, take] of plan) source.Quantity = Math.round((source.Quantity - take) * 1e6) / 1e6
      d.tags.splice(tagIndex, 1)
      const id = ++this.nextId
      d.packages.push({
        ...clone(plan[0]![0]),
        Id: id,
        Label: obj.Tag,
        Quantity: obj.Quantity,
        OriginalPackageQuantity: obj.Quantity,
        UnitOfMeasureName: obj.UnitOfMeasure,
        PackagedDate: obj.ActualDate,
        LabTestingState: "NotSubmitted",
        IsOnHold: false,
        SourceHarvestCount: 0,
        SourceHarvestNames: "",
        SourcePackageCount: plan.length,
        SourcePackageLabels: plan.map(([p]) => p.Label).join(","),
        LocationName: obj.Location,
        LastModified: iso(NOW),
        Item: {
          ...clone(plan[0]![0].Item),
          Id: item.Id,
          Name: item.Name,
          ProductCategoryName: item.ProductCategoryName,
          StrainName: item.StrainName
        }
      })
      return HttpResponse.json({ Ids: [id], Warnings: null })
    }
    if (path === "/labtests/v2/record") {
      const pkg = d.packages.find((p) => p.Label === obj.Label)
      if (pkg === undefined) return this.rows([`Package ${obj.Label} was not found.`])
      const resultId = ++this.nextId
      const passed = (obj.Results as Array<Rec>).every((r) => r.Passed)
      const facility = this.facilities.find((f) => f.License.Number === license)!
      const rows = (obj.Results as Array<Rec>).map((r) => ({
        ...clone(fixture("labtest-row")),
        PackageId: pkg.Id,
        LabTestResultId: resultId,
        LabFacilityLicenseNumber: license,
        LabFacilityName: facility.Name,
        SourcePackageLabel: pkg.Label,
        ProductName: pkg.Item.Name,
        TestPerformedDate: String(obj.ResultDate).slice(0, 10),
        ResultReleaseDateTime: obj.ResultDate,
        OverallPassed: passed,
        TestTypeName: r.LabTestTypeName,
        TestPassed: r.Passed,
        TestResultLevel: r.Quantity,
        TestComment: r.Notes ?? null
      }))
      d.labRows.set(pkg.Id, [...(d.labRows.get(pkg.Id) ?? []), ...rows])
      pkg.LabTestingState = passed ? "TestPassed" : "TestFailed"
      return HttpResponse.json({ Ids: [resultId], Warnings: null })
    }
    if (path === "/transfers/v2/templates/outgoing") {
      const id = ++this.nextId
      const destinations = obj.Destinations as Array<Rec>
      const deliveries = destinations.map((dest) => {
        const deliveryId = ++this.nextId
        d.deliveryPackages.set(
          deliveryId,
          (dest.Packages as Array<Rec>).map((line) => {
            const pkg = d.packages.find((p) => p.Label === line.PackageLabel)!
            return {
              ...clone(fixture("delivery-package")),
              PackageId: pkg.Id,
              PackageLabel: pkg.Label,
              ItemName: pkg.Item.Name,
              ShipmentPackageState: "Shipped",
              ShippedQuantity: pkg.Quantity,
              ShippedUnitOfMeasureName: pkg.UnitOfMeasureName
            }
          })
        )
        return {
          ...clone(fixture("transfer-delivery")),
          Id: deliveryId,
          RecipientFacilityLicenseNumber: dest.RecipientLicenseNumber,
          RecipientFacilityName: null,
          ShipmentTypeName: dest.TransferTypeName,
          EstimatedDepartureDateTime: dest.EstimatedDepartureDateTime ?? null,
          EstimatedArrivalDateTime: dest.EstimatedArrivalDateTime ?? null,
          ActualDepartureDateTime: null,
          ActualArrivalDateTime: null,
          ReceivedDateTime: null
        }
      })
      d.templateDeliveries.set(id, deliveries)
      d.transfers.templates.push({
        ...clone(fixture("transfer-template")),
        Id: id,
        Name: obj.Name,
        ShipperFacilityLicenseNumber: license,
        TransporterFacilityLicenseNumber: obj.TransporterFacilityLicenseNumber,
        TransporterFacilityName: null,
        DriverName: obj.DriverName,
        VehicleMake: obj.VehicleMake,
        VehicleModel: obj.VehicleModel,
        VehicleLicensePlateNumber: obj.VehicleLicensePlateNumber,
        LastModified: iso(NOW)
      })
      return HttpResponse.json({ Ids: [id], Warnings: null })
    }
    return this.notFound()
  }
}

const servers = new Map<string, FakeMetrc>()

/** A new fake server on its own host. */
export const makeServer = (options: { readonly packages?: number; readonly camelCase?: boolean } = {}): FakeMetrc => {
  const host = `metrc-${servers.size + 1}.test`
  const server = new FakeMetrc(host, options)
  servers.set(host, server)
  return server
}

/** The msw handler that routes every request to the fake server of its host. */
export const handler = http.all("*", async ({ request }) => {
  const server = servers.get(new URL(request.url).host)
  if (server === undefined) return undefined
  const text = request.method === "GET" ? "" : await request.text()
  let body: unknown = undefined
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    return HttpResponse.json({ Message: "The request is invalid." }, { status: 400 })
  }
  const response = server.handle(request, body)
  if (!server.options.camelCase || !response.headers.get("content-type")?.includes("json")) return response
  // Some states answer in camelCase: lower the first letter of every key.
  const camel = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(camel)
      : typeof v === "object" && v !== null
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k[0]!.toLowerCase() + k.slice(1), camel(x)]))
      : v
  return HttpResponse.json(camel(await response.json()) as any, { status: response.status })
})
