/**
 * Issue #19, end to end through `/v1` on sandbox connections of both providers:
 * - `shipper_facility` and `recipient_facility` take the facility's `fac_…` id, its licence number
 *   or its exact name (DECISIONS "Transfer parties"); an unknown id, a name of no facility, or a
 *   shipper that is not the facility the transfer is made at is a 400 `invalid_parameter` naming
 *   the field in `param`;
 * - a line's `quantity` is what the recorded transfer shows. Both state systems ship whole
 *   packages (a Metrc template lists `PackageLabel`s, a BioTrack manifest stop lists barcodes), so a
 *   line of part of a package is a 400 at `packages.N.quantity` telling to split first, and the
 *   split-off package then ships with exactly that quantity; more than a package holds is a 422
 *   `insufficient_quantity`.
 *
 * Issue #30: what a state system refuses is refused, naming the field, and changes nothing: the
 * shipper as its own recipient, an arrival before its departure, a licence the state system does
 * not know (400 at `recipient_facility`), a package already on a transfer on its way (DECISIONS:
 * 422 `package_in_transfer`); a transfer to another licensee of the world arrives without a 500.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

const providers = ["provider_a", "provider_b"] as const

/** A linked sandbox connection, its facilities, the shipper's path and packages to ship. */
const linked = (provider: (typeof providers)[number]) =>
  Effect.gen(function*() {
    const me = yield* signIn
    const connection = yield* linkSandbox(me.access, provider)
    const root = `/v1/connections/${connection.connection_id}/facilities`
    const facilities: Array<any> = (yield* call("GET", `${root}?per_page=100`, { token: me.access })).body.data
    const shipper = facilities.find((f) => f.capabilities.includes("cultivation")) ?? facilities[0]
    const recipient = facilities.find((f) => f.id !== shipper.id)
    const base = `${root}/${shipper.id}`
    // packages free to ship: not on a transfer still on its way (a package goes on one at a time)
    const away = new Set<string>()
    for (const status of ["pending", "in_transit"]) {
      const open = yield* call("GET", `${base}/transfers?status=${status}&per_page=100`, { token: me.access })
      for (const t of open.body.data) for (const line of t.packages) away.add(line.package_id)
    }
    const packages: Array<any> = (yield* call("GET", `${base}/packages?is_on_hold=false&per_page=100`, {
      token: me.access
    })).body.data.filter((p: any) => p.quantity >= 2 && !away.has(p.id))
    const transfers = Effect.map(
      call("GET", `${base}/transfers?per_page=100`, { token: me.access }),
      (answer) => answer.body.pagination.total as number
    )
    const post = (body: Record<string, unknown>) => call("POST", `${base}/transfers`, { token: me.access, json: body })
    return { token: me.access, base, shipper, recipient, packages, transfers, post }
  })

const transferOf = (shipper: string, recipient: string, pkg: any, quantity: number = pkg.quantity) => ({
  transfer_type: "Wholesale",
  shipper_facility: shipper,
  recipient_facility: recipient,
  packages: [{
    package_id: pkg.id,
    tag: pkg.tag,
    item_name: pkg.item_name,
    quantity,
    unit_of_measure: pkg.unit_of_measure
  }]
})

describe("Transfer parties and line quantities (issue #19)", () => {
  for (const provider of providers) {
    it.live(`refuses what a state system refuses, naming the field, and changes nothing (${provider})`, () =>
      Effect.gen(function*() {
        const c = yield* linked(provider)
        const pkg = c.packages[0]
        const before = yield* c.transfers
        const self = yield* c.post(transferOf(c.shipper.id, c.shipper.license_number, pkg))
        assert.strictEqual(self.status, 400, JSON.stringify(self.body))
        assert.strictEqual(self.body.error.param, "recipient_facility")
        const backwards = yield* c.post({
          ...transferOf(c.shipper.id, c.recipient.id, pkg),
          estimated_departure: "2026-06-02T10:00:00Z",
          estimated_arrival: "2026-06-01T10:00:00Z"
        })
        assert.strictEqual(backwards.status, 400, JSON.stringify(backwards.body))
        assert.strictEqual(backwards.body.error.param, "estimated_arrival")
        assert.include(backwards.body.error.message, "before")
        assert.strictEqual(yield* c.transfers, before, "a refused transfer changed nothing")
        const first = yield* c.post(transferOf(c.shipper.id, c.recipient.id, pkg))
        assert.strictEqual(first.status, 201, JSON.stringify(first.body))
        // another licensee of the world: the shipper of the incoming transfer from outside
        const incoming = yield* call("GET", `${c.base.replace(/\/facilities\/.*$/, "/facilities")}?per_page=100`, {
          token: c.token
        })
        const own = new Set(incoming.body.data.map((f: any) => f.license_number))
        let licensee: string | undefined
        for (const f of incoming.body.data) {
          const ts = yield* call("GET", `${c.base.replace(/[^/]+$/, f.id)}/transfers?per_page=100`, { token: c.token })
          licensee ??= ts.body.data.map((t: any) => t.shipper_facility).find((l: string) => !own.has(l))
        }
        assert.isDefined(licensee, "the world has a licensee outside the connection")
        // the same package again, to another licensee, while the first is pending: DECISIONS'
        // 422 package_in_transfer, naming the line
        for (let i = 0; i < 3; i++) {
          const twice = yield* c.post(transferOf(c.shipper.id, licensee!, pkg))
          assert.strictEqual(twice.status, 422, JSON.stringify(twice.body))
          assert.strictEqual(twice.body.error.code, "package_in_transfer")
          assert.strictEqual(twice.body.error.param, "packages.0.package_id")
          assert.include(twice.body.error.message, pkg.tag)
        }
        assert.strictEqual(yield* c.transfers, before + 1, "one transfer of the package, not four")
        // a licence the state system does not know is refused, naming the field and the value
        for (const unknown of ["NOPE-1", "CO-ELSEWHERE-0043", "4035"]) {
          const nope = yield* c.post(transferOf(c.shipper.id, unknown, c.packages[1]))
          assert.strictEqual(nope.status, 400, JSON.stringify(nope.body))
          assert.strictEqual(nope.body.error.code, "invalid_parameter")
          assert.strictEqual(nope.body.error.param, "recipient_facility")
          assert.include(nope.body.error.message, unknown)
        }
        assert.strictEqual(yield* c.transfers, before + 1, "a refused transfer changed nothing")
        // a transfer to another licensee of the world arrives, without a 500
        const outside = yield* c.post(transferOf(c.shipper.id, licensee!, c.packages[1]))
        assert.strictEqual(outside.status, 201, JSON.stringify(outside.body))
        const connectionId = c.base.split("/")[3]
        const arrived = yield* call("POST", `/v1/sandbox/${connectionId}/simulate`, {
          token: c.token,
          json: { scenario: "transfer_arrived", params: { transfer_id: outside.body.data.id } }
        })
        assert.strictEqual(arrived.status, 200, JSON.stringify(arrived.body))
      }).pipe(Effect.provide(TestApp)))

    it.live(`takes the shipper by fac_ id, exact name or licence number (${provider})`, () =>
      Effect.gen(function*() {
        const c = yield* linked(provider)
        const forms: ReadonlyArray<readonly [string, string]> = [
          [c.shipper.id, c.recipient.name],
          [c.shipper.name, c.recipient.id],
          [c.shipper.license_number, c.recipient.license_number]
        ]
        const before = yield* c.transfers
        for (const [i, [shipper, recipient]] of forms.entries()) {
          const created = yield* c.post(transferOf(shipper, recipient, c.packages[i]))
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          assert.strictEqual(created.body.data.shipper_facility, c.shipper.license_number)
          assert.strictEqual(created.body.data.recipient_facility, c.recipient.license_number)
          const got = yield* call("GET", `${c.base}/transfers/${created.body.data.id}`, { token: c.token })
          assert.deepStrictEqual(got.body.data, created.body.data)
        }
        assert.strictEqual(yield* c.transfers, before + forms.length)
      }).pipe(Effect.provide(TestApp)))

    it.live(`refuses an unknown id or name, or another shipper, with 400 invalid_parameter and param (${provider})`, () =>
      Effect.gen(function*() {
        const c = yield* linked(provider)
        const pkg = c.packages[0]
        const before = yield* c.transfers
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          ["fac_bm8tc3VjaC1mYWNpbGl0eQ", c.recipient.license_number, "shipper_facility"],
          [c.shipper.id, "fac_bm8tc3VjaC1mYWNpbGl0eQ", "recipient_facility"],
          ["No Such Cultivation", c.recipient.license_number, "shipper_facility"],
          [c.shipper.id, "No Such Dispensary", "recipient_facility"],
          [c.recipient.name, c.shipper.license_number, "shipper_facility"]
        ]
        for (const [shipper, recipient, param] of cases) {
          const refused = yield* c.post(transferOf(shipper, recipient, pkg))
          const where = `${shipper} → ${recipient}: ${JSON.stringify(refused.body)}`
          assert.strictEqual(refused.status, 400, where)
          assert.strictEqual(refused.body.error.type, "validation_error", where)
          assert.strictEqual(refused.body.error.code, "invalid_parameter", where)
          assert.strictEqual(refused.body.error.param, param, where)
        }
        assert.strictEqual(yield* c.transfers, before, "a refused transfer changed nothing")
      }).pipe(Effect.provide(TestApp)))

    it.live(`records a line's quantity: part of a package is split first (${provider})`, () =>
      Effect.gen(function*() {
        const c = yield* linked(provider)
        const pkg = c.packages[0]
        const before = yield* c.transfers
        const partial = yield* c.post(transferOf(c.shipper.id, c.recipient.id, pkg, 1))
        assert.strictEqual(partial.status, 400, JSON.stringify(partial.body))
        assert.strictEqual(partial.body.error.code, "invalid_parameter")
        assert.strictEqual(partial.body.error.param, "packages.0.quantity")
        assert.include(partial.body.error.message, "split")
        const more = yield* c.post(transferOf(c.shipper.id, c.recipient.id, pkg, Math.ceil(pkg.quantity) + 1))
        assert.strictEqual(more.status, 422, JSON.stringify(more.body))
        assert.strictEqual(more.body.error.code, "insufficient_quantity")
        assert.strictEqual(yield* c.transfers, before, "a refused transfer changed nothing")

        // what the refusal says to do: split 1 off, then ship the new package
        const split = yield* call("POST", `${c.base}/packages`, {
          token: c.token,
          json: {
            item_name: pkg.item_name,
            item_category: pkg.item_category,
            item_strain: pkg.item_strain,
            quantity: 1,
            unit_of_measure: pkg.unit_of_measure,
            source_package_ids: [pkg.id]
          }
        })
        assert.strictEqual(split.status, 201, JSON.stringify(split.body))
        const created = yield* c.post(transferOf(c.shipper.id, c.recipient.id, split.body.data, 1))
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        assert.deepStrictEqual(
          created.body.data.packages.map((l: any) => [l.package_id, l.quantity, l.unit_of_measure]),
          [[split.body.data.id, 1, pkg.unit_of_measure]]
        )
        const got = yield* call("GET", `${c.base}/transfers/${created.body.data.id}`, { token: c.token })
        assert.deepStrictEqual(got.body.data.packages, created.body.data.packages)
        const source = yield* call("GET", `${c.base}/packages/${pkg.id}`, { token: c.token })
        assert.closeTo(source.body.data.quantity, pkg.quantity - 1, 1e-6, "only the split-off part left the source")
      }).pipe(Effect.provide(TestApp)))
  }
})
