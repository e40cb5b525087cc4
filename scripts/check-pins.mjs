#!/usr/bin/env node
// Guards the pinned Effect 3 toolchain. Fails (exit 1) when:
//   - `npm ls effect --all --json` shows an `effect` that is not 3.22.x, or an installed copy of
//     `effect` anywhere under node_modules is not 3.22.x;
//   - `@effect/schema` (merged into `effect` as `effect/Schema`) is installed, or any installed
//     package or workspace package.json lists it in dependencies/peerDependencies/devDependencies/
//     optionalDependencies;
//   - a root or workspace dependency named `effect`, `@effect/*`, `vitest`, `msw`, `typescript` or
//     `turbo` is not an exact version (no ^, ~, ranges, tags, aliases);
//   - vitest is not 3.2.x, msw not 2.x, typescript not 5.9.x (declared pins and installed copies);
//   - an `@opentelemetry/*` dependency is not an exact version, or not of the line that runs on
//     Node 20 and that `@effect/opentelemetry` 0.64 names as peers: the SDK 2.x, the experimental
//     packages 0.2xx, the API 1.9.x (the 3.x SDK and 0.3xx packages need Node 22).
//
//   node scripts/check-pins.mjs              check this repository
//   node scripts/check-pins.mjs --self-test  run the checks on built-in fake inputs (good and bad)
import { spawnSync } from "node:child_process"
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

const root = resolve(new URL("..", import.meta.url).pathname)
const DEP_FIELDS = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]
const EXACT = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/
const FAMILY = { effect: /^3\.22\./, vitest: /^3\.2\./, msw: /^2\./, typescript: /^5\.9\./ }
const FAMILY_TEXT = { effect: "3.22.x", vitest: "3.2.x", msw: "2.x", typescript: "5.9.x" }
const OTEL = {
  "@opentelemetry/api": [/^1\.9\./, "1.9.x"],
  "@opentelemetry/semantic-conventions": [/^1\./, "1.x"]
}
/** The version family a pinned dependency must be of, if any: `[pattern, words]`. */
const familyOf = (name) =>
  FAMILY[name]
    ? [FAMILY[name], FAMILY_TEXT[name]]
    : name.startsWith("@opentelemetry/")
    ? OTEL[name] ?? [/^(?:2\.|0\.2\d\d\.)/, "2.x or 0.2xx (the Node 20 line)"]
    : undefined
const isPinned = (name) =>
  name === "effect" || name.startsWith("@effect/") || name.startsWith("@opentelemetry/") ||
  ["vitest", "msw", "typescript", "turbo"].includes(name)

/**
 * The checks, on plain data so that `--self-test` can feed them fakes.
 * @param {{ npmLs: any, manifests: Array<{ file: string, json: any }>,
 *           installed: Array<{ dir: string, json: any }>, schemaDirExists: boolean }} input
 * @returns {Array<string>} one message per problem
 */
export function check({ installed, manifests, npmLs, schemaDirExists }) {
  const problems = []

  // 1. every `effect` in the npm ls tree is 3.22.x
  const walk = (node, trail) => {
    for (const [name, child] of Object.entries(node?.dependencies ?? {})) {
      const here = [...trail, `${name}@${child.version ?? "?"}`]
      if (name === "effect") {
        if (child.missing || !child.version) problems.push(`npm ls: effect is missing at ${here.join(" > ")}`)
        else if (!FAMILY.effect.test(child.version)) {
          problems.push(`npm ls: effect@${child.version} is not 3.22.x at ${here.join(" > ")}`)
        }
      }
      walk(child, here)
    }
  }
  if (!npmLs || typeof npmLs !== "object") problems.push("npm ls effect --all --json gave no JSON")
  else walk(npmLs, [npmLs.name ?? "(root)"])

  // 2. no @effect/schema anywhere
  if (schemaDirExists) problems.push("node_modules/@effect/schema exists (use `effect/Schema` from effect 3.22)")
  for (const { dir, json } of installed) {
    if (json.name === "@effect/schema") problems.push(`@effect/schema is installed at ${dir}`)
    for (const field of DEP_FIELDS) {
      if (json[field]?.["@effect/schema"] !== undefined) {
        problems.push(`installed package ${json.name ?? dir} (${dir}) lists @effect/schema in ${field}`)
      }
    }
  }
  for (const { file, json } of manifests) {
    for (const field of DEP_FIELDS) {
      if (json[field]?.["@effect/schema"] !== undefined) problems.push(`${file}: lists @effect/schema in ${field}`)
    }
  }

  // 3. exact pins in the root and workspace manifests; 4. version families of the pins
  for (const { file, json } of manifests) {
    for (const field of DEP_FIELDS) {
      for (const [name, spec] of Object.entries(json[field] ?? {})) {
        if (name.startsWith("@tracebridge/") || !isPinned(name)) continue
        if (typeof spec !== "string" || !EXACT.test(spec)) {
          problems.push(`${file}: ${field}.${name} is ${JSON.stringify(spec)}, not an exact version`)
        } else if (familyOf(name) && !familyOf(name)[0].test(spec)) {
          problems.push(`${file}: ${field}.${name} is ${spec}, not ${familyOf(name)[1]}`)
        }
      }
    }
  }

  // 4. installed copies of the family-pinned tools (and every installed effect)
  for (const { dir, json } of installed) {
    const family = familyOf(String(json.name))
    if (family && !family[0].test(String(json.version))) {
      problems.push(`installed ${json.name}@${json.version} at ${dir} is not ${family[1]}`)
    }
  }
  for (const name of ["vitest", "msw", "typescript"]) {
    if (!installed.some((p) => p.json.name === name)) problems.push(`${name} is not installed`)
  }

  return problems
}

// --- Gathering the real inputs ------------------------------------------------------------------

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"))

function gather() {
  const ls = spawnSync("npm", ["ls", "effect", "--all", "--json"], { cwd: root, encoding: "utf8" })
  let npmLs
  try {
    // npm ls exits 1 on missing/invalid packages but still prints the tree, which is what we judge.
    npmLs = JSON.parse(ls.stdout)
  } catch {
    npmLs = undefined
  }

  const manifests = [{ file: "package.json", json: readJson(join(root, "package.json")) }]
  for (const d of readdirSync(join(root, "packages")).sort()) {
    const file = join("packages", d, "package.json")
    if (existsSync(join(root, file))) manifests.push({ file, json: readJson(join(root, file)) })
  }

  // Every package physically under node_modules, nested ones included. Symlinks (the workspace
  // links under node_modules/@tracebridge) are not followed: the workspaces are in `manifests`.
  const installed = []
  const scanNodeModules = (nm) => {
    if (!existsSync(nm)) return
    for (const entry of readdirSync(nm)) {
      if (entry.startsWith(".")) continue
      const p = join(nm, entry)
      if (entry.startsWith("@")) {
        if (!lstatSync(p).isDirectory()) continue
        for (const sub of readdirSync(p)) scanPackage(join(p, sub))
      } else scanPackage(p)
    }
  }
  const scanPackage = (dir) => {
    const stat = lstatSync(dir)
    if (stat.isSymbolicLink() || !stat.isDirectory()) return
    const manifest = join(dir, "package.json")
    if (existsSync(manifest)) {
      try {
        installed.push({ dir: relative(root, dir), json: readJson(manifest) })
      } catch {
        // an unreadable manifest is not ours to judge
      }
    }
    scanNodeModules(join(dir, "node_modules"))
  }
  scanNodeModules(join(root, "node_modules"))
  for (const { file } of manifests.slice(1)) scanNodeModules(join(root, file, "..", "node_modules"))

  return { npmLs, manifests, installed, schemaDirExists: existsSync(join(root, "node_modules", "@effect", "schema")) }
}

// --- Self-test ------------------------------------------------------------------------------------

function selfTest() {
  const good = () => ({
    npmLs: {
      name: "tracebridge",
      dependencies: {
        "@tracebridge/core": { version: "0.1.0", dependencies: { effect: { version: "3.22.4" } } },
        "@effect/vitest": { version: "0.30.0", dependencies: { effect: { version: "3.22.4" } } }
      }
    },
    manifests: [
      {
        file: "package.json",
        json: { devDependencies: { vitest: "3.2.7", msw: "2.15.0", typescript: "5.9.3", turbo: "2.11.11" } }
      },
      {
        file: "packages/core/package.json",
        json: {
          dependencies: {
            effect: "3.22.4",
            "@effect/platform": "0.97.2",
            "@opentelemetry/api": "1.9.0",
            "@opentelemetry/sdk-metrics": "2.12.0",
            "@tracebridge/x": "*"
          }
        }
      }
    ],
    installed: [
      { dir: "node_modules/effect", json: { name: "effect", version: "3.22.4" } },
      { dir: "node_modules/vitest", json: { name: "vitest", version: "3.2.7" } },
      { dir: "node_modules/msw", json: { name: "msw", version: "2.15.0" } },
      { dir: "node_modules/typescript", json: { name: "typescript", version: "5.9.3" } }
    ],
    schemaDirExists: false
  })
  const cases = [
    ["effect 3.21 deep in npm ls", (i) => {
      i.npmLs.dependencies["@effect/vitest"].dependencies.effect.version = "3.21.0"
    }, "not 3.22.x at tracebridge > @effect/vitest@0.30.0 > effect@3.21.0"],
    ["effect missing in npm ls", (i) => {
      i.npmLs.dependencies["@tracebridge/core"].dependencies.effect = { missing: true }
    }, "effect is missing"],
    ["no npm ls JSON", (i) => {
      i.npmLs = undefined
    }, "gave no JSON"],
    ["nested effect 3.10 installed", (i) => {
      i.installed.push({ dir: "node_modules/x/node_modules/effect", json: { name: "effect", version: "3.10.0" } })
    }, "installed effect@3.10.0"],
    ["node_modules/@effect/schema exists", (i) => {
      i.schemaDirExists = true
    }, "node_modules/@effect/schema exists"],
    ["installed package peers on @effect/schema", (i) => {
      i.installed.push({ dir: "node_modules/old", json: { name: "old", peerDependencies: { "@effect/schema": "*" } } })
    }, "lists @effect/schema in peerDependencies"],
    ["workspace lists @effect/schema", (i) => {
      i.manifests[1].json.devDependencies = { "@effect/schema": "0.75.5" }
    }, "packages/core/package.json: lists @effect/schema in devDependencies"],
    ["caret on vitest", (i) => {
      i.manifests[0].json.devDependencies.vitest = "^3.2.7"
    }, "vitest is \"^3.2.7\", not an exact version"],
    ["tilde on @effect/platform", (i) => {
      i.manifests[1].json.dependencies["@effect/platform"] = "~0.97.2"
    }, "@effect/platform is \"~0.97.2\""],
    ["tag on turbo", (i) => {
      i.manifests[0].json.devDependencies.turbo = "latest"
    }, "turbo is \"latest\""],
    ["range on effect", (i) => {
      i.manifests[1].json.dependencies.effect = ">=3.22.0 <3.23.0"
    }, "effect is \">=3.22.0 <3.23.0\""],
    ["vitest 4 pinned", (i) => {
      i.manifests[0].json.devDependencies.vitest = "4.0.1"
    }, "vitest is 4.0.1, not 3.2.x"],
    ["msw 1 installed", (i) => {
      i.installed.find((p) => p.json.name === "msw").json.version = "1.3.5"
    }, "installed msw@1.3.5"],
    ["typescript 5.8 pinned", (i) => {
      i.manifests[0].json.devDependencies.typescript = "5.8.3"
    }, "typescript is 5.8.3, not 5.9.x"],
    ["OpenTelemetry SDK 3 (Node 22) pinned", (i) => {
      i.manifests[1].json.dependencies["@opentelemetry/sdk-metrics"] = "3.1.1"
    }, "@opentelemetry/sdk-metrics is 3.1.1, not 2.x or 0.2xx"],
    ["caret on an OpenTelemetry exporter", (i) => {
      i.manifests[1].json.dependencies["@opentelemetry/exporter-prometheus"] = "^0.223.0"
    }, "@opentelemetry/exporter-prometheus is \"^0.223.0\", not an exact version"],
    ["OpenTelemetry 0.3xx installed", (i) => {
      i.installed.push({
        dir: "node_modules/@opentelemetry/core",
        json: { name: "@opentelemetry/otlp-transformer", version: "0.301.0" }
      })
    }, "installed @opentelemetry/otlp-transformer@0.301.0"],
    ["typescript not installed", (i) => {
      i.installed = i.installed.filter((p) => p.json.name !== "typescript")
    }, "typescript is not installed"]
  ]
  let failed = 0
  const baseline = check(good())
  if (baseline.length > 0) {
    failed++
    console.error(`self-test: the good fixture should pass but gave: ${baseline.join("; ")}`)
  }
  for (const [title, mutate, expected] of cases) {
    const input = good()
    mutate(input)
    const problems = check(input)
    const hit = problems.some((p) => p.includes(expected))
    if (!hit) failed++
    console.log(`${hit ? "ok  " : "FAIL"} ${title}: ${problems.join("; ") || "(no problem reported)"}`)
  }
  if (failed > 0) {
    console.error(`check-pins self-test: FAILED (${failed} case(s))`)
    process.exit(1)
  }
  console.log(`check-pins self-test: OK (good fixture passes; ${cases.length} bad fixtures each caught)`)
}

// --- Main -----------------------------------------------------------------------------------------

if (process.argv.includes("--self-test")) {
  selfTest()
} else {
  const input = gather()
  const problems = check(input)
  if (problems.length > 0) {
    for (const p of problems) console.error(`check-pins: ${p}`)
    console.error(`check-pins: FAILED (${problems.length} problem(s))`)
    process.exit(1)
  }
  const effects = new Set(input.installed.filter((p) => p.json.name === "effect").map((p) => p.json.version))
  const v = (name) => input.installed.find((p) => p.json.name === name)?.json.version
  console.log(
    `check-pins: OK — effect ${[...effects].join(", ")} only; no @effect/schema in ${input.installed.length} ` +
      `installed packages; exact pins in ${input.manifests.length} manifests; ` +
      `vitest ${v("vitest")}, msw ${v("msw")}, typescript ${v("typescript")}`
  )
}
