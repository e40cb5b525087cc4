/**
 * Several API nodes on one Postgres (DECISIONS "Several API nodes"): two processes of the built
 * server (`dist/main.js`) share one fresh schema, and every request may land on either of them.
 *
 * - a request sees every write committed before it began, whichever node took it;
 * - sandbox writes are serialised per connection: a conflicting write gets 409 or 422, never a 500,
 *   and no accepted write is lost (nor renumbered by a restart);
 * - faults, resets, token revocation and disconnects hold on every node from the next request;
 * - a webhook delivery is claimed by one worker at a time: each event reaches the receiver once.
 *
 * Nothing here waits for a cache to expire: every cross-node read is the very next request after the
 * write it checks, and the reading node has read the same objects just before (so that anything it
 * keeps in memory is warm). Runs with `npm run test:pg` (TEST_DATABASE_URL).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { randomBytes } from "node:crypto"
import type { Answer, NodeSpec, RunningNode } from "./support/Nodes.js"
import { nodeSpec, removeData, start, tail } from "./support/Nodes.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { sleep, until } from "./support/Process.js"
import { receiver } from "./support/Receiver.js"

const url = testDatabaseUrl("MultiNode.pg.test.ts")

const CLIENT_ID = "tb_client_multinode"
const CLIENT_SECRET = `multinode-${randomBytes(12).toString("hex")}`

interface Facility {
  readonly id: string
  readonly name: string
  readonly license_number: string
  readonly capabilities: ReadonlyArray<string>
}

interface Package {
  readonly id: string
  readonly tag: string
  readonly item_name: string
  readonly item_category: string
  readonly item_strain: string | null
  readonly quantity: number
  readonly unit_of_measure: string
  readonly is_on_hold: boolean
  readonly source_package_ids: ReadonlyArray<string>
}

interface Created {
  readonly id: string
}

interface LabResult {
  readonly id: string
  readonly package_id: string
  readonly facility_id: string
  readonly overall_passed: boolean
}

interface TestedPackage extends Package {
  readonly lab_testing_state: string
  readonly lab_results: ReadonlyArray<LabResult>
}

interface ApiError {
  readonly type: string
  readonly code: string
  readonly message: string
}

interface Linked {
  readonly id: string
  readonly token: string
  readonly facilities: ReadonlyArray<Facility>
}

interface SimulateAnswer {
  readonly scenario: string
  readonly event: { readonly id: string; readonly type: string } | null
  readonly deliveries: number
}

interface TokenAnswer {
  readonly access_token: string
  readonly refresh_token: string
}

const show = (answer: Answer) => `${answer.status} ${answer.text.slice(0, 600)}`

/** Asserts the status and returns the envelope's `data`. */
const dataOf = <A>(answer: Answer, status: number, what: string): A => {
  assert.strictEqual(answer.status, status, `${what}: ${show(answer)}`)
  return (answer.body as { readonly data: A }).data
}

/** The error object of an error answer (undefined when the answer has none). */
const errorOf = (answer: Answer): ApiError | undefined => (answer.body as { readonly error?: ApiError } | null)?.error

/** Asserts an error answer with its status and code. */
const expectError = (answer: Answer, status: number, code: string, what: string) => {
  assert.strictEqual(answer.status, status, `${what}: ${show(answer)}`)
  assert.strictEqual(errorOf(answer)?.code, code, `${what}: ${show(answer)}`)
}

// The cluster: two nodes on one schema, with one encryption key and one client.
const scope = Effect.runSync(Scope.make())
let specs: ReadonlyArray<NodeSpec> = []
let a: RunningNode
let b: RunningNode
let access = ""

/** Both nodes' recent output, for failure messages. */
const logs = () => [a, b].filter((n) => n !== undefined).map((n) => tail(n)).join("\n\n")

/** Objects answered 201 by a write in any test: their path and the data of the 201. */
const written: Array<{ readonly path: string; readonly data: unknown; readonly what: string }> = []

const call = (
  node: RunningNode,
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  json?: unknown,
  token = access
) => node.call(method, path, { token, ...(json === undefined ? {} : { json }) })

/** Links a sandbox connection (provider_a, CO unless told) through `node`: public token, exchange, facilities. */
const link = async (
  node: RunningNode,
  provider: "provider_a" | "provider_b" = "provider_a",
  state = "CO"
): Promise<Linked> => {
  const pub = dataOf<{ readonly public_token: string }>(
    await call(node, "POST", "/v1/sandbox/public_token/create", { provider, state }),
    200,
    "POST /v1/sandbox/public_token/create"
  )
  const exchanged = dataOf<{ readonly connection_id: string; readonly connection_token?: string }>(
    await call(node, "POST", "/v1/link/token/exchange", { public_token: pub.public_token }),
    200,
    "POST /v1/link/token/exchange"
  )
  assert.isString(exchanged.connection_token, "the first exchange shows the connection token")
  const facilities = dataOf<ReadonlyArray<Facility>>(
    await call(node, "GET", `/v1/connections/${exchanged.connection_id}/facilities`),
    200,
    "GET facilities"
  )
  assert.isAbove(facilities.length, 3)
  return { id: exchanged.connection_id, token: exchanged.connection_token!, facilities }
}

const facilityPath = (linked: Linked, facility: Facility = linked.facilities[0]!) =>
  `/v1/connections/${linked.id}/facilities/${facility.id}`

const packagesOf = async (node: RunningNode, linked: Linked, facility?: Facility) =>
  dataOf<ReadonlyArray<Package>>(
    await call(node, "GET", `${facilityPath(linked, facility)}/packages?per_page=100`),
    200,
    `GET packages on ${node.spec.name}`
  )

/** A seeded package splits can be taken from: not on hold, holding at least `least`. */
const sourceOf = (packages: ReadonlyArray<Package>, least = 10, except: ReadonlyArray<string> = []) => {
  const source = packages.find((p) => !p.is_on_hold && p.quantity >= least && !except.includes(p.id))
  assert.isDefined(source, `a package not on hold with at least ${least}`)
  return source!
}

const splitBody = (source: Package, quantity: number) => ({
  item_name: source.item_name,
  item_category: source.item_category,
  item_strain: source.item_strain,
  quantity,
  unit_of_measure: source.unit_of_measure,
  source_package_ids: [source.id]
})

const getPackage = (node: RunningNode, linked: Linked, id: string) =>
  call(node, "GET", `${facilityPath(linked)}/packages/${encodeURIComponent(id)}`)

/** Reads `path` on both nodes: each must answer 200 with `expected`. */
const expectOnBoth = async (path: string, expected: unknown, what: string) => {
  for (const node of [a, b]) {
    const got = dataOf<unknown>(await call(node, "GET", path), 200, `${what} on ${node.spec.name}`)
    assert.deepStrictEqual(got, expected, `${what} on ${node.spec.name}`)
  }
}

const startCluster = async () => {
  a = await start(specs[0]!)
  // The first start bootstraps the organisation and client; the second finds them.
  b = await start(specs[1]!)
}

beforeAll(async () => {
  const database = await Effect.runPromise(Scope.extend(freshSchema(url, "multinode"), scope))
  const env = {
    DATABASE_URL: database,
    TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    TRACEBRIDGE_CLIENT_ID: CLIENT_ID,
    TRACEBRIDGE_CLIENT_SECRET: CLIENT_SECRET,
    TRACEBRIDGE_WEBHOOK_TICK_MS: "100",
    TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS: "2",
    // The limiter is not under test here: it never refuses.
    TRACEBRIDGE_RATE_LIMIT_RATE: "1000000",
    TRACEBRIDGE_RATE_LIMIT_BURST: "1000000",
    // a backfill whose node died is taken over after 3 s without a stored page
    TRACEBRIDGE_SYNC_TAKEOVER_SECONDS: "3"
  }
  specs = [await nodeSpec("A", env), await nodeSpec("B", env)]
  await startCluster()
  const token = await a.call("POST", "/v1/oauth/token", {
    json: { grant_type: "client_credentials", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }
  })
  assert.strictEqual(token.status, 200, show(token))
  access = (token.body as TokenAnswer).access_token
}, 60_000)

afterAll(async () => {
  await Promise.all([a, b].filter((n) => n !== undefined).map((n) => n.stop()))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  for (const spec of specs) removeData(spec)
}, 30_000)

describe.sequential("several API nodes on one Postgres", () => {
  it("a sandbox write on node A is seen by node B's very next request", async () => {
    const linked = await link(a)
    const base = facilityPath(linked)
    const source = sourceOf(await packagesOf(a, linked))
    // node B reads the source (and the list) first, so whatever it keeps is warm
    const before = dataOf<Package>(await getPackage(b, linked, source.id), 200, "the source on B")
    assert.strictEqual(before.quantity, source.quantity)
    const listBefore = await packagesOf(b, linked)

    const created = dataOf<Package>(
      await call(a, "POST", `${base}/packages`, splitBody(source, 2)),
      201,
      "a split on A"
    )
    written.push({ path: `${base}/packages/${encodeURIComponent(created.id)}`, data: created, what: "split (test 1)" })
    assert.deepStrictEqual(created.source_package_ids, [source.id])
    assert.strictEqual(created.quantity, 2)

    const onB = await getPackage(b, linked, created.id)
    assert.deepStrictEqual(dataOf<Package>(onB, 200, `the new package ${created.id} on B`), created)
    const sourceOnB = dataOf<Package>(await getPackage(b, linked, source.id), 200, "the source on B")
    assert.closeTo(sourceOnB.quantity, source.quantity - 2, 1e-6, "the source's quantity on B")
    const listAfter = await packagesOf(b, linked)
    assert.strictEqual(listAfter.length, listBefore.length + 1, "B's package list has the new package")
    assert.isTrue(listAfter.some((p) => p.id === created.id))

    // and the other way round: a split on B, read on A (which has read the source just before)
    dataOf<Package>(await getPackage(a, linked, source.id), 200, "the source on A")
    const back = dataOf<Package>(await call(b, "POST", `${base}/packages`, splitBody(source, 1)), 201, "a split on B")
    written.push({ path: `${base}/packages/${encodeURIComponent(back.id)}`, data: back, what: "split on B (test 1)" })
    assert.notStrictEqual(back.id, created.id, "the second split has an id of its own")
    assert.deepStrictEqual(dataOf<Package>(await getPackage(a, linked, back.id), 200, "B's split on A"), back)
    const sourceOnA = dataOf<Package>(await getPackage(a, linked, source.id), 200, "the source on A")
    assert.closeTo(sourceOnA.quantity, source.quantity - 3, 1e-6, "the source's quantity on A after both splits")
  }, 30_000)

  for (const [provider, state] of [["provider_a", "CO"], ["provider_b", "HI"]] as const) {
    it(
      `a lab result written on A at a grower's facility is read on B: by package_id, on the package, its lab_testing_state (${provider})`,
      async () => {
        const linked = await link(a, provider, state)
        // a facility without labs (a grower's) and a package of it a sample can be drawn from
        let grower: Facility | undefined
        let pkg: Package | undefined
        for (const facility of linked.facilities.filter((f) => !f.capabilities.includes("labs"))) {
          grower = facility
          pkg = (await packagesOf(a, linked, facility)).find((p) => !p.is_on_hold && p.quantity >= 2)
          if (pkg !== undefined) break
        }
        assert.isDefined(pkg, "a package off hold with quantity >= 2 at a facility without labs")
        const base = facilityPath(linked, grower)
        const byPackage = `${base}/lab_results?package_id=${encodeURIComponent(pkg!.id)}`
        const packagePath = `${base}/packages/${encodeURIComponent(pkg!.id)}`
        // node B reads the package and its results first, so whatever it keeps is warm
        const before = dataOf<ReadonlyArray<LabResult>>(await call(b, "GET", byPackage), 200, "results on B before")
        dataOf<TestedPackage>(await call(b, "GET", packagePath), 200, "the package on B before")

        const result = dataOf<LabResult>(
          await call(a, "POST", `${base}/lab_results`, {
            package_id: pkg!.id,
            lab_name: linked.facilities.find((f) => f.capabilities.includes("labs"))!.name,
            overall_passed: false,
            results: [{
              name: "Pesticides",
              category: "pesticides",
              value: 0.9,
              unit: "ppm",
              passed: false,
              notes: null
            }]
          }),
          201,
          "a lab result on A at the grower's"
        )
        written.push({
          path: `${base}/lab_results/${encodeURIComponent(result.id)}`,
          data: result,
          what: "lab result at a grower (test 1b)"
        })
        assert.strictEqual(result.package_id, pkg!.id, "on the package asked for")
        assert.strictEqual(result.facility_id, grower!.id)
        assert.notInclude(before.map((r) => r.id), result.id)

        const listed = dataOf<ReadonlyArray<LabResult>>(await call(b, "GET", byPackage), 200, "results on B")
        assert.deepStrictEqual(listed.filter((r) => r.id === result.id), [result], "listed once on B, as written")
        const onB = dataOf<TestedPackage>(await call(b, "GET", packagePath), 200, "the package on B")
        assert.deepStrictEqual(onB.lab_results.filter((r) => r.id === result.id), [result], "on the package once on B")
        assert.strictEqual(onB.lab_testing_state, "TestFailed", "the package's lab_testing_state on B")
        assert.deepStrictEqual(
          dataOf<LabResult>(
            await call(b, "GET", `${base}/lab_results/${encodeURIComponent(result.id)}`),
            200,
            "one on B"
          ),
          result
        )
      },
      30_000
    )
  }

  it("concurrent conflicting splits of one package across both nodes: 201, 409 or 422, nothing lost", async () => {
    const linked = await link(b)
    const base = facilityPath(linked)
    const source = sourceOf(await packagesOf(a, linked))
    await packagesOf(b, linked)
    // two of these fit in the source, three do not
    const quantity = Math.floor(source.quantity * 0.4 * 100) / 100
    const fit = Math.floor(source.quantity / quantity)
    assert.strictEqual(fit, 2)
    const answers = await Promise.all(
      Array.from(
        { length: 6 },
        (_, i) => call(i % 2 === 0 ? a : b, "POST", `${base}/packages`, splitBody(source, quantity))
      )
    )
    const statuses = answers.map((r) => r.status).join(", ")
    // every property is checked and every violation reported together
    const problems: Array<string> = []
    const softly = async (check: () => unknown) => {
      try {
        await check()
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error))
      }
    }
    for (const answer of answers) {
      await softly(() => {
        assert.include([201, 409, 422], answer.status, `a split answered ${show(answer)}`)
        if (answer.status === 409) assert.strictEqual(errorOf(answer)?.type, "conflict_error", show(answer))
        if (answer.status === 422) assert.strictEqual(errorOf(answer)?.type, "invalid_request_error", show(answer))
      })
    }
    const accepted = answers.filter((r) => r.status === 201).map((r) => (r.body as { readonly data: Package }).data)
    await softly(() => {
      assert.isAtLeast(accepted.length, 1, `at least one split is accepted (${statuses})`)
      assert.isAtMost(accepted.length, fit, `no more splits accepted than the source holds (${statuses})`)
    })
    const twice = accepted.map((p) => p.id).filter((id, i, ids) => ids.indexOf(id) !== i)
    await softly(() => assert.isEmpty(twice, `every accepted split has an id of its own; twice: ${twice.join(", ")}`))
    const expected = source.quantity - accepted.reduce((sum, p) => sum + p.quantity, 0)
    await softly(async () => {
      const onA = dataOf<Package>(await getPackage(a, linked, source.id), 200, "the source on A")
      const onB = dataOf<Package>(await getPackage(b, linked, source.id), 200, "the source on B")
      assert.closeTo(onA.quantity, expected, 1e-6, `the source on A lost exactly the accepted splits (${statuses})`)
      assert.deepStrictEqual(onB, onA, "the source reads the same on both nodes")
    })
    for (const created of accepted) {
      await softly(() =>
        expectOnBoth(`${base}/packages/${encodeURIComponent(created.id)}`, created, `split ${created.id}`)
      )
    }
    await softly(async () =>
      assert.deepStrictEqual(await packagesOf(a, linked), await packagesOf(b, linked), "the lists agree on both nodes")
    )
    if (problems.length > 0) assert.fail(`${problems.length} problem(s):\n\n${problems.join("\n\n")}\n\n${logs()}`)
    for (const created of accepted) {
      const path = `${base}/packages/${encodeURIComponent(created.id)}`
      written.push({ path, data: created, what: "concurrent split (test 2)" })
    }
  }, 30_000)

  it("a restart of both nodes keeps every accepted write, with the same ids and data", async () => {
    const linked = await link(a)
    const base = facilityPath(linked)
    const packages = await packagesOf(a, linked)
    const source = sourceOf(packages)
    // this test's own writes, all on A (tests 1 and 2 wrote on both nodes)
    const mine: typeof written = []
    const split = dataOf<Package>(await call(a, "POST", `${base}/packages`, splitBody(source, 1.5)), 201, "split on A")
    mine.push({ path: `${base}/packages/${encodeURIComponent(split.id)}`, data: split, what: "split (test 3)" })

    const lab = linked.facilities.find((f) => f.capabilities.includes("labs"))
    assert.isDefined(lab, "a testing laboratory among the facilities")
    const labBase = facilityPath(linked, lab)
    const sample = (await packagesOf(a, linked, lab))[0]
    assert.isDefined(sample, "a package at the laboratory")
    const result = dataOf<Created>(
      await call(a, "POST", `${labBase}/lab_results`, {
        package_id: sample!.id,
        lab_name: lab!.name,
        overall_passed: true,
        results: [{ name: "THC", category: "potency", value: 21.5, unit: "%", passed: true, notes: null }]
      }),
      201,
      "lab result on A"
    )
    mine.push({ path: `${labBase}/lab_results/${encodeURIComponent(result.id)}`, data: result, what: "lab result" })

    const moved = sourceOf(packages, 1, [source.id])
    const transfer = dataOf<Created>(
      await call(a, "POST", `${base}/transfers`, {
        transfer_type: "Wholesale",
        shipper_facility: linked.facilities[0]!.license_number,
        recipient_facility: linked.facilities[3]!.license_number,
        packages: [{
          package_id: moved.id,
          tag: moved.tag,
          item_name: moved.item_name,
          quantity: moved.quantity,
          unit_of_measure: moved.unit_of_measure
        }]
      }),
      201,
      "transfer on A"
    )
    mine.push({ path: `${base}/transfers/${encodeURIComponent(transfer.id)}`, data: transfer, what: "transfer" })
    const listsBefore = await packagesOf(a, linked)

    const codes = await Promise.all([a.stop(), b.stop()])
    await startCluster()

    for (const { data, path, what } of mine) await expectOnBoth(path, data, `${what} after the restart`)
    for (const { data, path, what } of written) await expectOnBoth(path, data, `${what} after the restart`)
    written.push(...mine)
    assert.deepStrictEqual(await packagesOf(a, linked), listsBefore, "A's package list after the restart")
    assert.deepStrictEqual(await packagesOf(b, linked), listsBefore, "B's package list after the restart")

    // A write after the restart gets an id of its own: none of the earlier ones is handed out again,
    // and the earlier objects keep their data. (It is read back on the node that took it only: reads
    // across nodes are the first test's subject.)
    const again = dataOf<Package>(await call(b, "POST", `${base}/packages`, splitBody(source, 1)), 201, "split on B")
    const earlier = written.map((w) => (w.data as Created).id)
    assert.notInclude(earlier, again.id, "a new write after the restart reuses no earlier id")
    const fresh = `${base}/packages/${encodeURIComponent(again.id)}`
    assert.deepStrictEqual(dataOf<Package>(await call(b, "GET", fresh), 200, "the new split on B"), again)
    for (const { data, path, what } of written) await expectOnBoth(path, data, `${what} after a new write`)
    assert.deepStrictEqual(codes, [0, 0], "both nodes exit 0 on SIGTERM")
  }, 45_000)

  it("a fault set on A holds on B's next read; cleared on B, on A's next read", async () => {
    const linked = await link(a)
    const base = facilityPath(linked)
    const list = `${base}/packages?per_page=100`
    const faults = `/v1/sandbox/${linked.id}/faults`
    const seeded = await packagesOf(a, linked)
    assert.deepStrictEqual(await packagesOf(b, linked), seeded)

    const set = dataOf<{ readonly fault: unknown }>(await call(a, "PUT", faults, { kind: "outage" }), 200, "PUT fault")
    assert.deepStrictEqual(set.fault, { kind: "outage" })
    expectError(await call(b, "GET", list), 503, "provider_unavailable", "B's read during an outage set on A")
    assert.deepStrictEqual(
      dataOf<{ readonly fault: unknown }>(await call(b, "GET", faults), 200, "GET fault on B").fault,
      { kind: "outage" }
    )
    const cleared = dataOf<{ readonly fault: unknown }>(await call(b, "DELETE", faults), 200, "DELETE fault on B")
    assert.isNull(cleared.fault)
    assert.deepStrictEqual(
      dataOf<ReadonlyArray<Package>>(await call(a, "GET", list), 200, "A's read once B cleared the fault"),
      seeded
    )
  }, 30_000)

  it("a reset on A after a write on B: B's next read shows the seeded world again, without the fault", async () => {
    const linked = await link(a)
    const base = facilityPath(linked)
    const list = `${base}/packages?per_page=100`
    const faults = `/v1/sandbox/${linked.id}/faults`
    const seeded = await packagesOf(a, linked)
    assert.deepStrictEqual(await packagesOf(b, linked), seeded)
    // a write and a fault on B (so B surely holds both), then a reset on A clears both for B's next read
    const source = sourceOf(seeded)
    const created = dataOf<Package>(await call(b, "POST", `${base}/packages`, splitBody(source, 3)), 201, "split on B")
    dataOf<Package>(await getPackage(b, linked, created.id), 200, "the split on B")
    dataOf<unknown>(await call(b, "PUT", faults, { kind: "outage" }), 200, "PUT fault on B")
    const reset = dataOf<{ readonly connection_id: string; readonly reset_at: string }>(
      await call(a, "POST", `/v1/sandbox/${linked.id}/reset`),
      200,
      "reset on A"
    )
    assert.strictEqual(reset.connection_id, linked.id)
    expectError(await getPackage(b, linked, created.id), 404, "resource_not_found", "the split on B after the reset")
    assert.deepStrictEqual(
      dataOf<ReadonlyArray<Package>>(await call(b, "GET", list), 200, "B's list after the reset"),
      seeded,
      "B's list is the seeded world again"
    )
    assert.isNull(dataOf<{ readonly fault: unknown }>(await call(b, "GET", faults), 200, "fault on B").fault)
    assert.deepStrictEqual(await packagesOf(a, linked), seeded, "A's list is the seeded world again")
  }, 30_000)

  it("a token family revoked on A (a refresh token used twice) is refused on B's next request", async () => {
    // a token family of its own: refresh once, then reuse the first refresh token on A
    const grant = await a.call("POST", "/v1/oauth/token", {
      json: { grant_type: "client_credentials", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }
    })
    assert.strictEqual(grant.status, 200, show(grant))
    const first = grant.body as TokenAnswer
    const refreshed = await a.call("POST", "/v1/oauth/token", {
      json: { grant_type: "refresh_token", refresh_token: first.refresh_token }
    })
    assert.strictEqual(refreshed.status, 200, show(refreshed))
    const second = refreshed.body as TokenAnswer
    for (const token of [first.access_token, second.access_token]) {
      dataOf<unknown>(await call(b, "GET", "/v1/connections", undefined, token), 200, "B with a live token")
    }
    const reused = await a.call("POST", "/v1/oauth/token", {
      json: { grant_type: "refresh_token", refresh_token: first.refresh_token }
    })
    assert.strictEqual(reused.status, 400, show(reused))
    assert.strictEqual((reused.body as { readonly error: string }).error, "invalid_grant")
    for (const [token, which] of [[first.access_token, "first"], [second.access_token, "second"]] as const) {
      expectError(
        await call(b, "GET", "/v1/connections", undefined, token),
        401,
        "unauthorized",
        `B with the ${which} access token of a family revoked on A`
      )
    }
    const again = await b.call("POST", "/v1/oauth/token", {
      json: { grant_type: "refresh_token", refresh_token: second.refresh_token }
    })
    assert.strictEqual(again.status, 400, `the family's latest refresh token on B: ${show(again)}`)
    assert.strictEqual((again.body as { readonly error: string }).error, "invalid_grant")
  }, 30_000)

  it("a connection disconnected on A: B's next requests get 401 (its token) and 409 connection_inactive", async () => {
    const linked = await link(a)
    const list = `${facilityPath(linked)}/packages?per_page=5`
    dataOf<unknown>(await call(b, "GET", list, undefined, linked.token), 200, "B with the connection token")
    dataOf<unknown>(await call(b, "GET", list), 200, "B with the access token")
    const removed = dataOf<{ readonly status: string }>(
      await call(a, "DELETE", `/v1/connections/${linked.id}`),
      200,
      "DELETE the connection on A"
    )
    assert.strictEqual(removed.status, "inactive")
    expectError(
      await call(b, "GET", list, undefined, linked.token),
      401,
      "unauthorized",
      "B with the connection token of a connection disconnected on A"
    )
    expectError(await call(b, "GET", list), 409, "connection_inactive", "B's read of a connection disconnected on A")
    expectError(
      await call(b, "POST", `/v1/sandbox/${linked.id}/simulate`, { scenario: "lab_result_received", params: {} }),
      409,
      "connection_inactive",
      "B's simulate on a connection disconnected on A"
    )
    assert.strictEqual(
      dataOf<{ readonly status: string }>(await call(b, "GET", `/v1/connections/${linked.id}`), 200, "B's view").status,
      "inactive"
    )
  }, 30_000)

  it("a connection relinked on A with another login: B's very next requests read that login's world", async () => {
    const linked = await link(a)
    // B reads first, so that what it keeps for the connection (its session and world, its facility
    // list, the read cache) is warm
    const ids = (list: ReadonlyArray<Facility>) => list.map((f) => f.id).sort()
    const path = `/v1/connections/${linked.id}/facilities`
    const before = dataOf<ReadonlyArray<Facility>>(await call(b, "GET", path), 200, "B's facilities")
    assert.deepStrictEqual(ids(before), ids(linked.facilities))
    await packagesOf(b, linked)
    const relinked = dataOf<{ readonly public_token: string }>(
      await call(a, "POST", "/v1/sandbox/public_token/create", {
        connection_id: linked.id,
        credentials: { user_key: "user_good_relinked" }
      }),
      200,
      "update mode on A, another login"
    )
    dataOf<unknown>(
      await call(a, "POST", "/v1/link/token/exchange", { public_token: relinked.public_token }),
      200,
      "the exchange on A"
    )
    const after = dataOf<ReadonlyArray<Facility>>(await call(b, "GET", path), 200, "B's facilities after the relink")
    assert.notDeepEqual(ids(after), ids(before), "another login's sandbox world has other facilities")
    const fresh = after.find((f) => !before.some((o) => o.id === f.id))!
    const packages = dataOf<ReadonlyArray<Package>>(
      await call(b, "GET", `/v1/connections/${linked.id}/facilities/${fresh.id}/packages?per_page=5`),
      200,
      "B's read of the new login's facility"
    )
    assert.isAbove(packages.length, 0)
    assert.deepStrictEqual(
      dataOf<ReadonlyArray<Facility>>(await call(a, "GET", path), 200, "A's facilities after the relink"),
      after
    )
  }, 30_000)

  it("each event fired on either node is delivered exactly once", async () => {
    const hooks = await Effect.runPromise(Scope.extend(receiver([200]), scope))
    const webhook = dataOf<Created>(
      await call(a, "POST", "/v1/webhooks", { url: hooks.url, events: ["lab_result.received"] }),
      201,
      "POST /v1/webhooks"
    )
    // One connection, its events fired alternately on each node: each a change to the shared log
    // and an event of its own.
    const linked = await link(a)
    const n = 6
    const fired: Array<string> = []
    for (let i = 0; i < n; i++) {
      const node = i % 2 === 0 ? a : b
      const simulated = dataOf<SimulateAnswer>(
        await call(node, "POST", `/v1/sandbox/${linked.id}/simulate`, {
          scenario: "lab_result_received",
          params: { result: i % 3 === 0 ? "fail" : "pass" }
        }),
        200,
        `simulate #${i + 1} on ${node.spec.name}\n${logs()}`
      )
      assert.strictEqual(simulated.deliveries, 1)
      assert.strictEqual(simulated.event?.type, "lab_result.received")
      fired.push(simulated.event!.id)
    }
    assert.strictEqual(new Set(fired).size, n, "every simulation fired an event of its own")
    const ids = () => hooks.received.map((r) => String(r.headers["x-tracebridge-event-id"] ?? ""))
    await until("every event at the receiver", () => new Set(ids()).size >= n, 15_000).catch((error: unknown) => {
      throw new Error(`${String(error)}; received ${JSON.stringify(ids())} of ${JSON.stringify(fired)}\n${logs()}`)
    })
    // long enough for either node's worker (100 ms ticks) to send a second copy, if it were to
    await sleep(1_500)
    assert.deepStrictEqual([...ids()].sort(), [...fired].sort(), "each event delivered exactly once")
    for (const r of hooks.received) {
      const body = JSON.parse(r.body) as { readonly id: string; readonly type: string }
      assert.strictEqual(body.id, r.headers["x-tracebridge-event-id"])
      assert.strictEqual(body.type, "lab_result.received")
    }
    const log = dataOf<
      ReadonlyArray<{ readonly event_id: string; readonly status: string; readonly attempts: ReadonlyArray<unknown> }>
    >(
      await call(b, "GET", `/v1/webhooks/${webhook.id}/deliveries?per_page=100`),
      200,
      "the delivery log on B"
    )
    assert.deepStrictEqual(log.map((d) => d.event_id).sort(), [...fired].sort(), "one delivery per event")
    for (const delivery of log) {
      assert.strictEqual(delivery.status, "succeeded", JSON.stringify(delivery))
      assert.strictEqual(delivery.attempts.length, 1, JSON.stringify(delivery))
    }
  }, 45_000)
  it(
    "two nodes share the sync: each runs backfills, and one killed mid-backfill is finished by the other, every object once",
    async () => {
      type Status = {
        readonly facilities: ReadonlyArray<
          {
            readonly facility_id: string
            readonly status: string
            readonly resources: ReadonlyArray<{ readonly status: string }>
          }
        >
      }
      const statusOn = async (node: RunningNode, id: string) =>
        dataOf<Status>(await call(node, "GET", `/v1/connections/${id}/sync`), 200, `sync status on ${node.spec.name}`)
      // one connection's sync starts on A, another's on B
      const first = await link(a)
      const second = await link(b)
      // a slow state system (40 ms an answer) keeps the first backfill going long enough to kill A half way
      const slowed = await call(a, "PUT", `/v1/sandbox/${first.id}/faults`, { kind: "slow", delay_ms: 40 })
      assert.strictEqual(slowed.status, 200, show(slowed))
      await statusOn(a, first.id)
      await statusOn(b, second.id)
      // A goes away (kill -9) once some of the first connection's lists are done, but not all
      await until("A half way through its backfill", async () => {
        const status = await statusOn(b, first.id)
        const live = status.facilities.flatMap((f) => f.resources).filter((r) => r.status === "live").length
        return live >= 2
      }, 30_000)
      const halfway = await statusOn(b, first.id)
      a.child.kill("SIGKILL")
      await until("A gone", () => !a.alive(), 5_000)
      assert.isTrue(halfway.facilities.some((f) => f.status === "backfilling"), "killed before the backfill was done")
      assert.strictEqual((await call(b, "DELETE", `/v1/sandbox/${first.id}/faults`)).status, 200)
      // B's scheduler takes the first connection's backfill over; B finishes its own
      for (const id of [first.id, second.id]) {
        await until(`every facility of ${id} live on B`, async () => {
          const status = await statusOn(b, id)
          return status.facilities.length > 0 && status.facilities.every((f) => f.status === "live")
        }, 90_000).catch((error: unknown) => {
          throw new Error(`${String(error)}\n${logs()}`)
        })
      }
      for (const facility of (await statusOn(b, first.id)).facilities) {
        const base = `/v1/connections/${first.id}/facilities/${facility.facility_id}`
        const page = dataOf<ReadonlyArray<{ readonly id: string; readonly type: string; readonly object_id: string }>>(
          await call(b, "GET", `${base}/changes?limit=500`),
          200,
          "the feed on B"
        )
        assert.strictEqual(new Set(page.map((c) => c.object_id)).size, page.length, "every object once")
        assert.deepStrictEqual(
          page.map((c) => Number(c.id.slice(4))),
          page.map((_, i) => i + 1),
          "no page stored twice"
        )
        const packages = dataOf<ReadonlyArray<Package>>(
          await call(b, "GET", `${base}/packages?per_page=100`),
          200,
          "packages on B"
        )
        assert.deepStrictEqual(
          page.filter((c) => c.type === "packages").map((c) => c.object_id).sort(),
          packages.map((p) => p.id).sort(),
          "nothing lost"
        )
      }
      a = await start(specs[0]!)
    },
    150_000
  )
})
