// Small statistics and timing helpers.

export const sorted = (xs) => [...xs].sort((a, b) => a - b)

/** Nearest-rank percentile (p in 0..100). */
export const percentile = (xs, p) => {
  if (xs.length === 0) return NaN
  const s = sorted(xs)
  const rank = Math.ceil((p / 100) * s.length)
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]
}

export const median = (xs) => {
  if (xs.length === 0) return NaN
  const s = sorted(xs)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

export const now = () => performance.now()

/** Runs `fn` `warmup` times untimed, then `n` times timed; returns the durations in ms. */
export const timeCalls = async (fn, { n, warmup }) => {
  for (let i = 0; i < warmup; i++) await fn()
  const times = []
  for (let i = 0; i < n; i++) {
    const t = now()
    await fn()
    times.push(now() - t)
  }
  return times
}

export const round = (x, digits = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : x)

export const ms = (x) => `${x >= 100 ? Math.round(x) : round(x, x >= 10 ? 1 : 2)} ms`

export const mb = (bytes) => `${Math.round(bytes / 1_048_576)} MB`

export const rps = (x) => `${x >= 1000 ? (x / 1000).toFixed(2) + "k" : Math.round(x)} req/s`
