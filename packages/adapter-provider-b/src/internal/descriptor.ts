/**
 * provider_b's static description: the states it serves (the hosts of the classic API), the
 * login, the capabilities per state, pacing and the writes it takes.
 */
import type { ProviderDescriptor } from "@tracebridge/core"
import { Capabilities } from "@tracebridge/core"
import * as ProviderBClient from "../ProviderBClient.js"

/** The provider's name. */
export const PROVIDER = "provider_b" as const

/** The state hosts of the classic API (overridable per session with `baseUrl`). */
export const hosts = ProviderBClient.hosts

/** The login the end user enters: the company UBI (sent as `license_number`), username and password. */
export const Credentials = ProviderBClient.Credentials

/**
 * The capabilities of every served state: no sales deliveries (BioTrack has none), no plant
 * batches (plants are tagged one by one from the start) and no patients (the classic API has no
 * patient registry, only card look-ups at sale time).
 */
export const stateCapabilities = Capabilities.make(true, {
  sales_deliveries: false,
  plant_batches: false,
  patients: false
})

/**
 * BioTrack's QA panels by `type` (research: ADP Lab_Metric): each one's core category and unit,
 * and whether a failed sample fails on it (potency and moisture are reported, not judged).
 */
export const labPanels: Readonly<Record<number, ProviderDescriptor.LabPanel>> = {
  1: { category: "moisture", unit: "%", judged: false },
  2: { category: "potency", unit: "%", judged: false },
  3: { category: "foreign_matter", unit: "%", judged: true },
  4: { category: "microbials", unit: "CFU/g", judged: true },
  5: { category: "residual_solvents", unit: "ppm", judged: true },
  6: { category: "mycotoxins", unit: "ppb", judged: true },
  7: { category: "pesticides", unit: "ppm", judged: true },
  8: { category: "heavy_metals", unit: "ppm", judged: true }
}

/**
 * BioTrack's facts: the time zone of each served state (BioTrack writes epoch seconds, so neither
 * side reads it yet; it keeps the table whole) and its QA panels. The adapter and the emulator
 * both read them.
 */
export const facts: ProviderDescriptor.Facts & { readonly labPanels: typeof labPanels } = {
  timeZones: {
    AR: "America/Chicago",
    CT: "America/New_York",
    HI: "Pacific/Honolulu",
    IL: "America/Chicago"
  },
  labPanels
}

/** The descriptor. */
export const descriptor: ProviderDescriptor.ProviderDescriptor = {
  name: PROVIDER,
  displayName: "BioTrack",
  credentialFields: [
    { name: "ubi", label: "Company UBI", secret: false, description: "The 9-digit business identifier" },
    { name: "username", label: "Username", secret: false },
    { name: "password", label: "Password", secret: true }
  ],
  loginKey: ["ubi", "username"],
  licenseTypes: ["Cultivation", "Manufacturing", "Testing Laboratory", "Adult-Use Retail", "Medical Retail"],
  credentials: Credentials,
  baseUrls: Object.fromEntries(Object.entries(hosts).map(([s, url]) => [s, { sandbox: url, production: url }])),
  providerPageSize: null,
  rateLimit: ProviderBClient.RATE_LIMIT,
  capabilities: Object.fromEntries(Object.keys(hosts).map((s) => [s, stateCapabilities])),
  writes: ["split_package", "record_lab_result", "create_transfer"],
  // BioTrack lets only labs file QA results (inventory_qa_sample_results)
  writeNeeds: { record_lab_result: "labs" },
  facts
}
