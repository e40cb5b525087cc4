/**
 * The emulator's indexes (`providers/provider-a/lookup.ts`): a lastModified window and a package
 * by id or label answer from indexes kept per list, and every way the world changes (a stamp set
 * on its own, a record pushed onto the same list, a list replaced) shows in the next answer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Ids } from "@tracebridge/core"
import { SandboxServer } from "@tracebridge/sandbox"
import * as A from "./Support.js"

const auth = `Basic ${btoa(`lookup-test-vendor-key:${A.good.user_key}`)}`

describe("ProviderA emulator lookups", () => {
  const a = A.make()
  const emulator = SandboxServer.makeHandler(a.sandbox)
  const cultivator = a.facility("cultivation")
  const license = cultivator.facility.license_number
  const get = async (path: string, query: Record<string, string> = {}) => {
    const url = new URL(`${a.upstream.baseUrl("provider_a", "CO")}${path}`)
    url.searchParams.set("licenseNumber", license)
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v)
    const answer = await emulator(new Request(url, { headers: { authorization: auth } }))
    return { status: answer.status, body: answer.status === 200 ? await answer.json() : null }
  }
  // a quiet window, an hour long, a day before now
  const from = A.NOW - 25 * A.HOUR
  const window = {
    lastModifiedStart: new Date(from).toISOString(),
    lastModifiedEnd: new Date(from + A.HOUR).toISOString()
  }
  const idsIn = async () => {
    const { body } = await get("/packages/v2/active", window)
    return (body.Data as Array<{ Id: number }>).map((p) => String(p.Id))
  }

  it("shows a stamp set on its own (the list array unchanged) in the next window read", async () => {
    const before = await idsIn()
    const pkg = cultivator.packages.find((p) => !before.includes(p.provider_package_id!))!
    a.world.modified.set(pkg.id, from + 60_000)
    assert.include(await idsIn(), pkg.provider_package_id)
    a.world.modified.set(pkg.id, A.NOW)
    assert.notInclude(await idsIn(), pkg.provider_package_id)
  })

  it("finds a package pushed onto the same list, by id and by label, and in its window", async () => {
    const model = cultivator.packages[0]!
    assert.strictEqual((await get(`/packages/v2/${model.provider_package_id}`)).status, 200, "the index is built")
    const pushed = {
      ...model,
      id: Ids.make("package", "provider_a", "1A4FF0000000022000099999"),
      tag: "1A4FF0000000022000099999",
      provider_package_id: "987654321"
    }
    cultivator.packages.push(pushed)
    a.world.modified.set(pushed.id, from + 120_000)
    assert.strictEqual((await get("/packages/v2/987654321")).body.Label, pushed.tag)
    assert.strictEqual((await get(`/packages/v2/${pushed.tag}`)).body.Id, 987654321)
    assert.include(await idsIn(), "987654321")
    const harvests = await get("/packages/v2/987654321/source/harvests")
    assert.strictEqual(harvests.status, 200)
  })

  it("answers from a replaced list: a package taken away is gone, by id, by label and from its window", async () => {
    const gone = cultivator.packages.find((p) => p.tag !== "1A4FF0000000022000099999")!
    a.world.modified.set(gone.id, from + 180_000)
    assert.include(await idsIn(), gone.provider_package_id)
    assert.strictEqual((await get(`/packages/v2/${gone.tag}`)).status, 200)
    cultivator.packages = cultivator.packages.filter((p) => p.id !== gone.id)
    assert.notInclude(await idsIn(), gone.provider_package_id)
    assert.strictEqual((await get(`/packages/v2/${gone.tag}`)).status, 404)
    assert.strictEqual((await get(`/packages/v2/${gone.provider_package_id}/source/harvests`)).status, 404)
    assert.deepStrictEqual(
      (await get("/labtests/v2/results", { packageId: gone.provider_package_id! })).body.Data,
      [],
      "no lab results for a package the facility no longer holds"
    )
  })
})
