/**
 * How a provider_b (BioTrack-style) world is seeded: 16-digit barcodes that are also the ids,
 * 6-digit location licences, a facility's street address, no package metadata, manifests whose
 * id is a barcode and a stop number, and discounts on sales.
 *
 * @since 0.1.0
 */
import { LabResult } from "@tracebridge/core"
import type { Profile } from "../../Profile.js"
import { kindNumber, pad } from "../../Profile.js"

const tag = (kind: "package" | "plant", f: number, n: number) => `${kind === "package" ? "6" : "7"}${f}${pad(n, 14)}`

/**
 * @since 0.1.0
 * @category profiles
 */
export const profile: Profile = {
  license: (f, seed) => pad((seed % 90_000) * 10 + f + 100_000, 6),
  tag,
  numeric: (kind, f, n) => kindNumber(kind) * 100_000_000 + f * 1_000_000 + n,
  facilityDetails: (_company, _role, faker) => ({
    display_name: null,
    alias: null,
    address: faker.streetAddress(),
    city: faker.city(),
    zip: faker.zipCode()
  }),
  plantIds: (plantTag) => ({ providerId: plantTag, plantBatchId: null }),
  packageId: (packageTag) => packageTag,
  packageMetadata: () => ({}),
  touchMetadata: (metadata) => metadata,
  labResultIds: (_tested, _resultNo, n) => {
    const providerId = tag("package", 9, n)
    return { providerId, providerResultId: providerId }
  },
  transferIds: (n, _numeric, template) => {
    const providerId = `${tag("package", 8, n)}/1`
    return { providerId, manifest: template ? "" : providerId.split("/")[0]! }
  },
  discounts: true,
  classifyLabTest: LabResult.classifyTest
}
