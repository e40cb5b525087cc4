// autocannon, programmatically: a warm-up run (discarded), then the measured run.
import autocannon from "autocannon"

/**
 * @param {{ url: string, headers?: Record<string,string>, connections: number, duration: number, warmup: number,
 *   rate?: number }} o  `rate`: requests a second over all connections (autocannon's `overallRate`); none: as fast as
 *   the server answers
 * @returns {Promise<{ rps: number, p50: number, p99: number, requests: number, non2xx: number, errors: number,
 *   timeouts: number, bytesPerRequest: number }>}
 */
export const load = async ({ connections, duration, headers = {}, url, warmup, rate }) => {
  const errorCodes = new Map()
  const once = (seconds) =>
    new Promise((resolve, reject) => {
      const instance = autocannon(
        {
          url,
          connections,
          duration: seconds,
          headers,
          pipelining: 1,
          ...(rate === undefined ? {} : { overallRate: rate })
        },
        (error, result) => (error ? reject(error) : resolve(result))
      )
      instance.on("error", reject)
      instance.on("reqError", (error) => {
        const code = error?.code ?? error?.message ?? String(error)
        errorCodes.set(code, (errorCodes.get(code) ?? 0) + 1)
      })
    })
  const problems = (r, what) => {
    if (r.requests.total === 0) return `${what}: no request completed in ${r.duration} s`
    if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
      const codes = [...errorCodes].map(([code, n]) => `${code} ×${n}`).join(", ")
      const statuses = Object.entries(r.statusCodeStats ?? {}).map(([code, { count }]) => `${code} ×${count}`).join(
        ", "
      )
      return `${what}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts (of ${r.requests.total}; ` +
        `statuses ${statuses || "none"}; errors ${codes || "none"})`
    }
    return undefined
  }
  let warm
  if (warmup > 0) warm = await once(warmup)
  const r = await once(duration)
  // A warm-up that completes nothing (a very slow server) is not a failure; errors in it are.
  const failure = (warm && warm.requests.total > 0 ? problems(warm, "warm-up") : undefined) ??
    problems(r, "measured run")
  return {
    url,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx + (warm?.non2xx ?? 0),
    errors: r.errors + (warm?.errors ?? 0),
    timeouts: r.timeouts + (warm?.timeouts ?? 0),
    statusCodes: r.statusCodeStats,
    bytesPerRequest: r.requests.total > 0 ? Math.round(r.throughput.total / r.requests.total) : 0,
    failure
  }
}
