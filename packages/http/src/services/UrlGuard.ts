/**
 * Where webhooks may be sent (DECISIONS "Webhooks"): a production organisation's URL must be
 * `https` and must not resolve to a private, loopback, link-local (cloud metadata), shared,
 * multicast or reserved address; a sandbox organisation may also use `http` and loopback (its
 * receiver on a laptop), never the other blocked ranges.
 *
 * Addresses are judged by an allow-list (ipaddr.js range names): an IPv4 address must be plain
 * `unicast`; an IPv6 address must be `unicast` inside 2000::/3. An IPv4 address carried inside an
 * IPv6 one (IPv4-mapped, IPv4-translated, IPv4-compatible, 6to4, NAT64 64:ff9b::/96 and
 * 64:ff9b:1::/48, both Teredo addresses) is taken out first and must be allowed itself; the
 * deprecated and local-use embeddings are refused whatever they carry. Loopback is allowed to a
 * sandbox organisation only in its plain forms (127.0.0.0/8, ::1, `localhost` names), never embedded.
 * Only strict literals count as addresses: a host written as a numeric shorthand (`127.1`,
 * `2130706433`, `0x7f000001`, `0177.0.0.1`, …) is refused even though the URL parser would read it
 * as an address, and so is a resolver answer in such a form. `localhost`, `*.localhost` (and their
 * trailing-dot forms) are refused to production without asking DNS.
 *
 * The check runs when a subscription is created or changed and again right before every attempt,
 * on a fresh DNS answer, so a name that later rebinds to an internal address is refused then.
 * Redirects are never followed by the dispatcher, so a 3xx cannot lead elsewhere.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Layer } from "effect"
import ipaddr from "ipaddr.js"
import type { LookupAddress, LookupOptions } from "node:dns"
import { lookup as dnsLookup } from "node:dns"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import type { Plan } from "../persistence/Accounts.js"

/**
 * Resolves a host name to its addresses (all of them).
 *
 * @since 0.1.0
 * @category models
 */
export type Resolve = (host: string) => Effect.Effect<ReadonlyArray<string>, string>

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The reason a URL is refused for an organisation on `plan`, checked on its current DNS answer. */
  readonly check: (url: string, plan: Plan) => Effect.Effect<void, string>
  /** The checks that need no DNS (scheme, host, literal addresses). */
  readonly checkSyntax: (url: string, plan: Plan) => Either.Either<URL, string>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class UrlGuard extends Context.Tag("Webhooks/UrlGuard")<UrlGuard, Service>() {}

/** What an address in one of ipaddr.js's ranges is, for the reason given back. */
const rangeNames: Record<string, string> = {
  unspecified: "an unspecified address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a shared (carrier-grade NAT) address",
  private: "a private address",
  uniqueLocal: "a unique local address",
  reserved: "a reserved address"
}

const describeRange = (range: string): string => rangeNames[range] ?? `a special-purpose address (${range})`

/** 2000::/3, the only IPv6 space handed out as global unicast. */
const globalUnicast = ipaddr.IPv6.parseCIDR("2000::/3")

/**
 * An IPv4 address carried inside an IPv6 one: the scheme, the IPv4 addresses it may reach (all are
 * checked), and whether the scheme is globally routed (otherwise refused whatever it carries).
 */
interface Embedding {
  readonly via: string
  readonly addresses: ReadonlyArray<ipaddr.IPv4>
  readonly global: boolean
}

const v4At = (bytes: ReadonlyArray<number>, at: ReadonlyArray<number>, xor = 0): ipaddr.IPv4 =>
  new ipaddr.IPv4(at.map((i) => bytes[i]! ^ xor))

const zeros = (bytes: ReadonlyArray<number>, from: number, to: number): boolean =>
  bytes.slice(from, to).every((byte) => byte === 0)

const startsWith = (bytes: ReadonlyArray<number>, prefix: ReadonlyArray<number>): boolean =>
  prefix.every((byte, i) => bytes[i] === byte)

const last32 = [12, 13, 14, 15]

/** The IPv4 address(es) inside `address`, if it is one of the embedding forms. */
const embedding = (address: ipaddr.IPv6): Embedding | undefined => {
  const b = address.toByteArray()
  // ::ffff:0:0/96 (IPv4-mapped): what a dual-stack socket connects to over IPv4.
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) {
    return { via: "IPv4-mapped", addresses: [v4At(b, last32)], global: true }
  }
  // ::ffff:0:0:0/96 (IPv4-translated, RFC 2765/6145): only meaningful inside a translator.
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(b, 10, 12)) {
    return { via: "IPv4-translated", addresses: [v4At(b, last32)], global: false }
  }
  // ::/96 (IPv4-compatible, deprecated by RFC 4291); :: and ::1 are judged before this.
  if (zeros(b, 0, 12)) return { via: "IPv4-compatible", addresses: [v4At(b, last32)], global: false }
  // 2002::/16 (6to4): the IPv4 address is bits 16-47.
  if (startsWith(b, [0x20, 0x02])) return { via: "6to4", addresses: [v4At(b, [2, 3, 4, 5])], global: true }
  // 2001::/32 (Teredo): the server is bits 32-63, the client the last 32 bits inverted.
  if (startsWith(b, [0x20, 0x01, 0, 0])) {
    return { via: "Teredo", addresses: [v4At(b, [4, 5, 6, 7]), v4At(b, last32, 0xff)], global: true }
  }
  // 64:ff9b::/96 (NAT64 well-known prefix, RFC 6052).
  if (startsWith(b, [0, 0x64, 0xff, 0x9b]) && zeros(b, 4, 12)) {
    return { via: "NAT64", addresses: [v4At(b, last32)], global: true }
  }
  // 64:ff9b:1::/48 (NAT64 local-use, RFC 8215): the operator picks the layout, so every RFC 6052
  // position at or past /48 is read (the octet at bits 64-71 is always skipped).
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 1])) {
    return {
      via: "local-use NAT64",
      addresses: [[6, 7, 9, 10], [7, 9, 10, 11], [9, 10, 11, 12], last32].map((at) => v4At(b, at)),
      global: false
    }
  }
  return undefined
}

/**
 * An IPv6 literal, rewritten first in hex groups by the WHATWG serialiser: ipaddr.js 2.5 reads a
 * dotted tail after `::` (`::8.8.8.8`, IPv4-compatible) as IPv4-mapped (`::ffff:8.8.8.8`).
 */
const parseV6 = (text: string): ipaddr.IPv6 | undefined => {
  try {
    return ipaddr.IPv6.parse(new URL(`http://[${text}]/`).hostname.slice(1, -1))
  } catch {
    return undefined
  }
}

/** Why an IPv4 address may not receive a webhook (`plain`: written as itself, not embedded). */
const v4Problem = (address: ipaddr.IPv4, plan: Plan, plain: boolean): string | undefined => {
  const range = address.range()
  if (range === "unicast") return undefined
  if (range === "loopback" && plan === "sandbox" && plain) return undefined
  return describeRange(range)
}

/**
 * Why an address may not receive a webhook, or undefined when it may. Only strict literals are
 * addresses (`127.1` or `2130706433` are not); IPv4 addresses inside IPv6 ones are checked too.
 *
 * @since 0.1.0
 * @category checks
 */
export const addressProblem = (raw: string, plan: Plan): string | undefined => {
  const text = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw
  // node's isIP accepts only dotted-quad IPv4 and RFC 4291 IPv6 (with an optional zone index).
  const family = isIP(text)
  if (family === 0) return `${raw} is not an IP address`
  if (text.includes("%")) return `${raw} is a scoped (zone index) address`
  if (family === 4) {
    const problem = v4Problem(ipaddr.IPv4.parse(text), plan, true)
    return problem === undefined ? undefined : `${raw} is ${problem}`
  }
  const address = parseV6(text)
  if (address === undefined) return `${raw} is not an IP address`
  const range = address.range()
  if (range === "loopback") return plan === "sandbox" ? undefined : `${raw} is a loopback address`
  if (range === "unspecified") return `${raw} is ${describeRange(range)}`
  const embedded = embedding(address)
  if (embedded !== undefined) {
    for (const inner of embedded.addresses) {
      const problem = v4Problem(inner, plan, false)
      if (problem !== undefined) return `${raw} embeds ${inner.toString()} (${embedded.via}), ${problem}`
    }
    return embedded.global ? undefined : `${raw} is not globally reachable (${embedded.via})`
  }
  if (range !== "unicast") return `${raw} is ${describeRange(range)}`
  if (!address.match(globalUnicast)) return `${raw} is not a global unicast address`
  return undefined
}

/**
 * The host of `url` as it is written, before the WHATWG parser normalises it (which turns `127.1`,
 * `2130706433`, `0x7f000001`, `0177.0.0.1`, `%31%32%37.0.0.1` or full-width digits into
 * `127.0.0.1`). Like the parser: spaces and C0 controls at either end and tabs and newlines
 * anywhere are dropped, `\` counts as `/`, any number of slashes may follow the scheme, and the
 * host follows the last `@`.
 */
const writtenHost = (url: string): string => {
  const chars = [...url].filter((c) => c !== "\t" && c !== "\n" && c !== "\r")
  let start = 0
  let end = chars.length
  while (start < end && chars[start]! <= " ") start++
  while (end > start && chars[end - 1]! <= " ") end--
  const authority = /^[^:]*:[/\\]*([^/\\?#]*)/.exec(chars.slice(start, end).join(""))?.[1] ?? ""
  const host = authority.slice(authority.lastIndexOf("@") + 1)
  const port = host.startsWith("[") ? host.indexOf("]") + 1 : host.indexOf(":")
  return (port <= 0 ? host : host.slice(0, port)).toLowerCase()
}

/** `localhost`, `*.localhost`, with or without the trailing dot (RFC 6761: always loopback). */
const isLocalhost = (host: string): boolean => {
  const name = host.replace(/\.+$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}

const syntax = (url: string, plan: Plan): Either.Either<URL, string> => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Either.left("url must be an absolute http(s) URL")
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return Either.left("url must be an http(s) URL")
  }
  if (plan !== "sandbox" && parsed.protocol !== "https:") {
    return Either.left("url must be https (sandbox organisations may use http)")
  }
  if (parsed.username !== "" || parsed.password !== "") return Either.left("url must not carry credentials")
  const host = parsed.hostname.replace(/^\[|\]$/g, "")
  if (host === "") return Either.left("url must name a host")
  if (isIP(host) === 4 && writtenHost(url) !== host) {
    return Either.left(`url must write an IPv4 host as four decimal numbers (${host}), not a shorthand`)
  }
  if (isIP(host) !== 0) {
    const problem = addressProblem(host, plan)
    if (problem !== undefined) return Either.left(`url may not point at ${problem}`)
  } else if (plan !== "sandbox" && isLocalhost(host)) {
    return Either.left(`url may not point at ${host}, a loopback name`)
  }
  return Either.right(parsed)
}

/**
 * The guard over a resolver.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (resolve: Resolve): Service => ({
  checkSyntax: syntax,
  check: (url, plan) =>
    Effect.gen(function*() {
      const parsed = yield* syntax(url, plan)
      const host = parsed.hostname.replace(/^\[|\]$/g, "")
      if (isIP(host) !== 0) return
      const addresses = yield* resolve(host)
      if (addresses.length === 0) return yield* Effect.fail(`${host} does not resolve`)
      for (const address of addresses) {
        const problem = addressProblem(address, plan)
        if (problem !== undefined) return yield* Effect.fail(`${host} resolves to ${problem}`)
      }
    })
})

/**
 * Resolves with the system resolver (`dns.lookup`, every address).
 *
 * @since 0.1.0
 * @category resolvers
 */
export const systemResolve: Resolve = (host) =>
  Effect.tryPromise({
    try: () => lookup(host, { all: true, verbatim: true }),
    catch: () => `${host} does not resolve`
  }).pipe(Effect.map((answers) => answers.map((a) => a.address)))

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.succeed(UrlGuard, make(systemResolve))

/**
 * A guard over a fixed resolver (tests: DNS answers that change between calls).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (resolve: Resolve) => Layer.succeed(UrlGuard, make(resolve))

/**
 * A `lookup` for node's sockets (`net.connect`, an `http.Agent`'s options) that resolves with the
 * system resolver and refuses the connection when any address is forbidden for `plan`: the check at
 * the moment of connecting, so that a name whose DNS answer changes between the guard's check and
 * the connection (rebinding) is still refused.
 *
 * @since 0.1.0
 * @category resolvers
 */
export const guardedLookup = (plan: Plan) =>
(
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void
): void => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, [])
    const list = addresses as Array<LookupAddress>
    for (const entry of list) {
      const problem = addressProblem(entry.address, plan)
      if (problem !== undefined) {
        const refused: NodeJS.ErrnoException = new Error(`refused at connect: ${problem}`)
        refused.code = "EREFUSED"
        return callback(refused, [])
      }
    }
    if (options.all === true) return callback(null, list)
    const first = list[0]
    if (first === undefined) {
      const none: NodeJS.ErrnoException = new Error(`${hostname} does not resolve`)
      none.code = "ENOTFOUND"
      return callback(none, [])
    }
    return callback(null, first.address, first.family)
  })
}
