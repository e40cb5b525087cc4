#!/usr/bin/env node
// Import-cycle and layering check.
//
//   node scripts/circular.mjs            all of packages/*/src, plus the package dependency graph
//   node scripts/circular.mjs DIR...     only the import-cycle check, over the given folders
//
// The layers, innermost first: core ← adapter-* and sync ← providers (the catalog) ← api (the
// contract) and sandbox ← dashboard (the pages, which import the contract for their typed client)
// ← http and cli (the two programs: the server, which serves the dashboard's built pages, and the
// developer's command, which talks to the server through the SDK and never imports it). Client-side packages
// (connect, client, webhooks) sit with core: they depend on nothing of ours. The managed sync
// (sync) knows no provider: it sits beside the adapters and depends on core only, as does the MCP
// server (mcp), whose tools reach the API over HTTP with the caller's token. A package may depend only on
// packages of an inner layer (never on its own layer, never outwards). This is checked twice: on
// the `@tracebridge/*` dependencies of each packages/*/package.json, and on the file-level import
// graph (an import of `@tracebridge/x` is resolved to packages/x/src, as vitest does).
//
// Every import counts, type-only ones included: `import type` is erased at run time, but a circle
// it closes is a circle all the same (two modules that cannot be read or changed apart: the store
// typed against every emulator, every emulator typed against the store). Any circle fails, inside
// a package or across.
import madge from "madge"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { isAbsolute, join, relative, resolve } from "node:path"

const root = resolve(new URL("..", import.meta.url).pathname)
const args = process.argv.slice(2)
const failures = []

/** Layer of a workspace folder name, or undefined if it fits none. */
const layerOf = (dir) =>
  dir === "core" || dir === "connect" || dir === "client" || dir === "webhooks"
    ? 0
    : dir.startsWith("adapter-") || dir === "sync" || dir === "mcp"
    ? 1
    : dir === "providers"
    ? 2
    : dir === "api" || dir === "sandbox"
    ? 3
    : dir === "dashboard"
    ? 4
    : dir === "http" || dir === "cli"
    ? 5
    : undefined
const layerNames = [
  "core|connect|client|webhooks",
  "adapter-*|sync|mcp",
  "providers",
  "api|sandbox",
  "dashboard",
  "http|cli"
]
const mayDependOn = (from, to) => layerOf(to) < layerOf(from)

const packageDirs = readdirSync(join(root, "packages"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, "packages", d.name, "package.json")))
  .map((d) => d.name)
  .sort()

// --- 1. File import graph -----------------------------------------------------------------------

const custom = args.length > 0
const targets = custom
  ? args.map((a) => resolve(a))
  : packageDirs.map((d) => join(root, "packages", d, "src")).filter((d) => existsSync(d))
for (const t of targets) if (!existsSync(t)) failures.push(`no such folder: ${t}`)

// Raw tsconfig JSON (madge would pre-parse a path into enum values that filing-cabinet then
// re-parses and drops). NodeNext resolves `./Foo.js` to Foo.ts; `paths` sends workspace imports
// to the sibling's src/ rather than its (possibly unbuilt) dist/.
const base = JSON.parse(readFileSync(join(root, "tsconfig.base.json"), "utf8")).compilerOptions
const paths = {}
for (const d of packageDirs) {
  const name = JSON.parse(readFileSync(join(root, "packages", d, "package.json"), "utf8")).name
  paths[name] = [`packages/${d}/src/index.ts`]
  paths[`${name}/*`] = [`packages/${d}/src/*.ts`]
}
const tsConfig = {
  compilerOptions: { module: base.module, moduleResolution: base.moduleResolution, baseUrl: root, paths }
}

let files = 0
let edges = 0
if (failures.length === 0) {
  const result = await madge(targets, {
    baseDir: custom ? undefined : root,
    fileExtensions: ["ts", "tsx"],
    excludeRegExp: [/\.d\.ts$/],
    tsConfig,
    tsConfigPath: join(root, "tsconfig.base.json"),
    detectiveOptions: {
      ts: { skipTypeImports: false },
      tsx: { skipTypeImports: false },
      es6: { skipTypeImports: false }
    }
  })
  const graph = result.obj()
  files = Object.keys(graph).length
  edges = Object.values(graph).reduce((n, deps) => n + deps.length, 0)

  // Resolution sanity: a relative or workspace import that did not resolve means the resolver is
  // misconfigured (e.g. `.js` not mapped to `.ts`), and the cycle check would silently see nothing.
  const unresolved = result.warnings().skipped.filter((s) => s.startsWith(".") || s.startsWith("@tracebridge/"))
  for (const s of [...new Set(unresolved)]) failures.push(`unresolved import ${JSON.stringify(s)}`)
  if (files === 0) failures.push(`no .ts files found under ${targets.join(", ")}`)
  const relativeImports = countRelativeValueImports(targets)
  if (relativeImports > 0 && edges === 0) {
    failures.push(`found ${relativeImports} relative imports in the sources but madge resolved 0 edges`)
  }

  for (const cycle of result.circular()) failures.push(`import cycle: ${[...cycle, cycle[0]].join(" → ")}`)

  // Layering on the file graph (default mode only: ids are root-relative there).
  if (!custom) {
    for (const [from, deps] of Object.entries(graph)) {
      const a = from.match(/^packages\/([^/]+)\//)?.[1]
      for (const to of deps) {
        const b = to.match(/^packages\/([^/]+)\//)?.[1]
        if (a && b && a !== b && !mayDependOn(a, b)) {
          failures.push(`wrong-way import: ${from} → ${to} (${a} may not import ${b})`)
        }
      }
    }
  }
}

// --- 2. Package dependency graph ----------------------------------------------------------------

let internalDeps = 0
if (!custom) {
  const byName = new Map()
  for (const d of packageDirs) {
    const pkg = JSON.parse(readFileSync(join(root, "packages", d, "package.json"), "utf8"))
    byName.set(pkg.name, { dir: d, pkg })
    if (layerOf(d) === undefined) {
      failures.push(`packages/${d}: fits no layer (${layerNames.join(" ← ")}); teach scripts/circular.mjs about it`)
    }
  }
  for (const { dir, pkg } of byName.values()) {
    for (const field of ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]) {
      for (const dep of Object.keys(pkg[field] ?? {})) {
        if (!dep.startsWith("@tracebridge/")) continue
        internalDeps++
        const target = byName.get(dep)
        if (!target) {
          failures.push(`packages/${dir}/package.json: ${field} names ${dep}, which is no workspace package`)
        } else if (!mayDependOn(dir, target.dir)) {
          failures.push(
            `packages/${dir}/package.json: ${field} → ${dep} points the wrong way ` +
              `(allowed: core → nothing; adapter-*, sync → core; providers → core, adapter-*, sync; ` +
              `api, sandbox → core, adapter-*, sync, mcp, providers; dashboard → these and api, sandbox; ` +
              `http, cli → all of these)`
          )
        }
      }
    }
  }
}

// --- Report -------------------------------------------------------------------------------------

if (failures.length > 0) {
  for (const f of failures) console.error(`circular: ${f}`)
  console.error(`circular: FAILED (${failures.length} problem(s); ${files} files, ${edges} import edges)`)
  process.exit(1)
}
const where = custom ? targets.map((t) => relative(root, t) || ".").join(", ") : "packages/*/src"
console.log(
  `circular: OK — ${where}: ${files} files, ${edges} import edges (type imports included), no cycles` +
    (custom ? "" : `; ${packageDirs.length} packages, ${internalDeps} workspace deps, all pointing inward`)
)

/** Counts `import … from "./…"` / `export … from "./…"` (a cross-check on madge). */
function countRelativeValueImports(dirs) {
  let n = 0
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory() && e.name !== "node_modules") walk(p)
      else if (e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) {
        const text = readFileSync(p, "utf8")
        const re = /^\s*(?:import|export)\s+[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/gm
        while (re.exec(text)) n++
      }
    }
  }
  for (const d of dirs) if (existsSync(d) && isAbsolute(d)) walk(d)
  return n
}
