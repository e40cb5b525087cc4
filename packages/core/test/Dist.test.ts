/**
 * The built package, as an embedding service sees it: a plain Node ESM script imports
 * `@tracebridge/core` from `dist/` and uses it, without loading HTTP, SQL or `node:` I/O modules;
 * of its modules only the barrel and `WebhookSignature` are open to it (`exports`).
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const dist = join(root, "dist")

const script = `
import { Ids, Package, ProviderPort, Page, Transitions } from "@tracebridge/core"
import { verifyWebhook } from "@tracebridge/core/WebhookSignature"
const id = Ids.make("package", "provider_a", "1")
const page = Page.paginate([1, 2, 3], { page: 2, per_page: 2 })
const closed = await import("@tracebridge/core/Transitions").then(() => "open", (e) => e.code)
console.log(JSON.stringify({ id, page, port: typeof ProviderPort.make, fields: Object.keys(Package.Package.fields).length, can: Transitions.canTransition(Transitions.transferStatus, "pending", "in_transit"), verify: typeof verifyWebhook, closed }))
`

describe("Dist", () => {
  it("has been built", () => {
    assert.isTrue(existsSync(join(dist, "index.js")), "run the build first (npm test does)")
  })

  it("imports into a plain Node ESM script and loads only effect and its own modules", () => {
    const result = spawnSync(
      process.execPath,
      ["--import", join(root, "test/support/record-imports.mjs"), "--input-type=module", "-e", script],
      { cwd: root, encoding: "utf8" }
    )
    assert.strictEqual(result.status, 0, result.stderr)
    const out = JSON.parse(result.stdout.trim())
    assert.strictEqual(out.id, "pkg_cHJvdmlkZXJfYTox")
    assert.deepStrictEqual(out.page.items, [3])
    assert.strictEqual(out.port, "function")
    assert.strictEqual(out.fields, 19)
    assert.isTrue(out.can)
    // The public subpath opens; any other module is reached through the barrel only.
    assert.strictEqual(out.verify, "function")
    assert.strictEqual(out.closed, "ERR_PACKAGE_PATH_NOT_EXPORTED")

    const loaded = result.stderr.split("\n").filter((l) => l.startsWith("LOADED ")).map((l) => l.slice(7))
    assert.isAbove(loaded.length, 10)
    const foreign = loaded.filter((url) =>
      !url.startsWith("data:") &&
      !url.includes("/packages/core/dist/") &&
      !url.includes("/node_modules/effect/") &&
      !url.includes("/node_modules/fast-check/") &&
      !url.includes("/node_modules/pure-rand/")
    )
    assert.deepStrictEqual(foreign, [])
  })

  it("ships no node: imports and depends only on effect", () => {
    const files = readdirSync(dist, { recursive: true }).map(String).filter((f) => f.endsWith(".js"))
    assert.isAbove(files.length, 10)
    for (const file of files) {
      assert.notMatch(readFileSync(join(dist, file), "utf8"), /from\s+["']node:/, file)
    }
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    assert.deepStrictEqual(Object.keys(manifest.dependencies ?? {}), ["effect"])
  })
})
