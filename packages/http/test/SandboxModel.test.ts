/**
 * Issue #30: no sequence of valid-looking calls breaks the sandbox. A stateful property test
 * (fast-check model-based commands) drives one sandbox connection per run through `/v1`, on each
 * provider, with random splits, transfers, lab results, scenarios, faults and resets, and checks
 * after every step:
 *
 * - never a 5xx, except the state system's own answers while a fault is on (502–504 `provider_*`);
 * - quantities conserve: the connection's packages hold, in all, what they held after the last
 *   reset (a split moves quantity, a transfer between its facilities moves packages, a lab sample
 *   is drawn from its package);
 * - no package is on two transfers still on their way (pending or in transit);
 * - every 201 reads back the same.
 *
 * Reproduce a failure with `MODEL_SEED=<seed>`; `MODEL_RUNS` sets the runs per provider (10), and
 * `MODEL_TRACE=<file>` appends each run's commands and answers to a file.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { appendFileSync } from "node:fs"
import { call, signIn, TestApp } from "./support/TestApp.js"

const SEED = Number(process.env["MODEL_SEED"] ?? 20261128)
const RUNS = Number(process.env["MODEL_RUNS"] ?? 10)
/** A file each run's commands and answers are appended to. */
const TRACE = process.env["MODEL_TRACE"]

type Answer = { readonly status: number; readonly body: any }

interface Real {
  readonly send: (method: string, path: string, json?: unknown) => Promise<Answer>
  readonly connection: string
  readonly facilities: ReadonlyArray<any>
  /** The total quantity the connection's packages hold, as after the last reset. */
  total: number
  readonly log: Array<string>
}

const root = (r: Real) => `/v1/connections/${r.connection}/facilities`

const listAll = async (r: Real, path: string): Promise<Array<any>> => {
  const out: Array<any> = []
  for (let page = 1;; page++) {
    const answer = await r.send("GET", `${path}${path.includes("?") ? "&" : "?"}per_page=100&page=${page}`)
    assert.isBelow(answer.status, 500, `${path}: ${JSON.stringify(answer.body)}`)
    if (answer.status !== 200) return out
    out.push(...answer.body.data)
    if (page * 100 >= answer.body.pagination.total) return out
  }
}

const packagesOf = async (r: Real) => {
  const all: Array<any> = []
  for (const f of r.facilities) all.push(...(await listAll(r, `${root(r)}/${f.id}/packages`)))
  return all
}

const totalOf = (packages: ReadonlyArray<any>) => packages.reduce((sum, p) => sum + p.quantity, 0)

/** The invariants that hold after every step. */
const invariants = async (r: Real) => {
  const packages = await packagesOf(r)
  assert.closeTo(totalOf(packages), r.total, 1e-6, `quantities conserve after ${r.log.join(" → ")}`)
  const away = new Map<string, string>()
  for (const f of r.facilities) {
    for (const status of ["pending", "in_transit"]) {
      for (const t of await listAll(r, `${root(r)}/${f.id}/transfers?status=${status}`)) {
        if (t.shipper_facility !== f.license_number) continue
        for (const line of t.packages) {
          const other = away.get(line.package_id)
          assert.isTrue(
            other === undefined || other === t.id,
            `package ${line.package_id} is on transfers ${other} and ${t.id} after ${r.log.join(" → ")}`
          )
          away.set(line.package_id, t.id)
        }
      }
    }
  }
}

/** How many writes were accepted, by kind (the runs must make some, or they prove little). */
const accepted = new Map<string, number>()

/** A 201 reads back the same; any answer is below 500. */
const created = async (r: Real, what: string, answer: Answer, resource: string, facilityId: string) => {
  assert.isBelow(answer.status, 500, `${what}: ${JSON.stringify(answer.body)}`)
  if (answer.status !== 201) return
  accepted.set(what, (accepted.get(what) ?? 0) + 1)
  const got = await r.send("GET", `${root(r)}/${facilityId}/${resource}/${encodeURIComponent(answer.body.data.id)}`)
  assert.strictEqual(got.status, 200, `${what} reads back: ${JSON.stringify(got.body)}`)
  assert.deepStrictEqual(got.body.data, answer.body.data, `${what} reads back the same`)
}

const pick = <A>(items: ReadonlyArray<A>, n: number): A | undefined =>
  items.length === 0 ? undefined : items[n % items.length]

class Split implements fc.AsyncCommand<object, Real> {
  constructor(readonly facility: number, readonly pkg: number, readonly fraction: number) {}
  check = () => true
  async run(_: object, r: Real) {
    const f = pick(r.facilities, this.facility)!
    const pkg = pick(
      (await listAll(r, `${root(r)}/${f.id}/packages?is_on_hold=false`)).filter((p) => p.quantity > 0),
      this.pkg
    )
    if (pkg === undefined) return
    const quantity = Math.max(1, Math.floor(pkg.quantity * this.fraction))
    const answer = await r.send("POST", `${root(r)}/${f.id}/packages`, {
      item_name: pkg.item_name,
      item_category: pkg.item_category,
      item_strain: pkg.item_strain,
      quantity,
      unit_of_measure: pkg.unit_of_measure,
      source_package_ids: [pkg.id]
    })
    r.log.push(`split ${quantity} of ${pkg.tag}: ${answer.status}`)
    await created(r, "split", answer, "packages", f.id)
    await invariants(r)
  }
  toString = () => `split(${this.facility}, ${this.pkg}, ${this.fraction})`
}

class Transfer implements fc.AsyncCommand<object, Real> {
  constructor(readonly from: number, readonly to: number, readonly pkg: number) {}
  check = () => true
  async run(_: object, r: Real) {
    const shipper = pick(r.facilities, this.from)!
    const recipient = pick(r.facilities.filter((f) => f.id !== shipper.id), this.to)!
    const pkg = pick(await listAll(r, `${root(r)}/${shipper.id}/packages?is_on_hold=false`), this.pkg)
    if (pkg === undefined) return
    const answer = await r.send("POST", `${root(r)}/${shipper.id}/transfers`, {
      transfer_type: "Transfer",
      shipper_facility: shipper.id,
      recipient_facility: recipient.license_number,
      packages: [{
        package_id: pkg.id,
        tag: pkg.tag,
        item_name: pkg.item_name,
        quantity: pkg.quantity,
        unit_of_measure: pkg.unit_of_measure
      }]
    })
    r.log.push(`transfer ${pkg.tag}: ${answer.status}`)
    await created(r, "transfer", answer, "transfers", shipper.id)
    await invariants(r)
  }
  toString = () => `transfer(${this.from}, ${this.to}, ${this.pkg})`
}

class LabResult implements fc.AsyncCommand<object, Real> {
  constructor(readonly facility: number, readonly pkg: number, readonly passed: boolean) {}
  check = () => true
  async run(_: object, r: Real) {
    const f = pick(r.facilities, this.facility)!
    const lab = r.facilities.find((x) => x.capabilities.includes("labs"))!
    const pkg = pick(await listAll(r, `${root(r)}/${f.id}/packages?is_on_hold=false`), this.pkg)
    if (pkg === undefined) return
    const answer = await r.send("POST", `${root(r)}/${f.id}/lab_results`, {
      package_id: pkg.id,
      lab_name: lab.name,
      overall_passed: this.passed,
      results: [
        { name: "THC", category: "potency", value: 21, unit: "%", passed: true, notes: null },
        {
          name: "Pesticides",
          category: "pesticides",
          value: this.passed ? 0 : 0.9,
          unit: "ppm",
          passed: this.passed,
          notes: null
        }
      ]
    })
    r.log.push(`lab result on ${pkg.tag}: ${answer.status}`)
    await created(r, "lab result", answer, "lab_results", f.id)
    await invariants(r)
  }
  toString = () => `labResult(${this.facility}, ${this.pkg}, ${this.passed})`
}

class Simulate implements fc.AsyncCommand<object, Real> {
  constructor(readonly scenario: string, readonly params: Record<string, unknown>) {}
  check = () => true
  async run(_: object, r: Real) {
    const answer = await r.send("POST", `/v1/sandbox/${r.connection}/simulate`, {
      scenario: this.scenario,
      params: this.params
    })
    r.log.push(`simulate ${this.scenario}: ${answer.status}`)
    assert.isBelow(answer.status, 500, `${this.scenario}: ${JSON.stringify(answer.body)}`)
    await invariants(r)
  }
  toString = () => `simulate(${this.scenario}, ${JSON.stringify(this.params)})`
}

class FaultBlip implements fc.AsyncCommand<object, Real> {
  constructor(readonly kind: "outage" | "rate_limited") {}
  check = () => true
  async run(_: object, r: Real) {
    const set = await r.send("PUT", `/v1/sandbox/${r.connection}/faults`, { kind: this.kind })
    assert.isBelow(set.status, 500, JSON.stringify(set.body))
    const read = await r.send("GET", `${root(r)}/${r.facilities[0].id}/packages?per_page=1`)
    // the state system's own trouble is a 502–504 provider_* error, never a 500
    assert.notStrictEqual(read.status, 500, JSON.stringify(read.body))
    if (read.status >= 500) assert.match(read.body.error.code, /^provider_/)
    const cleared = await r.send("DELETE", `/v1/sandbox/${r.connection}/faults`)
    assert.strictEqual(cleared.status, 200, JSON.stringify(cleared.body))
    r.log.push(`fault ${this.kind}: ${read.status}`)
    await invariants(r)
  }
  toString = () => `fault(${this.kind})`
}

class Reset implements fc.AsyncCommand<object, Real> {
  check = () => true
  async run(_: object, r: Real) {
    const answer = await r.send("POST", `/v1/sandbox/${r.connection}/reset`)
    assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
    r.log.push("reset")
    r.total = totalOf(await packagesOf(r))
    await invariants(r)
  }
  toString = () => "reset()"
}

const index = fc.nat({ max: 50 })

const commands = [
  fc.tuple(index, index, fc.double({ min: 0.1, max: 0.9, noNaN: true })).map(([f, p, q]) => new Split(f, p, q)),
  fc.tuple(index, index, index).map(([a, b, p]) => new Transfer(a, b, p)),
  fc.tuple(index, index, fc.boolean()).map(([f, p, passed]) => new LabResult(f, p, passed)),
  fc.oneof(
    fc.constant(new Simulate("transfer_arrived", {})),
    fc.constantFrom("received", "rejected").map((outcome) => new Simulate("transfer_completed", { outcome })),
    fc.constantFrom("pass", "fail").map((result) => new Simulate("lab_result_received", { result })),
    fc.boolean().map((onHold) => new Simulate("package_hold", { on_hold: onHold })),
    fc.constant(new Simulate("plant_phase_advanced", {}))
  ),
  fc.constantFrom("outage" as const, "rate_limited" as const).map((kind) => new FaultBlip(kind)),
  fc.constant(new Reset())
]

describe("the sandbox under random sequences of calls (issue #30)", () => {
  for (const provider of ["provider_a", "provider_b"] as const) {
    it.live(
      `never a 5xx, quantities conserve, one transfer per package, every 201 reads back (${provider})`,
      () =>
        Effect.gen(function*() {
          const me = yield* signIn
          const runtime = yield* Effect.runtime<Effect.Effect.Context<ReturnType<typeof call>>>()
          const send = (method: string, path: string, json?: unknown) =>
            Runtime.runPromise(runtime)(
              call(method as "GET", path, json === undefined ? { token: me.access } : { token: me.access, json })
            ) as Promise<Answer>
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(fc.commands(commands, { maxCommands: 16, size: "max" }), async (cmds) => {
                // a connection of its own per run
                const made = await send("POST", "/v1/sandbox/public_token/create", {
                  provider,
                  state: provider === "provider_a" ? "CO" : "HI"
                })
                const exchanged = await send("POST", "/v1/link/token/exchange", {
                  public_token: made.body.data.public_token
                })
                const real: Real = {
                  send,
                  connection: exchanged.body.data.connection_id,
                  facilities: [],
                  total: 0,
                  log: []
                }
                const facilities = await listAll(real, `${root(real)}`)
                const r: Real = { ...real, facilities }
                r.total = totalOf(await packagesOf(r))
                await fc.asyncModelRun(() => ({ model: {}, real: r }), cmds)
                if (TRACE !== undefined) appendFileSync(TRACE, `${String(cmds)}\n  ${r.log.join(" | ")}\n`)
              }),
              { seed: SEED, numRuns: RUNS, endOnFailure: true }
            )
          )
          for (const what of ["split", "transfer", "lab result"]) {
            assert.isAbove(accepted.get(what) ?? 0, 0, `no ${what} was accepted in ${RUNS} runs`)
          }
          accepted.clear()
        }).pipe(Effect.provide(TestApp)),
      600_000
    )
  }
})
