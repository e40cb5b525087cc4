/**
 * Branded identifiers, and the deterministic derivation of Tracebridge ids from provider ids.
 *
 * A resource id is `<prefix>_<base64url(provider ":" provider id)>`: it is stable across calls,
 * needs no lookup table, and can be decoded back to the provider id to serve a GET by id.
 * Connection ids are minted by the service instead (they name a stored link, not a provider object).
 *
 * @since 0.1.0
 */
import { Option, Schema } from "effect"
import { ProviderName } from "./ProviderName.js"

const idString = <B extends string>(brand: B, description: string) =>
  Schema.String.pipe(
    Schema.minLength(1),
    Schema.maxLength(200),
    Schema.brand(brand),
    Schema.annotations({ identifier: brand, description })
  )

/** @since 0.1.0 @category schemas */
export const ConnectionId = idString("ConnectionId", "Connection identifier")
/** @since 0.1.0 @category models */
export type ConnectionId = typeof ConnectionId.Type
/** @since 0.1.0 @category schemas */
export const FacilityId = idString("FacilityId", "Facility identifier")
/** @since 0.1.0 @category models */
export type FacilityId = typeof FacilityId.Type
/** @since 0.1.0 @category schemas */
export const PackageId = idString("PackageId", "Package identifier")
/** @since 0.1.0 @category models */
export type PackageId = typeof PackageId.Type
/** @since 0.1.0 @category schemas */
export const PlantId = idString("PlantId", "Plant identifier")
/** @since 0.1.0 @category models */
export type PlantId = typeof PlantId.Type
/** @since 0.1.0 @category schemas */
export const HarvestId = idString("HarvestId", "Harvest identifier")
/** @since 0.1.0 @category models */
export type HarvestId = typeof HarvestId.Type
/** @since 0.1.0 @category schemas */
export const LabResultId = idString("LabResultId", "Lab result identifier")
/** @since 0.1.0 @category models */
export type LabResultId = typeof LabResultId.Type
/** @since 0.1.0 @category schemas */
export const TransferId = idString("TransferId", "Transfer identifier")
/** @since 0.1.0 @category models */
export type TransferId = typeof TransferId.Type
/** @since 0.1.0 @category schemas */
export const SaleId = idString("SaleId", "Sale identifier")
/** @since 0.1.0 @category models */
export type SaleId = typeof SaleId.Type
/** @since 0.1.0 @category schemas */
export const SalesDeliveryId = idString("SalesDeliveryId", "Sales delivery identifier")
/** @since 0.1.0 @category models */
export type SalesDeliveryId = typeof SalesDeliveryId.Type
/** @since 0.1.0 @category schemas */
export const ItemId = idString("ItemId", "Item identifier")
/** @since 0.1.0 @category models */
export type ItemId = typeof ItemId.Type
/** @since 0.1.0 @category schemas */
export const StrainId = idString("StrainId", "Strain identifier")
/** @since 0.1.0 @category models */
export type StrainId = typeof StrainId.Type
/** @since 0.1.0 @category schemas */
export const LocationId = idString("LocationId", "Location identifier")
/** @since 0.1.0 @category models */
export type LocationId = typeof LocationId.Type
/** @since 0.1.0 @category schemas */
export const PatientId = idString("PatientId", "Patient identifier")
/** @since 0.1.0 @category models */
export type PatientId = typeof PatientId.Type

/**
 * The id prefix of each kind of provider object.
 *
 * @since 0.1.0
 * @category constants
 */
export const prefixes = {
  facility: "fac",
  package: "pkg",
  plant: "plt",
  harvest: "hrv",
  lab_result: "lab",
  transfer: "trf",
  sale: "sal",
  sales_delivery: "sdl",
  item: "itm",
  strain: "str",
  location: "loc",
  patient: "pat"
} as const

/**
 * A kind of provider object that has a derived id.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = keyof typeof prefixes

/**
 * The branded id type of each kind.
 *
 * @since 0.1.0
 * @category models
 */
export interface IdOf {
  readonly facility: FacilityId
  readonly package: PackageId
  readonly plant: PlantId
  readonly harvest: HarvestId
  readonly lab_result: LabResultId
  readonly transfer: TransferId
  readonly sale: SaleId
  readonly sales_delivery: SalesDeliveryId
  readonly item: ItemId
  readonly strain: StrainId
  readonly location: LocationId
  readonly patient: PatientId
}

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

const toBase64Url = (text: string): string => {
  let binary = ""
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

const fromBase64Url = (text: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"))
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

/**
 * The Tracebridge id of a provider object: the same inputs always give the same id.
 *
 * @example
 * ```ts
 * import { Ids } from "@tracebridge/core"
 * Ids.make("package", "provider_a", "56789") // "pkg_cHJvdmlkZXJfYTo1Njc4OQ"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <K extends Kind>(kind: K, provider: ProviderName, providerId: string): IdOf[K] =>
  `${prefixes[kind]}_${toBase64Url(`${provider}:${providerId}`)}` as IdOf[K]

/**
 * What a derived id stands for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Decoded {
  readonly kind: Kind
  readonly provider: ProviderName
  readonly providerId: string
}

const kindByPrefix = new Map<string, Kind>(
  (Object.entries(prefixes) as ReadonlyArray<[Kind, string]>).map(([kind, prefix]) => [prefix, kind])
)
const isProviderName = Schema.is(ProviderName)

/**
 * Reads a derived id back into its kind, provider and provider id. Anything that was not made
 * by {@link make} (a typo, another kind's id, a forged value) gives `None`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (id: string): Option.Option<Decoded> => {
  const underscore = id.indexOf("_")
  if (underscore <= 0 || id.length > 400) return Option.none()
  const kind = kindByPrefix.get(id.slice(0, underscore))
  if (kind === undefined) return Option.none()
  const payload = fromBase64Url(id.slice(underscore + 1))
  if (payload === undefined) return Option.none()
  const colon = payload.indexOf(":")
  const provider = payload.slice(0, colon)
  const providerId = payload.slice(colon + 1)
  if (colon <= 0 || providerId.length === 0 || !isProviderName(provider)) return Option.none()
  // Only canonical encodings are accepted, so that one object never has two ids.
  if (make(kind, provider, providerId) !== id) return Option.none()
  return Option.some({ kind, provider, providerId })
}

/**
 * Decodes an id that must be of the given kind and provider.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeAs = (kind: Kind, provider: ProviderName, id: string): Option.Option<string> =>
  Option.filterMap(
    decode(id),
    (d) => d.kind === kind && d.provider === provider ? Option.some(d.providerId) : Option.none()
  )
