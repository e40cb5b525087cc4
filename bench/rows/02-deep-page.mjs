// Row 2: on a facility of 100,000 packages, page 1000 against page 1 (per_page=100), over HTTP.
//
// A server of its own (not the shared one of rows 1 and 7), spawned with
// TRACEBRIDGE_SANDBOX_SIZE=100000 (100,000 packages per facility in its sandbox worlds) and
// TRACEBRIDGE_SANDBOX_CACHE_ENTRIES=0, so that the sandbox read cache does not answer repeated
// pages from memory: every call goes through auth, the rate limiter, the port, the provider_a
// adapter (its paging of the provider's pages), the in-process emulator, normalisation and the
// envelope. GET /v1/connections/{id}/facilities/{fac}/packages?per_page=100&page=1 and &page=1000
// on the first facility whose page 1000 has items.
import { call, startApi } from "../lib/api.mjs"
import { median, ms, now, percentile, round } from "../lib/stats.mjs"

const SIZE = 100_000

export default {
  id: 2,
  name: "page 1000 vs page 1 (per_page=100) on 100,000 packages",
  async run({ log, quick }) {
    // Since issue #29 a pass-through list reads every row of the facility before it cuts the page
    // (pagination.total counts only the rows a page can deliver), so page 1 and page 1000 each walk
    // the whole facility: seconds per call at this size. Few samples keep the row to minutes.
    const n = quick ? 3 : 7
    const warmup = 1
    const t = now()
    const server = await startApi({
      TRACEBRIDGE_SANDBOX_SIZE: String(SIZE),
      TRACEBRIDGE_SANDBOX_CACHE_ENTRIES: "0"
    })
    try {
      log(`server started and linked in ${ms(now() - t)} (the world is generated on the first call)`)
      // The first facility whose page 1000 has items.
      const pathOf = (facility, page) =>
        `/v1/connections/${server.connection}/facilities/${facility}/packages?per_page=100&page=${page}`
      const get = async (path) => {
        const answer = await call(server.api, "GET", path, server.token)
        if (answer.status !== 200) {
          throw new Error(`GET ${path}: ${answer.status} ${answer.text.slice(0, 300)}\n${server.describe()}`)
        }
        return answer
      }
      let facility
      let deepCount = 0
      for (const f of server.facilities) {
        const count = (await get(pathOf(f, 1000))).body.data.length
        if (count > deepCount) {
          facility = f
          deepCount = count
        }
        // every facility of this world has the same size: the first with a page 1000 will do
        if (deepCount > 0) break
      }
      if (facility === undefined) throw new Error("no facility has a page 1000 of 100 packages")
      const first = await get(pathOf(facility, 1))
      if (first.body.data.length !== 100) throw new Error(`page 1 has ${first.body.data.length} items`)
      const timed = async (page) => {
        const s = now()
        await get(pathOf(facility, page))
        return now() - s
      }
      // Alternate the two so that drift (GC, JIT) hits both alike.
      for (let i = 0; i < warmup; i++) {
        await timed(1)
        await timed(1000)
      }
      const p1 = []
      const p1000 = []
      for (let i = 0; i < n; i++) {
        p1.push(await timed(1))
        p1000.push(await timed(1000))
      }
      const ratio = median(p1000) / median(p1)
      return {
        measured: `page 1000: median ${ms(median(p1000))}, p90 ${ms(percentile(p1000, 90))}`,
        baseline: `page 1: median ${ms(median(p1))}, p90 ${ms(percentile(p1, 90))}`,
        ratio,
        checks: [{ what: "latency ratio", value: round(ratio, 3), target: "<= 1.5", pass: ratio <= 1.5 }],
        note: `Over HTTP through the whole stack: a server of its own spawned with TRACEBRIDGE_SANDBOX_SIZE=${SIZE} ` +
          `(packages per facility) and TRACEBRIDGE_SANDBOX_CACHE_ENTRIES=0 (the sandbox read cache off, so that ` +
          `repeated pages are not answered from memory and every call pays the paging: auth, rate limiter, port, ` +
          `provider_a adapter, in-process emulator, normalisation, envelope); GET …/packages?per_page=100&page=1 ` +
          `and &page=1000 on the first facility whose page 1000 has items (${deepCount}). Since issue #29 the adapter reads every row of the list before it cuts the page (the total counts only the rows a page can deliver), so both pages walk the whole facility. Median of ` +
          `${n} alternating calls each after ${warmup} warm-ups, one at a time. Ratio = page 1000 median / page 1 median.`,
        data: { page1: p1, page1000: p1000, deepItems: deepCount, pagination: first.body.pagination ?? null }
      }
    } finally {
      await server.stop()
    }
  }
}
