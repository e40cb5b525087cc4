// Row 1: GET …/packages?per_page=100 through the whole stack against a minimal Fastify server
// answering the identical bytes. Both are child processes; autocannon runs in the bench process.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { load } from "../lib/load.mjs"
import { freePort, start, until } from "../lib/proc.mjs"
import { readServer } from "../lib/shared.mjs"
import { ms, round, rps } from "../lib/stats.mjs"

const fastifyScript = fileURLToPath(new URL("../lib/fastify-server.mjs", import.meta.url))
const effectScript = fileURLToPath(new URL("../lib/effect-server.mjs", import.meta.url))

/** Starts the Fastify baseline serving `body` with `contentType`; checks it answers those bytes. */
export const startFastify = (body, contentType) => startBaseline(fastifyScript, "fastify", body, contentType)

const startBaseline = async (script, name, body, contentType, probe = "/") => {
  const dir = mkdtempSync(join(tmpdir(), "tb-bench-fastify-"))
  const file = join(dir, "body")
  writeFileSync(file, body)
  const port = await freePort()
  const proc = start(process.execPath, [script, String(port), file, contentType])
  const url = `http://127.0.0.1:${port}`
  await until(`${name} to start`, async () => {
    if (!proc.alive()) throw new Error(`${name} exited early:\n${proc.output()}`)
    return fetch(`${url}${probe}`).then((r) => r.ok, () => false)
  })
  const echoed = await fetch(`${url}${probe}`).then((r) => r.text())
  if (echoed !== body) throw new Error(`the ${name} baseline does not answer the identical bytes`)
  return {
    url,
    stop: async () => {
      await proc.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

export default {
  id: 1,
  name: "GET packages?per_page=100, whole stack vs Fastify (same bytes)",
  async run({ load: settings, log }) {
    const shared = await readServer()
    const { server, path, body, contentType, count } = shared
    const fastify = await startFastify(body, contentType)
    try {
      log(`ours: ${path} (${count} packages, ${body.length} bytes)`)
      const ours = await load({
        ...settings,
        url: `${server.api}${path}`,
        headers: { authorization: `Bearer ${server.token}` }
      })
      if (ours.failure) {
        throw new Error(`Tracebridge answered non-2xx or failed under load: ${ours.failure}; ${server.describe()}`)
      }
      log(`ours: ${rps(ours.rps)}, p99 ${ms(ours.p99)}; now Fastify`)
      const base = await load({
        ...settings,
        url: `${fastify.url}${path}`,
        headers: { authorization: `Bearer ${server.token}` }
      })
      if (base.failure) throw new Error(`the Fastify baseline failed under load: ${base.failure}`)
      // The framework's ceiling on the same bytes: an empty HttpApi handler returning them prebuilt.
      const effect = await startBaseline(effectScript, "effect", body, contentType, path.split("?")[0])
      let ceiling
      try {
        ceiling = await load({ ...settings, url: `${effect.url}${path}` })
      } finally {
        await effect.stop()
      }
      if (ceiling.failure) throw new Error(`the HttpApi ceiling failed under load: ${ceiling.failure}`)
      const ratio = ours.rps / base.rps
      return {
        measured: `${rps(ours.rps)}, p50 ${ms(ours.p50)}, p99 ${ms(ours.p99)}`,
        baseline: `Fastify ${rps(base.rps)}, p99 ${ms(base.p99)}; bare HttpApi ${rps(ceiling.rps)} (${
          round(ceiling.rps / base.rps, 2)
        }×)`,
        ratio,
        checks: [
          { what: "throughput ratio", value: round(ratio, 3), target: ">= 0.5", pass: ratio >= 0.5 },
          { what: "p99 (ms)", value: ours.p99, target: "<= 25", pass: ours.p99 <= 25 },
          { what: "non-2xx", value: ours.non2xx, target: "== 0", pass: ours.non2xx === 0 }
        ],
        note: `${count} packages, ${body.length}-byte body; autocannon ${settings.connections} connections, ` +
          `${settings.warmup} s warm-up + ${settings.duration} s; ${ours.requests} requests measured, all 2xx. Ratio = ours / Fastify req/s. ` +
          `The framework ceiling (an HttpApi endpoint answering the same bytes prebuilt, tracer off) served ` +
          `${round(ceiling.rps / base.rps, 2)}× Fastify; the whole stack reached ${
            Math.round((100 * ours.rps) / ceiling.rps)
          }% of it.`,
        data: { ours, baseline: base, ceiling, bodyBytes: body.length, packages: count }
      }
    } finally {
      await fastify.stop()
    }
  }
}
