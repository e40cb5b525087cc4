/**
 * The SDK from a clone (issue #30): it is not on the npm registry, so its README tells how to
 * install it from a clone (a workspace dependency, or the tarball `npm pack` makes), `npm start`
 * and `npm test` build it, and the tarball holds the built SDK with its generated types.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const client = fileURLToPath(new URL("../", import.meta.url))

describe("the SDK from a clone", () => {
  it("its README installs it from a clone, never from the registry", () => {
    const readme = readFileSync(`${client}README.md`, "utf8")
    const install = readme.slice(
      readme.indexOf("## Install"),
      readme.indexOf("\n## ", readme.indexOf("## Install") + 1)
    )
    expect(install).not.toMatch(/npm install @tracebridge\/client\b/)
    expect(install).toMatch(/npm pack/)
    expect(install).toMatch(/packages\/client/)
  })

  it("npm start and npm test build it", () => {
    const scripts = JSON.parse(readFileSync(`${root}package.json`, "utf8")).scripts as Record<string, string>
    for (const name of ["start", "test"]) {
      const script = scripts[name]!
      // every package (no filter), or the client by name
      expect(/turbo run build(?![^&]*--filter)|--filter=@tracebridge\/client/.test(script), `${name}: ${script}`).toBe(
        true
      )
    }
  })

  it("npm pack makes a tarball with the built SDK and its generated types", () => {
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json"], {
        cwd: client,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"]
      })
    ) as ReadonlyArray<{ readonly files: ReadonlyArray<{ readonly path: string }> }>
    const files = packed[0]!.files.map((f) => f.path)
    expect(files).toEqual(
      expect.arrayContaining(["README.md", "dist/index.js", "dist/index.d.ts", "dist/generated/openapi.d.ts"])
    )
  }, 60_000)
})
