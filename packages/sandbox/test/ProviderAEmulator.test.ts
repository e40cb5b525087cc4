/**
 * The real provider_a adapter against the emulator, in process: the conformance kit, and the
 * world's own records read back through the adapter.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import type { Resource } from "@tracebridge/core"
import { Ids, Page, ProviderContract, ProviderPort, Session } from "@tracebridge/core"
import { Faults, Licensees, Registry, Sandbox, SandboxServer, World } from "@tracebridge/sandbox"
import { Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import * as ProviderAEmulator from "../src/providers/provider-a/Emulator.js"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 60_000

const makeSandbox = () =>
  new Sandbox.Sandbox({ providers: Registry.installed, seed: "42", referenceDate: REFERENCE, now: () => NOW })

const portFor = (sandbox: Sandbox.Sandbox) =>
  ProviderA.layer.pipe(
    Layer.provide(ProviderAConfig.layerTest()),
    Layer.provide(SandboxServer.layerHttpClient(SandboxServer.makeHandler(sandbox)))
  )

const sessionFor = (userKey = "user_good") =>
  Session.make({
    key: `sandbox:${userKey}`,
    provider: "provider_a",
    state: "CO",
    environment: "sandbox",
    credentials: { user_key: userKey },
    baseUrl: SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_a", "CO")
  })

/** Why `updated_since` cannot narrow provider_a's patients. */
const UNWINDOWED_PATIENTS = "Metrc documents neither a lastModified window on /patients/v2/active nor a " +
  "LastModified on a patient: updated_since cannot narrow them, and every patient is returned"

/**
 * Conformance checks that fail on a known bug of the emulator's seeded world, each with the bug. They
 * run as `it.effect.fails`: fixing the bug makes them fail loudly here, to be moved back.
 */
const knownFailures: Readonly<Record<string, string>> = {}

describe.sequential("provider_a adapter against the emulator: conformance (CO)", () => {
  const sandbox = makeSandbox()
  const world = sandbox.world("provider_a", "CO", "user_good")
  const cultivator = world.facilities.find((d) => d.role === "cultivation")!
  const retail = world.facilities.find((d) => d.role === "retail")!
  // only a testing laboratory records lab results, on a sample it holds
  const lab = world.facilities.find((d) => d.role === "testing")!
  const medical = world.facilities.find((d) => d.role === "medical")!
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
  /**
   * Metrc's change marker (`LastModified`) of the record behind an object, as the emulator serves
   * it. Metrc keeps none per lab result: results are read per package changed in the window.
   */
  const lastModified = (resource: Resource.Name, item: any): number | null | undefined =>
    resource === "patients"
      ? undefined // Metrc keeps no LastModified on a patient
      : world.modified.get(resource === "lab_results" ? item.package_id : item.id) ?? null
  /** Sets a fault on the world for one call, and clears it after. */
  const faulted = <A, E>(fault: Faults.Fault, call: Effect.Effect<A, E>) =>
    Effect.sync(() => sandbox.setFaultFor(world, fault)).pipe(
      Effect.zipRight(call),
      Effect.ensuring(Effect.sync(() => sandbox.setFaultFor(world, null)))
    )
  /** Runs a call on a world that stops answering, moving the clock past every try's timeout. */
  const unanswered = <A, E>(call: Effect.Effect<A, E>) =>
    faulted(
      { kind: "slow", delay_ms: Faults.MAX_DELAY_MS },
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(call)
        for (let i = 0; i < 200 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
          yield* TestClock.adjust("31 seconds")
        }
        return yield* Fiber.join(fiber)
      })
    )
  const items = (port: ProviderPort.Service, fx: ProviderContract.Fixture) =>
    port.list("items", fx.session, fx.facilityId, {}, Page.firstPage)
  const layer = Layer.mergeAll(
    portFor(sandbox),
    Layer.succeed(ProviderContract.ContractFixture, {
      session: sessionFor(),
      invalidCredentials: { user_key: "user_bad" },
      facilityId: cultivator.facility.id,
      // the state's other licensees the world knows: any other licence is refused
      licensees: Licensees.of(world).map((l) => l.license_number),
      facilityFor: { sales: retail.facility.id, sales_deliveries: retail.facility.id, patients: medical.facility.id },
      writeFacilityFor: { record_lab_result: lab.facility.id },
      updatedAt: lastModified,
      notApplicable: {
        filters: { "patients.updated_since": UNWINDOWED_PATIENTS }
      },
      failures: [
        {
          name: "an outage (503 past the retries) is ProviderUnavailable",
          arrange: Effect.void,
          expected: "ProviderUnavailable",
          call: (port, fx) => faulted({ kind: "outage" }, items(port, fx))
        },
        {
          name: "a state system that stops answering is ProviderTimeout",
          arrange: Effect.void,
          expected: "ProviderTimeout",
          call: (port, fx) => unanswered(items(port, fx))
        },
        {
          name: "429s with a long Retry-After are ProviderRateLimited",
          arrange: Effect.void,
          expected: "ProviderRateLimited",
          call: (port, fx) => faulted({ kind: "rate_limited" }, items(port, fx))
        },
        {
          name: "a truncated body is ProviderInvalidResponse",
          arrange: Effect.void,
          expected: "ProviderInvalidResponse",
          call: (port, fx) => faulted({ kind: "malformed" }, items(port, fx))
        },
        {
          name: "an expired login (401) is ProviderLoginRequired",
          arrange: Effect.void,
          expected: "ProviderLoginRequired",
          call: (port, fx) => faulted({ kind: "expired_login" }, items(port, fx))
        },
        {
          name: "another login's licence is ProviderPermissionDenied",
          arrange: Effect.void,
          expected: "ProviderPermissionDenied",
          call: (port, fx) =>
            port.list("items", fx.session, Ids.make("facility", "provider_a", "SBX-00000-9"), {}, {
              page: 1,
              per_page: 5
            })
        },
        {
          name: "a locked account is ProviderLoginRequired",
          arrange: Effect.void,
          expected: "ProviderLoginRequired",
          call: (port) => port.checkCredentials(sessionFor("user_locked"))
        },
        {
          name: "a split into an item the facility does not have is ProviderRejected",
          arrange: Effect.void,
          expected: "ProviderRejected",
          call: (port, fx) =>
            port.splitPackage(fx.session, fx.facilityId, {
              item_name: "No Such Item",
              item_category: "Flower",
              item_strain: null,
              quantity: 1,
              unit_of_measure: "Grams",
              source_package_ids: [cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!.id]
            })
        }
      ]
    })
  )
  for (const check of ProviderContract.checksFor(ProviderA.descriptor, "CO")) {
    const test = knownFailures[check.name] === undefined ? it.effect : it.effect.fails
    test(check.name, () => Effect.provide(Effect.zipRight(TestClock.setTime(NOW), check.run), layer))
  }
})

describe("ProviderAEmulator", () => {
  it.effect("serves every facility's records exactly as the world holds them, through the real adapter", () => {
    const sandbox = makeSandbox()
    const world = sandbox.world("provider_a", "CO", "user_good")
    return Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const port = yield* ProviderPort.ProviderPort
      const session = sessionFor()
      for (const data of world.facilities) {
        const id = data.facility.id
        // every list is read in lastModified windows, oldest change first
        const byId = <A extends { readonly id: string }>(xs: ReadonlyArray<A>) =>
          [...xs].sort((a, b) => a.id.localeCompare(b.id))
        const packages = yield* port.listAll("packages", session, id, {})
        assert.deepStrictEqual(
          byId(packages),
          byId(data.packages.map((p) => World.packageView(data, p))),
          `packages of ${data.role}`
        )
        assert.deepStrictEqual(byId(yield* port.listAll("items", session, id, {})), byId(data.items))
        assert.deepStrictEqual(byId(yield* port.listAll("strains", session, id, {})), byId(data.strains))
        assert.deepStrictEqual(byId(yield* port.listAll("locations", session, id, {})), byId(data.locations))
        assert.deepStrictEqual(byId(yield* port.listAll("harvests", session, id, {})), byId(data.harvests))
        assert.deepStrictEqual(byId(yield* port.listAll("sales", session, id, {})), byId(data.sales))
        assert.deepStrictEqual(
          byId(yield* port.listAll("sales_deliveries", session, id, {})),
          byId(data.salesDeliveries)
        )
        assert.deepStrictEqual(yield* port.listAll("patients", session, id, {}), data.patients)
        const transfers = yield* port.listAll("transfers", session, id, {})
        assert.deepStrictEqual(
          [...transfers].sort((a, b) => a.id.localeCompare(b.id)),
          World.transfersOf(world, data).map((t) => t.transfer).sort((a, b) => a.id.localeCompare(b.id)),
          `transfers of ${data.role}`
        )
      }
      const facilities = yield* port.listFacilities(session, { page: 1, per_page: 100 })
      assert.deepStrictEqual(facilities.items, world.facilities.map((d) => d.facility))
    }).pipe(Effect.provide(portFor(sandbox)))
  })
})

describe("ProviderAEmulator rules", () => {
  const sandbox = makeSandbox()
  const handler = SandboxServer.makeHandler(sandbox)
  const base = SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_a", "CO")
  const get = (path: string, userKey = "user_good") =>
    handler(new Request(`${base}${path}`, { headers: { authorization: `Basic ${btoa(`vendor:${userKey}`)}` } }))
  const license = sandbox.world("provider_a", "CO", "user_good").facilities[3]!.facility.license_number

  it.effect("answers Metrc's rules: licence required, windows of 24 h at most, receipts only in a window", () =>
    Effect.promise(async () => {
      assert.strictEqual((await get("/packages/v2/active")).status, 400)
      const wide = await get(
        `/packages/v2/active?licenseNumber=${license}&lastModifiedStart=2026-03-01T00:00:00Z&lastModifiedEnd=2026-03-03T00:00:00Z`
      )
      assert.strictEqual(wide.status, 400)
      assert.include((await wide.json()).Message, "24 hours")
      assert.strictEqual((await get(`/sales/v2/receipts/active?licenseNumber=${license}`)).status, 400)
      const day = await get(
        `/sales/v2/receipts/active?licenseNumber=${license}&lastModifiedStart=2026-03-14T00:00:00Z&lastModifiedEnd=2026-03-15T00:00:00Z`
      )
      assert.strictEqual(day.status, 200)
      assert.strictEqual((await get("/facilities/v2/", "user_locked")).status, 401)
    }))

  it.effect("answers a list read without a window with the last 24 hours' changes only, as Metrc does", () =>
    Effect.promise(async () => {
      const world = sandbox.world("provider_a", "CO", "user_good")
      const cultivator = world.facilities.find((d) => d.role === "cultivation")!
      const scoped = `licenseNumber=${cultivator.facility.license_number}`
      const recent = cultivator.packages.filter((p) => (world.modified.get(p.id) ?? 0) >= NOW - 86_400_000)
      assert.isAbove(cultivator.packages.length, recent.length, "the world holds history older than one window")
      assert.isAbove(cultivator.packages.length, 20, "the world holds more than one page")
      const bare = await (await get(`/packages/v2/active?${scoped}`)).json()
      assert.strictEqual(bare.Total, recent.length)
      assert.sameMembers(bare.Data.map((p: any) => p.Label), recent.map((p) => p.tag))
      // items, strains and locations too: every record has a change marker weeks back
      const items = await (await get(`/items/v2/active?${scoped}`)).json()
      assert.strictEqual(items.Total, 0)
      // patients take no window: every one, with or without the parameters
      const medical = world.facilities.find((d) => d.role === "medical")!
      const patients = await (await get(
        `/patients/v2/active?licenseNumber=${medical.facility.license_number}` +
          "&lastModifiedStart=2020-01-01T00:00:00Z&lastModifiedEnd=2020-01-02T00:00:00Z"
      )).json()
      assert.strictEqual(patients.Total, medical.patients.length)
    }))

  it.effect("routes: literal paths before parameters, numeric ids only, unknown paths 404 before the licence check", () =>
    Effect.promise(async () => {
      const world = sandbox.world("provider_a", "CO", "user_good")
      const cultivator = world.facilities.find((d) => d.role === "cultivation")!
      const scoped = `licenseNumber=${cultivator.facility.license_number}`
      const active = await get(`/packages/v2/active?${scoped}`)
      assert.strictEqual(active.status, 200)
      assert.isTrue(Array.isArray((await active.json()).Data))
      const tag = cultivator.packages[0]!.tag
      assert.strictEqual((await (await get(`/packages/v2/${tag}?${scoped}`)).json()).Label, tag)
      assert.strictEqual((await get(`/harvests/v2/not-a-number?${scoped}`)).status, 404)
      assert.strictEqual((await get(`/no/such/path?${scoped}`)).status, 404)
      assert.strictEqual((await get("/no/such/path")).status, 404)
      const units = await get("/unitsofmeasure/v2/active")
      assert.strictEqual(units.status, 200)
      assert.includeDeepMembers(await units.json(), [{ QuantityType: "WeightBased", Name: "Grams", Abbreviation: "g" }])
      const post = (path: string, body: string) =>
        handler(
          new Request(`${base}${path}?${scoped}`, {
            method: "POST",
            body,
            headers: { authorization: `Basic ${btoa("vendor:user_good")}` }
          })
        )
      assert.strictEqual(
        (await post("/packages/v2/", JSON.stringify(Array.from({ length: 11 }, () => ({}))))).status,
        413
      )
      assert.strictEqual((await post("/no/such/path", "[{}]")).status, 404)
      assert.strictEqual((await post("/packages/v2/", "{")).status, 400)
    }))

  it.effect("a path Metrc does not serve is its 404 {Message}, for any method, before the licence is asked for", () =>
    Effect.promise(async () => {
      // a sandbox of its own: the scenario test below refuses the shared one's next call
      const own = SandboxServer.makeHandler(makeSandbox())
      const call = (method: string, path: string) =>
        own(
          new Request(`${base}${path}`, {
            method,
            headers: { authorization: `Basic ${btoa("vendor:user_good")}` },
            ...(method === "GET" || method === "DELETE" ? {} : { body: "[{}]" })
          })
        )
      const metrc404 = { Message: "The requested resource could not be found (incorrect or invalid URI)." }
      for (const path of ["/no/such/path", "/packages/v3/active", "/packages/v2/active/extra", "/facilities/v2/x/y"]) {
        for (const method of ["GET", "POST", "PUT", "DELETE"]) {
          for (const scoped of [path, `${path}?licenseNumber=${license}`]) {
            const answer = await call(method, scoped)
            assert.strictEqual(answer.status, 404, `${method} ${scoped}`)
            assert.strictEqual(answer.headers.get("content-type"), "application/json")
            assert.deepStrictEqual(await answer.json(), metrc404, `${method} ${scoped}`)
          }
        }
      }
      // a path Metrc serves still asks for the licence first
      const unscoped = await call("GET", "/packages/v2/active")
      assert.strictEqual(unscoped.status, 400)
      assert.deepStrictEqual(await unscoped.json(), { Message: "The licenseNumber parameter is required." })
      // and an unknown path still needs a login: a refused key is refused before any route
      assert.strictEqual((await get("/no/such/path", "user_bad")).status, 401)
    }))

  it.effect("a refused login is 401 with a Basic challenge (WWW-Authenticate), whatever refused it", () =>
    Effect.promise(async () => {
      const challenged = (answer: Response, why: string) => {
        assert.strictEqual(answer.status, 401, why)
        const challenge = answer.headers.get("www-authenticate")
        assert.isNotNull(challenge, why)
        assert.match(challenge!, /^Basic realm="[^"]+"/, why)
      }
      const raw = (authorization?: string) =>
        handler(
          new Request(`${base}/facilities/v2/`, authorization === undefined ? {} : { headers: { authorization } })
        )
      challenged(await raw(), "no Authorization header")
      challenged(await raw("Bearer user_good"), "not Basic")
      challenged(await raw("Basic !!not-base64!!"), "not base64")
      challenged(await raw(`Basic ${btoa(":user_good")}`), "no vendor key")
      challenged(await get("/facilities/v2/", "user_bad"), "a wrong user key")
      const locked = await get("/facilities/v2/", "user_locked")
      challenged(locked, "a locked account")
      assert.include((await locked.json()).Message, "locked")

      const own = makeSandbox()
      const h = SandboxServer.makeHandler(own)
      const call = () =>
        h(new Request(`${base}/facilities/v2/`, { headers: { authorization: `Basic ${btoa("vendor:user_good")}` } }))
      const ok = await call()
      assert.strictEqual(ok.status, 200)
      assert.isNull(ok.headers.get("www-authenticate"))
      own.setFault(Sandbox.keyOf("provider_a", "CO", "user_good"), { kind: "expired_login" })
      challenged(await call(), "an expired login (fault)")
      own.setFault(Sandbox.keyOf("provider_a", "CO", "user_good"), null)
      own.apply(own.world("provider_a", "CO", "user_good"), {
        _tag: "Scenario",
        input: { name: "connection_login_required", params: {}, at: NOW }
      })
      challenged(await call(), "the connection_login_required scenario")
      assert.strictEqual((await call()).status, 200)
    }))

  it.effect("answers 429 with Retry-After past the configured rate", () =>
    Effect.promise(async () => {
      const limited = makeSandbox()
      ProviderAEmulator.configure(limited, { requestsPerSecond: 2 })
      const h = SandboxServer.makeHandler(limited)
      const call = () =>
        h(new Request(`${base}/facilities/v2/`, { headers: { authorization: `Basic ${btoa("vendor:user_good")}` } }))
      const statuses = [(await call()).status, (await call()).status]
      const third = await call()
      assert.deepStrictEqual(statuses, [200, 200])
      assert.strictEqual(third.status, 429)
      assert.strictEqual(third.headers.get("retry-after"), "1")
    }))

  it.effect("refuses the login once after the connection_login_required scenario", () =>
    Effect.promise(async () => {
      const world = sandbox.world("provider_a", "CO", "user_good")
      sandbox.apply(world, {
        _tag: "Scenario",
        input: { name: "connection_login_required", params: {}, at: NOW }
      })
      assert.strictEqual((await get("/facilities/v2/")).status, 401)
      assert.strictEqual((await get("/facilities/v2/")).status, 200)
    }))
})
