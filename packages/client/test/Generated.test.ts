/**
 * The checked-in types (`src/generated/openapi.ts`) are what openapi-typescript makes of the API's
 * OpenAPI document now: regenerated in memory from the built @tracebridge/api (`npm test` builds
 * it first) by the same script, and compared.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { expect, it } from "vitest"

const script = fileURLToPath(new URL("../../../scripts/sdk-generate.mjs", import.meta.url))
const target = fileURLToPath(new URL("../src/generated/openapi.ts", import.meta.url))

it("src/generated/openapi.ts is in step with the OpenAPI document (else: npm run sdk:generate)", async () => {
  const { stdout: expected } = await promisify(execFile)(process.execPath, [script, "--print"], {
    maxBuffer: 64 * 1024 * 1024
  })
  expect(expected).toContain("export interface paths")
  expect(expected).toContain("\"/v1/oauth/token\"")
  const actual = readFileSync(target, "utf8")
  if (actual !== expected) {
    const [was, now] = [actual.split("\n"), expected.split("\n")]
    const first = now.findIndex((line, i) => line !== was[i])
    expect.fail(
      "packages/client/src/generated/openapi.ts is out of step with the API's OpenAPI document " +
        `(first difference at line ${first + 1}: ${JSON.stringify(now[first])}). ` +
        "Run `npm run sdk:generate` and commit the file."
    )
  }
})
