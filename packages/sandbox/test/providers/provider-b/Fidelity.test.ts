/**
 * The provider_b emulator against BioTrack's recorded answers: every action it answers (login,
 * the `sync_*` tables, `inventory_qa_check`, the writes) and its error envelopes, checked against
 * the fixtures in `test/fixtures/provider-b/` (one per action, `errors.json` for the failures;
 * each made from the research recordings and naming its source in `_source`).
 *
 * For every object of an answer a fixture describes (the answer itself, the rows of a table, a
 * nested object), it checks:
 *
 * - **field names**: the emulator's keys are the union of the recorded ones plus the fixture's
 *   `extra` keys, each addition with its reason (`keys.why`); `open` objects (QA panels) only
 *   need their `required` keys;
 * - **JSON value types per field**: each value's type is one the recordings show for that field,
 *   or one the fixture adds (`also`, with the reason);
 * - **documented formats**: every non-null value, recorded or emulated, meets the field's format
 *   (16-digit barcodes, decimal strings, two-decimal money, epoch seconds, "0"/"1" flags …);
 * - that every answer is HTTP 200, and for the failures, the recorded wording where BioTrack's
 *   is recorded.
 *
 * The recordings are also held to the formats, so that a format that does not fit them fails.
 */
import { assert, describe, it } from "@effect/vitest"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Effect, Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Emulator from "../../../src/providers/provider-b/Emulator.js"
import * as Rows from "../../../src/providers/provider-b/rows.js"

// ---- fixtures ---------------------------------------------------------------------------------------

const JsonType = Schema.Literal("string", "number", "boolean", "null", "array", "object")
type JsonType = typeof JsonType.Type

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const jsonType = (u: unknown): JsonType =>
  u === null ? "null" : Array.isArray(u) ? "array" : (typeof u as "string" | "number" | "boolean" | "object")

const integer = (u: unknown): boolean =>
  (typeof u === "number" && Number.isInteger(u)) || (typeof u === "string" && /^-?\d+$/.test(u))
const matches = (pattern: RegExp) => (u: unknown): boolean => typeof u === "string" && pattern.test(u)
const barcode = matches(/^\d{16}$/)
const inCodes = (...codes: ReadonlyArray<number>) => (u: unknown): boolean => integer(u) && codes.includes(Number(u))

/** The documented value formats (research providers.md 2.2 to 2.4 and the recordings). */
const formats: Readonly<Record<string, (u: unknown) => boolean>> = {
  /** `success` of an answer that succeeded. */
  one: (u: unknown) => u === 1,
  /** `success` of a failure. */
  zero: (u: unknown) => u === 0,
  text: (u: unknown) => typeof u === "string" && u.trim().length > 0,
  barcode,
  /** One barcode or a list of them. */
  barcodes: (u: unknown) => barcode(u) || (Array.isArray(u) && u.length > 0 && u.every(barcode)),
  integer,
  /** A number, or a string of one without exponent (`"300.00"`, `"1"`). */
  decimal: (u: unknown) =>
    (typeof u === "number" && Number.isFinite(u)) || (typeof u === "string" && /^-?\d+(\.\d+)?$/.test(u)),
  money: matches(/^-?\d+\.\d{2}$/),
  /** Unix epoch seconds, a number or a string of digits. */
  epoch: (u: unknown) =>
    (typeof u === "number" && Number.isInteger(u) && u >= 1e9 && u < 1e10) || matches(/^\d{10}$/)(u),
  flag: (u: unknown) => u === "0" || u === "1" || u === 0 || u === 1,
  /** A numeric id (transaction, room, stop), a positive whole number or a string of digits. */
  id: (u: unknown) => (typeof u === "number" && Number.isInteger(u) && u > 0) || matches(/^\d+$/)(u),
  /** A licence ("location"): digits, sometimes after a letter (`"R999999"`). */
  license: matches(/^[A-Z]?\d{3,9}$/),
  ubi: matches(/^\d{9}$/),
  sessionid: matches(/^[0-9a-f]{64}$/),
  /** A date as MM/DD/YYYY (`transporter_dob`). */
  mdy: matches(/^\d{2}\/\d{2}\/\d{4}$/),
  state: matches(/^[A-Z]{2}$/),
  zip: matches(/^\d{5}(-\d{4})?$/),
  /** `vendor.locationtype`: 1 T1 … 11 CO-OP. */
  locationtype: (u: unknown) => integer(u) && Number(u) >= 1 && Number(u) <= 11,
  /** What a harvest yields: 6 flower, 9 other plant material, 27 waste, 29 wet flower. */
  derivativetype: inCodes(6, 9, 27, 29),
  /** A sample's result: 0 pending, 1 passed, -1 failed. */
  result: inCodes(-1, 0, 1),
  /** A QA panel type, 1 moisture … 8 heavy metals. */
  panel: (u: unknown) => integer(u) && Number(u) >= 1 && Number(u) <= 8
}
const Format = Schema.String.pipe(Schema.filter((name) => Object.hasOwn(formats, name) || `no format ${name}`))

const Reason = Schema.String.pipe(Schema.minLength(10))
const Also = Schema.Struct({ types: Schema.NonEmptyArray(JsonType), why: Reason })
const Keys = Schema.Union(
  Schema.Struct({
    extra: Schema.Array(Schema.String),
    documented: Schema.optional(Schema.Array(Schema.String)),
    why: Reason
  }),
  Schema.Struct({ open: Schema.Literal(true), required: Schema.Array(Schema.String), why: Reason })
)
const Spec = Schema.Struct({
  keys: Keys,
  also: Schema.optional(Schema.Record({ key: Schema.String, value: Also })),
  formats: Schema.optional(Schema.Record({ key: Schema.String, value: Format }))
})
type Spec = typeof Spec.Type
const Objects = Schema.Record({ key: Schema.String, value: Spec })
const Body = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const ActionFixture = Schema.Struct({
  _source: Reason,
  action: Schema.String,
  request: Body,
  recorded: Schema.NonEmptyArray(Body),
  objects: Objects
})
const ErrorsFixture = Schema.Struct({
  _source: Reason,
  cases: Schema.NonEmptyArray(Schema.Struct({
    case: Schema.String,
    _source: Reason,
    request: Body,
    recorded: Body,
    text: Schema.Boolean,
    objects: Objects
  }))
})

const folder = fileURLToPath(new URL("../../fixtures/provider-b/", import.meta.url))
const read = (file: string): unknown => JSON.parse(readFileSync(`${folder}${file}`, "utf8"))
const files = readdirSync(folder).filter((f) => f.endsWith(".json")).sort()
const actionFixtures = files.filter((f) => f !== "errors.json").map((f) =>
  Schema.decodeUnknownSync(ActionFixture)(read(f))
)
const errors = Schema.decodeUnknownSync(ErrorsFixture)(read("errors.json"))

// ---- the checks -------------------------------------------------------------------------------------

/** The objects at a path: `""` the answer, `table[]` the rows of a table, `data.test[]` nested. */
const objectsAt = (answer: unknown, path: string): Array<Record<string, unknown>> => {
  let found: Array<unknown> = [answer]
  for (const segment of path === "" ? [] : path.split(".")) {
    const many = segment.endsWith("[]")
    const key = many ? segment.slice(0, -2) : segment
    found = found.flatMap((o) => {
      const value = isObject(o) ? o[key] : undefined
      if (!many) return [value]
      return Array.isArray(value) ? value : isObject(value) ? Object.values(value) : []
    })
  }
  return found.filter(isObject)
}

/** What is wrong with the emulator's objects at one path, against the recorded ones and the spec. */
const problemsOf = (
  path: string,
  spec: Spec,
  recorded: ReadonlyArray<Record<string, unknown>>,
  emulated: ReadonlyArray<Record<string, unknown>>
): Array<string> => {
  const problems = new Map<string, string>()
  const report = (key: string, message: string) => {
    if (!problems.has(key)) problems.set(key, message)
  }
  const at = (field: string) => (path === "" ? field : `${path}.${field}`)
  if (emulated.length === 0) return [`the emulator answered no ${path === "" ? "body" : path}`]

  const recordedTypes = new Map<string, Set<JsonType>>()
  for (const o of recorded) {
    for (const [k, v] of Object.entries(o)) recordedTypes.set(k, (recordedTypes.get(k) ?? new Set()).add(jsonType(v)))
  }
  const also = spec.also ?? {}
  for (const [field, declared] of Object.entries(also)) {
    if (field !== "*" && declared.types.every((t) => recordedTypes.get(field)?.has(t))) {
      report(`also ${field}`, `fixture: also.${field} adds no type the recordings lack`)
    }
  }

  // field names
  const keys = spec.keys
  if ("open" in keys) {
    for (const o of emulated) {
      for (const k of keys.required) if (!(k in o)) report(`missing ${k}`, `${at(k)}: missing`)
    }
  } else {
    const known = new Set([...recordedTypes.keys(), ...(keys.documented ?? [])])
    for (const k of keys.extra) if (known.has(k)) report(`extra ${k}`, `fixture: extra key ${k} is recorded`)
    const expected = new Set([...known, ...keys.extra])
    for (const o of emulated) {
      for (const k of expected) {
        if (!(k in o)) report(`missing ${k}`, `${at(k)}: recorded, not answered by the emulator`)
      }
      for (const k of Object.keys(o)) {
        if (!expected.has(k)) {
          report(`unexpected ${k}`, `${at(k)}: answered by the emulator, neither recorded nor extra`)
        }
      }
    }
  }

  // JSON value types
  for (const o of emulated) {
    for (const [k, v] of Object.entries(o)) {
      const declared = also[k]?.types ?? (recordedTypes.has(k) ? [] : also["*"]?.types ?? [])
      const allowed = new Set([...(recordedTypes.get(k) ?? []), ...declared])
      if (allowed.size === 0) report(`type ${k}`, `${at(k)}: no recorded or declared type`)
      else if (!allowed.has(jsonType(v))) {
        report(
          `type ${k} ${jsonType(v)}`,
          `${at(k)}: the emulator answers ${jsonType(v)} (${JSON.stringify(v)}), recorded or declared: ${
            [...allowed].join(", ")
          }`
        )
      }
    }
  }

  // documented formats, of the recordings and of the emulator
  for (const [who, objects] of [["recorded", recorded], ["emulator", emulated]] as const) {
    for (const o of objects) {
      for (const [k, v] of Object.entries(o)) {
        const format = spec.formats?.[k] ?? (recordedTypes.has(k) || also[k] ? undefined : spec.formats?.["*"])
        if (v === null || format === undefined || formats[format]!(v)) continue
        report(`${who} format ${k}`, `${who}: ${at(k)} = ${JSON.stringify(v)} is not ${format}`)
      }
    }
  }
  return [...problems.values()]
}

/** Every problem of an answer against a fixture's recordings. */
const check = (
  objects: Readonly<Record<string, Spec>>,
  recorded: ReadonlyArray<unknown>,
  answer: unknown
): Array<string> =>
  Object.entries(objects).flatMap(([path, spec]) =>
    problemsOf(path, spec, recorded.flatMap((r) => objectsAt(r, path)), objectsAt(answer, path))
  )

// ---- the emulator -----------------------------------------------------------------------------------

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 60_000
const STATE = "HI"
const LOGIN = "000000000:user_good"
const URL_B = SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_b", STATE)
const { good } = Registry.get("provider_b").logins

interface Answer {
  readonly status: number
  readonly body: Record<string, unknown>
}

/** Fills `{{name}}` placeholders in a request. */
const fill = (u: unknown, vars: Readonly<Record<string, string>>): unknown => {
  if (typeof u === "string") {
    const name = /^\{\{(\w+)\}\}$/.exec(u)?.[1]
    if (name === undefined) return u
    const value = vars[name]
    if (value === undefined) throw new Error(`no value for {{${name}}}`)
    return value
  }
  if (Array.isArray(u)) return u.map((x) => fill(x, vars))
  if (isObject(u)) return Object.fromEntries(Object.entries(u).map(([k, v]) => [k, fill(v, vars)]))
  return u
}

/** A fresh sandbox, a session, and the values the fixtures' placeholders stand for. */
const setup = Effect.gen(function*() {
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: REFERENCE,
    now: () => NOW
  })
  const handler = SandboxServer.makeHandler(sandbox)
  const world = sandbox.world("provider_b", STATE, LOGIN)
  const facility = (role: string) => world.facilities.find((d) => d.role === role)!
  const cultivator = facility("cultivation")
  const lots = cultivator.packages.filter((p) =>
    !p.is_on_hold && p.item_category === "Flower" && p.unit_of_measure === "Grams" && p.quantity >= 20
  )
  const lot = lots[0]!
  const post = (body: unknown): Effect.Effect<Answer> =>
    Effect.promise(async () => {
      const response = await handler(new Request(URL_B, { method: "POST", body: JSON.stringify(body) }))
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    })
  const loggedIn = yield* post({
    API: "4.0",
    action: "login",
    license_number: good.ubi,
    username: good.username,
    password: good.password
  })
  const labLoggedIn = yield* post({
    API: "4.0",
    action: "login",
    license_number: good.ubi,
    username: `lab:${good.username}`,
    password: good.password
  })
  const judged = Rows.samples(world, [], new Map()).find((s) => (s.judged?.results.length ?? 0) > 0)!
  const vars: Record<string, string> = {
    ubi: good.ubi!,
    username: good.username!,
    password: good.password!,
    sessionid: String(loggedIn.body["sessionid"]),
    labsessionid: String(labLoggedIn.body["sessionid"]),
    lot: lot.tag,
    other: lots[1]!.tag,
    strain: lot.item_strain ?? "",
    product: cultivator.items.find((i) => i.name !== lot.item_name)!.name,
    location: cultivator.facility.license_number,
    recipient: facility("retail").facility.license_number,
    lab: facility("testing").facility.license_number,
    judged: judged.barcode
  }
  /** Sends a fixture's request (or any body) with the placeholders filled. */
  const send = (request: unknown) => post(fill(request, vars))
  /** Sends a request that must succeed (a write the checked call needs done first). */
  const prepare = (request: unknown) =>
    Effect.tap(send(request), (answer) => assert.strictEqual(answer.body["success"], 1, JSON.stringify(answer.body)))
  const fixture = (action: string) => actionFixtures.find((f) => f.action === action)!
  /** Runs another action's fixture request first and keeps a value of its answer. */
  const before = (action: string, name: string, take: (body: Record<string, unknown>) => unknown) =>
    Effect.map(prepare(fixture(action).request), (answer) => {
      vars[name] = String(take(answer.body))
    })
  return { sandbox, world, vars, send, prepare, before, fixture }
})

/** The writes a fixture's action needs done first, and the state the sync tables are read in. */
const arrange = (
  action: string,
  s: Effect.Effect.Success<typeof setup>
): Effect.Effect<void> => {
  const sample = s.before("inventory_qa_sample", "sample", (b) => (b["barcode_id"] as ReadonlyArray<string>)[0])
  switch (action) {
    case "inventory_qa_sample_results":
      return sample
    case "inventory_transfer_outbound":
      return s.before("inventory_manifest", "manifest", (b) => b["manifest_id"])
    default:
      if (!action.startsWith("sync_")) return Effect.void
      // A world with every kind of row: a pending sample, a lot split from another (a parent),
      // and a manifest that has not left, besides the seeded received, rejected and in-transit ones.
      return Effect.all([
        s.prepare({
          API: "4.0",
          action: "inventory_qa_sample",
          sessionid: "{{sessionid}}",
          barcodeid: "{{other}}",
          lab_id: "{{lab}}",
          use: 1
        }),
        s.prepare(s.fixture("inventory_split").request),
        s.prepare(s.fixture("inventory_manifest").request)
      ], { discard: true })
  }
}

describe("provider_b emulator fidelity (recorded BioTrack answers)", () => {
  it("has a fixture for every action the emulator answers, and for nothing else", () => {
    assert.deepStrictEqual(actionFixtures.map((f) => f.action).sort(), [...Emulator.actions].sort())
  })

  for (const fixture of actionFixtures) {
    it.effect(fixture.action, () =>
      Effect.gen(function*() {
        const s = yield* setup
        yield* arrange(fixture.action, s)
        const answer = yield* s.send(fixture.request)
        assert.strictEqual(answer.status, 200)
        assert.strictEqual(answer.body["success"], 1, JSON.stringify(answer.body))
        assert.deepStrictEqual(check(fixture.objects, fixture.recorded, answer.body), [])
      }))
  }

  for (const c of errors.cases) {
    it.effect(`error: ${c.case}`, () =>
      Effect.gen(function*() {
        const s = yield* setup
        if (c.case === "missing privilege") {
          Emulator.failNext(s.sandbox, {
            _tag: "Failure",
            action: "inventory_qa_check",
            error: String(c.recorded["error"]),
            errorcode: Number(c.recorded["errorcode"])
          })
        }
        if (c.request["action"] === "inventory_qa_sample_results") yield* arrange(c.request["action"], s)
        const answer = yield* s.send(c.request)
        assert.strictEqual(answer.status, 200)
        assert.deepStrictEqual(check(c.objects, [c.recorded], answer.body), [])
        if (c.text) assert.strictEqual(answer.body["error"], c.recorded["error"])
      }))
  }
})
