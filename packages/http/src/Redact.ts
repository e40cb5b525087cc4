/**
 * Redaction by value: every token Tracebridge issues starts with a known prefix, so it can be found
 * wherever it ends up in a log line (a URL's path or query string under any parameter name, a
 * message, an error or its cause, an annotation, a span name) and written as its prefix and
 * `[REDACTED]`, never any of its secret part: `tb_at_[REDACTED]`. The secrets configured through the
 * environment (the fixed client secret, the encryption keys, the vendor key) have no prefix; they
 * are redacted as whole values.
 *
 * `main.ts` runs the service with {@link console} as Effect's `Console`. Every Effect logger writes
 * through that service (the pretty logger `NodeRuntime.runMain` installs, and the default, logfmt,
 * JSON and structured ones), so a line is redacted as it is written, after all formatting: the
 * rendered cause of `Effect.logError`, with its messages, stacks and `[cause]` chain, included.
 *
 * @since 0.1.0
 */
import { Catalog } from "@tracebridge/providers"
import { Config, Console, Effect, Option, Redacted } from "effect"
import * as util from "node:util"
import * as AppConfig from "./AppConfig.js"

/**
 * What replaces a secret.
 *
 * @since 0.1.0
 * @category constants
 */
export const marker = "[REDACTED]"

/**
 * The prefix of every token `Crypto.token` issues. A new kind of token gets its prefix here (the
 * test `Redact.test.ts` lists them again, so that adding one is a decision).
 *
 * @since 0.1.0
 * @category constants
 */
export const prefixes: ReadonlyArray<string> = [
  "tb_at_", // access token
  "tb_rt_", // refresh token
  "tb_ct_", // connection token
  "tb_secret_", // API client secret
  "whsec_", // webhook signing secret
  "link-sandbox-", // link token
  "link-production-",
  "public-sandbox-", // public token
  "public-production-",
  "tbs_", // dashboard session id (the cookie's value)
  "tbi_" // dashboard invitation token (in the accept link's query)
]

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A prefix, then the secret part: base64url characters, as `Crypto.token` writes them. */
const tokens = new RegExp(`(${prefixes.map(escape).join("|")})[A-Za-z0-9_-]+`, "g")
const anyToken = new RegExp(tokens.source)

/**
 * `%2D` is `-`: unreserved characters (RFC 3986 §2.3) mean the same escaped, so a token can be
 * spelled with escapes in a URL. They are unescaped before the search; other escapes are kept.
 */
const unescapeUnreserved = (s: string) =>
  s.replace(/%([0-9A-Fa-f]{2})/g, (escaped, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16))
    return /[A-Za-z0-9_.~-]/.test(c) ? c : escaped
  })

const redactTokens = (s: string): string => {
  const plain = s.includes("%") ? unescapeUnreserved(s) : s
  if (anyToken.test(plain)) return plain.replace(tokens, (_, prefix: string) => `${prefix}${marker}`)
  return s
}

/**
 * The text with every issued token written as its prefix and {@link marker}.
 *
 * @since 0.1.0
 * @category redaction
 */
export const text = (s: string): string => redactTokens(s)

/**
 * A name (a query parameter's, a JSON body's key) whose value may be a secret: its value is never
 * written, whatever it looks like (the access log's query strings, `RequestLog.redactUrl`; the
 * request log's bodies, {@link json}).
 *
 * @since 0.1.0
 * @category redaction
 */
export const sensitiveName: RegExp = /token|secret|key|password|credential|code/i

/**
 * A JSON value with every value under a {@link sensitiveName} key (at any depth, whatever its
 * type) written as {@link marker}, and every other string, key included, passed through `redact`
 * (the issued tokens and configured secrets by value: {@link text} or {@link make}'s function).
 * `names` replaces {@link sensitiveName} (an error answer's own `code` is no secret).
 *
 * @since 0.1.0
 * @category redaction
 */
export const json = (
  value: unknown,
  redact: (s: string) => string = text,
  names: RegExp = sensitiveName
): unknown => {
  if (typeof value === "string") return redact(value)
  if (Array.isArray(value)) return value.map((item) => json(item, redact, names))
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      out[redact(key)] = names.test(key) && item !== null ? marker : json(item, redact, names)
    }
    return out
  }
  return value
}

/**
 * Configured secrets shorter than this are not searched for (they would blank out ordinary words);
 * issued tokens are always found.
 *
 * @since 0.1.0
 * @category constants
 */
export const minimumLiteralLength = 8

/**
 * A redaction of the issued tokens and of these literal secrets, as they are and as a URL would
 * encode them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (literals: Iterable<string>): (s: string) => string => {
  const spellings = new Set<string>()
  for (const literal of literals) {
    if (literal.length < minimumLiteralLength) continue
    spellings.add(literal)
    spellings.add(encodeURIComponent(literal))
    spellings.add(new URLSearchParams({ s: literal }).toString().slice(2))
  }
  if (spellings.size === 0) return text
  const pattern = new RegExp([...spellings].sort((a, b) => b.length - a.length).map(escape).join("|"), "g")
  return (s) => redactTokens(s.replace(pattern, marker))
}

const configured = (value: Option.Option<Redacted.Redacted>) =>
  Option.match(value, { onNone: () => [], onSome: (r) => [Redacted.value(r)] })

/**
 * The redaction for this configuration: the issued tokens, plus `TRACEBRIDGE_CLIENT_SECRET`,
 * `TRACEBRIDGE_ENCRYPTION_KEY`, each key of `TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS` and every
 * installed provider's secret settings (`ProviderModule.secretConfig`, e.g. a vendor key) when set.
 * A configuration it cannot read leaves the issued tokens.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConfig: Effect.Effect<(s: string) => string> = Config.all([
  AppConfig.bootstrapClient,
  AppConfig.encryptionKey,
  AppConfig.encryptionKeysPrevious,
  Config.all(
    Catalog.secretConfig.map((name) => Config.option(Config.redacted(name)))
  )
]).pipe(
  Effect.map(([client, key, previous, providerSecrets]) =>
    make([
      ...configured(client.secret),
      ...configured(key),
      ...configured(previous).flatMap((keys) => keys.split(",").map((k) => k.trim())),
      ...providerSecrets.flatMap(configured)
    ])
  ),
  Effect.orElseSucceed(() => text)
)

/**
 * The subset of node's console that {@link console} writes to.
 *
 * @since 0.1.0
 * @category models
 */
export type Base = Pick<
  globalThis.Console,
  | "assert"
  | "clear"
  | "count"
  | "countReset"
  | "debug"
  | "dir"
  | "error"
  | "group"
  | "groupCollapsed"
  | "groupEnd"
  | "info"
  | "log"
  | "time"
  | "timeEnd"
  | "timeLog"
  | "trace"
  | "warn"
>

/**
 * An Effect `Console` that writes to `base` (node's console by default) with every line formatted
 * first (as `console.log` formats its arguments) and then redacted. `table` and `dirxml` write their
 * data as plain formatted text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const console = (redact: (s: string) => string, base: Base = globalThis.console): Console.Console => {
  const line = (args: ReadonlyArray<unknown>): Array<string> => args.length === 0 ? [] : [redact(util.format(...args))]
  const label = (l: string | undefined) => (l === undefined ? undefined : redact(l))
  const unsafe: Console.UnsafeConsole = {
    assert: (condition, ...args) => base.assert(condition, ...line(args)),
    clear: () => base.clear(),
    count: (l) => base.count(label(l)),
    countReset: (l) => base.countReset(label(l)),
    debug: (...args) => base.debug(...line(args)),
    dir: (item, options) => base.log(redact(util.inspect(item, options))),
    dirxml: (...args) => base.log(...line(args)),
    error: (...args) => base.error(...line(args)),
    group: (...args) => base.group(...line(args)),
    groupCollapsed: (...args) => base.groupCollapsed(...line(args)),
    groupEnd: () => base.groupEnd(),
    info: (...args) => base.info(...line(args)),
    log: (...args) => base.log(...line(args)),
    table: (data, properties) => base.log(redact(util.inspect(properties ? { data, properties } : data))),
    time: (l) => base.time(label(l)),
    timeEnd: (l) => base.timeEnd(label(l)),
    timeLog: (l, ...args) => base.timeLog(label(l), ...line(args)),
    trace: (...args) => base.trace(...line(args)),
    warn: (...args) => base.warn(...line(args))
  }
  const sync = (f: () => void) => Effect.sync(f)
  return {
    [Console.TypeId]: Console.TypeId,
    assert: (condition, ...args) => sync(() => unsafe.assert(condition, ...args)),
    clear: sync(() => unsafe.clear()),
    count: (l) => sync(() => unsafe.count(l)),
    countReset: (l) => sync(() => unsafe.countReset(l)),
    debug: (...args) => sync(() => unsafe.debug(...args)),
    dir: (item, options) => sync(() => unsafe.dir(item, options)),
    dirxml: (...args) => sync(() => unsafe.dirxml(...args)),
    error: (...args) => sync(() => unsafe.error(...args)),
    group: (options) =>
      sync(() =>
        options?.collapsed === true
          ? unsafe.groupCollapsed(...(options.label === undefined ? [] : [options.label]))
          : unsafe.group(...(options?.label === undefined ? [] : [options.label]))
      ),
    groupEnd: sync(() => unsafe.groupEnd()),
    info: (...args) => sync(() => unsafe.info(...args)),
    log: (...args) => sync(() => unsafe.log(...args)),
    table: (data, properties) => sync(() => unsafe.table(data, properties)),
    time: (l) => sync(() => unsafe.time(l)),
    timeEnd: (l) => sync(() => unsafe.timeEnd(l)),
    timeLog: (l, ...args) => sync(() => unsafe.timeLog(l, ...args)),
    trace: (...args) => sync(() => unsafe.trace(...args)),
    warn: (...args) => sync(() => unsafe.warn(...args)),
    unsafe
  }
}

/**
 * Runs `self` with the redacting {@link console} for this configuration as Effect's `Console`:
 * every log line it (and every fiber it forks) writes is redacted.
 *
 * @since 0.1.0
 * @category combinators
 */
export const redacting = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(fromConfig, (redact) => Effect.withConsole(self, console(redact)))
