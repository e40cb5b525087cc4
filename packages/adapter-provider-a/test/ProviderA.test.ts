import { assert, describe, it } from "@effect/vitest"
import { ProviderA } from "@tracebridge/adapter-provider-a"
import type { ProviderError, Resource } from "@tracebridge/core"
import { Ids, Page, ProviderContract, ProviderDescriptor, ProviderPort } from "@tracebridge/core"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import { http, HttpResponse } from "msw"
import { LICENSE, makeServer, NOW } from "./support/FakeMetrc.js"
import { facilityId, portLayer, sessionFor, withPort } from "./support/layers.js"
import { useMsw } from "./support/msw.js"

const msw = useMsw()
const HOUR = 3_600_000

describe("ProviderA descriptor", () => {
  it("is complete, pages by 20 and declares the three writes", () => {
    assert.deepStrictEqual(ProviderDescriptor.problems(ProviderA.descriptor), [])
    assert.strictEqual(ProviderA.descriptor.providerPageSize, 20)
    assert.deepStrictEqual(ProviderA.descriptor.writes, ["split_package", "record_lab_result", "create_transfer"])
  })

  it("addresses each state on its own api-{st} and sandbox-api-{st} host", () => {
    for (const state of ProviderA.states) {
      const st = state.toLowerCase()
      assert.deepStrictEqual(ProviderA.descriptor.baseUrls[state], {
        production: `https://api-${st}.metrc.com`,
        sandbox: `https://sandbox-api-${st}.metrc.com`
      })
    }
    assert.isTrue(ProviderA.descriptor.capabilities.CA!.sales_deliveries)
    assert.isFalse(ProviderA.descriptor.capabilities.OH!.sales_deliveries)
  })
})

describe.sequential("ProviderA conformance (CO, over msw)", () => {
  const server = makeServer()
  const fail = (status: number, count: number, headers: Record<string, string> = {}) =>
    Effect.sync(() =>
      server.failNext(
        () =>
          new HttpResponse(status === 401 ? null : JSON.stringify({ Message: `status ${status}` }), {
            status,
            headers
          }),
        { count }
      )
    )
  const own = server.data.get(LICENSE)!
  // The fake's catalogue records carry no LastModified and its transfers share one: give them
  // change markers apart, so that updated_since can be told from no filter.
  for (const area of ["items", "strains", "locations", "patients"] as const) {
    own[area].forEach((record, i) => {
      record.LastModified = new Date(NOW - (i + 1) * 2 * HOUR).toISOString()
    })
  }
  own.transfers.incoming[0]!.LastModified = new Date(NOW - 40 * HOUR).toISOString()
  /** Metrc's change marker of the record behind an object (`LastModified`). */
  const lastModified = (resource: Resource.Name, item: any): number | null | undefined => {
    const license = Option.getOrUndefined(Ids.decodeAs("facility", "provider_a", item.facility_id))
    const d = license === undefined ? undefined : server.data.get(license)
    if (d === undefined) return undefined
    const at = (record: { readonly LastModified?: string | null } | undefined) =>
      record === undefined ? undefined : record.LastModified == null ? null : Date.parse(record.LastModified)
    const byId = (records: ReadonlyArray<any>, id: string) =>
      at(records.find((r) => String(r.Id ?? r.PatientId) === id))
    switch (resource) {
      case "packages":
        return at(d.packages.find((p) => p.Label === item.tag))
      case "plants":
        return at(
          [...d.plants.vegetative, ...d.plants.flowering, ...d.plants.inactive].find((p) => p.Label === item.tag)
        )
      case "harvests":
        return byId(d.harvests, item.provider_harvest_id)
      case "lab_results":
        // Metrc keeps no change marker per result: results are read per package changed in the window.
        return at(d.packages.find((p) => Ids.make("package", "provider_a", p.Label) === item.package_id))
      case "transfers": {
        const { incoming, outgoing, rejected, templates } = d.transfers
        return item.provider_transfer_id.startsWith("template-")
          ? byId(templates, item.provider_transfer_id.slice("template-".length))
          : byId([...incoming, ...outgoing, ...rejected], item.provider_transfer_id)
      }
      case "sales":
        return byId(d.receipts, item.provider_sale_id)
      case "sales_deliveries":
        return byId(d.deliveries, item.provider_delivery_id)
      case "items":
        return byId(d.items, item.provider_item_id)
      case "strains":
        return byId(d.strains, item.provider_strain_id)
      case "locations":
        return byId(d.locations, item.provider_location_id)
      case "patients":
        return byId(d.patients, item.provider_patient_id)
    }
  }
  /** Runs a call while the fake stops answering, moving the clock past every try's timeout. */
  const unanswered = <A, E>(call: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      msw.use(
        http.all("*", ({ request }) =>
          new Promise<Response>((resolve) => {
            request.signal.addEventListener("abort", () => resolve(HttpResponse.error()))
          }))
      )
      const fiber = yield* Effect.fork(call)
      for (let i = 0; i < 200 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
        yield* TestClock.adjust("31 seconds")
      }
      return yield* Fiber.join(fiber)
    }).pipe(Effect.ensuring(Effect.sync(() => msw.resetHandlers())))
  const layer = Layer.mergeAll(
    portLayer(),
    Layer.succeed(ProviderContract.ContractFixture, {
      session: sessionFor(server),
      invalidCredentials: { user_key: "user-key-wrong-0001" },
      facilityId,
      updatedAt: lastModified,
      failures: [
        {
          name: "500s past the retries become ProviderUnavailable",
          arrange: fail(500, 4),
          expected: "ProviderUnavailable"
        },
        {
          name: "no answer within the timeout, past the retries, becomes ProviderTimeout",
          arrange: Effect.void,
          expected: "ProviderTimeout",
          call: (port, fx) => unanswered(port.list("items", fx.session, fx.facilityId, {}, Page.firstPage))
        },
        { name: "a 401 becomes ProviderLoginRequired", arrange: fail(401, 1), expected: "ProviderLoginRequired" },
        { name: "a 403 becomes ProviderPermissionDenied", arrange: fail(403, 1), expected: "ProviderPermissionDenied" },
        {
          name: "429s past the retries become ProviderRateLimited",
          arrange: fail(429, 4, { "retry-after": "0" }),
          expected: "ProviderRateLimited"
        },
        {
          name: "a body off the wire schema becomes ProviderInvalidResponse",
          arrange: Effect.sync(() => server.failNext(() => HttpResponse.json({ Data: [{ Id: "x" }], Total: 1 }))),
          expected: "ProviderInvalidResponse"
        },
        {
          name: "a write refused with validation rows becomes ProviderRejected",
          arrange: Effect.void,
          expected: "ProviderRejected",
          call: (port, fx) =>
            port.splitPackage(fx.session, fx.facilityId, {
              item_name: "No Such Item",
              item_category: "Buds",
              item_strain: null,
              quantity: 1,
              unit_of_measure: "Grams",
              source_package_ids: [Ids.make("package", "provider_a", "1A4FF0000000000000000001")]
            })
        },
        {
          name: "a 404 on a get becomes ResourceNotFound",
          arrange: Effect.void,
          expected: "ResourceNotFound",
          call: (port, fx) => port.get("items", fx.session, fx.facilityId, Ids.make("item", "provider_a", "999999"))
        }
      ]
    })
  )
  for (const check of ProviderContract.checksFor(ProviderA.descriptor, "CO")) {
    it.effect(check.name, () => Effect.provide(Effect.zipRight(TestClock.setTime(NOW), check.run), layer))
  }
})

describe("ProviderA", () => {
  it.effect("gives an exact page 2 of 45 packages at per_page 25, over provider pages of 20", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const page2 = yield* port.list("packages", sessionFor(server), facilityId, {}, { page: 2, per_page: 25 })
        assert.deepStrictEqual(page2.pagination, { page: 2, per_page: 25, total: 45, total_pages: 2 })
        assert.deepStrictEqual(
          page2.items.map((p) => p.provider_package_id),
          Array.from({ length: 20 }, (_, i) => String(1026 + i))
        )
        const past = yield* port.list("packages", sessionFor(server), facilityId, {}, { page: 3, per_page: 25 })
        assert.deepStrictEqual(past.items, [])
        assert.strictEqual(past.pagination.total, 45)
        const pages = server.log.filter((l) => l.startsWith("GET /packages/v2/active")).map((l) =>
          new URL(`https://x${l.slice(4)}`).searchParams
        )
        assert.isTrue(pages.every((q) => Number(q.get("pageSize")) <= 20))
        // page 2 at 25 = items 26..45 = provider page 2 (21..40, skipping 5) and page 3 (41..45)
        assert.includeMembers(pages.map((q) => q.get("pageNumber")), ["2", "3"])
      })
    )
  })

  it.effect("enriches packages with their lab results and source harvests", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const session = sessionFor(server)
        const failed = yield* port.get(
          "packages",
          session,
          facilityId,
          Ids.make("package", "provider_a", "1A4FF0000000000000000002")
        )
        assert.strictEqual(failed.lab_testing_state, "TestFailed")
        assert.deepStrictEqual(failed.source_harvest_ids, [Ids.make("harvest", "provider_a", "200")])
        assert.deepStrictEqual(failed.source_package_ids, [
          Ids.make("package", "provider_a", "1A4FF0000000000000000001")
        ])
        assert.strictEqual(failed.source_tag, "1A4FF0000000000000000001")
        const [result] = failed.lab_results
        assert.isFalse(result!.overall_passed)
        assert.deepStrictEqual(
          result!.results.map((r) => [r.name, r.category, r.unit, r.passed]),
          [["THC", "potency", "%", true], ["Microbiologicals", "microbials", "CFU/g", true], [
            "Pesticides",
            "pesticides",
            "ppm",
            false
          ]]
        )
        const untested = yield* port.get(
          "packages",
          session,
          facilityId,
          Ids.make("package", "provider_a", "1A4FF0000000000000000004")
        )
        assert.deepStrictEqual(untested.lab_results, [])
        assert.isFalse(server.log.some((l) => l.includes("packageId=1004")), "no results call for an untested package")
      })
    )
  })

  it.effect("filters packages: on hold through /onhold, lab state and tag locally", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const session = sessionFor(server)
        const held = yield* port.listAll("packages", session, facilityId, { is_on_hold: true })
        assert.deepStrictEqual(held.map((p) => p.provider_package_id), ["1007", "1017", "1027", "1037"])
        assert.isTrue(server.log.some((l) => l.startsWith("GET /packages/v2/onhold")))
        const free = yield* port.list("packages", session, facilityId, { is_on_hold: false }, {
          page: 1,
          per_page: 100
        })
        assert.strictEqual(free.pagination.total, 41)
        const passed = yield* port.listAll("packages", session, facilityId, { lab_testing_state: "TestPassed" })
        assert.strictEqual(passed.length, 15)
        const tagged = yield* port.listAll("packages", session, facilityId, { tag: "1A4FF0000000000000000010" })
        assert.deepStrictEqual(tagged.map((p) => p.provider_package_id), ["1010"])
        const none = yield* port.listAll("packages", session, facilityId, { tag: "1A4FF0000000000000999999" })
        assert.deepStrictEqual(none, [])
      })
    )
  })

  it.effect("walks lastModified windows of at most 24 h for updated_since", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const since = new Date(NOW - 3 * 24 * 3_600_000).toISOString()
        const recent = yield* port.listAll("packages", sessionFor(server), facilityId, { updated_since: since })
        assert.strictEqual(recent.length, 45) // every fixture package changed in the last 45 hours
        const windows = server.log
          .filter((l) => l.startsWith("GET /packages/v2/active"))
          .map((l) => new URL(`https://x${l.slice(4)}`).searchParams)
          .filter((q) => q.has("lastModifiedStart"))
        assert.isAtLeast(windows.length, 3)
        for (const q of windows) {
          const span = Date.parse(q.get("lastModifiedEnd")!) - Date.parse(q.get("lastModifiedStart")!)
          assert.isAtMost(span, 24 * 3_600_000)
        }
        const latest = yield* port.listAll("packages", sessionFor(server), facilityId, {
          updated_since: new Date(NOW - 5.5 * 3_600_000).toISOString()
        })
        assert.deepStrictEqual(latest.map((p) => p.provider_package_id), ["1001", "1002", "1003", "1004", "1005"])
      })
    )
  })

  it.effect("refuses updated_since and from older than maxLookbackDays before calling the provider", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const session = sessionFor(server)
        const calls = server.log.length
        const old = new Date(NOW - 367 * 86_400_000).toISOString()
        const packages = yield* Effect.flip(port.list("packages", session, facilityId, { updated_since: old }, {
          page: 1,
          per_page: 10
        }))
        assert.strictEqual(packages._tag, "InvalidInput")
        assert.strictEqual((packages as ProviderError.InvalidInput).path, "updated_since")
        const sales = yield* Effect.flip(port.list("sales", session, facilityId, { from: "1970-01-01T00:00:00Z" }, {
          page: 1,
          per_page: 10
        }))
        assert.strictEqual((sales as ProviderError.InvalidInput).path, "from")
        assert.strictEqual(server.log.length, calls, "the provider was called")
        const recent = new Date(NOW - 300 * 86_400_000).toISOString()
        yield* port.list("harvests", session, facilityId, { updated_since: recent }, { page: 1, per_page: 10 })
      })
    )
  })

  it.effect("reads sales in 24 h windows over the look-back, in the state's time zone", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const session = sessionFor(server)
        const sales = yield* port.listAll("sales", session, facilityId, {})
        assert.strictEqual(sales.length, 6)
        const byId = new Map(sales.map((s) => [s.provider_sale_id, s]))
        assert.strictEqual(byId.get("600")!.sale_date, "2026-03-06T00:35:45.000Z") // MST, UTC-7
        assert.strictEqual(byId.get("603")!.sale_date, "2026-03-08T23:35:45.000Z") // MDT from 8 March, UTC-6
        assert.strictEqual(byId.get("600")!.receipt_number, "EXT-0001")
        assert.deepStrictEqual(byId.get("601")!.items[0]!, {
          package_id: Ids.make("package", "provider_a", "1A4FF0000000000000000003"),
          tag: "1A4FF0000000000000000003",
          item_name: "Test Kush Buds",
          quantity: 3,
          unit_of_measure: "Grams",
          unit_price: 10.3333,
          discount: 0,
          total: 31
        })
        const receiptCalls = server.log.filter((l) => l.startsWith("GET /sales/v2/receipts/active"))
        assert.isTrue(receiptCalls.every((l) => l.includes("lastModifiedStart")))
        const window = yield* port.listAll("sales", session, facilityId, {
          from: "2026-03-07T00:00:00Z",
          to: "2026-03-09T00:00:00Z"
        })
        // 601 and 602 are MST evenings (UTC next day); 603 is after the DST switch on 8 March
        assert.deepStrictEqual(window.map((s) => s.provider_sale_id).sort(), ["601", "602", "603"])
      })
    )
  })

  it.effect("derives transfer status from deliveries, the rejected list and templates", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const session = sessionFor(server)
        const all = yield* port.listAll("transfers", session, facilityId, {})
        assert.deepStrictEqual(
          all.map((t) => [t.provider_transfer_id, t.status]),
          [["400", "received"], ["401", "in_transit"], ["410", "pending"], ["411", "rejected"]]
        )
        const incoming = yield* port.listAll("transfers", session, facilityId, { direction: "incoming" })
        assert.deepStrictEqual(incoming.map((t) => t.provider_transfer_id), ["400", "401"])
        const rejected = yield* port.listAll("transfers", session, facilityId, { status: "rejected" })
        assert.deepStrictEqual(rejected.map((t) => t.provider_transfer_id), ["411"])
        const received = all[0]!
        assert.strictEqual(received.actual_arrival, "2026-03-10T18:55:00.000Z") // 12:55 MDT
        assert.deepStrictEqual(received.packages.map((p) => p.tag), [
          "1A4FF0000000000000000001",
          "1A4FF0000000000000000002"
        ])
        assert.strictEqual(received.vehicle_info, "X X X")
      })
    )
  })

  // shared/research/provider-payloads/metrc-transfers.json (GET /transfers/v2/rejected): the row
  // carries the shipper and the recipient, and licence numbers come in several documented shapes
  // (`123-ABC`, `3a-X0001`, `402-X0002`; metrc-facilities.json `License.Number`). A manifest the
  // facility rejected itself is listed there too: it is incoming, not outgoing (issue 17).
  it.effect("reads a rejected manifest's direction from its row, whatever the licence's shape (issue 17)", () => {
    const server = makeServer()
    const own = server.data.get(LICENSE)!
    const rejectedHere = {
      ...own.transfers.incoming[1]!,
      _source: "metrc-transfers.json GET /transfers/v2/rejected, placeholder licences",
      Id: 420,
      ManifestNumber: "0000000420",
      DeliveryId: 4200,
      ShipperFacilityLicenseNumber: "4a-X0001",
      ShipperFacilityName: "Test Shipper 4a",
      RecipientFacilityLicenseNumber: LICENSE.toLowerCase()
    }
    own.transfers.rejected.push(rejectedHere)
    return withPort((port) =>
      Effect.gen(function*() {
        const session = sessionFor(server)
        const ids = (ts: ReadonlyArray<{ readonly provider_transfer_id: string }>) =>
          ts.map((t) => t.provider_transfer_id)
        const incoming = yield* port.listAll("transfers", session, facilityId, { direction: "incoming" })
        assert.deepStrictEqual(ids(incoming), ["400", "401", "420"])
        const outgoing = yield* port.listAll("transfers", session, facilityId, { direction: "outgoing" })
        assert.deepStrictEqual(ids(outgoing), ["410", "411"])
        const all = yield* port.listAll("transfers", session, facilityId, {})
        assert.deepStrictEqual(ids(all), ["400", "401", "410", "411", "420"])
        const got = incoming.find((t) => t.provider_transfer_id === "420")!
        assert.strictEqual(got.status, "rejected")
        assert.strictEqual(got.shipper_facility, "4a-X0001")
        assert.strictEqual(got.recipient_facility, LICENSE.toLowerCase())
        const rejectedIncoming = yield* port.listAll("transfers", session, facilityId, {
          direction: "incoming",
          status: "rejected"
        })
        assert.deepStrictEqual(ids(rejectedIncoming), ["420"])
      })
    )
  })

  it.effect("lists a harvest's source plants from the plants that name it", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const harvest = yield* port.get(
          "harvests",
          sessionFor(server),
          facilityId,
          Ids.make("harvest", "provider_a", "200")
        )
        assert.deepStrictEqual(harvest.source_plant_ids, [
          Ids.make("plant", "provider_a", "1A4FF0000000000000000906"),
          Ids.make("plant", "provider_a", "1A4FF0000000000000000907")
        ])
        assert.strictEqual(harvest.harvested_date, "2026-02-01")
        const clones = yield* port.listAll("plants", sessionFor(server), facilityId, { growth_phase: "clone" })
        assert.deepStrictEqual(clones, [])
      })
    )
  })

  it.effect("reads camelCase answers exactly like PascalCase ones", () => {
    const pascal = makeServer()
    const camel = makeServer({ camelCase: true })
    return withPort((port) =>
      Effect.gen(function*() {
        const a = yield* port.list("packages", sessionFor(pascal), facilityId, {}, { page: 1, per_page: 10 })
        const b = yield* port.list("packages", sessionFor(camel), facilityId, {}, { page: 1, per_page: 10 })
        assert.deepStrictEqual(b, a)
        const facilities = yield* port.listFacilities(sessionFor(camel), { page: 1, per_page: 10 })
        assert.strictEqual(facilities.pagination.total, 2)
      })
    )
  })

  it.effect("maps facilities, with capabilities from the facility type and status from the licence", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const page = yield* port.listFacilities(sessionFor(server), { page: 1, per_page: 10 })
        const [cultivation, dispensary] = page.items
        assert.strictEqual(cultivation!.id, facilityId)
        assert.strictEqual(cultivation!.status, "active")
        assert.includeMembers([...cultivation!.capabilities], [
          "cultivation",
          "harvests",
          "packages",
          "sales",
          "sales_deliveries",
          "patients",
          "transfers"
        ])
        assert.strictEqual(dispensary!.status, "inactive") // licence ended 2025-06-30
        assert.deepStrictEqual(dispensary!.user_permissions!.is_owner, true)
      })
    )
  })

  it.effect("scopes every call to the facility's licence and answers a foreign one with a permission error", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const other = yield* port.listAll(
          "items",
          sessionFor(server),
          Ids.make("facility", "provider_a", "CO-TEST-0002"),
          {}
        )
        assert.deepStrictEqual(other.map((i) => i.provider_item_id), ["100010", "100011", "100012"])
        const error = yield* Effect.flip(
          port.listAll("items", sessionFor(server), Ids.make("facility", "provider_a", "CO-ELSEWHERE-9"), {})
        )
        assert.strictEqual(error._tag, "ProviderPermissionDenied")
        assert.isTrue(server.log.every((l) => l.startsWith("GET /facilities/v2/") || l.includes("licenseNumber=")))
      })
    )
  })
})

describe("ProviderA pacing", () => {
  it.effect("starts no more requests per facility than its rate allows", () => {
    const server = makeServer()
    const item = Ids.make("item", "provider_a", "10")
    return Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const port = yield* ProviderPort.ProviderPort
      const fiber = yield* Effect.fork(
        Effect.forEach(
          Array.from({ length: 6 }, () => item),
          (id) => port.get("items", sessionFor(server), facilityId, id),
          {
            concurrency: "unbounded"
          }
        )
      )
      const sent = () => server.log.filter((l) => l.startsWith("GET /items/v2/10")).length
      yield* TestClock.adjust("10 millis")
      yield* Effect.yieldNow()
      assert.strictEqual(sent(), 2, "a bucket of 2 lets 2 requests start at once")
      yield* TestClock.adjust("3 seconds")
      const items = yield* Fiber.join(fiber)
      assert.strictEqual(items.length, 6)
      assert.strictEqual(sent(), 6)
    }).pipe(Effect.provide(portLayer({ perFacility: { requestsPerSecond: 2, concurrency: 10 } })))
  })
})

describe("ProviderA failures", () => {
  it.live("retries a 429 after its Retry-After, then succeeds", () => {
    const server = makeServer()
    server.failNext(() =>
      HttpResponse.json({ Message: "The limit of API calls allowed has been exceeded." }, {
        status: 429,
        headers: { "retry-after": "1" }
      }), { path: /\/items\// })
    return Effect.gen(function*() {
      const port = yield* ProviderPort.ProviderPort
      const started = Date.now()
      const items = yield* port.listAll("items", sessionFor(server), facilityId, {})
      assert.strictEqual(items.length, 3)
      assert.isAtLeast(Date.now() - started, 900)
      assert.strictEqual(server.log.filter((l) => l.startsWith("GET /items/v2/active")).length, 2)
    }).pipe(Effect.provide(portLayer()))
  })

  it.effect("retries 500s on a GET and surfaces them after the last retry", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        server.failNext(() => HttpResponse.json({ Message: "An error has occurred." }, { status: 500 }), { count: 2 })
        const items = yield* port.listAll("items", sessionFor(server), facilityId, {})
        assert.strictEqual(items.length, 3)
        server.failNext(() => HttpResponse.json({ Message: "An error has occurred." }, { status: 500 }), { count: 4 })
        const error = yield* Effect.flip(port.listAll("strains", sessionFor(server), facilityId, {}))
        assert.strictEqual(error._tag, "ProviderUnavailable")
        if (error._tag === "ProviderUnavailable") assert.strictEqual(error.status, 500)
        assert.include(error.message, "An error has occurred.")
        assert.strictEqual(server.log.filter((l) => l.startsWith("GET /strains/v2/active")).length, 4)
      })
    )
  })

  it.effect("never retries a write after a 500", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        server.failNext(() => HttpResponse.json({ Message: "An error has occurred." }, { status: 500 }), {
          path: /\/labtests\/v2\/record$/
        })
        const error = yield* Effect.flip(port.recordLabResult(sessionFor(server), facilityId, {
          package_id: Ids.make("package", "provider_a", "1A4FF0000000000000000004"),
          lab_name: "Test Analytical Labs LLC",
          overall_passed: true,
          results: [{ name: "THC", category: "potency", value: 20, unit: "%", passed: true, notes: null }],
          lab_license: null,
          test_type: "ComplianceTesting",
          test_date: null
        }))
        assert.strictEqual(error._tag, "ProviderUnavailable")
        assert.strictEqual(server.log.filter((l) => l.startsWith("POST /labtests/v2/record")).length, 1)
      })
    )
  })

  it.effect("names the field of a malformed body, and refuses a body that is not JSON", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        server.failNext(() => HttpResponse.json({ Data: [{ Id: 1, Name: "Vault", LocationTypeName: 5 }], Total: 1 }))
        const error = yield* Effect.flip(port.listAll("locations", sessionFor(server), facilityId, {}))
        assert.strictEqual(error._tag, "ProviderInvalidResponse")
        if (error._tag === "ProviderInvalidResponse") assert.strictEqual(error.path, "Data.0.LocationTypeName")
        server.failNext(() => new HttpResponse("<html>maintenance</html>", { status: 200 }))
        const html = yield* Effect.flip(port.listAll("locations", sessionFor(server), facilityId, {}))
        if (html._tag === "ProviderInvalidResponse") assert.strictEqual(html.path, "(body)")
        else assert.fail(html._tag)
      })
    )
  })

  it.effect("turns 400 row arrays into ProviderRejected carrying the provider's messages", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(port.splitPackage(sessionFor(server), facilityId, {
          item_name: "No Such Item",
          item_category: "Buds",
          item_strain: null,
          quantity: 1,
          unit_of_measure: "Grams",
          source_package_ids: [Ids.make("package", "provider_a", "1A4FF0000000000000000001")]
        }))
        assert.strictEqual(error._tag, "ProviderRejected")
        if (error._tag === "ProviderRejected") {
          assert.deepStrictEqual(error.messages, ["row 0: Item No Such Item does not exist."])
        }
      })
    )
  })

  it.effect("refuses a wrong user key with ProviderLoginRequired and a split with mixed units with InsufficientQuantity", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const login = yield* Effect.flip(port.checkCredentials(sessionFor(server, "user-key-wrong-0001")))
        assert.strictEqual(login._tag, "ProviderLoginRequired")
        const mixed = yield* Effect.flip(port.splitPackage(sessionFor(server), facilityId, {
          item_name: "Test Kush Buds",
          item_category: "Buds",
          item_strain: null,
          quantity: 1,
          unit_of_measure: "Grams",
          source_package_ids: [Ids.make("package", "provider_a", "1A4FF0000000000000000002")]
        }))
        assert.strictEqual(mixed._tag, "InsufficientQuantity")
        assert.include(mixed.message, "cannot convert")
        assert.isFalse(server.log.some((l) => l.startsWith("POST")))
      })
    )
  })

  it.effect("converts units across sources when splitting", () => {
    const server = makeServer()
    return withPort((port) =>
      Effect.gen(function*() {
        const source = Ids.make("package", "provider_a", "1A4FF0000000000000000001")
        const created = yield* port.splitPackage(sessionFor(server), facilityId, {
          item_name: "Test Kush Pre-Roll",
          item_category: "Pre-Roll",
          item_strain: "Test Kush",
          quantity: 0.25,
          unit_of_measure: "Ounces",
          source_package_ids: [source]
        })
        assert.strictEqual(created.quantity, 0.25)
        assert.strictEqual(created.unit_of_measure, "Ounces")
        const after = yield* port.get("packages", sessionFor(server), facilityId, source)
        assert.closeTo(after.quantity, 10 - 7.087381, 1e-6) // 0.25 oz in grams
      })
    )
  })
})
