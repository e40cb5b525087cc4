#!/usr/bin/env node
// Lints the OpenAPI document the API serves (`OpenApi.fromApi(Api)` of the built @tracebridge/api)
// with Redocly's recommended rules (redocly.yaml). Exits non-zero on any error; CI runs it.
//
//   npm run lint:openapi        build @tracebridge/api, then lint
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { loadDocument } from "./sdk-generate.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "tracebridge-openapi-"))
const file = join(dir, "openapi.json")
writeFileSync(file, JSON.stringify(await loadDocument(), null, 2))
const lint = spawnSync(
  "npx",
  ["--no-install", "redocly", "lint", file, "--config", join(root, "redocly.yaml"), "--format", "summary"],
  {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
  }
)
rmSync(dir, { recursive: true, force: true })
// Redocly's banner about Node 20 is noise here: print its findings only.
const output = `${lint.stdout}${lint.stderr}`.split("\n").filter((line) => !/[║╔╚]/.test(line)).join("\n").trim()
console.log(output)
process.exit(lint.status ?? 1)
