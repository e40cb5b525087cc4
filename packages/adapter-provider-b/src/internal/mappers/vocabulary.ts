/**
 * BioTrack's code tables and the derivation rules that turn them into core vocabulary (the QA
 * panels are the descriptor's facts, shared with the emulator).
 */
import type { ProviderDescriptor } from "@tracebridge/core"
import { labPanels } from "../descriptor.js"

/** What an `inventorytype` code means: its BioTrack label, our category and its unit. */
export interface InventoryType {
  readonly label: string
  readonly category: string
  /** Bulk types are weighed in grams; unit types are counted. */
  readonly unit: "Grams" | "Each"
}

const t = (label: string, category: string, unit: "Grams" | "Each"): InventoryType => ({ label, category, unit })

/** The classic `inventorytype` codes (research: biotrack-reference.json). */
export const inventoryTypes: Readonly<Record<number, InventoryType>> = {
  5: t("Kief", "Concentrate", "Grams"),
  6: t("Flower", "Flower", "Grams"),
  7: t("Clone", "Clone", "Each"),
  9: t("Other Plant Material", "Shake/Trim", "Grams"),
  10: t("Seed", "Seeds", "Each"),
  11: t("Plant Tissue", "Plant", "Each"),
  12: t("Mature Plant", "Plant", "Each"),
  13: t("Flower Lot", "Flower", "Grams"),
  14: t("Other Plant Material Lot", "Shake/Trim", "Grams"),
  15: t("Bubble Hash", "Concentrate", "Grams"),
  16: t("Hash", "Concentrate", "Grams"),
  17: t("Hydrocarbon Wax", "Concentrate", "Grams"),
  18: t("CO2 Hash Oil", "Concentrate", "Grams"),
  19: t("Food Grade Solvent Extract", "Concentrate", "Grams"),
  20: t("Infused Dairy or Fat - Solid", "Infused", "Grams"),
  21: t("Infused Cooking Oil", "Infused", "Grams"),
  22: t("Infused Edible - Solid", "Edible", "Each"),
  23: t("Infused Edible - Liquid", "Edible", "Each"),
  24: t("Extract for Inhalation", "Vape", "Each"),
  25: t("Infused Topicals", "Topical", "Each"),
  26: t("Sample Jar", "Sample", "Each"),
  27: t("Waste", "Waste", "Grams"),
  28: t("Usable Marijuana", "Flower", "Each"),
  29: t("Wet Flower", "Flower", "Grams"),
  30: t("Marijuana Mix", "Shake/Trim", "Grams"),
  31: t("Marijuana Mix - Packaged", "Pre-Roll", "Each"),
  32: t("Marijuana Mix - Infused", "Pre-Roll", "Each")
}

/** The waste type: harvest rows of this type are waste, not yield. */
export const WASTE_TYPE = 27

/** The type of a code; unknown (state-specific) codes are "Other", in grams. */
export const inventoryType = (code: number): InventoryType =>
  inventoryTypes[code] ?? t(`Type ${code}`, "Other", "Grams")

/** A type code for a category (the first that has it), for writes that name a category. */
export const codeForCategory = (category: string): number | undefined => {
  const found = Object.entries(inventoryTypes).find(([, v]) => v.category.toLowerCase() === category.toLowerCase())
  return found === undefined ? undefined : Number(found[0])
}

/** Grams per unit of the spec's weight units; "Each" is not a weight. */
export const gramsPer: Readonly<Record<string, number>> = {
  Grams: 1,
  Milligrams: 0.001,
  Kilograms: 1000,
  Ounces: 28.349523125,
  Pounds: 453.59237
}

/** BioTrack's unit abbreviations. */
export const uom = (unit: "Grams" | "Each"): "g" | "each" => (unit === "Grams" ? "g" : "each")

/** `locationtype` labels. */
export const locationTypes: Readonly<Record<number, string>> = {
  1: "T1",
  2: "T2",
  3: "T3",
  4: "T1P",
  5: "T2P",
  6: "T3P",
  7: "P",
  8: "R",
  9: "Tribe",
  10: "R+MMJ",
  11: "CO-OP"
}

/** The QA panels by `type`: the descriptor's facts. */
export const panelTypes: Readonly<Record<number, ProviderDescriptor.LabPanel>> = labPanels

/** The panel type of a core category, for writes. */
export const panelTypeFor = (category: string): number | undefined => {
  const found = Object.entries(panelTypes).find(([, v]) => v.category === category)
  return found === undefined ? undefined : Number(found[0])
}

/** Epoch seconds as an ISO 8601 date (UTC). */
export const isoDate = (epoch: number | null): string | null =>
  epoch === null ? null : new Date(epoch * 1000).toISOString().slice(0, 10)

/** Epoch seconds as an ISO 8601 date-time (UTC, whole seconds). */
export const isoDateTime = (epoch: number | null): string | null =>
  epoch === null ? null : new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")

/** A sample's `result` as the package's lab testing state. */
export const labTestingState = (result: number | undefined): string =>
  result === undefined
    ? "NotSubmitted"
    : result === 1
    ? "TestPassed"
    : result === -1 || result === 2
    ? "TestFailed"
    : "SubmittedForTesting"

/** Rounds away binary noise (quantities are decimals with at most a few places). */
export const round = (n: number): number => Math.round(n * 1e6) / 1e6
