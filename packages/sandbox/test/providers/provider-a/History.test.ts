/**
 * A complete read of Metrc, against its one fake: Metrc answers a list only for the records
 * changed inside a lastModified window of at most 24 hours (without one, the last day's changes),
 * so the adapter walks every window from the facility's licence start (or the history horizon) to
 * now; and sales receipts come without their line items from the lists, so each is read by id.
 */
import { assert, describe, it } from "@effect/vitest"
import { SandboxServer, World } from "@tracebridge/sandbox"
import { Effect } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

const DAY = 24 * A.HOUR

/** The facility's licence start date, as the emulator serves it (epoch ms of the day). */
const licenceStart = (a: A.A) => Date.parse(a.facility("cultivation").facility.license_start_date!)

describe("ProviderA complete reads", () => {
  it.effect("lists every package, however old its last change, by walking the windows from the licence start", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    // one package last changed on the licence's first day: only a walk back to it finds it
    const oldest = cultivator.packages[0]!
    a.touch(oldest.id, licenceStart(a) + A.HOUR)
    return A.withPort((port) =>
      Effect.gen(function*() {
        const all = yield* port.listAll("packages", a.session(), cultivator.facility.id, {})
        assert.sameMembers(all.map((p) => p.id), cultivator.packages.map((p) => p.id))
        assert.isAbove(cultivator.packages.length, 20, "more than one Metrc page")
        const windows = a.queries("/packages/v2/active").filter((q) => q.get("pageNumber") === "1")
        const starts = windows.map((q) => Date.parse(q.get("lastModifiedStart")!)).sort((x, y) => x - y)
        assert.isAtMost(starts[0]!, licenceStart(a), "the first window starts by the licence start")
        assert.isAtLeast(starts[0]!, licenceStart(a) - 2 * DAY, "and not long before it")
        for (const q of windows) {
          const span = Date.parse(q.get("lastModifiedEnd")!) - Date.parse(q.get("lastModifiedStart")!)
          assert.isAtMost(span, DAY, "no window is longer than 24 h")
        }
        assert.isAtLeast(Date.parse(windows.at(-1)!.get("lastModifiedEnd")!), A.NOW, "the last window reaches now")
      })
    )
  })

  it.effect("stops at the history horizon (PROVIDER_A_HISTORY_DAYS) when the licence is older", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    return A.withPort(
      (port) =>
        Effect.gen(function*() {
          yield* port.listAll("items", a.session(), cultivator.facility.id, {})
          const starts = a.queries("/items/v2/active").map((q) => Date.parse(q.get("lastModifiedStart")!))
          assert.isAtLeast(Math.min(...starts), A.NOW - 10 * DAY - 1000)
          assert.isAtMost(starts.length, 12, "about ten windows of a day")
        }),
      { maxLookbackDays: 10 }
    )
  })

  it.effect("reads patients whole, once: Metrc documents no window for them, so none is listed twice", () => {
    const a = A.make()
    const medical = a.facility("medical")
    return A.withPort((port) =>
      Effect.gen(function*() {
        const since = new Date(A.NOW - 30 * DAY).toISOString()
        const patients = yield* port.listAll("patients", a.session(), medical.facility.id, { updated_since: since })
        assert.strictEqual(patients.length, medical.patients.length)
        assert.strictEqual(new Set(patients.map((p) => p.id)).size, patients.length)
        assert.strictEqual(a.queries("/patients/v2/active").length, 1)
      })
    )
  })
})

describe("ProviderA sales", () => {
  it.effect("reads each receipt of the page by id for its line items (list rows carry none)", () => {
    const a = A.make()
    const retail = a.facility("retail")
    const withLines = retail.sales.filter((s) => s.items.length > 0)
    assert.isNotEmpty(withLines)
    return A.withPort((port) =>
      Effect.gen(function*() {
        const page = yield* port.list("sales", a.session(), retail.facility.id, {}, { page: 1, per_page: 3 })
        assert.strictEqual(page.items.length, Math.min(3, page.pagination.total))
        for (const sale of page.items) {
          const world = retail.sales.find((s) => s.id === sale.id)!
          assert.strictEqual(sale.items.length, world.items.length, `${sale.id} has its line items`)
          assert.deepStrictEqual(sale.items.map((i) => i.tag), world.items.map((i) => i.tag))
        }
        const details = a.upstream.log.filter((l) => /^GET \/sales\/v2\/receipts\/\d+\?/.test(l))
        assert.strictEqual(details.length, page.items.length, "one detail read per receipt of the page, no more")
        assert.isTrue(a.upstream.log.some((l) => l.startsWith("GET /sales/v2/receipts/inactive?")))
      })
    )
  })

  it.effect("reads from/to by sales date (salesDateStart/End), in windows of a day at most", () => {
    const a = A.make()
    const retail = a.facility("retail")
    const sold = [...retail.sales].sort((x, y) => Date.parse(x.sale_date) - Date.parse(y.sale_date))
    const target = sold[Math.floor(sold.length / 2)]!
    const day = target.sale_date.slice(0, 10)
    const from = `${day}T00:00:00.000Z`
    const to = `${day}T23:59:59.999Z`
    return A.withPort((port) =>
      Effect.gen(function*() {
        const found = yield* port.listAll("sales", a.session(), retail.facility.id, { from, to })
        const expected = retail.sales.filter((s) => s.sale_date >= from && s.sale_date <= to)
        assert.sameMembers(found.map((s) => s.id), expected.map((s) => s.id))
        const lists = a.queries("/sales/v2/receipts/active")
        assert.isNotEmpty(lists)
        for (const q of lists) {
          assert.isNull(q.get("lastModifiedStart"), "from/to are sales dates, not change windows")
          const span = Date.parse(q.get("salesDateEnd")!) - Date.parse(q.get("salesDateStart")!)
          assert.isAtMost(span, DAY)
        }
      })
    )
  })
})

describe("ProviderA lab results", () => {
  it.effect("lists a result inherited by another package once, under Metrc's own result id, and reads it by id", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const results = (p: (typeof cultivator.packages)[number]) => World.packageView(cultivator, p).lab_results
    const tested = cultivator.packages.find((p) => results(p).length > 0)!
    const heir = cultivator.packages.find((p) => p.id !== tested.id)!
    const emulator = SandboxServer.makeHandler(a.sandbox)
    // the heir (as if made from the tested one) shows the tested one's lab state and results instead of its own
    a.edit(/^\/packages\/v2\/(active|inactive)$/, (answer) => ({
      ...answer,
      Data: answer.Data.map((p: any) =>
        p.Label === heir.tag ? { ...p, LabTestingState: "TestPassed", LabTestResultExpirationDateTime: null } : p
      )
    }))
    a.upstream.failNext(async (request) => {
      const url = new URL(request.url)
      const inherited = url.searchParams.get("packageId") === heir.provider_package_id
      if (inherited) url.searchParams.set("packageId", tested.provider_package_id)
      const answer = await (await emulator(new Request(url, { headers: request.headers }))).json()
      const rows = inherited
        ? answer.Data.map((r: any) => ({ ...r, PackageId: Number(heir.provider_package_id) }))
        : answer.Data
      return A.json({ ...answer, Data: rows })
    }, { path: /^\/labtests\/v2\/results$/, count: 1_000 })
    return A.withPort((port) =>
      Effect.gen(function*() {
        const all = yield* port.listAll("lab_results", a.session(), cultivator.facility.id, {})
        const ids = all.map((r) => r.id)
        assert.strictEqual(new Set(ids).size, ids.length, "each result once")
        const expected = results(tested)[0]!
        const result = all.find((r) => r.provider_result_id === expected.provider_result_id)!
        assert.strictEqual(result.package_id, tested.id, "the result belongs to the tested package")
        assert.strictEqual(result.id, expected.id)
        assert.match(result.provider_result_id, /^\d+$/)
        assert.deepStrictEqual(yield* port.get("lab_results", a.session(), cultivator.facility.id, result.id), result)
        // the heir reads it too: its package_id filter lists the inherited result
        const ofHeir = yield* port.listAll("lab_results", a.session(), cultivator.facility.id, { package_id: heir.id })
        assert.deepStrictEqual(ofHeir.map((r) => r.id), results(tested).map((r) => r.id))
      })
    )
  })
})
