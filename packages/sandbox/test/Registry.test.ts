/**
 * The one registration list: every installed provider is sound and reachable through the sandbox
 * server; a list that is not sound, or a catalog entry without its sandbox part, fails at start-up
 * with the reason; and outside the providers' own folders, no source file of core, providers, api,
 * sandbox, connect or http names a provider in code but the two registration lists (the catalog's
 * and the sandbox's; DECISIONS "Providers are modules").
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderModule } from "@tracebridge/core"
import { Catalog } from "@tracebridge/providers"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : []
  })

/** The code of a file without its comments (block, line) — strings stay: a name in a string is code. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1")

describe("Registry", () => {
  it("lists sound providers, each under its descriptor's name", () => {
    assert.deepStrictEqual(Registry.problems(Registry.providers), [])
    assert.isAtLeast(Registry.installed.names.length, 2)
    for (const name of Registry.installed.names) {
      assert.strictEqual(Registry.get(name).module.descriptor.name, name)
    }
  })

  it("an unsound list or an unknown name fails with a clear error", () => {
    const first = Registry.providers[0]!
    assert.throws(() => Registry.make([first, first]), /registered twice/)
    assert.throws(() => Registry.make([]), /no provider is registered/)
    assert.throws(() => Registry.get("provider_nope"), /provider_nope is not an installed provider; installed: /)
    assert.deepStrictEqual(ProviderModule.problems(Registry.providers.map((p) => p.module)), [])
  })

  it("pairs every catalog entry with its sandbox part, by name, and refuses a lone entry or part", () => {
    assert.deepStrictEqual(Registry.installed.names, Catalog.installed.names)
    for (const provider of Registry.providers) {
      assert.strictEqual(provider.module, Catalog.get(provider.name))
    }
    const [first, second] = [Catalog.modules[0]!, Registry.parts[1]!]
    assert.throws(() => Registry.pair([first], Registry.parts), /has a sandbox part but no catalog entry/)
    assert.throws(() => Registry.pair(Catalog.modules, [second]), /is in the catalog but has no sandbox part/)
    assert.throws(() => Registry.pair(Catalog.modules, [...Registry.parts, second]), /has two sandbox parts/)
  })

  it("the sandbox server mounts every installed provider, and answers 404 for any other", async () => {
    const sandbox = new Sandbox.Sandbox({
      providers: Registry.installed,
      seed: "1",
      referenceDate: "2026-03-15T00:00:00.000Z",
      now: () => Date.parse("2026-03-15T00:00:00.000Z")
    })
    const handler = SandboxServer.makeHandler(sandbox)
    for (const name of Registry.installed.names) {
      const response = await handler(new Request(`${SandboxServer.IN_PROCESS_ORIGIN}/${name}/CO/`))
      assert.notStrictEqual(response.status, 404, name)
    }
    const unknown = await handler(new Request(`${SandboxServer.IN_PROCESS_ORIGIN}/provider_nope/CO/facilities/v2/`))
    assert.strictEqual(unknown.status, 404)
  })

  it("outside the providers' own folders, only the registration lines name a provider in code", () => {
    const providerNames = /\bprovider_[a-z]\b|\bProvider[AB]\b|adapter-provider-|\bmetrc\b|\bbiotrack\b/i
    const allowed = new Set(["packages/providers/src/Catalog.ts", "packages/sandbox/src/Registry.ts"])
    const offenders: Array<string> = []
    for (const pkg of ["core", "providers", "api", "sandbox", "connect", "http"]) {
      for (const file of sourceFiles(join(root, "packages", pkg, "src"))) {
        const path = relative(root, file)
        if (path.startsWith("packages/sandbox/src/providers/") || allowed.has(path) || path.endsWith("index.ts")) {
          continue
        }
        const lines = code(readFileSync(file, "utf8")).split("\n").filter((line) => providerNames.test(line))
        if (lines.length > 0) offenders.push(`${path}: ${lines[0]!.trim()}`)
      }
    }
    assert.deepStrictEqual(offenders, [])
  })
})
