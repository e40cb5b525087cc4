/**
 * Retries: which answers are retried, and how long to wait. 429 (`rate_limited`), 503 and 504
 * (`provider_unavailable`, `provider_timeout`) are retried, waiting what `Retry-After` says (capped
 * by `maxDelayMs`) or else an exponential backoff with jitter. Only requests that are safe to send
 * again are retried: GET, HEAD, OPTIONS, PUT and DELETE, and a POST or PATCH that carries an
 * `Idempotency-Key` (the SDK adds one to every write unless told not to).
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export interface RetryOptions {
  /** Attempts in all, the first one included (default 3; 1 turns retries off). */
  readonly maxAttempts?: number
  /** The first backoff when no `Retry-After` is sent (default 500 ms; doubled per attempt). */
  readonly baseDelayMs?: number
  /** The longest wait before a retry, `Retry-After` included (default 30 s). */
  readonly maxDelayMs?: number
  /** The statuses retried (default 429, 503, 504). */
  readonly statuses?: ReadonlyArray<number>
  /** How to wait (default `setTimeout`); tests pass their own. */
  readonly sleep?: (ms: number) => Promise<void>
}

/**
 * The statuses retried by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RETRY_STATUSES: ReadonlyArray<number> = [429, 503, 504]

/**
 * Methods that may be sent again without an idempotency key.
 *
 * @since 0.1.0
 * @category constants
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"])

/**
 * `Retry-After` in milliseconds: delay-seconds (`"2"`) or an HTTP date; undefined when absent or
 * unreadable.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseRetryAfter = (value: string | null | undefined, nowMs: number): number | undefined => {
  if (value === null || value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/**
 * Whether a request may be sent again: an idempotent method, or a write with an idempotency key.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isRetryable = (method: string, headers: Headers): boolean =>
  IDEMPOTENT_METHODS.has(method.toUpperCase()) || headers.has("idempotency-key")

/**
 * The wait before attempt `attempt + 1`: `Retry-After` when sent, else `baseDelayMs · 2^(attempt-1)`
 * with ±20 % jitter; never more than `maxDelayMs`.
 *
 * @since 0.1.0
 * @category backoff
 */
export const delayFor = (
  attempt: number,
  retryAfterMs: number | undefined,
  options: RetryOptions = {}
): number => {
  const max = options.maxDelayMs ?? 30_000
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, max)
  const base = (options.baseDelayMs ?? 500) * 2 ** (attempt - 1)
  return Math.min(max, Math.round(base * (0.8 + Math.random() * 0.4)))
}

/**
 * The default sleep.
 *
 * @since 0.1.0
 * @category backoff
 */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
