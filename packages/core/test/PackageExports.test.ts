/**
 * Every package's `exports` opens only its public modules (ADR 0023): the barrel (`.`) and explicit
 * subpaths, each a top-level module that the barrel also exports (or a built browser bundle), never
 * a `./*` pattern that would open every module, and `./internal/*` closed. The template that
 * `npm run new-provider` copies obeys the same rule.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const manifests: ReadonlyArray<readonly [string, string]> = [
  ...readdirSync(join(root, "packages"))
    .filter((name) => existsSync(join(root, "packages", name, "package.json")))
    .map((name) => [`packages/${name}`, join(root, "packages", name, "package.json")] as const),
  ["the new-provider template", join(root, "scripts/templates/provider/adapter/package.json.tmpl")]
]

const exportsOf = (file: string): Record<string, unknown> => JSON.parse(readFileSync(file, "utf8")).exports

describe("package exports", () => {
  it("reads every package", () => {
    assert.isAtLeast(manifests.length, 10)
  })

  for (const [name, file] of manifests) {
    it(`${name}: the barrel and explicit subpaths only, no pattern that opens every module`, () => {
      const exports = exportsOf(file)
      assert.isObject(exports, `${name} has no exports map`)
      assert.property(exports, ".", `${name} exports no barrel`)
      assert.strictEqual(exports["./internal/*"], null, `${name} must close ./internal/*`)
      for (const [subpath, target] of Object.entries(exports)) {
        if (subpath.includes("*")) {
          assert.isNull(target, `${name}: ${subpath} opens modules by pattern; list the public ones instead`)
        }
        assert.notInclude(JSON.stringify(target), "*", `${name}: ${subpath} points at a pattern`)
      }
    })
  }

  it("a module subpath opens a top-level module of src, never one under a folder", () => {
    for (const [name, file] of manifests) {
      const dir = join(file, "..")
      for (const [subpath, target] of Object.entries(exportsOf(file))) {
        if (subpath === "." || target === null || typeof target === "string") continue // bundles
        const module = subpath.slice(2)
        assert.match(module, /^[A-Z][A-Za-z0-9]*$/, `${name}: ${subpath} is not a top-level module`)
        if (!file.endsWith(".tmpl")) {
          assert.isTrue(existsSync(join(dir, "src", `${module}.ts`)), `${name}: ${subpath} has no src/${module}.ts`)
        }
      }
    }
  })
})
