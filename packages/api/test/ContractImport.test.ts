/**
 * The contract loads no server code (ADR 0022): a fresh Node process imports the built
 * `@tracebridge/api` and builds the OpenAPI document from it (examples included), while a loader
 * hook records every module it loads. No module of the sandbox (its store, emulators, worlds), of
 * http (server, handlers, services, persistence), nor the server and database libraries may be
 * among them. The built `dist/` is what an SDK imports; `npm test` builds it first.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const register = fileURLToPath(new URL("./support/register.mjs", import.meta.url))

/** What the contract must never load, each with why. */
const forbidden: ReadonlyArray<readonly [RegExp, string]> = [
  [/\/packages\/sandbox\//, "the sandbox (its store, emulators or worlds)"],
  [/\/packages\/http\//, "http (server, handlers, services or persistence)"],
  [/\/packages\/sync\//, "the managed sync"],
  [/\/node_modules\/@effect\/platform-node(-shared)?\//, "a Node HTTP server library"],
  [/\/node_modules\/@effect\/sql[^/]*\//, "a database library"],
  [/\/node_modules\/(@libsql|libsql|better-sqlite3|pg)\//, "a database driver"],
  [/\/node_modules\/@faker-js\//, "the sandbox's world generator"]
]

/** What the contract does load: itself, the catalog it reads, and core. */
const expectedModules = ["/packages/api/dist/Api.js", "/packages/providers/dist/Catalog.js", "/packages/core/dist/"]

/** Imports the built package in a fresh process; the URLs of every module it loaded. */
const loadedBy = async (script: string): Promise<{ readonly urls: ReadonlyArray<string>; readonly stdout: string }> => {
  const dir = mkdtempSync(join(tmpdir(), "tracebridge-contract-"))
  const file = join(dir, "loaded.txt")
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", register, "--input-type=module", "-e", script],
      { cwd: root, env: { ...process.env, TRACEBRIDGE_RECORD_LOADS: file }, maxBuffer: 16 * 1024 * 1024 }
    )
    return { urls: readFileSync(file, "utf8").split("\n").filter((line) => line !== ""), stdout }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("@tracebridge/api in a fresh process", () => {
  it("builds the document and loads no sandbox, emulator, server, handler or persistence module", async () => {
    assert.isTrue(
      existsSync(join(root, "packages/api/dist/index.js")),
      "packages/api is not built (npm test builds it; or npx tsc -b packages/api)"
    )
    const { stdout, urls } = await loadedBy(
      [
        "const { Api } = await import(\"@tracebridge/api\")",
        "const { OpenApi } = await import(\"@effect/platform\")",
        "const document = OpenApi.fromApi(Api.Api)",
        "console.log(JSON.stringify({ paths: Object.keys(document.paths).length }))"
      ].join("\n")
    )
    // The hook saw the contract, the catalog it reads and core (so it records what loads).
    for (const expected of expectedModules) {
      assert.isTrue(urls.some((url) => url.includes(expected)), `${expected} was not loaded:\n${urls.join("\n")}`)
    }
    assert.isAbove(JSON.parse(stdout).paths, 30)
    const offenders = urls.flatMap((url) =>
      forbidden.filter(([pattern]) => pattern.test(url)).map(([, what]) => `${what}: ${url}`)
    )
    assert.deepStrictEqual(offenders, [])
  }, 60_000)

  it("the check would see a forbidden module (importing the sandbox is caught)", async () => {
    const { urls } = await loadedBy("await import(\"@tracebridge/sandbox\")")
    assert.isTrue(urls.some((url) => forbidden[0]![0].test(url)))
  }, 60_000)
})
