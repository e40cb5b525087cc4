import { assert, describe, it } from "@effect/vitest"
import type { Scenario } from "@tracebridge/sandbox"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Either } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join, sep } from "node:path"
import { fileURLToPath } from "node:url"
import * as ProviderBEmulator from "../src/providers/provider-b/Emulator.js"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 3_600_000

describe("Sandbox.version", () => {
  it("changes on every accepted change, restore and reset, and only then", () => {
    const sandbox = new Sandbox.Sandbox({
      providers: Registry.installed,
      seed: "42",
      referenceDate: REFERENCE,
      now: () => NOW
    })
    const world = sandbox.world("provider_a", "CO", "user_good")
    const other = sandbox.world("provider_a", "CO", "user_other")
    const key = Sandbox.keyOf("provider_a", "CO", "user_good")
    const otherKey = Sandbox.keyOf("provider_a", "CO", "user_other")
    const run = (name: string, params: unknown = {}) =>
      sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
        _tag: "Scenario",
        input: { name, params, at: NOW }
      })
    const seen = new Set([sandbox.version(key)])
    const expectNew = () => {
      const v = sandbox.version(key)
      assert.isFalse(seen.has(v), `version ${v} was seen before`)
      seen.add(v)
    }
    assert.strictEqual(sandbox.version(key), sandbox.version(key))

    assert.isTrue(Either.isRight(run("lab_result_received")))
    expectNew()
    const before = sandbox.version(key)
    assert.isTrue(Either.isLeft(run("no_such_scenario")))
    assert.strictEqual(sandbox.version(key), before, "a refused change changes nothing")

    const otherBefore = sandbox.version(otherKey)
    sandbox.restore(world, [])
    expectNew()
    assert.strictEqual(sandbox.version(otherKey), otherBefore, "another world keeps its version")

    sandbox.reset(key)
    expectNew()
    sandbox.world("provider_a", "CO", "user_good")
    sandbox.reset()
    expectNew()
    assert.notStrictEqual(sandbox.version(otherKey), otherBefore, "a full reset changes every world's version")
    void other
  })
})

describe("Sandbox owns its state", () => {
  const make = () =>
    new Sandbox.Sandbox({ providers: Registry.installed, seed: "42", referenceDate: REFERENCE, now: () => NOW })
  const biotrack = (sandbox: Sandbox.Sandbox, body: Record<string, unknown>) =>
    SandboxServer.makeHandler(sandbox)(
      new Request("http://sandbox.test/provider_b/HI", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ API: "4.0", ...body })
      })
    ).then((r) => r.json() as Promise<Record<string, unknown>>)
  const { good } = Registry.get("provider_b").logins
  const login = (sandbox: Sandbox.Sandbox) =>
    biotrack(sandbox, {
      action: "login",
      license_number: good["ubi"],
      username: good["username"],
      password: good["password"]
    }).then((a) => String(a["sessionid"]))

  it("a world's reset forgets that world, its log and its fault, and no other world's", () => {
    const sandbox = make()
    const key = Sandbox.keyOf("provider_a", "CO", "user_good")
    const otherKey = Sandbox.keyOf("provider_a", "CO", "user_other")
    const world = sandbox.world("provider_a", "CO", "user_good")
    sandbox.world("provider_a", "CO", "user_other")
    sandbox.setFault(key, { kind: "outage" })
    sandbox.setFaultFor({ provider: "provider_a", state: "CO", login: "user_other" }, { kind: "malformed" })
    assert.deepStrictEqual(sandbox.fault(key), { kind: "outage" })
    Either.getOrThrow(
      sandbox.apply(world, {
        _tag: "Scenario",
        input: { name: "transfer_arrived", params: {}, at: NOW }
      })
    )
    assert.strictEqual(sandbox.log(key).length, 1)
    sandbox.reset(key)
    assert.isUndefined(sandbox.fault(key))
    assert.strictEqual(sandbox.log(key).length, 0)
    assert.isFalse(sandbox.has("provider_a", "CO", "user_good"))
    assert.deepStrictEqual(sandbox.faultList(), [[otherKey, { kind: "malformed" }]])
    assert.isTrue(sandbox.has("provider_a", "CO", "user_other"))
  })

  it("the whole reset forgets every world, fault and emulator session, and keeps the emulators' configuration", async () => {
    const sandbox = make()
    ProviderBEmulator.configure(sandbox, { keyedTables: ["inventory"] })
    const session = await login(sandbox)
    const before = await biotrack(sandbox, { action: "sync_inventory", sessionid: session })
    assert.strictEqual(before["success"], 1)
    assert.isFalse(Array.isArray(before["inventory"]), "keyed as configured")
    sandbox.setFault(Sandbox.keyOf("provider_a", "CO", "user_good"), { kind: "outage" })
    sandbox.reset()
    assert.deepStrictEqual(sandbox.faultList(), [])
    assert.deepStrictEqual(sandbox.keys(), [])
    const after = await biotrack(sandbox, { action: "sync_inventory", sessionid: session })
    assert.strictEqual(after["success"], 0)
    assert.strictEqual(after["errorcode"], 63, "the session went with the reset")
    const again = await biotrack(sandbox, { action: "sync_inventory", sessionid: await login(sandbox) })
    assert.isFalse(Array.isArray(again["inventory"]), "the configuration stays")
  })

  it("two sandboxes share nothing: faults, sessions and configuration are each one's own", async () => {
    const one = make()
    const two = make()
    ProviderBEmulator.configure(one, { keyedTables: ["inventory"] })
    one.setFault(Sandbox.keyOf("provider_a", "CO", "user_good"), { kind: "outage" })
    assert.deepStrictEqual(two.faultList(), [])
    const session = await login(one)
    const elsewhere = await biotrack(two, { action: "sync_inventory", sessionid: session })
    assert.strictEqual(elsewhere["errorcode"], 63)
    const own = await biotrack(two, { action: "sync_inventory", sessionid: await login(two) })
    assert.isTrue(Array.isArray(own["inventory"]), "the other sandbox's configuration is not this one's")
  })

  it("no module of the sandbox keeps state beside it in a module-level table", () => {
    const root = fileURLToPath(new URL("../src/", import.meta.url))
    const found: Array<string> = []
    // Pure memos of values that cannot go stale (formatters by time zone), named here on purpose.
    // `bin.ts` is the command line (its arguments), not a module the sandbox runs on.
    const memos = new Set(["providers/provider-a/time.ts:formatters"])
    for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts") || file === "bin.ts") continue
      const text = readFileSync(join(root, file), "utf8")
      for (
        const match of text.matchAll(/^(?:export )?(?:const|let) (\w+)\s*(?::[^=]+)?=\s*new (?:Weak)?(?:Map|Set)\b/gm)
      ) {
        const name = `${file.split(sep).join("/")}:${match[1]}`
        if (!memos.has(name)) found.push(name)
      }
    }
    assert.deepStrictEqual(found, [])
  })
})
