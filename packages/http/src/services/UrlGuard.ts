/**
 * Where webhooks may be sent (DECISIONS "Webhooks"): a production organisation's URL must be
 * `https` and must not resolve to a private, loopback, link-local (cloud metadata), shared,
 * multicast or reserved address; a sandbox organisation may also use `http` and loopback (its
 * receiver on a laptop), never the other blocked ranges.
 *
 * The check runs when a subscription is created or changed and again right before every attempt,
 * on a fresh DNS answer, so a name that later rebinds to an internal address is refused then.
 * Redirects are never followed by the dispatcher, so a 3xx cannot lead elsewhere.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Layer } from "effect"
import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"
import type { Plan } from "../persistence/Repo.js"

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

const blocked = new BlockList()
for (
  const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const
) blocked.addSubnet(net, prefix, "ipv4")
for (
  const [net, prefix] of [
    ["::", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
    ["64:ff9b::", 96],
    ["2001:db8::", 32]
  ] as const
) blocked.addSubnet(net, prefix, "ipv6")

const loopback = new BlockList()
loopback.addSubnet("127.0.0.0", 8, "ipv4")
loopback.addAddress("::1", "ipv6")

/** An IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:10.0.0.1`), else the address. */
const unmap = (address: string): string => {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return m ? m[1]! : address
}

/**
 * Why an address may not receive a webhook, or undefined when it may.
 *
 * @since 0.1.0
 * @category checks
 */
export const addressProblem = (raw: string, plan: Plan): string | undefined => {
  const address = unmap(raw.replace(/^\[|\]$/g, ""))
  const family = isIP(address)
  if (family === 0) return `${raw} is not an IP address`
  const type = family === 4 ? "ipv4" : "ipv6"
  if (loopback.check(address, type)) {
    return plan === "sandbox" ? undefined : `${raw} is a loopback address`
  }
  if (blocked.check(address, type)) return `${raw} is a private, link-local or reserved address`
  return undefined
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
  if (isIP(host) !== 0) {
    const problem = addressProblem(host, plan)
    if (problem !== undefined) return Either.left(`url may not point at ${problem}`)
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
