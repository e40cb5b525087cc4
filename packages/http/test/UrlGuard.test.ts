/**
 * The webhook URL guard on its own (issue #15 item 4, SSRF through IPv6 forms): literal addresses,
 * IPv4 addresses embedded in IPv6 ones, numeric shorthands of a host and localhost names, both when
 * a subscription is made (`checkSyntax`) and at delivery (`check`, on the resolver's answer). The
 * end-to-end rules (status codes, a name rebound to loopback) are in `Webhooks.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck, Option } from "effect"
import type { Plan } from "../src/persistence/Accounts.js"
import * as UrlGuard from "../src/services/UrlGuard.js"

type V4 = readonly [number, number, number, number]

const plans: ReadonlyArray<Plan> = ["production", "sandbox"]

/** A guard whose resolver gives `answers` for every name. */
const resolvingTo = (answers: ReadonlyArray<string>) => UrlGuard.make(() => Effect.succeed(answers))

/** A guard over a fixed table of names. */
const table = (names: Record<string, ReadonlyArray<string>>) =>
  UrlGuard.make((host) => host in names ? Effect.succeed(names[host]!) : Effect.fail(`${host} does not resolve`))

const urlFor = (host: string, plan: Plan) => `${plan === "sandbox" ? "http" : "https"}://${host}/hooks`

const bracket = (address: string) => address.includes(":") ? `[${address}]` : address

/** Whether the syntax check refuses `url`. */
const refusedAtCreation = (url: string, plan: Plan) =>
  Either.isLeft(resolvingTo(["93.184.216.34"]).checkSyntax(url, plan))

/** The delivery-time check of a name whose DNS answer is `answers`: the reason it is refused, if it is. */
const refusedAtDelivery = (answers: ReadonlyArray<string>, plan: Plan) =>
  Effect.option(Effect.flip(resolvingTo(answers).check(urlFor("hooks.example.test", plan), plan)))

// ---------------------------------------------------------------------------------------------
// IPv6 spellings, built by hand (not with the library the guard uses)

const u32 = ([a, b, c, d]: V4) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0
const fromU32 = (n: number): V4 => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
const dotted = (v4: V4) => v4.join(".")

/** Every way of writing the sixteen bytes: expanded with and without leading zeros, RFC 5952, upper case. */
const spellings = (bytes: ReadonlyArray<number>): Array<string> => {
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!)
  const full = groups.map((g) => g.toString(16).padStart(4, "0")).join(":")
  const short = groups.map((g) => g.toString(16)).join(":")
  // The WHATWG serialiser compresses the longest run of zero groups (RFC 5952).
  const compressed = new URL(`http://[${full}]/`).hostname.slice(1, -1)
  return [full, short, compressed, compressed.toUpperCase()]
}

/** The same with the last 32 bits written as a dotted IPv4, after each of the `heads`. */
const dottedTail = (heads: ReadonlyArray<string>, v4: V4): Array<string> => heads.map((head) => `${head}${dotted(v4)}`)

const PUBLIC_A: V4 = [65, 54, 227, 120] // a Teredo server
const PUBLIC_B: V4 = [93, 184, 216, 34]
const flip = (v4: V4) => v4.map((o) => o ^ 255)

interface Embedding {
  readonly bytes: ReadonlyArray<number>
  /** The spellings before a dotted last 32 bits (for the /96 forms), expanded and compressed. */
  readonly heads: ReadonlyArray<string>
}

/** Each IPv6 embedding of `v4`. */
const embeddings = (v4: V4): Record<string, Embedding> => ({
  ipv4Mapped: { bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4], heads: ["0:0:0:0:0:ffff:", "::ffff:"] },
  ipv4Translated: { bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, ...v4], heads: ["0:0:0:0:ffff:0:", "::ffff:0:"] },
  ipv4Compatible: { bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...v4], heads: ["0:0:0:0:0:0:", "::"] },
  sixToFour: { bytes: [0x20, 0x02, ...v4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], heads: [] },
  sixToFourHost: { bytes: [0x20, 0x02, ...v4, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 1], heads: [] },
  nat64: { bytes: [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, ...v4], heads: ["64:ff9b:0:0:0:0:", "64:ff9b::"] },
  nat64Local: {
    bytes: [0, 0x64, 0xff, 0x9b, 0, 1, 0, 0, 0, 0, 0, 0, ...v4],
    heads: ["64:ff9b:1:0:0:0:", "64:ff9b:1::"]
  },
  // RFC 6052 with a /48 prefix: 16 bits, the reserved octet, 16 bits.
  nat64Local48: { bytes: [0, 0x64, 0xff, 0x9b, 0, 1, v4[0], v4[1], 0, v4[2], v4[3], 0, 0, 0, 0, 0], heads: [] },
  // Teredo: the server in bits 32-63, the client in the last 32 bits, inverted.
  teredoClient: { bytes: [0x20, 0x01, 0, 0, ...PUBLIC_A, 0x80, 0, 0xfe, 0x44, ...flip(v4)], heads: [] },
  teredoServer: { bytes: [0x20, 0x01, 0, 0, ...v4, 0, 0, 0xfe, 0x44, ...flip(PUBLIC_B)], heads: [] }
})

/** Every literal spelling of `v4`: dotted (unless `only` names embeddings), and each embedding, compressed and expanded. */
const literals = (v4: V4, only?: ReadonlyArray<string>): Array<string> => [
  ...(only === undefined ? [dotted(v4)] : []),
  ...Object.entries(embeddings(v4)).flatMap(([name, { bytes, heads }]) =>
    only !== undefined && !only.includes(name) ? [] : [...spellings(bytes), ...dottedTail(heads, v4)]
  )
]

/** Numeric shorthands of `v4` that the WHATWG URL parser turns into the dotted address. */
const shorthands = (v4: V4): Array<string> => [
  String(u32(v4)),
  `0x${u32(v4).toString(16)}`,
  v4.map((o) => `0${o.toString(8)}`).join("."),
  v4.map((o) => `0x${o.toString(16)}`).join("."),
  `${v4[0]}.${(v4[1] << 16) | (v4[2] << 8) | v4[3]}`,
  `${v4[0]}.${v4[1]}.${(v4[2] << 8) | v4[3]}`,
  `${dotted(v4)}.`
]

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Ranges no webhook may reach (sandbox loopback aside), as [network, prefix length]. */
const forbiddenRanges: ReadonlyArray<readonly [V4, number]> = [
  [[127, 0, 0, 0], 8],
  [[10, 0, 0, 0], 8],
  [[172, 16, 0, 0], 12],
  [[192, 168, 0, 0], 16],
  [[169, 254, 0, 0], 16],
  [[100, 64, 0, 0], 10],
  [[0, 0, 0, 0], 8],
  [[224, 0, 0, 0], 4], // multicast
  [[240, 0, 0, 0], 4], // reserved
  [[255, 255, 255, 255], 32], // broadcast
  [[192, 0, 0, 0], 24],
  [[192, 0, 2, 0], 24],
  [[198, 18, 0, 0], 15],
  [[198, 51, 100, 0], 24],
  [[203, 0, 113, 0], 24]
]

const forbiddenV4 = FastCheck.tuple(
  FastCheck.constantFrom(...forbiddenRanges),
  FastCheck.integer({ min: 0, max: 0xffffffff })
).map(([[net, prefix], bits]) => {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0
  return fromU32(((u32(net) & mask) | (bits & ~mask)) >>> 0)
})

/** First octets with no special-purpose block inside them, as inclusive ranges. */
const publicFirstOctets = ([
  [1, 9],
  [11, 99],
  [101, 126],
  [128, 168],
  [170, 171],
  [173, 191],
  [193, 197],
  [199, 202],
  [204, 223]
] as const).flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i))

const publicV4 = FastCheck.tuple(
  FastCheck.constantFrom(...publicFirstOctets),
  FastCheck.integer({ min: 0, max: 255 }),
  FastCheck.integer({ min: 0, max: 255 }),
  FastCheck.integer({ min: 0, max: 255 })
).map((v4): V4 => v4)

/** Global unicast IPv6 in the regional registries' 2400::/12, 2800::/12, 2a00::/12 and 2c00::/12. */
const publicV6 = FastCheck.tuple(
  FastCheck.constantFrom(0x2400, 0x2800, 0x2a00, 0x2c00),
  FastCheck.integer({ min: 0, max: 0xff }),
  FastCheck.array(FastCheck.integer({ min: 0, max: 0xffff }), { minLength: 7, maxLength: 7 })
).map(([registry, low, rest]) => [registry + low, ...rest].map((g) => g.toString(16)).join(":"))

const isPlainLoopback = (literal: string) =>
  /^127\./.test(literal) || new URL(`http://${bracket(literal)}/`).hostname === "[::1]"

// ---------------------------------------------------------------------------------------------

describe("UrlGuard", () => {
  it.effect("refuses the three reported URLs, on both plans, at creation and at delivery", () =>
    Effect.gen(function*() {
      for (const host of ["[::127.0.0.1]", "[::ffff:0:a9fe:a9fe]", "[2002:a9fe:a9fe::]"]) {
        for (const plan of plans) {
          const url = urlFor(host, plan)
          assert.isTrue(refusedAtCreation(url, plan), `${plan} ${url}`)
          assert.isTrue(Either.isLeft(yield* Effect.either(resolvingTo([]).check(url, plan))), `${plan} ${url}`)
          assert.isTrue(Option.isSome(yield* refusedAtDelivery([host.slice(1, -1)], plan)), `${plan} ${host}`)
        }
      }
      // Exactly as reported.
      for (const url of ["http://[::127.0.0.1]/", "http://[::ffff:0:a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/"]) {
        for (const plan of plans) assert.isTrue(refusedAtCreation(url, plan), `${plan} ${url}`)
      }
      const reason = resolvingTo([]).checkSyntax("https://[2002:a9fe:a9fe::]/", "production")
      assert.match(Either.isLeft(reason) ? reason.left : "accepted", /169\.254\.169\.254/)
    }))

  it("refuses numeric shorthands of an IPv4 host as written, whatever the URL parser makes of them", () => {
    const written = [
      "127.1",
      "127.0.1",
      "2130706433",
      "0x7f000001",
      "0X7F000001",
      "0177.0.0.1",
      "0x7f.0.0.1",
      "127.0.0.1.",
      "%31%32%37.0.0.1",
      "\uff11\uff12\uff17.\uff10.\uff10.\uff11",
      "0",
      // A public address written in shorthand is refused too: the host must be written as four decimal numbers.
      "1572395042",
      "93.184.55330"
    ]
    for (const host of written) {
      assert.strictEqual(new URL(`http://${host}/`).hostname.split(".").length, 4, host)
      for (const plan of plans) {
        assert.isTrue(refusedAtCreation(urlFor(host, plan), plan), `${plan} ${host}`)
        assert.isTrue(refusedAtCreation(urlFor(`${host}:8080`, plan), plan), `${plan} ${host}:8080`)
      }
    }
    // The same hidden behind an empty user, a missing "//", backslashes and tabs.
    for (const url of ["http://@127.1/", "http:127.1/", "http:\\\\127.1\\", "http://12\t7.1/", " http://127.1/"]) {
      assert.isTrue(refusedAtCreation(url, "sandbox"), JSON.stringify(url))
    }
    assert.isTrue(refusedAtCreation("https://@1572395042/", "production"))
    // Written out, the same addresses are judged on what they are.
    assert.isFalse(refusedAtCreation("http://127.0.0.1:8080/hooks", "sandbox"))
    assert.isFalse(refusedAtCreation("https://93.184.216.34/hooks", "production"))
  })

  it.effect("a resolver answer in shorthand is refused at delivery", () =>
    Effect.gen(function*() {
      for (const answer of ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "::ffff:127.1", "93.184.55330"]) {
        for (const plan of plans) {
          assert.isTrue(Option.isSome(yield* refusedAtDelivery([answer], plan)), `${plan} ${answer}`)
          assert.isDefined(UrlGuard.addressProblem(answer, plan), `${plan} ${answer}`)
        }
      }
    }))

  it.effect("refuses localhost names in production without asking DNS, trailing dot too", () =>
    Effect.gen(function*() {
      for (
        const host of [
          "localhost",
          "localhost.",
          "LOCALHOST",
          "a.localhost",
          "a.b.localhost.",
          "Hooks.LocalHost",
          "localhost%2e"
        ]
      ) {
        const url = urlFor(host, "production")
        assert.isTrue(refusedAtCreation(url, "production"), url)
        // Even when the resolver would answer with a public address.
        const refused = yield* Effect.either(resolvingTo(["93.184.216.34"]).check(url, "production"))
        assert.isTrue(Either.isLeft(refused), url)
      }
      // Names that merely contain the word are ordinary names.
      assert.isFalse(refusedAtCreation("https://localhost.example.com/hooks", "production"))
      assert.isFalse(refusedAtCreation("https://mylocalhost/hooks", "production"))
    }))

  it.effect("sandbox keeps loopback in its plain forms only, and refuses every other non-public address", () =>
    Effect.gen(function*() {
      const guard = table({ localhost: ["127.0.0.1", "::1"], "a.localhost.": ["127.0.0.1"] })
      for (
        const url of [
          "http://127.0.0.1:8080/hooks",
          "http://127.8.9.10/hooks",
          "http://[::1]:8080/hooks",
          "http://localhost:3000/hooks",
          "http://a.localhost.:3000/hooks"
        ]
      ) {
        assert.isTrue(Either.isRight(yield* Effect.either(guard.check(url, "sandbox"))), url)
      }
      for (
        const url of [
          "http://[::ffff:127.0.0.1]/",
          "http://[::127.0.0.1]/",
          "http://[64:ff9b::7f00:1]/",
          "http://[2002:7f00:1::]/",
          "http://10.0.0.8/",
          "http://169.254.169.254/",
          "http://[fe80::1]/",
          "http://[fd00::1]/"
        ]
      ) {
        assert.isTrue(Either.isLeft(yield* Effect.either(guard.check(url, "sandbox"))), url)
      }
      // A localhost name that resolves anywhere but loopback is refused like any other name.
      const rebound = yield* Effect.either(resolvingTo(["10.0.0.1"]).check("http://localhost/", "sandbox"))
      assert.isTrue(Either.isLeft(rebound))
    }))

  it.effect("at delivery, every resolved address is unwrapped, and one bad answer among good ones is enough", () =>
    Effect.gen(function*() {
      const reason = yield* refusedAtDelivery(["2606:4700:4700::1111", "2002:a9fe:a9fe::"], "production")
      assert.isTrue(Option.isSome(reason))
      assert.match(
        Option.getOrElse(reason, () => ""),
        /hooks\.example\.test resolves to 2002:a9fe:a9fe:: .*169\.254\.169\.254/
      )
      for (
        const answer of [
          "::ffff:169.254.169.254",
          "::ffff:0:a9fe:a9fe",
          "::7f00:1",
          "64:ff9b::a00:1",
          "64:ff9b:1::c0a8:101",
          "2001:0:4136:e378:8000:fe44:80ff:fffe", // Teredo, client 127.0.0.1
          "2001:0:a9fe:a9fe::ffff:ffff", // Teredo, server 169.254.169.254
          "fe80::1%eth0"
        ]
      ) {
        assert.isTrue(Option.isSome(yield* refusedAtDelivery(["8.8.8.8", answer], "production")), answer)
      }
    }))

  it("refuses deprecated and local-use embeddings even around a public IPv4", () => {
    for (const address of ["::8.8.8.8", "::ffff:0:8.8.8.8", "64:ff9b:1::8.8.8.8", "64:ff9b:1:808:8:800::"]) {
      assert.isDefined(UrlGuard.addressProblem(address, "production"), address)
      assert.isTrue(refusedAtCreation(`https://[${address}]/`, "production"), address)
    }
  })

  it.effect("accepts well-known public addresses, plain and in their global embeddings", () =>
    Effect.gen(function*() {
      for (
        const address of [
          "8.8.8.8",
          "1.1.1.1",
          "2606:4700:4700::1111",
          "2001:4860:4860::8888",
          "::ffff:8.8.8.8",
          "64:ff9b::808:808",
          "2002:808:808::1",
          "2001:0:4136:e378:8000:fe44:f7f7:f7f7"
        ]
      ) {
        for (const plan of plans) {
          assert.isUndefined(UrlGuard.addressProblem(address, plan), address)
          assert.isFalse(refusedAtCreation(urlFor(bracket(address), plan), plan), address)
          assert.isTrue(Option.isNone(yield* refusedAtDelivery([address], plan)), address)
        }
      }
    }))

  it.effect.prop(
    "property: a forbidden IPv4 address is refused in every spelling and embedding, as a URL and as a DNS answer",
    [forbiddenV4],
    ([v4]) =>
      Effect.gen(function*() {
        for (const plan of plans) {
          const forms = literals(v4).filter((literal) => plan !== "sandbox" || !isPlainLoopback(literal))
          for (const literal of forms) {
            assert.isDefined(UrlGuard.addressProblem(literal, plan), `${plan} ${literal}`)
            assert.isTrue(refusedAtCreation(urlFor(bracket(literal), plan), plan), `${plan} ${literal}`)
            assert.isTrue(Option.isSome(yield* refusedAtDelivery(["8.8.8.8", literal], plan)), `${plan} ${literal}`)
          }
          for (const host of shorthands(v4)) {
            assert.isTrue(refusedAtCreation(urlFor(host, plan), plan), `${plan} ${host}`)
            assert.isTrue(Option.isSome(yield* refusedAtDelivery([host], plan)), `${plan} ${host}`)
          }
        }
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "property: a public IPv4 address is accepted plain, mapped, through NAT64, 6to4 and Teredo",
    [publicV4],
    ([v4]) =>
      Effect.gen(function*() {
        const global = ["ipv4Mapped", "nat64", "sixToFour", "sixToFourHost", "teredoClient", "teredoServer"]
        for (const literal of [dotted(v4), ...literals(v4, global)]) {
          assert.isUndefined(UrlGuard.addressProblem(literal, "production"), literal)
          assert.isFalse(refusedAtCreation(urlFor(bracket(literal), "production"), "production"), literal)
          assert.isTrue(Option.isNone(yield* refusedAtDelivery([literal], "production")), literal)
        }
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "property: a global unicast IPv6 address is accepted",
    [publicV6],
    ([address]) =>
      Effect.gen(function*() {
        assert.isUndefined(UrlGuard.addressProblem(address, "production"), address)
        assert.isFalse(refusedAtCreation(urlFor(`[${address}]`, "production"), "production"), address)
        assert.isTrue(Option.isNone(yield* refusedAtDelivery([address], "production")), address)
      }),
    { fastCheck: { numRuns: 60 } }
  )
})

describe("UrlGuard.guardedLookup (the check when a delivery's socket connects)", () => {
  const lookupOf = (plan: Plan, host: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      UrlGuard.guardedLookup(plan)(host, { all }, (error, address) => resolve({ error, address }))
    )

  it("refuses a name that resolves to loopback for production, lets the sandbox through", async () => {
    for (const all of [false, true]) {
      const production = await lookupOf("production", "localhost", all)
      assert.strictEqual(production.error?.code, "EREFUSED")
      assert.match(production.error?.message ?? "", /refused at connect/)
      const sandbox = await lookupOf("sandbox", "localhost", all)
      assert.isNull(sandbox.error)
      if (all) assert.isTrue(Array.isArray(sandbox.address))
      else assert.match(String(sandbox.address), /^(127\.|::1)/)
    }
  })

  it("a production delivery through a socket whose name resolves to loopback never connects", async () => {
    const { createServer } = await import("node:http")
    const { request, Agent } = await import("node:http")
    let reached = 0
    const server = createServer((_req, res) => {
      reached++
      res.end("ok")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as { port: number }).port
    const agent = new Agent({ lookup: UrlGuard.guardedLookup("production") } as never)
    const outcome = await new Promise<string>((resolve) => {
      const req = request({ host: "localhost", port, path: "/", agent, method: "POST" }, (res) => {
        res.resume()
        resolve(`answered ${res.statusCode}`)
      })
      req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
      req.end("{}")
    })
    agent.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    assert.strictEqual(outcome, "EREFUSED")
    assert.strictEqual(reached, 0)
  })
})
