#!/usr/bin/env node
// Turns the Connect package's compiled ES modules (which import nothing) into the two scripts the
// API serves: dist/sdk.js (installs window.Tracebridge.Connect) and dist/connect-page.js (the hosted page).
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const dist = new URL("../packages/connect/dist/", import.meta.url).pathname
const strip = (code) =>
  code
    .replace(/^\/\/# sourceMappingURL=.*$/gm, "")
    .replace(/^export \{\};?$/gm, "")
    .replace(/^export (const|function|class|let) /gm, "$1 ")

const sdk = strip(readFileSync(join(dist, "Connect.js"), "utf8"))
writeFileSync(
  join(dist, "sdk.js"),
  `/* Tracebridge Connect SDK */\n(function () {\n"use strict";\n${sdk}\nwindow.Tracebridge = Object.assign(window.Tracebridge || {}, { Connect: { create: create } });\n})();\n`
)
const page = strip(readFileSync(join(dist, "page.js"), "utf8"))
writeFileSync(
  join(dist, "connect-page.js"),
  `/* Tracebridge Connect page */\n(function () {\n"use strict";\n${page}\n})();\n`
)
