/**
 * The real provider_b adapter against the emulator, in process: the conformance kit, sessions
 * (expiry and transparent re-login, refused logins), refused writes, and the world's records read
 * back through the adapter.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import type { ProviderError, Resource } from "@tracebridge/core"
import { Ids, Page, ProviderContract, ProviderPort, Session } from "@tracebridge/core"
import { Faults, Licensees, Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import * as ProviderBEmulator from "../src/providers/provider-b/Emulator.js"
import * as Rows from "../src/providers/provider-b/rows.js"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 60_000
const STATE = "HI"
const LOGIN = "000000000:user_good"
const URL_B = SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_b", STATE)
const { bad, good, locked } = Registry.get("provider_b").logins

/** A sandbox whose clock the test moves, and a handler that records every action it receives. */
const makeSandbox = () => {
  const clock = { now: NOW }
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: REFERENCE,
    now: () => clock.now
  })
  const inner = SandboxServer.makeHandler(sandbox)
  const actions: Array<string> = []
  const handler: SandboxServer.Handler = async (request) => {
    const text = await request.clone().text()
    actions.push(String((JSON.parse(text) as { readonly action?: unknown }).action))
    return inner(request)
  }
  return { sandbox, clock, handler, actions }
}

const portFor = (handler: SandboxServer.Handler) =>
  ProviderB.layer.pipe(Layer.provide(SandboxServer.layerHttpClient(handler)))

const sessionFor = (credentials: Record<string, string> = good, key = "sandbox:b") =>
  Session.make({ key, provider: "provider_b", state: STATE, environment: "sandbox", credentials, baseUrl: URL_B })

/** One raw call to the emulator, as BioTrack's clients send it. */
const post = (handler: SandboxServer.Handler, body: Record<string, unknown>, path = "") =>
  Effect.promise(async () => {
    const response = await handler(new Request(`${URL_B}${path}`, { method: "POST", body: JSON.stringify(body) }))
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  })

const loginRaw = (handler: SandboxServer.Handler) =>
  Effect.map(
    post(handler, {
      API: "4.0",
      action: "login",
      license_number: good.ubi,
      username: good.username,
      password: good.password
    }),
    (r) => String(r.body["sessionid"])
  )

const dump = (value: unknown) => JSON.stringify(value, (_, v) => (v instanceof Map ? [...v.entries()] : v))

/**
 * BioTrack's change marker of an object: the newest `sessiontime` (epoch seconds) of the live rows
 * of the facility's licence behind it, in the sync tables the emulator serves.
 */
const sessiontime = (
  tables: Readonly<Record<string, ReadonlyArray<Record<string, any>>>>,
  license: string,
  resource: Resource.Name,
  item: any
): number | null | undefined => {
  const rows = (table: string, match: (row: Record<string, any>) => boolean) =>
    (tables[table] ?? []).filter((r) => String(r["deleted"]) !== "1" && match(r))
  const here = (r: Record<string, any>) => r["location"] === license
  const newest = (found: ReadonlyArray<Record<string, any>>) => {
    const times = found.map((r) => r["sessiontime"]).filter((t): t is number => typeof t === "number")
    return found.length === 0 ? undefined : times.length === 0 ? null : Math.max(...times) * 1000
  }
  switch (resource) {
    case "packages":
      return newest(rows("inventory", (r) => here(r) && r["id"] === item.provider_package_id))
    case "plants":
      return newest(rows("plant", (r) => here(r) && r["id"] === item.provider_plant_id))
    case "harvests":
      return newest(
        rows("plant_derivative", (r) => here(r) && String(r["transactionid"]) === item.provider_harvest_id)
      )
    case "lab_results":
      return newest(rows("inventory_qa_sample", (r) => here(r) && r["inventoryid"] === item.provider_result_id))
    case "transfers": {
      const [manifest, stop] = String(item.provider_transfer_id).split("/")
      const on = (r: Record<string, any>) => r["manifestid"] === manifest
      return newest([
        ...rows("manifest", on),
        ...rows("manifest_stop_data", (r) => on(r) && String(r["stopnumber"]) === stop),
        ...rows("manifest_stop_items", (r) => on(r) && String(r["stopnumber"]) === stop),
        ...rows("inventory_transfer", (r) => on(r) && String(r["manifest_stop"]) === stop),
        ...rows("inventory_transfer_inbound", (r) => on(r) && String(r["manifest_stop"]) === stop)
      ])
    }
    case "sales":
      return newest(rows("sale", (r) => here(r) && String(r["transactionid"]) === item.provider_sale_id))
    case "items":
      return newest(
        rows(
          "inventory",
          (r) =>
            here(r) && `${r["inventorytype"]}:${(r["productname"] as string | null)?.trim() || item.name}` ===
              item.provider_item_id
        )
      )
    case "strains":
      return newest([
        ...rows("inventory", (r) => here(r) && (r["strain"] as string | null)?.trim() === item.name),
        ...rows("plant", (r) => here(r) && (r["strain"] as string | null)?.trim() === item.name)
      ])
    case "locations": {
      const [kind, roomid] = String(item.provider_location_id).split(":")
      return newest(rows(kind === "plant" ? "plant_room" : "inventory_room", (r) => here(r) && r["roomid"] === roomid))
    }
    default:
      return undefined
  }
}

describe.sequential("provider_b adapter against the emulator: conformance (HI)", () => {
  const { handler, sandbox } = makeSandbox()
  const world = sandbox.world("provider_b", STATE, LOGIN)
  const cultivator = world.facilities.find((d) => d.role === "cultivation")!
  const retail = world.facilities.find((d) => d.role === "retail")!
  // only a testing laboratory records lab results, on a sample it holds
  const lab = world.facilities.find((d) => d.role === "testing")!
  const fresh = (name: string) => sessionFor(good, `sandbox:b:${name}`)
  // The seeded cultivator only ships: transfer_arrived gives it an incoming transfer, so that the
  // direction filter can be told from no filter.
  const arrived = sandbox.apply(world, {
    _tag: "Scenario",
    input: {
      name: "transfer_arrived",
      params: { facility_id: cultivator.facility.id },
      at: NOW - 3_600_000
    }
  })
  if (Either.isLeft(arrived)) throw new Error(`transfer_arrived: ${JSON.stringify(arrived.left)}`)
  const changedAt = (resource: Resource.Name, item: any) => {
    const tables = Rows.tablesOf(world, LOGIN.split(":")[0]!, [], new Map())
    const all = Object.assign({}, ...Object.values(tables).map((read) => read()))
    const license = world.facilities.find((d) => d.facility.id === item.facility_id)?.facility.license_number
    return license === undefined ? undefined : sessiontime(all, license, resource, item)
  }
  /** Sets a fault on the world for one call, and clears it after. */
  const faulted = <A, E>(fault: Faults.Fault, call: Effect.Effect<A, E>) =>
    Effect.sync(() => sandbox.setFaultFor(world, fault)).pipe(
      Effect.zipRight(call),
      Effect.ensuring(Effect.sync(() => sandbox.setFaultFor(world, null)))
    )
  const layer = Layer.mergeAll(
    portFor(handler),
    Layer.succeed(ProviderContract.ContractFixture, {
      session: sessionFor(),
      invalidCredentials: bad,
      facilityId: cultivator.facility.id,
      // the state's other licensees the world knows: any other licence is refused
      licensees: Licensees.of(world).map((l) => l.license_number),
      // a cultivator sells nothing; the adult-use dispensary does
      facilityFor: { sales: retail.facility.id },
      writeFacilityFor: { record_lab_result: lab.facility.id },
      updatedAt: changedAt,
      notApplicable: {
        filters: {
          "locations.updated_since": "the emulator's room rows carry no sessiontime (rows.ts roomsOf), so no " +
            "updated_since returns a location"
        }
      },
      failures: [
        {
          name: "errorcode 62 is ProviderPermissionDenied",
          arrange: Effect.sync(() =>
            ProviderBEmulator.failNext(sandbox, {
              _tag: "Failure",
              action: "sync_plant",
              error: "The current session does not possess access to the sync_plant privilege.",
              errorcode: 62
            })
          ),
          expected: "ProviderPermissionDenied",
          call: (port, fx) => port.list("plants", fresh("62"), fx.facilityId, {}, Page.firstPage)
        },
        {
          name: "a table that is not a table is ProviderInvalidResponse (one odd row is skipped instead)",
          arrange: Effect.sync(() =>
            ProviderBEmulator.failNext(sandbox, {
              _tag: "Body",
              action: "sync_sale",
              body: {
                success: 1,
                sale: "not a table"
              }
            })
          ),
          expected: "ProviderInvalidResponse",
          call: (port) => port.list("sales", fresh("malformed"), retail.facility.id, {}, Page.firstPage)
        },
        {
          name: "an HTTP 500 is ProviderUnavailable",
          arrange: Effect.sync(() =>
            ProviderBEmulator.failNext(sandbox, { _tag: "Body", action: "sync_inventory", body: "oops", status: 500 })
          ),
          expected: "ProviderUnavailable",
          call: (port, fx) => port.list("packages", fresh("500"), fx.facilityId, {}, Page.firstPage)
        },
        {
          name: "a state system that stops answering is ProviderTimeout",
          arrange: Effect.void,
          expected: "ProviderTimeout",
          call: (port, fx) =>
            faulted(
              { kind: "slow", delay_ms: Faults.MAX_DELAY_MS },
              Effect.gen(function*() {
                const fiber = yield* Effect.fork(port.list("strains", fresh("slow"), fx.facilityId, {}, Page.firstPage))
                for (let i = 0; i < 200 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
                  yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
                  yield* TestClock.adjust("31 seconds")
                }
                return yield* Fiber.join(fiber)
              })
            )
        },
        {
          name: "HTTP 429 is ProviderRateLimited",
          arrange: Effect.void,
          expected: "ProviderRateLimited",
          call: (port, fx) =>
            faulted({ kind: "rate_limited" }, port.list("items", fresh("429"), fx.facilityId, {}, Page.firstPage))
        },
        {
          name: "a locked account is ProviderLoginRequired",
          arrange: Effect.void,
          expected: "ProviderLoginRequired",
          call: (port) => port.checkCredentials(sessionFor(locked, "sandbox:b:locked"))
        },
        {
          name: "a split BioTrack refuses on its merits is ProviderRejected",
          arrange: Effect.sync(() =>
            ProviderBEmulator.failNext(sandbox, {
              _tag: "Failure",
              action: "inventory_split",
              error: "The lot is on an open manifest."
            })
          ),
          expected: "ProviderRejected",
          call: (port, fx) => {
            const lot = cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!
            return port.splitPackage(fresh("rejected"), fx.facilityId, {
              item_name: lot.item_name,
              item_category: lot.item_category,
              item_strain: lot.item_strain,
              quantity: 1,
              unit_of_measure: lot.unit_of_measure,
              source_package_ids: [lot.id]
            })
          }
        }
      ]
    })
  )
  for (const check of ProviderContract.checksFor(ProviderB.descriptor, STATE)) {
    it.effect(check.name, () => Effect.provide(Effect.zipRight(TestClock.setTime(NOW), check.run), layer))
  }
})

describe("ProviderBEmulator sessions", () => {
  it.effect("an idle session expires with errorcode 63, and the adapter logs in again transparently", () => {
    const { actions, clock, handler, sandbox } = makeSandbox()
    ProviderBEmulator.configure(sandbox, { sessionIdleMs: 60_000 })
    const world = sandbox.world("provider_b", STATE, LOGIN)
    const cultivator = world.facilities.find((d) => d.role === "cultivation")!
    return Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const port = yield* ProviderPort.ProviderPort
      const session = sessionFor()
      const packages = yield* port.listAll("packages", session, cultivator.facility.id, {})
      assert.strictEqual(packages.length, cultivator.packages.length)
      assert.strictEqual(actions.filter((a) => a === "login").length, 1)

      const stale = yield* loginRaw(handler)
      clock.now += 61_000
      const expired = yield* post(handler, { API: "4.0", action: "sync_vendor", sessionid: stale })
      assert.deepStrictEqual(expired, {
        status: 200,
        body: { success: 0, error: "Your session has expired.", errorcode: 63 }
      })

      const before = actions.length
      const plants = yield* port.listAll("plants", session, cultivator.facility.id, {})
      assert.strictEqual(plants.length, cultivator.plants.length)
      assert.deepStrictEqual(actions.slice(before), ["sync_plant", "login", "sync_plant", "sync_plant_room"])
    }).pipe(Effect.provide(portFor(handler)))
  })

  it.effect("a world flagged login-required expires its sessions and refuses the next login once", () => {
    const { actions, handler, sandbox } = makeSandbox()
    const world = sandbox.world("provider_b", STATE, LOGIN)
    const cultivator = world.facilities.find((d) => d.role === "cultivation")!
    return Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const port = yield* ProviderPort.ProviderPort
      const session = sessionFor()
      yield* port.listAll("strains", session, cultivator.facility.id, {})
      ;(world as { loginRequired?: boolean }).loginRequired = true
      const error = yield* Effect.flip(port.listAll("locations", session, cultivator.facility.id, {}))
      assert.strictEqual(error._tag === "ProviderLoginRequired" ? error.reason : error._tag, "invalid_credentials")
      assert.deepStrictEqual(actions.slice(-2), ["sync_inventory_room", "login"])
      const locations = yield* port.listAll("locations", session, cultivator.facility.id, {})
      assert.strictEqual(locations.length, cultivator.locations.length)
    }).pipe(Effect.provide(portFor(handler)))
  })

  it.effect("a session stays alive while it is used", () => {
    const { clock, handler, sandbox } = makeSandbox()
    ProviderBEmulator.configure(sandbox, { sessionIdleMs: 60_000 })
    return Effect.gen(function*() {
      const sid = yield* loginRaw(handler)
      for (let i = 0; i < 3; i++) {
        clock.now += 50_000
        const answer = yield* post(handler, { API: "4.0", action: "sync_inventory_room", sessionid: sid })
        assert.strictEqual(answer.body["success"], 1)
      }
    })
  })

  it.effect("the bad login is invalid_credentials and the locked one account_locked, worded as BioTrack", () => {
    const { handler } = makeSandbox()
    return Effect.gen(function*() {
      const port = yield* ProviderPort.ProviderPort
      const wrong = yield* Effect.flip(port.checkCredentials(sessionFor(bad, "bad")))
      const lockedOut = yield* Effect.flip(port.checkCredentials(sessionFor(locked, "locked")))
      const reasonOf = (e: ProviderError.ProviderError) => (e._tag === "ProviderLoginRequired" ? e.reason : e._tag)
      assert.strictEqual(reasonOf(wrong), "invalid_credentials")
      assert.strictEqual(reasonOf(lockedOut), "account_locked")
      const raw = yield* post(handler, { API: "4.0", action: "login", ...{ license_number: bad.ubi }, ...bad })
      assert.deepStrictEqual(raw.body, { success: 0, error: "Invalid username or password." })
      yield* port.checkCredentials(sessionFor(good, "good"))
    }).pipe(Effect.provide(portFor(handler)))
  })

  it.effect("answers every failure under HTTP 200, and serves the real hosts' path too", () => {
    const { handler } = makeSandbox()
    return Effect.gen(function*() {
      const version = yield* post(handler, { API: "3.0", action: "login" })
      assert.strictEqual(version.status, 200)
      assert.strictEqual(version.body["success"], 0)
      assert.deepStrictEqual(version.body, { success: 0, error: "Invalid API Version", errorcode: 17 })
      const noSession = yield* post(handler, { API: "4.0", action: "sync_inventory", sessionid: "nope" })
      assert.strictEqual(noSession.body["errorcode"], 63)
      const sid = yield* loginRaw(handler)
      const unknown = yield* post(handler, { API: "4.0", action: "make_coffee", sessionid: sid })
      assert.strictEqual(unknown.body["success"], 0)
      const vendors = yield* post(handler, { API: "4.0", action: "sync_vendor", sessionid: sid }, "/serverjson.asp")
      // the login's four facilities, then the state's three other licensees the world knows
      assert.strictEqual((vendors.body["vendor"] as ReadonlyArray<unknown>).length, 4 + 3)
    })
  })

  it.effect("a path other than the action API is the web server's 404 page; an unknown action stays BioTrack's refusal", () => {
    // not the recording handler: it reads every body as JSON
    const handler = SandboxServer.makeHandler(makeSandbox().sandbox)
    return Effect.gen(function*() {
      const raw = (method: string, path: string) =>
        Effect.promise(async () => {
          const response = await handler(
            new Request(`${URL_B}${path}`, {
              method,
              ...(method === "GET" ? {} : { body: JSON.stringify({ API: "4.0", action: "login", ...good }) })
            })
          )
          return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
        })
      for (const path of ["/nope", "/serverjson.asp/login", "/v1/login", "/serverjson.aspx", "/api/serverjson.asp"]) {
        for (const method of ["GET", "POST"]) {
          const answer = yield* raw(method, path)
          assert.strictEqual(answer.status, 404, `${method} ${path}`)
          assert.strictEqual(answer.type, "text/html", `${method} ${path}`)
          assert.include(answer.text, "404 - File or directory not found.", `${method} ${path}`)
        }
      }
      // the action API's own paths are no 404
      assert.strictEqual((yield* raw("POST", "")).status, 200)
      assert.strictEqual((yield* raw("POST", "/serverjson.asp")).status, 200)
      assert.strictEqual((yield* raw("GET", "/serverjson.asp")).status, 405)
      // BioTrack has no HTTP auth: a refused login is HTTP 200 {success: 0}, with no challenge
      const refused = yield* Effect.promise(() =>
        handler(
          new Request(URL_B, { method: "POST", body: JSON.stringify({ API: "4.0", action: "login", ...bad }) })
        )
      )
      assert.strictEqual(refused.status, 200)
      assert.isNull(refused.headers.get("www-authenticate"))
      // an unknown action, with a session, is BioTrack's refusal under HTTP 200, not a 404
      const sid = yield* loginRaw(handler)
      const unknown = yield* post(handler, { API: "4.0", action: "make_coffee", sessionid: sid })
      assert.strictEqual(unknown.status, 200)
      assert.deepStrictEqual(unknown.body, { success: 0, error: "Invalid action: make_coffee." })
    })
  })

  it.effect("session ids are deterministic", () => {
    const a = makeSandbox()
    const b = makeSandbox()
    return Effect.gen(function*() {
      const first = yield* loginRaw(a.handler)
      assert.strictEqual(first, yield* loginRaw(b.handler))
      assert.notStrictEqual(first, yield* loginRaw(a.handler))
    })
  })
})

describe("ProviderBEmulator writes", () => {
  it.effect("a split beyond the lot is refused with errorcode 602 and leaves the world unchanged", () => {
    const { handler, sandbox } = makeSandbox()
    const world = sandbox.world("provider_b", STATE, LOGIN)
    const cultivator = world.facilities.find((d) => d.role === "cultivation")!
    const lot = cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!
    const held = cultivator.packages.find((p) => p.is_on_hold)!
    return Effect.gen(function*() {
      const sid = yield* loginRaw(handler)
      const before = dump(world)
      const split = (tag: string, quantity: number) =>
        post(handler, {
          API: "4.0",
          action: "inventory_split",
          sessionid: sid,
          training: "1",
          data: [{ barcodeid: tag, remove_quantity: String(quantity), remove_quantity_uom: "g" }]
        })
      const over = yield* split(lot.tag, lot.quantity + 1)
      assert.strictEqual(over.body["success"], 0)
      assert.strictEqual(over.body["errorcode"], 602)
      assert.match(String(over.body["error"]), /Insufficient quantity/)
      const onHold = yield* split(held.tag, 1)
      assert.strictEqual(onHold.body["errorcode"], 602)
      assert.match(String(onHold.body["error"]), /on hold/)
      const unknown = yield* split("6999999999999999", 1)
      assert.match(String(unknown.body["error"]), /not found/)
      assert.strictEqual(dump(world), before)
      assert.deepStrictEqual(sandbox.log(Sandbox.keyOf("provider_b", STATE, LOGIN)), [])

      const port = yield* ProviderPort.ProviderPort
      const refused = yield* Effect.flip(port.splitPackage(sessionFor(), cultivator.facility.id, {
        item_name: lot.item_name,
        item_category: lot.item_category,
        item_strain: lot.item_strain,
        quantity: lot.quantity + 1000,
        unit_of_measure: lot.unit_of_measure,
        source_package_ids: [lot.id]
      }))
      assert.strictEqual(refused._tag, "InsufficientQuantity")
      assert.strictEqual(dump(world), before)
    }).pipe(Effect.provide(portFor(handler)))
  })

  it.effect("an accepted split is logged and announced, and the adapter reads it back", () => {
    const { handler, sandbox } = makeSandbox()
    const world = sandbox.world("provider_b", STATE, LOGIN)
    const cultivator = world.facilities.find((d) => d.role === "cultivation")!
    const lot = cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!
    const events: Array<Sandbox.ChangeEvent> = []
    sandbox.subscribe((e) => events.push(e))
    return Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const port = yield* ProviderPort.ProviderPort
      const created = yield* port.splitPackage(sessionFor(), cultivator.facility.id, {
        item_name: lot.item_name,
        item_category: lot.item_category,
        item_strain: lot.item_strain,
        quantity: 1,
        unit_of_measure: lot.unit_of_measure,
        source_package_ids: [lot.id]
      })
      assert.deepStrictEqual(created.source_package_ids, [lot.id])
      assert.deepStrictEqual(events.map((e) => e.change), ["SplitPackage"])
      assert.strictEqual(sandbox.log(Sandbox.keyOf("provider_b", STATE, LOGIN)).length, 1)
      const source = cultivator.packages.find((p) => p.id === lot.id)!
      assert.strictEqual(source.quantity, Math.round((lot.quantity - 1) * 10_000) / 10_000)
      assert.isTrue(cultivator.packages.some((p) => p.id === created.id))
    }).pipe(Effect.provide(portFor(handler)))
  })

  it.effect("a lab result recorded through the adapter sets the lot's lab-testing state in the world", () => {
    const { handler, sandbox } = makeSandbox()
    const world = sandbox.world("provider_b", STATE, LOGIN)
    // only a lab files QA results, on a sample it holds
    const lab = world.facilities.find((d) => d.role === "testing")!
    const lot = lab.packages.find((p) => p.lab_testing_state === "NotSubmitted" && !p.is_on_hold)!
    return Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const port = yield* ProviderPort.ProviderPort
      const created = yield* port.recordLabResult(sessionFor(), lab.facility.id, {
        package_id: lot.id,
        lab_name: lab.facility.name,
        lab_license: lab.facility.license_number,
        overall_passed: false,
        results: [
          { name: "THC", category: "potency", value: 19.5, unit: "%", passed: true, notes: null },
          { name: "Pesticides", category: "pesticides", value: 0.8, unit: "ppm", passed: false, notes: null }
        ],
        test_type: "ComplianceTesting",
        test_date: null
      })
      assert.strictEqual(created.lab_name, lab.facility.name)
      assert.deepStrictEqual(created.results.map((r) => [r.name, r.value, r.passed]), [
        ["THC", 19.5, true],
        ["Pesticides", 0.8, false]
      ])
      const stored = lab.labResults.find((r) => r.id === created.id)
      assert.strictEqual(stored?.overall_passed, false)
      assert.strictEqual(lab.packages.find((p) => p.id === lot.id)!.lab_testing_state, "TestFailed")
      const read = yield* port.get("packages", sessionFor(), lab.facility.id, lot.id)
      assert.strictEqual(read.lab_testing_state, "TestFailed")
      assert.deepStrictEqual(read.lab_results.map((r) => r.id), [created.id])
    }).pipe(Effect.provide(portFor(handler)))
  })

  it.effect("lab results are refused from the company's login, training mode or not, and filed on the lab's", () => {
    const { handler, sandbox } = makeSandbox()
    const world = sandbox.world("provider_b", STATE, LOGIN)
    const cultivator = world.facilities.find((d) => d.role === "cultivation")!
    const lab = world.facilities.find((d) => d.role === "testing")!
    const lot = cultivator.packages.find((p) => cultivator.labResults.every((r) => r.package_id !== p.id))!
    return Effect.gen(function*() {
      const sid = yield* loginRaw(handler)
      const sample = yield* post(handler, {
        API: "4.0",
        action: "inventory_qa_sample",
        sessionid: sid,
        barcodeid: lot.tag,
        lab_id: lab.facility.license_number,
        quantity: "0",
        use: 1
      })
      const [barcode] = sample.body["barcode_id"] as ReadonlyArray<string>
      const before = dump(world)
      const results = (sessionid: string, training: boolean) =>
        post(handler, {
          API: "4.0",
          action: "inventory_qa_sample_results",
          sessionid,
          ...(training ? { training: "1" } : {}),
          sample_id: barcode,
          result: 1,
          test: [{ type: 2, THC: "20" }]
        })
      for (const training of [false, true]) {
        const refused = yield* results(sid, training)
        assert.deepStrictEqual(refused.body, { success: 0, error: "Only QA Labs may enter results.", errorcode: 200 })
      }
      assert.strictEqual(dump(world), before)
      // the world's QA lab signs in with the username prefixed with lab: and files them
      const labLogin = yield* post(handler, {
        API: "4.0",
        action: "login",
        license_number: "000000000",
        username: "lab:user_good",
        password: "pass_good"
      })
      assert.strictEqual(labLogin.body["success"], 1)
      const filed = yield* results(String(labLogin.body["sessionid"]), false)
      assert.strictEqual(filed.body["success"], 1, JSON.stringify(filed.body))
      const recorded = cultivator.labResults.filter((r) => r.package_id === lot.id)
      assert.strictEqual(recorded.length, 1)
      assert.strictEqual(recorded[0]!.lab_license, lab.facility.license_number)
      assert.strictEqual(recorded[0]!.lab_name, lab.facility.name)
      assert.strictEqual(cultivator.packages.find((p) => p.id === lot.id)!.lab_testing_state, "TestPassed")
    })
  })
})

describe("ProviderBEmulator serves the world", () => {
  it.effect("the adapter reads each facility's lots, plants, harvests, transfers and sales as the world holds them", () => {
    const { handler, sandbox } = makeSandbox()
    const world = sandbox.world("provider_b", STATE, LOGIN)
    return Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const port = yield* ProviderPort.ProviderPort
      const session = sessionFor()
      const facilities = yield* port.listFacilities(session, { page: 1, per_page: 100 })
      assert.deepStrictEqual(
        facilities.items.map((f) => [f.id, f.name, f.license_number]),
        world.facilities.map((d) => [d.facility.id, d.facility.name, d.facility.license_number])
      )
      for (const data of world.facilities) {
        const id = data.facility.id
        const packages = yield* port.listAll("packages", session, id, {})
        assert.deepStrictEqual(
          packages.map((p) => [p.id, p.quantity, p.item_name, p.item_strain, p.is_on_hold, p.lab_testing_state]),
          data.packages.map((p) => [p.id, p.quantity, p.item_name, p.item_strain, p.is_on_hold, p.lab_testing_state])
        )
        assert.deepStrictEqual(
          packages.map((p) => p.source_package_ids),
          data.packages.map((p) => p.source_package_ids)
        )
        const plants = yield* port.listAll("plants", session, id, {})
        assert.deepStrictEqual(
          plants.map((p) => [p.id, p.strain_name, p.growth_phase, p.location, p.harvest_date]),
          data.plants.map((p) => [p.id, p.strain_name, p.growth_phase, p.location, p.harvest_date])
        )
        const harvests = yield* port.listAll("harvests", session, id, {})
        assert.deepStrictEqual(
          harvests.map((h) => [
            h.id,
            h.current_weight,
            h.total_waste_weight,
            h.harvest_type,
            h.harvested_date,
            h.source_plant_ids
          ]),
          data.harvests.map((h) => [
            h.id,
            h.current_weight,
            h.total_waste_weight,
            h.harvest_type,
            h.harvested_date,
            h.source_plant_ids
          ])
        )
        const results = yield* port.listAll("lab_results", session, id, {})
        assert.deepStrictEqual(
          results.map((r) => [r.id, r.package_id, r.overall_passed, r.lab_name, r.lab_license, r.test_date]),
          data.labResults.map((r) => [r.id, r.package_id, r.overall_passed, r.lab_name, r.lab_license, r.test_date])
        )
        const sales = yield* port.listAll("sales", session, id, {})
        assert.deepStrictEqual(
          sales.map((s) => [s.id, s.sale_date, s.items.map((i) => [i.package_id, i.quantity, i.total])]),
          data.sales.map((s) => [
            s.id,
            s.sale_date.replace(".000Z", "Z"),
            s.items.map((i) => [i.package_id, i.quantity, i.total])
          ])
        )
        const transfers = yield* port.listAll("transfers", session, id, {})
        const seen = world.transfers.filter((t) =>
          t.transfer.shipper_facility === data.facility.license_number ||
          t.transfer.recipient_facility === data.facility.license_number
        )
        assert.deepStrictEqual(
          transfers.map((
            t
          ) => [t.id, t.status, t.shipper_facility, t.recipient_facility, t.packages.map((p) => p.tag)]),
          seen.map(({ transfer: t }) => [
            t.id,
            t.status,
            t.shipper_facility,
            t.recipient_facility,
            t.packages.map((p) => p.tag)
          ])
        )
      }
      const missing = yield* Effect.flip(
        port.get("lab_results", session, world.facilities[0]!.facility.id, Ids.make("lab_result", "provider_b", "1"))
      )
      assert.strictEqual(missing._tag, "ResourceNotFound")
    }).pipe(Effect.provide(portFor(handler)))
  })
})
