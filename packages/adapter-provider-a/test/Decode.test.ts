/**
 * The compiled wire decoders (internal/decode.ts) against Effect's own: on every fixture, on every
 * fixture with one field replaced by each value of a pool, and on arbitrary inputs, both give the
 * same result (the same value, or a failure: the compiled decoder never accepts what Effect
 * refuses). The mappers' output, which `normalizeSync` no longer validates by default, is held to
 * the core schemas on the same inputs.
 */
import { assert, describe, it } from "@effect/vitest"
import { normalizeSync } from "@tracebridge/adapter-provider-a"
import { Ids } from "@tracebridge/core"
import { Arbitrary, Either, FastCheck, Schema } from "effect"
import { decodeCompiled, isCompiled } from "../src/internal/decode.js"
import { canonicalize } from "../src/internal/keys.js"
import * as Catalog from "../src/internal/wire/Catalog.js"
import { Paged } from "../src/internal/wire/common.js"
import * as Facility from "../src/internal/wire/Facility.js"
import * as Harvest from "../src/internal/wire/Harvest.js"
import * as LabTest from "../src/internal/wire/LabTest.js"
import * as Package from "../src/internal/wire/Package.js"
import * as Plant from "../src/internal/wire/Plant.js"
import * as Sale from "../src/internal/wire/Sale.js"
import * as Transfer from "../src/internal/wire/Transfer.js"
import { fixture } from "./support/fixtures.js"

const facility_id = Ids.make("facility", "provider_a", "CO-TEST-0001")
const ctx = { facility_id, state: "CO" }

/** Every wire schema, by module and name. */
const schemas: Array<[string, Schema.Schema<any, any>]> = [
  ...[Catalog, Facility, Harvest, LabTest, Package, Plant, Sale, Transfer].flatMap((module) =>
    Object.entries(module).filter((entry): entry is [string, Schema.Schema<any, any>] => Schema.isSchema(entry[1]))
  ),
  ["Paged(PackageV2)", Paged(Package.PackageV2)]
]

/** The fixtures of each wire schema (and of the normalizer that maps it, when there is one). */
const cases: Array<[string, Schema.Schema<any, any>, ((raw: unknown, check: boolean) => unknown) | undefined]> = [
  ["package", Package.PackageV2, (raw, check) => normalizeSync.package(raw, { ...ctx, checkOutput: check })],
  ["package-v1", Package.PackageV2, (raw, check) => normalizeSync.package(raw, { ...ctx, checkOutput: check })],
  ["plant-vegetative", Plant.PlantV2, (raw, check) => normalizeSync.plant(raw, { ...ctx, checkOutput: check })],
  ["plant-flowering", Plant.PlantV2, (raw, check) => normalizeSync.plant(raw, { ...ctx, checkOutput: check })],
  ["plant-inactive", Plant.PlantV2, (raw, check) => normalizeSync.plant(raw, { ...ctx, checkOutput: check })],
  ["harvest", Harvest.HarvestV2, (raw, check) => normalizeSync.harvest(raw, { ...ctx, checkOutput: check })],
  ["item", Catalog.ItemV2, (raw, check) => normalizeSync.item(raw, { ...ctx, checkOutput: check })],
  ["strain", Catalog.StrainV2, (raw, check) => normalizeSync.strain(raw, { ...ctx, checkOutput: check })],
  ["location", Catalog.LocationV2, (raw, check) => normalizeSync.location(raw, { ...ctx, checkOutput: check })],
  ["patient", Catalog.PatientV2, (raw, check) => normalizeSync.patient(raw, { ...ctx, checkOutput: check })],
  ["sales-receipt", Sale.SalesReceipt, (raw, check) => normalizeSync.sale(raw, { ...ctx, checkOutput: check })],
  [
    "sales-delivery",
    Sale.SalesDeliveryV2,
    (raw, check) => normalizeSync.salesDelivery(raw, { ...ctx, checkOutput: check })
  ],
  [
    "labtest-row",
    LabTest.LabTestResultRow,
    (raw, check) => normalizeSync.labResults([raw], { ...ctx, checkOutput: check })
  ],
  ["transfer-incoming", Transfer.TransferRow, undefined],
  ["transfer-outgoing", Transfer.TransferRow, undefined],
  ["delivery-package", Transfer.DeliveryPackage, undefined]
]

/** Values a field is replaced with: every JSON type, Metrc's dates, and absence. */
const pool: Array<unknown> = [
  undefined,
  null,
  "",
  "x",
  "2024-01-31",
  "2024-01-31T10:00:00",
  "0001-01-01T00:00:00",
  0,
  -1.5,
  true,
  false,
  {},
  [],
  [1],
  { Name: "n" }
]

/** Both decoders: the same success, or both fail. */
const same = (schema: Schema.Schema<any, any>, input: unknown, what: string) => {
  const effect = Schema.decodeUnknownEither(schema)(input)
  const compiled = decodeCompiled(schema)(input)
  assert.strictEqual(Either.isRight(compiled), Either.isRight(effect), what)
  if (Either.isRight(compiled) && Either.isRight(effect)) assert.deepStrictEqual(compiled.right, effect.right, what)
  return effect
}

/**
 * What `normalizeSync` maps without checking its output conforms to its core schema (exact
 * fields), and the check (`checkOutput`) gives the same object; or both refuse the input.
 */
const mapsOrRefuses = (normalize: (raw: unknown, check: boolean) => unknown, input: unknown, what: string) => {
  let output: unknown
  try {
    output = normalize(input, false)
  } catch (e) {
    assert.strictEqual((e as { _tag?: string })._tag, "ProviderInvalidResponse", `${what}: ${String(e)}`)
    assert.isTrue(Either.isLeft(Either.try(() => normalize(input, true))), what)
    return
  }
  assert.deepStrictEqual(normalize(input, true), output, what)
}

describe("compiled wire decoders", () => {
  it("compile the schemas normalizeSync and the list calls decode", () => {
    for (const schema of [Package.PackageV2, Plant.PlantV2, Harvest.HarvestV2, Paged(Package.PackageV2)]) {
      assert.isTrue(isCompiled(schema), String(schema.ast))
    }
  })

  it("decode every fixture as Effect does, and each fixture with any one field replaced", () => {
    for (const [name, schema, normalize] of cases) {
      const raw = fixture(name)
      const base = Array.isArray(raw) ? raw[0] : raw
      assert.isTrue(Either.isRight(same(schema, base, name)), name)
      if (normalize !== undefined) normalize(base, true)
      for (const key of Object.keys(base)) {
        for (const value of pool) {
          const input = { ...base }
          if (value === undefined) delete input[key]
          else input[key] = value
          const what = `${name}: ${key} = ${JSON.stringify(value)}`
          same(schema, input, what)
          if (normalize !== undefined) mapsOrRefuses(normalize, input, what)
        }
      }
    }
  })

  it("decode arbitrary inputs as Effect does", () => {
    for (const [name, schema] of schemas) {
      const arbitrary = Arbitrary.make(Schema.encodedSchema(schema))
      FastCheck.assert(
        FastCheck.property(arbitrary, (input) => {
          same(schema, input, name)
        }),
        { numRuns: 50, seed: 42 }
      )
    }
  })

  it("decode the fixtures of every schema whatever the key casing", () => {
    for (const [name] of cases) {
      const raw = fixture(name)
      const base = Array.isArray(raw) ? raw[0] : raw
      const camel = Object.fromEntries(Object.entries(base).map(([k, v]) => [k[0]!.toLowerCase() + k.slice(1), v]))
      assert.deepStrictEqual(canonicalize(camel), base, name)
      assert.strictEqual(canonicalize(base), base, `${name}: canonical input is not copied`)
    }
  })

  it("normalizeSync checks its output against the core schema when asked", () => {
    const pkg = normalizeSync.package(fixture("package"), ctx)
    assert.deepStrictEqual(normalizeSync.package(fixture("package"), { ...ctx, checkOutput: true }), pkg)
    // An infinite quantity (JSON.parse gives one for 1e400): the wire's numbers are finite, so it
    // is refused as the provider's fault, naming the wire field, with or without the output check.
    const infinite = { ...fixture("package"), Quantity: Infinity }
    assert.throws(() => normalizeSync.package(infinite, ctx), /Quantity/)
    assert.throws(() => normalizeSync.package(infinite, { ...ctx, checkOutput: true }), /Quantity/)
  })
})
