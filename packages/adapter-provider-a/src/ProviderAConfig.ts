/**
 * The adapter's settings: Tracebridge's vendor (integrator) key and the client's timing, retry,
 * pacing and look-back defaults.
 *
 * @since 0.1.0
 */
import type { ConfigError, Effect } from "effect"
import { Config, Context, Duration, Layer, Redacted } from "effect"
import { descriptor } from "./internal/descriptor.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** Tracebridge's vendor API key: the Basic-auth user name of every call. */
  readonly vendorKey: Redacted.Redacted<string>
  /**
   * Per request (cut to the time left before the caller's `Deadline`, if any); a GET that times
   * out is retried, then `ProviderTimeout`.
   */
  readonly requestTimeout: Duration.DurationInput
  /** Retries of a GET after a 5xx, a timeout or a network error, and of any call after a 429. */
  readonly maxRetries: number
  /** The first retry delay; each retry doubles it. */
  readonly retryBaseDelay: Duration.DurationInput
  /** The longest `Retry-After` honoured before giving up with `ProviderRateLimited`. */
  readonly maxRetryAfter: Duration.DurationInput
  /**
   * Pacing per facility (licence): requests started per second (the upstream rate governor's
   * bucket of the vendor key and licence, shared by every node), and at once (in this process).
   * By default 95% of the descriptor's rate (Metrc's 50/s: 47.5/s) and its concurrency: tokens are
   * evenly spaced, but a request the event loop sends a little late goes out beside the next
   * ones, and Metrc counts per second, so pacing at exactly the limit meets 429s (the bench's row
   * 8 measured it), each pausing the licence for a whole second.
   */
  readonly perFacility: {
    readonly requestsPerSecond: number
    readonly concurrency: number
    /** The governor bucket's size: 1 (requests evenly spaced) unless set. */
    readonly burst?: number | undefined
  }
  /**
   * Pacing per vendor key, across all facilities: the governor's vendor-key bucket, shared by
   * every node (95% of Metrc's 150/s by default), and requests at once in this process.
   */
  readonly perVendorKey: {
    readonly requestsPerSecond: number
    readonly concurrency: number
    /** The governor bucket's size: 1 (requests evenly spaced) unless set. */
    readonly burst?: number | undefined
  }
  /** How far back sales and sales deliveries are read when no `from` is given. */
  readonly salesLookbackDays: number
  /** The largest lastModified window of one request (Metrc caps windows at 24 h). */
  readonly windowHours: number
  /**
   * The history horizon, in days. Metrc answers a list only for the records changed inside a
   * lastModified window, so a complete read walks every 24 h window from the facility's licence
   * start date, or from this many days ago when that is later, to now (one request per window and
   * page). `updated_since`, and `from` on sales, may reach no further back: older is refused with
   * `InvalidInput`, since each window is a request and a date years ago would be thousands of them.
   */
  readonly maxLookbackDays: number
  /** How long the harvest → plants index of a facility is reused. */
  readonly harvestIndexTtl: Duration.DurationInput
}

/** The share of the state system's limit the pacing uses (see `Settings.perFacility`). */
const PACING_MARGIN = 0.95

/**
 * The defaults (a vendor key must still be given).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Omit<Settings, "vendorKey"> = {
  requestTimeout: "30 seconds",
  maxRetries: 3,
  retryBaseDelay: "250 millis",
  maxRetryAfter: "30 seconds",
  perFacility: {
    requestsPerSecond: descriptor.rateLimit.requestsPerSecond * PACING_MARGIN,
    concurrency: descriptor.rateLimit.concurrency
  },
  perVendorKey: { requestsPerSecond: 150 * PACING_MARGIN, concurrency: 30 },
  salesLookbackDays: 30,
  windowHours: 24,
  maxLookbackDays: 366,
  harvestIndexTtl: "60 seconds"
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ProviderAConfig extends Context.Tag("@tracebridge/adapter-provider-a/ProviderAConfig")<
  ProviderAConfig,
  Settings
>() {}

/**
 * The settings from values (defaults for what is left out).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (settings: Partial<Settings> & { readonly vendorKey: Redacted.Redacted<string> }) =>
  Layer.succeed(ProviderAConfig, { ...defaults, ...settings })

const settingsFrom = (vendorKey: Config.Config<Redacted.Redacted<string>>) =>
  Config.all({
    vendorKey,
    timeoutMs: Config.integer("PROVIDER_A_TIMEOUT_MS").pipe(Config.withDefault(30_000)),
    maxRetries: Config.integer("PROVIDER_A_MAX_RETRIES").pipe(Config.withDefault(defaults.maxRetries)),
    facilityRps: Config.number("PROVIDER_A_FACILITY_RPS").pipe(
      Config.withDefault(defaults.perFacility.requestsPerSecond)
    ),
    vendorRps: Config.number("PROVIDER_A_VENDOR_RPS").pipe(Config.withDefault(defaults.perVendorKey.requestsPerSecond)),
    lookback: Config.integer("PROVIDER_A_SALES_LOOKBACK_DAYS").pipe(Config.withDefault(defaults.salesLookbackDays)),
    history: Config.integer("PROVIDER_A_HISTORY_DAYS").pipe(
      Config.validate({ message: "PROVIDER_A_HISTORY_DAYS must be 1 or more", validation: (n) => n >= 1 }),
      Config.withDefault(defaults.maxLookbackDays)
    )
  }).pipe(Config.map((c): Settings => ({
    ...defaults,
    vendorKey: c.vendorKey,
    requestTimeout: Duration.millis(c.timeoutMs),
    maxRetries: c.maxRetries,
    perFacility: { ...defaults.perFacility, requestsPerSecond: c.facilityRps },
    perVendorKey: { ...defaults.perVendorKey, requestsPerSecond: c.vendorRps },
    salesLookbackDays: c.lookback,
    maxLookbackDays: c.history
  })))

/**
 * The settings from the environment: `PROVIDER_A_VENDOR_KEY` (required, secret),
 * `PROVIDER_A_TIMEOUT_MS`, `PROVIDER_A_MAX_RETRIES`, `PROVIDER_A_FACILITY_RPS`,
 * `PROVIDER_A_VENDOR_RPS`, `PROVIDER_A_SALES_LOOKBACK_DAYS`, `PROVIDER_A_HISTORY_DAYS` (the history
 * horizon, 366).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = Layer.effect(ProviderAConfig, settingsFrom(Config.redacted("PROVIDER_A_VENDOR_KEY")))

/**
 * The settings the production port reads from the environment: as {@link layerConfig}, with the
 * vendor key empty while `PROVIDER_A_VENDOR_KEY` is unset (calls then fail at the state system).
 *
 * @since 0.1.0
 * @category config
 */
export const fromEnvironment: Effect.Effect<Settings, ConfigError.ConfigError> = settingsFrom(
  Config.redacted("PROVIDER_A_VENDOR_KEY").pipe(Config.withDefault(Redacted.make("")))
)

/**
 * Settings for tests: a fixed vendor key, no pacing worth noticing and instant retries (so that
 * tests can run under `TestClock`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = (overrides: Partial<Settings> = {}) =>
  layer({
    vendorKey: Redacted.make("test-vendor-key"),
    retryBaseDelay: "0 millis",
    perFacility: { requestsPerSecond: 100_000, concurrency: 16, burst: 100_000 },
    perVendorKey: { requestsPerSecond: 100_000, concurrency: 64, burst: 100_000 },
    ...overrides
  })
