import type { ProviderName } from "@tracebridge/core"

/**
 * How a provider spells identifiers, so that a world's records carry exactly the ids its adapter
 * derives from the wire. `n` counts within a facility; `f` is the facility's index in the world.
 */
export interface Profile {
  readonly license: (f: number, seed: number) => string
  readonly tag: (kind: "package" | "plant", f: number, n: number) => string
  readonly numeric: (kind: string, f: number, n: number) => number
}

const pad = (n: number, width: number) => String(n).padStart(width, "0")
const kinds: Record<string, number> = {
  package: 1,
  plant: 2,
  harvest: 3,
  lab: 4,
  transfer: 5,
  sale: 6,
  delivery: 7,
  item: 8,
  strain: 1,
  location: 2,
  patient: 3
}

export const profiles: Record<ProviderName.ProviderName, Profile> = {
  // Metrc: numeric Ids, 24-character labels, licence numbers like "SBX-12345-3".
  provider_a: {
    license: (f, seed) => `SBX-${pad(seed % 100_000, 5)}-${f + 1}`,
    tag: (kind, f, n) => `1A4${kind === "package" ? "0" : "9"}${pad(f, 2)}${pad(n, 18)}`,
    numeric: (kind, f, n) => (kinds[kind] ?? 9) * 100_000_000 + f * 1_000_000 + n
  },
  // BioTrack: 16-digit barcodes, 6-digit location licences.
  provider_b: {
    license: (f, seed) => pad((seed % 90_000) * 10 + f + 100_000, 6),
    tag: (kind, f, n) => `${kind === "package" ? "6" : "7"}${f}${pad(n, 14)}`,
    numeric: (kind, f, n) => (kinds[kind] ?? 9) * 100_000_000 + f * 1_000_000 + n
  }
}
