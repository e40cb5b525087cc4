/**
 * How a provider_a (Metrc-style) world is seeded: numeric ids beside 24-character labels, licence
 * numbers like `SBX-12345-3`, a facility's display name and alias, package metadata stamped with
 * `LastModified`, and no discounts in the read model.
 *
 * @since 0.1.0
 */
import { LabResult } from "@tracebridge/core"
import type { Profile } from "../../Profile.js"
import { kindNumber, memo, pad } from "../../Profile.js"

const metrcTime = memo((ms) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "+00:00"))

const numeric = (kind: string, f: number, n: number) => kindNumber(kind) * 100_000_000 + f * 1_000_000 + n

/**
 * @since 0.1.0
 * @category profiles
 */
export const profile: Profile = {
  license: (f, seed) => `SBX-${pad(seed % 100_000, 5)}-${f + 1}`,
  tag: (kind, f, n) => `1A4${kind === "package" ? "0" : "9"}${pad(f, 2)}${pad(n, 18)}`,
  numeric,
  facilityDetails: (company, role) => ({
    display_name: company,
    alias: `${company} (${role})`,
    address: null,
    city: null,
    zip: null
  }),
  plantIds: (_tag, n) => ({
    providerId: String(numeric("plant", 0, n)),
    plantBatchId: String(numeric("batch", 0, 1 + (n % 3)))
  }),
  packageId: (_tag, numericId) => String(numericId),
  packageMetadata: (input) => {
    // Key by key in the order Metrc's package object has them (the emulator serialises it).
    const metadata: Record<string, unknown> = {}
    metadata.PackageType = "Product"
    metadata.LocationName = "Vault"
    metadata.LocationTypeName = "Default"
    metadata.OriginalPackageQuantity = input.quantity
    metadata.UnitOfMeasureAbbreviation = input.unitAbbreviation
    metadata.InitialLabTestingState = "NotSubmitted"
    metadata.IsProductionBatch = false
    metadata.IsTradeSample = false
    metadata.IsDonation = false
    metadata.IsTestingSample = false
    metadata.ProductRequiresRemediation = false
    if (input.sourceHarvestNames.length > 0) metadata.SourceHarvestNames = input.sourceHarvestNames.join(",")
    metadata.IsFinished = false
    metadata.LastModified = metrcTime(input.at)
    metadata.ItemId = Number(input.providerItemId)
    return metadata
  },
  touchMetadata: (metadata, at) => ({ ...metadata, LastModified: metrcTime(at) }),
  testingSample: {
    mark: (metadata) => ({ ...metadata, IsTestingSample: true }),
    is: (metadata) => (metadata as Record<string, unknown>).IsTestingSample === true
  },
  labResultIds: (_tested, resultNo) => ({
    providerId: String(resultNo),
    providerResultId: String(resultNo)
  }),
  transferIds: (_n, numericId, template) => ({
    providerId: template ? `template-${numericId}` : String(numericId),
    manifest: template ? "" : String(numericId).padStart(10, "0")
  }),
  discounts: false,
  classifyLabTest: LabResult.classifyTest
}
