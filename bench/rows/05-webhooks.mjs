// Row 5: POST /v1/sandbox/{id}/simulate (lab_result_received) → the webhook arriving at a loopback
// receiver, on a freshly spawned server. Latency = from the moment each simulate request is sent
// to the moment its event (matched by X-Tracebridge-Event-Id, the `event.id` of the simulate
// answer) reaches the receiver. Baseline: a plain loopback POST of an event-sized body from this
// process to the same receiver (send → arrival).
import * as http from "node:http"
import { call, startApi } from "../lib/api.mjs"
import { until } from "../lib/proc.mjs"
import { ms, now, percentile, round } from "../lib/stats.mjs"

const receiver = async () => {
  const arrived = new Map()
  let duplicates = 0
  const server = http.createServer((req, res) => {
    const at = now()
    const id = String(req.headers["x-tracebridge-event-id"] ?? req.headers["x-bench-id"] ?? "")
    if (arrived.has(id)) duplicates++
    else arrived.set(id, at)
    req.resume()
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"))
  })
  server.keepAliveTimeout = 30_000
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    arrived,
    duplicates: () => duplicates,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

export default {
  id: 5,
  name: "simulate → webhook received at a loopback receiver",
  async run({ log, quick }) {
    const events = quick ? 200 : 1000
    const hooks = await receiver()
    const server = await startApi()
    try {
      const subscribed = await call(server.api, "POST", "/v1/webhooks/", server.token, {
        url: hooks.url,
        events: ["lab_result.received"]
      })
      if (subscribed.status !== 201) throw new Error(`subscribing answered ${subscribed.status}: ${subscribed.text}`)
      const path = `/v1/sandbox/${server.connection}/simulate`
      // Without params the scenario picks an untested package, and a default world has only a few
      // dozen: name the package, cycling through every package of the connection (a retest is fine).
      const packages = []
      for (const facility of server.facilities) {
        const list = await call(
          server.api,
          "GET",
          `/v1/connections/${server.connection}/facilities/${facility}/packages?per_page=100`,
          server.token
        )
        if (list.status !== 200) throw new Error(`listing packages answered ${list.status}`)
        packages.push(...list.body.data.map((p) => p.id))
      }
      const body = (i) => ({ scenario: "lab_result_received", params: { package_id: packages[i % packages.length] } })
      // Warm-up (not counted): 20 events, all delivered.
      const warm = []
      for (let i = 0; i < 20; i++) {
        warm.push((await call(server.api, "POST", path, server.token, body(i))).body.data.event.id)
      }
      await until("the warm-up events", () => warm.every((id) => hooks.arrived.has(id)), 30_000)

      const sent = new Map()
      let sample = ""
      for (let i = 0; i < events; i++) {
        const t = now()
        const answer = await call(server.api, "POST", path, server.token, body(i))
        if (answer.status !== 200) {
          throw new Error(`simulate #${i + 1} answered ${answer.status}: ${answer.text.slice(0, 300)}`)
        }
        const id = answer.body.data.event?.id
        if (typeof id !== "string") throw new Error(`simulate #${i + 1} gave no event id: ${answer.text.slice(0, 300)}`)
        if (answer.body.data.deliveries !== 1) {
          throw new Error(`simulate #${i + 1} queued ${answer.body.data.deliveries} deliveries`)
        }
        sent.set(id, t)
        if (sample === "") sample = JSON.stringify(answer.body.data.event)
      }
      const lastSent = now()
      await until("every event delivered", () => [...sent.keys()].every((id) => hooks.arrived.has(id)), 30_000)
        .catch(() => undefined)
      const latencies = []
      let lost = 0
      for (const [id, t] of sent) {
        const at = hooks.arrived.get(id)
        if (at === undefined) lost++
        else latencies.push(at - t)
      }
      const p99 = percentile(latencies, 99)
      log(`${events - lost}/${events} delivered, p99 ${ms(p99)}; baseline`)

      // The baseline: the same number of plain POSTs of an event-sized body to the same receiver.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      const post = (id) =>
        new Promise((resolve, reject) => {
          const req = http.request(hooks.url, {
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "x-bench-id": id }
          }, (res) => {
            res.resume()
            res.on("end", resolve)
          })
          req.on("error", reject)
          req.end(sample)
        })
      const base = []
      for (let i = 0; i < events + 20; i++) {
        const id = `base-${i}`
        const t = now()
        await post(id)
        if (i >= 20) base.push(hooks.arrived.get(id) - t)
      }
      agent.destroy()
      const baseP99 = percentile(base, 99)
      const ratio = p99 / baseP99
      return {
        measured: `p50 ${ms(percentile(latencies, 50))}, p99 ${ms(p99)}; ${events - lost}/${events} delivered`,
        baseline: `plain loopback POST p50 ${ms(percentile(base, 50))}, p99 ${ms(baseP99)}`,
        ratio,
        checks: [
          { what: "p99 (ms)", value: round(p99, 1), target: "<= 50", pass: p99 <= 50 },
          { what: "lost", value: lost, target: "== 0", pass: lost === 0 },
          { what: "duplicates", value: hooks.duplicates(), target: "== 0", pass: hooks.duplicates() === 0 }
        ],
        note:
          `${events} simulate calls (lab_result_received, cycling through the ${packages.length} packages) one after another (after 20 warm-up events) on a fresh server with the ` +
          `default TRACEBRIDGE_WEBHOOK_TICK_MS and embedded SQLite (each simulate commits its outbox rows, then hands ` +
          `them to the worker, which POSTs at once); the sends took ` +
          `${ms(lastSent - [...sent.values()][0])} in all; latency from each simulate request's send to its ` +
          `event's arrival. Ratio = our p99 / the baseline's p99 (informative).`,
        data: {
          latencies: {
            p50: percentile(latencies, 50),
            p90: percentile(latencies, 90),
            p99,
            max: Math.max(...latencies)
          },
          baseline: { p50: percentile(base, 50), p99: baseP99 },
          events,
          lost
        }
      }
    } finally {
      await server.stop()
      await hooks.close()
    }
  }
}
