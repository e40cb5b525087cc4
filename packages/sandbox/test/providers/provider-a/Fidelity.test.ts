/**
 * The provider_a emulator against Metrc's documented payloads: every answer the emulator serves is
 * held to an example recorded from Metrc's documentation (`test/fixtures/provider-a/`, each citing
 * its source), independently of the adapter's wire schemas.
 *
 * For every record of every endpoint (read without paging, so that the whole seeded world is seen):
 *
 * - **field names**: the fixture says how the record's keys compare with the example's. `equal`
 *   where the documentation example is verbatim and complete; `superset` (the example's keys must
 *   all be there) where the example is synthesized or inferred; `subset` (every key must be a
 *   documented one) where the world holds only part of an object. Each fixture gives its reason;
 * - **JSON types**: a field has the example's type (string, number, boolean, array, object, null);
 *   a null in the example accepts any type; a null in the emulator is accepted only where the
 *   fixture lists the field under `nullable`, with the reason the emulator cannot know the value;
 * - **formats**: where the example writes a date (`YYYY-MM-DD`), a date-time with an offset
 *   (`…T12:00:00+00:00`) or a local date-time without one (`…T12:00:00.000`), the emulator writes
 *   the same kind;
 * - nested objects and array elements the same way, and the v2 page wrapper of every list.
 */
import { assert, describe, it } from "@effect/vitest"
import { Registry, Sandbox } from "@tracebridge/sandbox"
import { Effect, Either } from "effect"
import { readFileSync } from "node:fs"
import * as Emulator from "../../../src/providers/provider-a/Emulator.js"

// ------------------------------------------------------------------ fixtures and the shape check

type Keys = "equal" | "superset" | "subset"

interface Rule {
  readonly keys: Keys
  readonly nullable?: Readonly<Record<string, string>>
  readonly nested?: Readonly<Record<string, Rule>>
  readonly elements?: Readonly<Record<string, string>>
}

interface Fixture extends Rule {
  readonly _source: string
  readonly _keys: string
  readonly endpoint: string
  readonly example: Readonly<Record<string, unknown>>
  readonly [extra: string]: unknown
}

const fixture = (name: string): Fixture =>
  JSON.parse(readFileSync(new URL(`../../fixtures/provider-a/${name}.json`, import.meta.url), "utf8"))

const typeOf = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "array" : typeof u)

/** The kind of time a documented string is, if it is one. */
const formatOf = (s: string): string | undefined =>
  /^\d{4}-\d{2}-\d{2}$/.test(s)
    ? "date (YYYY-MM-DD)"
    : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?[+-]\d{2}:\d{2}$/.test(s)
    ? "date-time with offset"
    : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/.test(s)
    ? "local date-time (no offset)"
    : undefined

/** Where `actual` departs from the documented `example` under `rule`, as readable lines. */
const conform = (
  rule: Rule,
  example: Readonly<Record<string, unknown>>,
  actual: unknown,
  at: string
): Array<string> => {
  if (typeOf(actual) !== "object") return [`${at}: expected an object, got ${typeOf(actual)}`]
  const row = actual as Record<string, unknown>
  const problems: Array<string> = []
  const documented = Object.keys(example)
  const served = Object.keys(row)
  if (rule.keys !== "subset") {
    for (const key of documented) if (!(key in row)) problems.push(`${at}.${key}: documented, not served`)
  }
  if (rule.keys !== "superset") {
    for (const key of served) if (!(key in example)) problems.push(`${at}.${key}: served, not documented`)
  }
  for (const key of documented.filter((k) => k in row)) {
    const recorded = example[key]
    const value = row[key]
    const path = `${at}.${key}`
    if (recorded === null) continue
    if (value === null) {
      if (rule.nullable?.[key] === undefined) problems.push(`${path}: null, documented as ${typeOf(recorded)}`)
      continue
    }
    if (typeOf(value) !== typeOf(recorded)) {
      problems.push(`${path}: ${typeOf(value)}, documented as ${typeOf(recorded)}`)
      continue
    }
    if (typeof recorded === "string") {
      const expected = formatOf(recorded)
      if (expected !== undefined && formatOf(value as string) !== expected) {
        problems.push(`${path}: ${JSON.stringify(value)} is not a ${expected} like ${JSON.stringify(recorded)}`)
      }
    } else if (typeOf(recorded) === "object") {
      const nested = rule.nested?.[key] ?? { keys: "superset" }
      problems.push(...conform(nested, recorded as Record<string, unknown>, value, path))
    } else if (Array.isArray(recorded)) {
      const items = value as ReadonlyArray<unknown>
      const other = rule.elements?.[key]
      if (other !== undefined) {
        const f = fixture(other)
        items.forEach((item, i) => problems.push(...conform(f, f.example, item, `${path}[${i}]`)))
      } else if (recorded.length > 0) {
        const first = recorded[0]
        items.forEach((item, i) =>
          typeOf(first) === "object"
            ? problems.push(...conform({ keys: "superset" }, first as Record<string, unknown>, item, `${path}[${i}]`))
            : typeOf(item) === typeOf(first) || problems.push(`${path}[${i}]: ${typeOf(item)}`)
        )
      }
    }
  }
  return problems
}

// ------------------------------------------------------------------ the world and the requests

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 60_000
const STATE = "CO"
const DAY = 86_400_000

const sandbox = new Sandbox.Sandbox({
  providers: Registry.installed,
  seed: "42",
  referenceDate: REFERENCE,
  now: () => NOW
})
const world = sandbox.world("provider_a", STATE, "user_good")
const byRole = (role: string) => world.facilities.find((d) => d.role === role)!
const cultivator = byRole("cultivation")
// The seeded cultivator only ships: transfer_arrived gives it an incoming transfer.
const arrived = sandbox.apply(world, {
  _tag: "Scenario",
  input: {
    name: "transfer_arrived",
    params: { facility_id: cultivator.facility.id },
    at: NOW - 3_600_000
  }
})
if (Either.isLeft(arrived)) throw new Error(`transfer_arrived: ${JSON.stringify(arrived.left)}`)

const call = (path: string, init: RequestInit = {}): Promise<Response> =>
  Emulator.handle(
    sandbox,
    STATE,
    path.split("?")[0]!,
    new Request(`http://sandbox.local/provider_a/${STATE}${path}`, {
      ...init,
      headers: { authorization: `Basic ${btoa("vendor:user_good")}` }
    })
  )

const getJson = async (path: string): Promise<any> => {
  const response = await call(path)
  assert.strictEqual(response.status, 200, `GET ${path}: ${response.status}`)
  return response.json()
}

const licence = (d: { readonly facility: { readonly license_number: string } }) =>
  `licenseNumber=${d.facility.license_number}`

/** A transfer template, made through the emulator's own POST (so the template endpoints have one). */
const createTemplate = async (): Promise<any> => {
  const tags = await getJson(`/tags/v2/package/available?${licence(cultivator)}`)
  assert.isTrue(tags.length > 0)
  const source = cultivator.packages.find((p) => !p.is_on_hold)!
  const recipient = byRole("retail").facility.license_number
  const response = await call(`/transfers/v2/templates/outgoing?${licence(cultivator)}`, {
    method: "POST",
    body: JSON.stringify([{
      Name: "Fidelity",
      TransporterFacilityLicenseNumber: null,
      DriverOccupationalLicenseNumber: null,
      DriverName: "Driver Name",
      DriverLicenseNumber: null,
      PhoneNumberForQuestions: null,
      VehicleMake: "Van",
      VehicleModel: null,
      VehicleLicensePlateNumber: null,
      Destinations: [{
        RecipientLicenseNumber: recipient,
        TransferTypeName: "Transfer",
        PlannedRoute: null,
        EstimatedDepartureDateTime: "2026-03-16T15:00:00.000Z",
        EstimatedArrivalDateTime: "2026-03-16T18:00:00.000Z",
        Transporters: [],
        Packages: [{ PackageLabel: source.tag, WholesalePrice: null }]
      }]
    }])
  })
  assert.strictEqual(response.status, 200)
  return response.json()
}

/** Every record of a v2 list of every facility, read without paging (each page wrapper checked). */
const listed = async (path: string, facilities = world.facilities): Promise<Array<{ at: string; row: unknown }>> => {
  const page = fixture("page")
  const out: Array<{ at: string; row: unknown }> = []
  for (const d of facilities) {
    const url = `${path}${path.includes("?") ? "&" : "?"}${licence(d)}`
    const body = await getJson(url)
    assert.deepStrictEqual(conform(page, page.example, body, url), [])
    assert.strictEqual(body.Total, body.TotalRecords)
    assert.strictEqual(body.Page, body.CurrentPage)
    assert.strictEqual(body.RecordsOnPage, body.Data.length)
    body.Data.forEach((row: unknown, i: number) => out.push({ at: `${url} Data[${i}]`, row }))
  }
  return out
}

/**
 * Every record of a list Metrc serves in lastModified windows (without one, only the last day's
 * changes): one window per day back past the world's oldest licence.
 */
const windowed = async (path: string, facilities = world.facilities) => {
  const out: Array<{ at: string; row: unknown }> = []
  for (let end = NOW + 1000; end > NOW - 90 * DAY; end -= DAY) {
    const window = `lastModifiedStart=${new Date(end - DAY).toISOString()}&lastModifiedEnd=${
      new Date(end).toISOString()
    }`
    out.push(...await listed(`${path}?${window}`, facilities))
  }
  return out
}

const holds = (name: string, rows: Array<{ at: string; row: unknown }>, atLeast = 1) => {
  const f = fixture(name)
  assert.isAtLeast(rows.length, atLeast, `${f.endpoint}: the world must serve a record to check`)
  // One line per field and problem (array positions and values folded), with a record that has it.
  const problems = new Map<string, string>()
  for (const { at, row } of rows) {
    for (const problem of conform(f, f.example, row, "")) {
      const key = problem.replace(/\[\d+\]/g, "[]").replace(/: ".*" is not/, ": … is not")
      if (!problems.has(key)) problems.set(key, at)
    }
  }
  assert.deepStrictEqual([...problems].map(([p, at]) => `${p} (${at})`), [], `${name}.json (${f.endpoint})`)
}

const one = async (path: string, facility = cultivator) => ({
  at: path,
  row: await getJson(`${path}?${licence(facility)}`)
})

// ------------------------------------------------------------------ the checks

const check = (name: string, run: () => Promise<void>) => it.effect(name, () => Effect.promise(run))

describe.sequential("provider_a emulator: fidelity to Metrc's documented payloads", () => {
  check("GET /facilities/v2/ is a bare array of documented facilities", async () => {
    const rows = await getJson("/facilities/v2/")
    assert.isTrue(Array.isArray(rows))
    holds("facilities", rows.map((row: unknown, i: number) => ({ at: `/facilities/v2/ [${i}]`, row })))
  })

  check("GET /unitsofmeasure/v2/active is the documented list", async () => {
    assert.deepStrictEqual(await getJson("/unitsofmeasure/v2/active"), fixture("units-of-measure").list)
  })

  check("packages: active, on hold, inactive (wrapper only: the world keeps none), by id and by label", async () => {
    const active = await windowed("/packages/v2/active")
    holds("packages", active, 10)
    holds("packages", await windowed("/packages/v2/onhold"))
    assert.deepStrictEqual(await windowed("/packages/v2/inactive"), [])
    const p = cultivator.packages[0]!
    holds("packages", [await one(`/packages/v2/${p.provider_package_id}`), await one(`/packages/v2/${p.tag}`)])
  })

  check("plants: vegetative, flowering, by id and by label; inactive (harvested)", async () => {
    holds("plants", [...await windowed("/plants/v2/vegetative"), ...await windowed("/plants/v2/flowering")], 2)
    const p = cultivator.plants[0]!
    holds("plants", [await one(`/plants/v2/${p.provider_plant_id}`), await one(`/plants/v2/${p.tag}`)])
    holds("plants-inactive", await windowed("/plants/v2/inactive"))
  })

  check("harvests: active and by id", async () => {
    holds("harvests", await windowed("/harvests/v2/active"))
    holds("harvests", [await one(`/harvests/v2/${cultivator.harvests[0]!.provider_harvest_id}`)])
  })

  check("lab test results of every tested package", async () => {
    const rows: Array<{ at: string; row: unknown }> = []
    for (const d of world.facilities) {
      for (const p of d.packages.filter((p) => d.labResults.some((r) => r.package_id === p.id))) {
        rows.push(...await listed(`/labtests/v2/results?packageId=${p.provider_package_id}`, [d]))
      }
    }
    holds("labtests-results", rows, 6)
  })

  check("transfers: incoming, outgoing, rejected, a delivery's packages", async () => {
    holds("transfers-incoming", await windowed("/transfers/v2/incoming"))
    const outgoing = await windowed("/transfers/v2/outgoing")
    holds("transfers-outgoing", outgoing)
    holds("transfers-rejected", await listed("/transfers/v2/rejected"))
    const packages: Array<{ at: string; row: unknown }> = []
    for (const d of world.facilities) {
      for (const { row: t } of (await windowed("/transfers/v2/outgoing", [d])) as Array<{ row: any }>) {
        packages.push(...await listed(`/transfers/v2/deliveries/${t.DeliveryId}/packages`, [d]))
      }
    }
    holds("transfer-delivery-packages", packages)
  })

  check("transfer templates: the template, its delivery and the delivery's packages", async () => {
    const created = await createTemplate()
    assert.deepStrictEqual(Object.keys(created), Object.keys(fixture("writes").created as object))
    const id = created.Ids[0]
    const rows = await listed("/transfers/v2/templates/outgoing", [cultivator])
    holds("transfer-templates", rows)
    const deliveries = await listed(`/transfers/v2/templates/outgoing/${id}/deliveries`, [cultivator])
    holds("transfer-deliveries", deliveries)
    const deliveryId = (deliveries[0]!.row as any).Id
    holds(
      "transfer-delivery-packages",
      await listed(`/transfers/v2/templates/outgoing/deliveries/${deliveryId}/packages`, [cultivator])
    )
  })

  check("sales receipts (in windows) with their transactions, and a receipt by id", async () => {
    const rows = await windowed("/sales/v2/receipts/active")
    holds("sales-receipts", rows, 2)
    const retail = byRole("retail")
    holds("sales-receipts", [await one(`/sales/v2/receipts/${retail.sales[0]!.provider_sale_id}`, retail)])
  })

  check("sales deliveries (in windows) and a delivery by id", async () => {
    holds("sales-deliveries", await windowed("/sales/v2/deliveries/active"))
    const retail = byRole("retail")
    holds("sales-deliveries", [
      await one(`/sales/v2/deliveries/${retail.salesDeliveries[0]!.provider_delivery_id}`, retail)
    ])
  })

  check("items, strains, locations and patients: active and by id", async () => {
    const medical = byRole("medical")
    holds("items", [
      ...await windowed("/items/v2/active"),
      await one(`/items/v2/${cultivator.items[0]!.provider_item_id}`)
    ])
    holds("strains", [
      ...await windowed("/strains/v2/active"),
      await one(`/strains/v2/${cultivator.strains[0]!.provider_strain_id}`)
    ])
    holds("locations", [
      ...await windowed("/locations/v2/active"),
      await one(`/locations/v2/${cultivator.locations[0]!.provider_location_id}`)
    ])
    holds("patients", [
      ...await listed("/patients/v2/active", [medical]),
      await one(`/patients/v2/${medical.patients[0]!.provider_patient_id}`, medical)
    ])
  })

  check("write answers and error bodies have Metrc's shapes", async () => {
    const writes = fixture("writes") as any
    const tags = await getJson(`/tags/v2/package/available?${licence(cultivator)}`)
    const source = cultivator.packages.find((p) => !p.is_on_hold && p.quantity > 1)!
    const split = await call(`/packages/v2/?${licence(cultivator)}`, {
      method: "POST",
      body: JSON.stringify([{
        Tag: tags[0].Label,
        Location: null,
        Sublocation: null,
        Item: source.item_name,
        Quantity: 1,
        UnitOfMeasure: source.unit_of_measure,
        PatientLicenseNumber: null,
        Note: null,
        ProductionBatchNumber: null,
        ActualDate: "2026-03-15",
        ExpirationDate: null,
        SellByDate: null,
        UseByDate: null,
        Ingredients: [{ Package: source.tag, Quantity: 1, UnitOfMeasure: source.unit_of_measure }]
      }])
    })
    assert.strictEqual(split.status, 200)
    const created = await split.json()
    assert.deepStrictEqual(Object.keys(created), Object.keys(writes.created))
    assert.isTrue(created.Ids.every((id: unknown) => typeof id === "number"))
    assert.strictEqual(created.Warnings, null)

    const refused = await call(`/packages/v2/?${licence(cultivator)}`, { method: "POST", body: JSON.stringify([{}]) })
    assert.strictEqual(refused.status, 400)
    const rows = await refused.json()
    assert.deepStrictEqual(rows.map((r: object) => Object.keys(r)), writes.rowErrors.map((r: object) => Object.keys(r)))
    const empty = await call(`/packages/v2/?${licence(cultivator)}`, { method: "POST", body: "[]" })
    assert.deepStrictEqual(await empty.json(), writes.requestError)
    const other = await call("/packages/v2/active?licenseNumber=SBX-00000-9")
    assert.deepStrictEqual([other.status, await other.json()], [403, { Message: writes.messages["403"] }])
    const missing = await call(`/packages/v2/999999999?${licence(cultivator)}`)
    assert.deepStrictEqual([missing.status, await missing.json()], [404, { Message: writes.messages["404"] }])
  })
})
