#!/usr/bin/env node
// Bundles the standalone sandbox's compiled bin (packages/sandbox/dist/bin.js and everything it
// imports: Effect, the adapters' wire schemas, the emulators) into one ES module,
// dist/tracebridge-sandbox.mjs, which the package's `bin` points at. Loading one file instead of
// about 800 modules (Effect's barrel alone reaches fast-check's 239) is what makes a CI job's sandbox
// answer in about half a second instead of one and a half (docs/performance.md, row 6).
import { build } from "esbuild"

const dist = new URL("../packages/sandbox/dist/", import.meta.url).pathname

await build({
  entryPoints: [`${dist}bin.js`],
  outfile: `${dist}tracebridge-sandbox.mjs`,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // ws's optional native helpers: absent here, and ws works without them.
  external: ["bufferutil", "utf-8-validate"],
  // CommonJS dependencies inside an ES module bundle still call require.
  banner: {
    js:
      "import { createRequire as __tbCreateRequire } from \"node:module\"; const require = __tbCreateRequire(import.meta.url);"
  },
  legalComments: "none",
  logLevel: "warning"
})
