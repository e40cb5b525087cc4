// Row 7: the same GET against Prism mocking our own OpenAPI document (`prism mock`), autocannon both.
// Prism answers from the document's examples and schemas: it has no state, no auth, no provider.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, root } from "../lib/api.mjs"
import { load } from "../lib/load.mjs"
import { freePort, start, until } from "../lib/proc.mjs"
import { readServer } from "../lib/shared.mjs"
import { ms, round, rps } from "../lib/stats.mjs"

const prismBin = join(root, "node_modules", ".bin", "prism")
const prismVersion = () =>
  JSON.parse(readFileSync(join(root, "node_modules", "@stoplight", "prism-cli", "package.json"), "utf8")).version

export default {
  id: 7,
  name: "GET packages?per_page=100 vs Prism mocking our OpenAPI document",
  async run({ load: settings, log }) {
    const { path, server } = await readServer()
    const document = await call(server.api, "GET", "/v1/openapi.json")
    if (document.status !== 200) throw new Error(`GET /v1/openapi.json answered ${document.status}`)
    const dir = mkdtempSync(join(tmpdir(), "tb-bench-prism-"))
    const file = join(dir, "openapi.json")
    writeFileSync(file, document.text)
    const port = await freePort()
    const prism = start(prismBin, ["mock", "--host", "127.0.0.1", "--port", String(port), "--errors", "false", file], {
      cwd: dir
    })
    const url = `http://127.0.0.1:${port}${path}`
    const headers = { authorization: `Bearer ${server.token}` }
    try {
      const first = await until(
        "prism to answer",
        async () => {
          if (!prism.alive()) throw new Error(`prism exited early:\n${prism.output().slice(-2000)}`)
          return fetch(url, { headers }).then(async (r) => ({ status: r.status, body: await r.text() }), () => false)
        },
        60_000,
        100
      )
      if (first.status < 200 || first.status > 299) {
        throw new Error(`prism answered ${first.status} to ${path}: ${first.body.slice(0, 300)}`)
      }
      log(`prism answers ${first.status} with ${first.body.length} bytes; measuring ours`)
      const ours = await load({ ...settings, url: `${server.api}${path}`, headers })
      if (ours.failure) throw new Error(`Tracebridge failed under load: ${ours.failure}; ${server.describe()}`)
      log(`ours: ${rps(ours.rps)}; now Prism`)
      const base = await load({ ...settings, url, headers })
      if (base.failure) throw new Error(`Prism failed under load: ${base.failure}`)
      const ratio = ours.rps / base.rps
      return {
        measured: `${rps(ours.rps)}, p99 ${ms(ours.p99)}`,
        baseline: `Prism ${rps(base.rps)}, p99 ${ms(base.p99)}`,
        ratio,
        checks: [{ what: "throughput ratio", value: round(ratio, 3), target: ">= 2", pass: ratio >= 2 }],
        note: `Prism ${prismVersion()} \`prism mock\` of our /v1/openapi.json: it checks the request against the ` +
          `document and answers from its examples and schemas, with no state, no data store and no provider; it ` +
          `answers ${first.body.length} bytes against our ${ours.bytesPerRequest}. Ratio = ours / Prism req/s. ` +
          `Same autocannon settings as row 1.`,
        data: { ours, baseline: base, prismBytes: first.body.length }
      }
    } finally {
      await prism.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
