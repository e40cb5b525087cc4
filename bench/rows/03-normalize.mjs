// Row 3: normalizeSync of 100,000 provider_a (Metrc-shaped) packages against a hand-written
// JSON.parse plus plain object mapping to the same output. The wire text is what the sandbox's
// provider_a emulator answers for GET /packages/v2/active (no pageSize: every package of each 24-hour
// lastModified window, the windows read one after another and joined) on the
// 100k facility. Both sides include the JSON.parse of the same text.
import { normalizeSync } from "@tracebridge/adapter-provider-a"
import { deepStrictEqual } from "node:assert"
import { makeInProcess } from "../lib/inprocess.mjs"
import { median, ms, now, round } from "../lib/stats.mjs"

const METADATA = [
  "PackageType",
  "LocationName",
  "LocationTypeName",
  "SublocationName",
  "OriginalPackageQuantity",
  "UnitOfMeasureAbbreviation",
  "PatientLicenseNumber",
  "ItemFromFacilityLicenseNumber",
  "ItemFromFacilityName",
  "Note",
  "SellByDate",
  "UseByDate",
  "InitialLabTestingState",
  "LabTestingStateDate",
  "IsProductionBatch",
  "ProductionBatchNumber",
  "IsTradeSample",
  "IsDonation",
  "IsTestingSample",
  "ProductRequiresRemediation",
  "ReceivedDateTime",
  "ReceivedFromManifestNumber",
  "ReceivedFromFacilityLicenseNumber",
  "SourceHarvestNames",
  "ArchivedDate",
  "IsFinished",
  "FinishedDate",
  "LastModified"
]

const b64 = (s) => Buffer.from(s, "utf8").toString("base64url")
const pkgId = (label) => `pkg_${b64(`provider_a:${label}`)}`
const blank = (s) => s === null || s === undefined || s.trim() === ""
const date = (s) => {
  if (blank(s) || s.startsWith("0001-01-01")) return null
  const m = /^(\d{4}-\d{2}-\d{2})/.exec(s)
  return m === null ? null : m[1]
}
const need = (v, path) => {
  if (v === null || v === undefined || (typeof v === "string" && v.trim() === "")) throw new Error(`missing ${path}`)
  return v
}

/** The baseline: what a careful hand-written mapper does, with no schema. */
const handMap = (w, facility_id) => {
  const sources = blank(w.SourcePackageLabels)
    ? []
    : w.SourcePackageLabels.split(",").map((s) => s.trim()).filter(Boolean)
  const metadata = {}
  for (const f of METADATA) {
    const v = w[f]
    if (v !== null && v !== undefined && v !== "") metadata[f] = v
  }
  if (w.Item?.Id !== null && w.Item?.Id !== undefined) metadata.ItemId = w.Item.Id
  const strain = w.Item?.StrainName ?? w.ItemStrainName
  if (typeof w.Quantity !== "number" || typeof w.Label !== "string") throw new Error("invalid package")
  return {
    id: pkgId(w.Label),
    tag: w.Label,
    source_tag: sources[0] ?? null,
    item_name: need(w.Item?.Name ?? w.ProductName, "Item.Name"),
    item_category: need(w.Item?.ProductCategoryName ?? w.ProductCategoryName, "Item.ProductCategoryName"),
    item_strain: blank(strain) ? null : strain,
    quantity: w.Quantity,
    unit_of_measure: w.UnitOfMeasureName,
    lab_testing_state: blank(w.LabTestingState) ? null : w.LabTestingState.replace(/\s+/g, ""),
    is_on_hold: w.IsOnHold ?? false,
    packaged_date: date(w.PackagedDate),
    expiration_date: date(w.ExpirationDate),
    facility_id,
    provider: "provider_a",
    provider_package_id: String(w.Id),
    source_harvest_ids: [],
    source_package_ids: sources.map(pkgId),
    lab_results: [],
    metadata
  }
}

export default {
  id: 3,
  name: "normalizeSync of 100,000 provider_a packages vs JSON.parse + hand mapping",
  async run({ log, quick }) {
    const env = makeInProcess({ packages: 100_000 })
    try {
      const data = [...env.world().facilities].sort((a, b) => b.packages.length - a.packages.length)[0]
      // Without a lastModified window Metrc (and the emulator) answers only the last 24 hours, so
      // the facility's whole list is read window by window, newest first, into one wire text.
      const active = `http://sandbox.tracebridge.internal/provider_a/CO/packages/v2/active?licenseNumber=${
        encodeURIComponent(data.facility.license_number)
      }`
      const DAY = 86_400_000
      const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")
      const rows = []
      const end0 = Math.floor(Date.now() / 1000) * 1000 + 1000
      for (let end = end0, empty = 0; rows.length < data.packages.length && empty < 400; end -= DAY) {
        const url = `${active}&lastModifiedStart=${iso(end - DAY)}&lastModifiedEnd=${iso(end)}`
        const response = await env.handler(
          new Request(url, { headers: { authorization: `Basic ${btoa("vendor:user_good")}` } })
        )
        if (response.status !== 200) throw new Error(`the emulator answered ${response.status}: ${url}`)
        const page = JSON.parse(await response.text()).Data
        empty = page.length === 0 ? empty + 1 : 0
        rows.push(...page)
      }
      const text = JSON.stringify({ Data: rows, Total: rows.length })
      const count = rows.length
      if (count === 0) throw new Error("the emulator answered no package")
      log(`wire text: ${count} packages, ${Math.round(text.length / 1e6)} MB`)
      const ctx = { facility_id: data.facility.id, state: "CO" }

      const ours = () => JSON.parse(text).Data.map((w) => normalizeSync.package(w, ctx))
      const base = () => JSON.parse(text).Data.map((w) => handMap(w, ctx.facility_id))

      // The first run of each is timed too (100,000 items warm the JIT within the run), and its
      // output is compared: equal on a sample of 1,000 (every 100th package).
      const timed = (f, into) => {
        const t = now()
        const out = f()
        into.push(now() - t)
        return out
      }
      const tOurs = []
      const tBase = []
      const b = timed(base, tBase)
      const a = timed(ours, tOurs)
      if (a.length !== count || b.length !== count) throw new Error("a side lost packages")
      for (let i = 0; i < count; i += 100) deepStrictEqual(b[i], a[i], `package ${i} differs`)

      // More runs while they are cheap: up to 5 (2 with --quick), and no more once a side has
      // spent 10 s (normalizeSync may take many seconds a run).
      const max = quick ? 2 : 5
      const spent = (xs) => xs.reduce((x, y) => x + y, 0)
      while (tOurs.length < max && spent(tOurs) < 10_000) timed(ours, tOurs)
      while (tBase.length < max && spent(tBase) < 10_000) timed(base, tBase)
      const runs = `${tOurs.length} and ${tBase.length}`
      const ratio = median(tBase) / median(tOurs)
      return {
        measured: `normalizeSync ${ms(median(tOurs))} (${Math.round(count / median(tOurs) * 1000)}/s)`,
        baseline: `hand mapping ${ms(median(tBase))}`,
        ratio,
        checks: [{ what: "speed ratio (baseline/ours)", value: round(ratio, 3), target: ">= 0.3", pass: ratio >= 0.3 }],
        note: `${count} packages (${Math.round(text.length / 1e6)} MB of wire JSON from the emulator's ` +
          `/packages/v2/active); both sides JSON.parse the same text; equal output checked on every 100th ` +
          `package; median of ${runs} runs (ours, baseline), the first included. normalizeSync validates every ` +
          `package against the wire schema (Effect Schema, compiled once) and, by default, does not validate its ` +
          `own output again (the opt-in checkOutput does). Ratio = baseline time / ours.`,
        data: { ours: tOurs, baseline: tBase, packages: count, wireBytes: text.length }
      }
    } finally {
      await env.dispose()
    }
  }
}
