/**
 * Every facility-level endpoint, end to end on sandbox connections of both providers.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Harvest,
  Item,
  LabResult,
  Location,
  Package,
  Patient,
  Plant,
  Sale,
  SalesDelivery,
  Strain,
  Transfer
} from "@tracebridge/core"
import { Http } from "@tracebridge/http"
import { Effect, Layer, Option, TestClock, Tracer } from "effect"
import { Accounts } from "../src/persistence/Accounts.js"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Server from "../src/Server.js"
import * as Crypto from "../src/services/Crypto.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox, signIn, storedChanges, TestApp } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { webhookApp } from "./support/WebhookApp.js"

const schemas = {
  packages: Package.Package,
  plants: Plant.Plant,
  harvests: Harvest.Harvest,
  lab_results: LabResult.LabResult,
  transfers: Transfer.Transfer,
  sales: Sale.Sale,
  sales_deliveries: SalesDelivery.SalesDelivery,
  items: Item.Item,
  strains: Strain.Strain,
  locations: Location.Location,
  patients: Patient.Patient
} as const

describe("Resources", () => {
  it.effect("lists and gets every resource of every facility with exactly the spec's fields (provider_a, CO)", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const facilities =
        (yield* call("GET", `/v1/connections/${connection.connection_id}/facilities/`, { token: me.access })).body.data
      assert.strictEqual(facilities.length, 5)
      const seen = new Set<string>()
      for (const facility of facilities) {
        const one = yield* call("GET", `/v1/connections/${connection.connection_id}/facilities/${facility.id}`, {
          token: me.access
        })
        assert.deepStrictEqual(one.body.data, facility)
        const base = `/v1/connections/${connection.connection_id}/facilities/${facility.id}`
        for (const [name, schema] of Object.entries(schemas)) {
          const list = yield* call("GET", `${base}/${name}?per_page=100`, { token: me.access })
          assert.strictEqual(list.status, 200, `${name} at ${facility.name}`)
          for (const item of list.body.data) {
            assert.deepStrictEqual(Object.keys(item).sort(), Object.keys(schema.fields).sort(), name)
          }
          if (list.body.data.length > 0) {
            seen.add(name)
            const first = list.body.data[0]
            const got = yield* call("GET", `${base}/${name}/${first.id}`, { token: me.access })
            assert.deepStrictEqual(got.body.data, first, `${name} get`)
          }
        }
      }
      assert.deepStrictEqual([...seen].sort(), Object.keys(schemas).sort())
    }).pipe(Effect.provide(TestApp)))

  it.effect("checks a facility it has checked once without reading the database (the facility list kept in memory)", () =>
    Effect.gen(function*() {
      const native = yield* Effect.tracer
      const statements: Array<Tracer.Span> = []
      const counting = Tracer.make({
        span(name, parent, context, links, startTime, kind, options) {
          // a statement made while serving a request (a worker's own have no parent)
          const span = native.span(name, parent, context, links, startTime, kind, options)
          if (name === "sql.execute" && Option.isSome(parent)) statements.push(span)
          return span
        },
        context: native.context
      })
      const counted = yield* Effect.gen(function*() {
        const me = yield* signIn
        const connection = yield* linkSandbox(me.access)
        const base = `/v1/connections/${connection.connection_id}/facilities`
        const facility = (yield* call("GET", `${base}/`, { token: me.access })).body.data[0].id as string
        const path = `${base}/${facility}/packages?per_page=5`
        const texts = () => statements.map((span) => String(span.attributes.get("db.query.text")).replace(/\s+/g, " "))
        statements.length = 0
        const first = yield* call("GET", path, { token: me.access }).pipe(Effect.withTracerEnabled(false))
        assert.strictEqual(first.status, 200)
        const firstRead = texts()
        statements.length = 0
        const again = yield* call("GET", path, { token: me.access }).pipe(Effect.withTracerEnabled(false))
        assert.strictEqual(again.status, 200)
        assert.deepStrictEqual(again.body.data, first.body.data)
        const secondRead = texts()
        // a facility the connection does not have is still refused
        const other = yield* call("GET", `${base}/${facility.slice(0, -1)}9/packages`, { token: me.access })
        assert.strictEqual(other.status, 404)
        return { firstRead, secondRead }
      }).pipe(Effect.provide(
        // traced (with tracing off, a request runs with the tracer disabled and makes no span to count)
        Http.makeHttpLive({ tracing: true }).pipe(
          Layer.provideMerge(Server.layerTest),
          Layer.provideMerge(Crypto.layerTest),
          Layer.provideMerge(TestDatabase.layer),
          Layer.provide(Layer.setTracer(counting))
        )
      ))
      // the first read checks the facility against its sync row (and fills the list kept in memory)
      assert.isTrue(counted.firstRead.some((q) => q.includes("sync_facilities")), counted.firstRead.join("; "))
      // the second finds it in the list: no sync row read (the token, organisation, client and
      // connection rows are the row cache's to save)
      assert.deepStrictEqual(counted.secondRead.filter((q) => q.includes("sync_facilities")), [])
    }))

  it.effect("filters lists as DECISIONS says", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const facilities =
        (yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, { token: me.access })).body.data
      const base = `/v1/connections/${connection.connection_id}/facilities/${facilities[0].id}`
      const held = (yield* call("GET", `${base}/packages?is_on_hold=true&per_page=100`, { token: me.access })).body.data
      assert.isTrue(held.length > 0 && held.every((p: any) => p.is_on_hold))
      const veg = (yield* call("GET", `${base}/plants?growth_phase=vegetative`, { token: me.access })).body.data
      assert.isTrue(veg.length > 0 && veg.every((p: any) => p.growth_phase === "vegetative"))
      const outgoing =
        (yield* call("GET", `${base}/transfers?direction=outgoing&per_page=100`, { token: me.access })).body.data
      assert.isTrue(
        outgoing.length > 0 && outgoing.every((t: any) => t.shipper_facility === facilities[0].license_number)
      )
      const rejected = (yield* call("GET", `${base}/transfers?status=rejected`, { token: me.access })).body.data
      assert.isTrue(rejected.every((t: any) => t.status === "rejected"))
      const pkg = held[0]
      const labs =
        (yield* call("GET", `${base}/lab_results?package_id=${encodeURIComponent(pkg.id)}`, { token: me.access })).body
          .data
      assert.isTrue(labs.every((r: any) => r.package_id === pkg.id))
      const bad = yield* call("GET", `${base}/plants?growth_phase=seedling`, { token: me.access })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.error.param, "growth_phase")
    }).pipe(Effect.provide(TestApp)))

  for (const provider of ["provider_a", "provider_b"] as const) {
    it.scoped(
      `a lab result at a grower's facility is recorded by the world's lab, shown once everywhere (${provider})`,
      () =>
        // a present-day clock before the service starts: the sandbox dates its worlds from it (at
        // the TestClock's epoch 0 every BioTrack time is before 1970, a negative epoch the adapter
        // rightly refuses, so every row is skipped and a facility lists no package)
        Effect.zipRight(TestClock.setTime(PRESENT_DAY), Effect.provide(labResultAtGrower(provider), webhookApp()))
    )
  }

  it.effect("records a lab result and creates a transfer on a sandbox connection (201), as later reads return them", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const facilities =
        (yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, { token: me.access })).body.data
      const base = `/v1/connections/${connection.connection_id}/facilities/${facilities[0].id}`
      const pkg =
        (yield* call("GET", `${base}/packages?is_on_hold=false&per_page=1`, { token: me.access })).body.data[0]
      // at the lab it works as before: the lab records on a sample it holds
      const lab = facilities.find((f: any) => f.capabilities.includes("labs"))
      const labBase = `/v1/connections/${connection.connection_id}/facilities/${lab.id}`
      const sample = (yield* call("GET", `${labBase}/packages?per_page=1`, { token: me.access })).body.data[0]
      const labResult = {
        package_id: pkg.id,
        lab_name: lab.name,
        overall_passed: false,
        results: [{ name: "Pesticides", category: "pesticides", value: 0.9, unit: "ppm", passed: false, notes: null }]
      }
      const result = yield* call("POST", `${labBase}/lab_results`, {
        token: me.access,
        json: { ...labResult, package_id: sample.id }
      })
      assert.strictEqual(result.status, 201, JSON.stringify(result.body))
      const listed = (yield* call("GET", `${labBase}/lab_results?package_id=${encodeURIComponent(sample.id)}`, {
        token: me.access
      })).body.data
      assert.isTrue(listed.some((r: any) => r.id === result.body.data.id))
      const transfer = yield* call("POST", `${base}/transfers`, {
        token: me.access,
        json: {
          transfer_type: "Wholesale",
          shipper_facility: facilities[0].license_number,
          recipient_facility: facilities[3].license_number,
          packages: [{
            package_id: pkg.id,
            tag: pkg.tag,
            item_name: pkg.item_name,
            quantity: pkg.quantity,
            unit_of_measure: pkg.unit_of_measure
          }]
        }
      })
      assert.strictEqual(transfer.status, 201)
      assert.strictEqual(transfer.body.data.status, "pending")
      const got = yield* call("GET", `${base}/transfers/${transfer.body.data.id}`, { token: me.access })
      assert.deepStrictEqual(got.body.data, transfer.body.data)
    }).pipe(Effect.provide(TestApp)))

  it.effect("refuses writes on a production connection with 403 sandbox_only", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const accounts = yield* Accounts
      const connectionStore = yield* ConnectionStore
      const organisation =
        Option.getOrThrow(yield* connectionStore.getConnection(connection.connection_id)).organisation_id
      yield* accounts.setPlan(organisation, "production")
      yield* connectionStore.updateConnection(connection.connection_id, { updated_at: 1 })
      const stored = Option.getOrThrow(yield* connectionStore.getConnection(connection.connection_id))
      yield* connectionStore.insertConnection({ ...stored, id: "conn_production_1", is_sandbox: false })
      const token = (yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: me.client_id, client_secret: me.client_secret }
      })).body.access_token
      const write = yield* call("POST", `/v1/connections/conn_production_1/facilities/fac_x/packages`, {
        token,
        json: {
          item_name: "x",
          item_category: "x",
          quantity: 1,
          unit_of_measure: "Grams",
          source_package_ids: ["pkg_x"]
        }
      })
      assert.strictEqual(write.status, 403)
      assert.strictEqual(write.body.error.code, "sandbox_only")
    }).pipe(Effect.provide(TestApp)))

  it.effect("keeps a sandbox connection's changes in the database", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const facilities =
        (yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, { token: me.access })).body.data
      const base = `/v1/connections/${connection.connection_id}/facilities/${facilities[0].id}`
      const pkg =
        (yield* call("GET", `${base}/packages?is_on_hold=false&per_page=1`, { token: me.access })).body.data[0]
      yield* call("POST", `${base}/packages`, {
        token: me.access,
        json: {
          item_name: pkg.item_name,
          item_category: pkg.item_category,
          quantity: 1,
          unit_of_measure: pkg.unit_of_measure,
          source_package_ids: [pkg.id]
        }
      })
      const changes = yield* storedChanges(connection.connection_id)
      assert.strictEqual(changes.length, 1)
      assert.strictEqual(JSON.parse(changes[0]!.change)._tag, "SplitPackage")
    }).pipe(Effect.provide(TestApp)))
})

/** A present-day time for the TestClock (the sandbox dates its worlds from the clock). */
const PRESENT_DAY = Date.parse("2026-03-15T12:00:00.000Z")

/** The webhook deliveries that are due, made now (the worker is off in `webhookApp`). */
const runDue = Effect.flatMap(WebhookDispatcher, (d) => d.runDue)

/**
 * Issue #29: `POST P/lab_results` at a facility without `labs` answers 201; the result is on the
 * package asked for, listed once by `package_id` and in the list, shown by the package
 * (`lab_results`, `lab_testing_state`), and announced by exactly one `lab_result.received`.
 */
const labResultAtGrower = (provider: "provider_a" | "provider_b") =>
  Effect.gen(function*() {
    const hooks = yield* receiver([200])
    const me = yield* signIn
    const connection = yield* linkSandbox(me.access, provider)
    const hook = yield* call("POST", "/v1/webhooks/", {
      token: me.access,
      json: { url: hooks.url, events: ["lab_result.received"] }
    })
    assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
    const facilities: Array<any> =
      (yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, { token: me.access })).body.data
    // a facility without labs (a grower's) and a package of it a sample can be drawn from
    const growers = facilities.filter((f) => !f.capabilities.includes("labs"))
    assert.isNotEmpty(growers, "a facility without labs")
    let grower: any
    let pkg: any
    for (const f of growers) {
      const listed =
        (yield* call("GET", `/v1/connections/${connection.connection_id}/facilities/${f.id}/packages?per_page=100`, {
          token: me.access
        })).body
      assert.deepStrictEqual(listed.meta.skipped, [], `${f.name}: every package maps`)
      grower = f
      pkg = listed.data.find((p: any) => !p.is_on_hold && p.quantity >= 2)
      if (pkg !== undefined) break
    }
    assert.isDefined(pkg, `a package off hold with quantity >= 2 at one of ${growers.map((f) => f.name).join(", ")}`)
    const base = `/v1/connections/${connection.connection_id}/facilities/${grower.id}`
    const created = yield* call("POST", `${base}/lab_results`, {
      token: me.access,
      json: {
        package_id: pkg.id,
        lab_name: facilities.find((f: any) => f.capabilities.includes("labs")).name,
        overall_passed: false,
        results: [
          { name: "THC", category: "potency", value: 21, unit: "%", passed: true, notes: null },
          { name: "Pesticides", category: "pesticides", value: 0.9, unit: "ppm", passed: false, notes: null }
        ]
      }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const result = created.body.data
    assert.strictEqual(result.package_id, pkg.id, "the result is on the source package, not the sample")
    assert.strictEqual(result.facility_id, grower.id)
    assert.strictEqual(result.overall_passed, false)
    const once = (list: ReadonlyArray<any>) => list.filter((r: any) => r.id === result.id).length
    const byPackage = (yield* call("GET", `${base}/lab_results?package_id=${encodeURIComponent(pkg.id)}`, {
      token: me.access
    })).body.data
    assert.strictEqual(once(byPackage), 1)
    assert.deepStrictEqual(byPackage.find((r: any) => r.id === result.id), result)
    const all = (yield* call("GET", `${base}/lab_results?per_page=100`, { token: me.access })).body.data
    assert.strictEqual(once(all), 1)
    const read = (yield* call("GET", `${base}/packages/${encodeURIComponent(pkg.id)}`, { token: me.access })).body.data
    assert.strictEqual(once(read.lab_results), 1)
    assert.strictEqual(read.lab_testing_state, "TestFailed")

    // exactly one lab_result.received, for this result on this package, delivered once
    const log = (yield* call("GET", `/v1/webhooks/${hook.body.data.id}/deliveries`, { token: me.access })).body.data
    assert.deepStrictEqual(log.map((d: any) => d.event_type), ["lab_result.received"])
    assert.strictEqual(yield* runDue, 1)
    assert.strictEqual(hooks.received.length, 1)
    const event = JSON.parse(hooks.received[0]!.body)
    assert.strictEqual(event.id, log[0].event_id)
    assert.strictEqual(event.type, "lab_result.received")
    assert.deepStrictEqual(event.data, {
      id: result.id,
      connection_id: connection.connection_id,
      facility_id: grower.id,
      package_id: pkg.id,
      package_tag: pkg.tag,
      passed: false,
      failed_panel: ["Pesticides"],
      lab_result: result
    })
    assert.strictEqual(yield* runDue, 0, "nothing more is due")
    assert.strictEqual(hooks.received.length, 1, "and nothing is sent twice")
  })
