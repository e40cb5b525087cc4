#!/usr/bin/env node
// npm run new-provider -- provider_c [--display "Provider C"] [--no-install]
//
// Scaffolds a small, provider-neutral, working provider from scripts/templates/provider:
//   packages/adapter-provider-c/                       the adapter (descriptor, wire, mappers, port, module)
//   packages/sandbox/src/providers/provider-c/         its sandbox part (emulator, logins, profile)
//   packages/sandbox/test/providers/provider-c/        the conformance kit run against its emulator
// registers it in the provider catalog (packages/providers/src/Catalog.ts: the adapter's module)
// and in the sandbox's registry (packages/sandbox/src/Registry.ts: its emulator), one line each,
// adds the catalog's dependency and project reference on the new adapter and the root project
// reference, regenerates the barrels, and links the workspace (npm install). See
// docs/adding-a-provider.md, ADR 0010 and ADR 0022.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"

const root = new URL("..", import.meta.url).pathname
const args = process.argv.slice(2)
const name = args.find((a) => !a.startsWith("--"))
const flag = (f) => args.includes(f)
const option = (f) => {
  const i = args.indexOf(f)
  return i >= 0 ? args[i + 1] : undefined
}

const fail = (message) => {
  console.error(`new-provider: ${message}`)
  process.exit(1)
}

if (name === undefined || flag("--help")) {
  console.log("usage: npm run new-provider -- provider_<name> [--display \"Display Name\"] [--no-install]")
  process.exit(name === undefined && !flag("--help") ? 1 : 0)
}
if (!/^provider_[a-z0-9][a-z0-9_]{0,30}$/.test(name)) {
  fail(`${name} is not a provider name: provider_ and lower-case letters, digits or _ (e.g. provider_c)`)
}

const suffix = name.slice("provider_".length)
const folder = name.replace(/_/g, "-") // provider-c
const pascal = name.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("") // ProviderC
const display = option("--display") ?? name.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join(" ")
const upper = suffix.toUpperCase().replace(/_/g, "")

const adapterDir = join(root, "packages", `adapter-${folder}`)
const sandboxDir = join(root, "packages", "sandbox", "src", "providers", folder)
const testDir = join(root, "packages", "sandbox", "test", "providers", folder)
const catalog = join(root, "packages", "providers", "src", "Catalog.ts")
const registry = join(root, "packages", "sandbox", "src", "Registry.ts")
for (const dir of [adapterDir, sandboxDir, testDir]) {
  if (existsSync(dir)) fail(`${relative(root, dir)} already exists`)
}
if (readFileSync(registry, "utf8").includes(`/providers/${folder}/index.js`)) fail(`${name} is already registered`)
if (readFileSync(catalog, "utf8").includes(`@tracebridge/adapter-${folder}"`)) fail(`${name} is already in the catalog`)

const fill = (text) =>
  text
    .replaceAll("__name__", name)
    .replaceAll("__folder__", folder)
    .replaceAll("__Pascal__", pascal)
    .replaceAll("__display__", display)
    .replaceAll("__upper__", upper)

const copy = (from, to) => {
  for (const entry of readdirSync(from)) {
    const source = join(from, entry)
    if (statSync(source).isDirectory()) {
      copy(source, join(to, entry))
      continue
    }
    const target = join(to, fill(entry.replace(/\.tmpl$/, "")))
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, fill(readFileSync(source, "utf8")))
  }
}

const templates = join(root, "scripts", "templates", "provider")
copy(join(templates, "adapter"), adapterDir)
copy(join(templates, "sandbox"), sandboxDir)
copy(join(templates, "sandbox-test"), testDir)

// The two registration lines: in each list an import and an entry, at the markers.
const importMarker = "// new-provider: imports"
const register = (path, entries, importLine, entry) => {
  let list = readFileSync(path, "utf8")
  if (!list.includes(importMarker) || !entries.test(list)) {
    fail(`${relative(root, path)} has lost its new-provider marker or list`)
  }
  list = list.replace(importMarker, `${importLine}\n${importMarker}`)
  list = list.replace(entries, (_, body, end) => `${body},\n  ${entry}${end}`)
  writeFileSync(path, list)
}
register(
  catalog,
  /(export const modules: ReadonlyArray<Entry> = \[[\s\S]*?)(\n\])/,
  `import { ${pascal} } from "@tracebridge/adapter-${folder}"`,
  `${pascal}.module`
)
const local = `provider${pascal.slice("Provider".length)}`
register(
  registry,
  /(export const parts: ReadonlyArray<SandboxPart> = \[[\s\S]*?)(\n\])/,
  `import { provider as ${local} } from "./providers/${folder}/index.js"`,
  local
)

// The catalog depends on the adapter; the root project references it.
const json = (path, edit) => {
  const value = JSON.parse(readFileSync(path, "utf8"))
  edit(value)
  writeFileSync(path, JSON.stringify(value, null, 2) + "\n")
}
json(join(root, "packages", "providers", "package.json"), (pkg) => {
  pkg.dependencies[`@tracebridge/adapter-${folder}`] = "0.1.0"
  pkg.dependencies = Object.fromEntries(Object.entries(pkg.dependencies).sort(([a], [b]) => a.localeCompare(b)))
})
json(join(root, "packages", "providers", "tsconfig.json"), (tsconfig) => {
  tsconfig.references.push({ path: `../adapter-${folder}` })
})
json(join(root, "tsconfig.json"), (tsconfig) => {
  if (!tsconfig.references.some((r) => r.path === `packages/adapter-${folder}`)) {
    tsconfig.references.push({ path: `packages/adapter-${folder}` })
  }
})

const run = (command, commandArgs) => {
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: "inherit" })
  if (result.status !== 0) fail(`${command} ${commandArgs.join(" ")} failed`)
}
run("node", ["scripts/barrels.mjs"])
// Formatting as the linter wants it (import order in the registration list included).
run("npx", [
  "eslint",
  "--fix",
  relative(root, catalog),
  relative(root, registry),
  relative(root, adapterDir),
  relative(root, sandboxDir),
  relative(root, testDir)
])
if (!flag("--no-install")) run("npm", ["install", "--no-audit", "--no-fund"])

console.log(`
${name} is scaffolded and registered:
  packages/adapter-${folder}/                    the adapter (${pascal}.ts, ${pascal}Client.ts, Wire.ts, Normalize.ts)
  packages/sandbox/src/providers/${folder}/      its emulator, logins and world profile
  packages/sandbox/test/providers/${folder}/     the conformance kit against the emulator
  packages/providers/src/Catalog.ts             one new line (the adapter's module)
  packages/sandbox/src/Registry.ts              one new line (its emulator)

Next: npm test; then npm run build && npm start serves it in the sandbox over /v1
(POST /v1/sandbox/public_token/create with {"provider":"${name}","state":"CO"}).
Replace the placeholder wire format, descriptor and status mapping with the real system's
documented behaviour: docs/adding-a-provider.md.`)
