/**
 * Property-based fuzzing, generated from the served OpenAPI document (`/v1/openapi.json`, itself
 * generated from the HttpApi contract): for every operation of the document (the public ones
 * included; the test fails if the number fuzzed differs from the number in the document) fast-check
 * sends bodies, path parameters and query strings derived from the operation's JSON Schemas by
 * `support/OpenApiArbitrary.ts`, valid ones and mutated ones: a required property dropped, a property
 * of the wrong type, an unknown property, huge or empty strings, nulls, nested junk, bodies that are
 * not objects, broken JSON text, wrong content types, odd path segments, wrong-typed, unknown,
 * out-of-range and repeated query parameters. Path parameters and a few body properties (package ids,
 * link tokens, webhook URLs) are the real values of the fixture about half of the time, so that cases
 * get past authorisation and reach the handlers.
 *
 * Properties: never a 500, never a hang (each request under a timeout), and every non-2xx answer is
 * the error envelope (RFC 6749 `{error, error_description?}` on the OAuth endpoint).
 *
 * Reproduce a failure with `FUZZ_SEED=<seed> npx vitest run --project http test/Fuzz.test.ts`;
 * `FUZZ_RUNS` changes the number of cases per operation (default 200), `FUZZ_ONLY=<operationId>`
 * fuzzes one operation, `FUZZ_TRACE=1` prints every request. A failing case becomes an entry of
 * `regressions` below.
 */
import { type HttpApiGroup, HttpClient, HttpClientRequest, OpenApi } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@tracebridge/api/Api"
import { Http, RateLimit, Server } from "@tracebridge/http"
import { Scenario } from "@tracebridge/sandbox"
import { Chunk, Context, Effect, Layer, Logger, LogLevel, Runtime, Stream } from "effect"
import fc from "fast-check"
import * as Crypto from "../src/services/Crypto.js"
import * as OpenApiArbitrary from "./support/OpenApiArbitrary.js"
import { sampleBodies } from "./support/Samples.js"
import { call, linkSandbox, signIn } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const SEED = Number(process.env["FUZZ_SEED"] ?? 20261122)
const RUNS = Number(process.env["FUZZ_RUNS"] ?? 200)
const ONLY = process.env["FUZZ_ONLY"]
const DAY = 86_400_000
/** Midnight UTC today: the generated dates lie from 800 days before it to 30 days after (see `dates` below). */
const today = Math.floor(Date.now() / DAY) * DAY
const TIMEOUT = `${Number(process.env["FUZZ_TIMEOUT_MS"] ?? 5_000)} millis` as const

/** The whole service without a rate limit (the fuzzer is one client sending thousands of requests). */
const FuzzApp = Http.makeHttpLive({ worker: false, rateLimiter: RateLimit.layerWith({ enabled: false }) }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

type Method = OpenApiArbitrary.Method
type Operation = OpenApiArbitrary.Operation

/**
 * How many public endpoints the HttpApi has: the document must describe every one of them (the
 * Connect widget's own routes and the health checks are left out of it, DECISIONS "OpenAPI" and
 * "Turn 3 additions": both are marked `OpenApi.Exclude`).
 */
const endpointCount = (): number =>
  (Object.values(Api.groups) as unknown as Array<HttpApiGroup.HttpApiGroup.AnyWithProps>)
    .filter((group) => !Context.get(group.annotations, OpenApi.Exclude))
    .reduce(
      (sum, group) =>
        sum + Object.values(group.endpoints).filter((e) => !Context.get(e.annotations, OpenApi.Exclude)).length,
      0
    )

const weird: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    "",
    0,
    -1,
    1e308,
    Number.MAX_SAFE_INTEGER + 2,
    true,
    [],
    {},
    [null],
    "x".repeat(10_000),
    { $ne: null }
  ),
  OpenApiArbitrary.oddStrings,
  OpenApiArbitrary.junk,
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.double()
)

type Body =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "raw"; readonly text: string; readonly contentType: string }
  | { readonly kind: "none" }

/** Bodies: valid for the operation's request body schema (or a sample), mutated, junk, broken JSON text, other media types. */
const bodies = (
  operation: Operation,
  options: OpenApiArbitrary.Options,
  sample: unknown
): fc.Arbitrary<Body> => {
  // Operations without a JSON body still get bodies: an empty object, mutated like one.
  const schema: OpenApiArbitrary.JsonSchema = operation.body ?? { type: "object", properties: {} }
  const generated = OpenApiArbitrary.valid(schema, options)
  const valid = sample === undefined
    ? generated
    : fc.oneof({ weight: 3, arbitrary: generated }, { weight: 1, arbitrary: fc.constant(sample) })
  const json = (arbitrary: fc.Arbitrary<unknown>) => arbitrary.map((value): Body => ({ kind: "json", value }))
  return fc.oneof(
    { weight: 4, arbitrary: json(valid) },
    { weight: 5, arbitrary: json(OpenApiArbitrary.mutated(schema, options)) },
    { weight: 1, arbitrary: json(weird) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        valid.chain((value) =>
          fc.nat().map((cut) => {
            const text = JSON.stringify(value) ?? "null"
            return text.slice(0, cut % Math.max(1, text.length))
          })
        ),
        fc.constantFrom(
          "{",
          "{\"a\":",
          "[1,2",
          "nul",
          "{'a':1}",
          "\u0000",
          "{\"a\":1}}",
          "\"\\ud800\"",
          "{\"a\":1,\"a\":2}"
        ),
        fc.constant("x".repeat(1024 * 1024 + 10)),
        fc.string({ unit: "binary", maxLength: 50 })
      ).map((text): Body => ({ kind: "raw", text, contentType: "application/json" }))
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        valid,
        fc.constantFrom(
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/xml",
          "",
          "application/json; charset=utf-16"
        )
      ).map(([value, contentType]): Body => ({
        kind: "raw",
        text: contentType.endsWith("urlencoded") ? "a=1&b=2" : JSON.stringify(value) ?? "",
        contentType
      }))
    },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) }
  )
}

const oddSegment = fc.constantFrom(
  "..",
  ".",
  "%00",
  "%2e%2e",
  "..%2f..%2fetc",
  "%zz",
  "%",
  "a".repeat(5_000),
  encodeURIComponent("é🧪\u202e"),
  "null",
  "-1",
  "1e308",
  "conn_" + "0".repeat(64),
  "%20",
  "'%20OR%201=1"
)

/** A path parameter: the fixture's real id, a value generated from the parameter's schema, or an odd segment. */
const segment = (
  parameter: OpenApiArbitrary.Parameter | undefined,
  real: string | undefined,
  options: OpenApiArbitrary.Options
): fc.Arbitrary<string> =>
  fc.oneof(
    ...(real === undefined ? [] : [{ weight: 6, arbitrary: fc.constant(real) }]),
    { weight: 2, arbitrary: oddSegment },
    {
      weight: 4,
      arbitrary: OpenApiArbitrary.valid(parameter?.schema ?? { type: "string" }, options)
        .map((value) => encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value) ?? ""))
    }
  )

const asParam = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value) ?? "")

/** Query strings: the `in: query` parameters generated from their schemas, then mutated. */
const queries = (
  operation: Operation,
  options: OpenApiArbitrary.Options,
  hints: Readonly<Record<string, string>>
): fc.Arbitrary<string> => {
  const parameters = operation.parameters.filter((parameter) => parameter.in === "query")
  const model = Object.fromEntries(parameters.map((parameter) => {
    const generated = OpenApiArbitrary.valid(parameter.schema ?? { type: "string" }, options).map(asParam)
    const hint = hints[parameter.name]
    return [parameter.name, hint === undefined ? generated : fc.oneof(generated, fc.constant(hint))]
  }))
  const valid = fc.record(model, {
    requiredKeys: parameters.filter((parameter) => parameter.required === true).map((parameter) => parameter.name)
  }).map((params) => Object.entries(params) as Array<[string, string]>)
  const names = parameters.map((parameter) => parameter.name)
  const anyName = names.length === 0 ? fc.string({ maxLength: 12 }) : fc.constantFrom(...names)
  const wrongValue = fc.oneof(
    fc.constantFrom("abc", "-1", "0", "1.5", "1e3", "0x10", "true", "null", "[]", "{}", "", " ", "%", "\u0000"),
    OpenApiArbitrary.oddStrings,
    weird.map((value) => JSON.stringify(value) ?? "")
  )
  const mutations = fc.oneof(
    // One parameter of the wrong type or out of its range.
    fc.tuple(valid, anyName, wrongValue).map(([list, name, value]) => [
      ...list.filter(([key]) => key !== name),
      [name, value] as [string, string]
    ]),
    // Unknown parameters.
    fc.tuple(
      valid,
      fc.array(fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 })), { minLength: 1, maxLength: 4 })
    ).map(([list, more]) => [...list, ...more]),
    // Out-of-range pages and bad cursors, whether or not the operation pages.
    fc.tuple(
      valid,
      fc.constantFrom("per_page", "page", "cursor", "starting_after", "limit"),
      fc.constantFrom(
        "0",
        "101",
        "-1",
        "1000000000",
        "99999999999999999999",
        "1e2",
        " 5",
        "5 ",
        "NaN",
        "eyJpZCI6MX0=",
        "%%"
      )
    ).map(([list, name, value]) => [...list.filter(([key]) => key !== name), [name, value] as [string, string]]),
    // A parameter repeated with different values.
    fc.tuple(valid, anyName, fc.string({ maxLength: 8 })).map(([list, name, value]) => [
      ...list,
      [name, value] as [string, string],
      [name, value + "x"] as [string, string]
    ])
  )
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((list) => new URLSearchParams(list).toString()) },
    { weight: 5, arbitrary: mutations.map((list) => new URLSearchParams(list).toString()) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "page=%",
        "per_page=-1&per_page=99999999999999999999",
        "a[b]=1&a[c]=2",
        "&&=&",
        "%zz=1"
      )
    }
  )
}

interface Answer {
  readonly status: number
  readonly text: string
}

const send = (method: Method, url: string, token: string | undefined, body: Body) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(url)
    if (token !== undefined) request = HttpClientRequest.bearerToken(request, token)
    if (body.kind === "json") request = HttpClientRequest.bodyUnsafeJson(request, body.value)
    if (body.kind === "raw") request = HttpClientRequest.bodyText(request, body.text, body.contentType)
    const response = yield* client.execute(request)
    // An opened event stream never ends by itself: its first frame is the answer.
    if (response.status < 300 && response.headers["content-type"]?.startsWith("text/event-stream")) {
      const first = yield* response.stream.pipe(Stream.decodeText(), Stream.take(1), Stream.runCollect)
      return { status: response.status, text: Chunk.join(first, "") } satisfies Answer
    }
    return { status: response.status, text: yield* response.text } satisfies Answer
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => new Error(`hang: ${method} ${url}`) })
  )

/** The property every answer must hold; returns a description of what is wrong, or undefined. */
const violation = (operationId: string, answer: Answer): string | undefined => {
  if (answer.status >= 500 && answer.status !== 502 && answer.status !== 503 && answer.status !== 504) {
    return `status ${answer.status}`
  }
  if (/\n\s+at .+[:(]\d+/.test(answer.text) || answer.text.includes("node_modules")) return "a stack trace"
  if (answer.status < 300) return undefined
  let body: any
  try {
    body = JSON.parse(answer.text)
  } catch {
    return `non-JSON ${answer.status} body`
  }
  if (operationId === "createToken") {
    const ok = typeof body?.error === "string" &&
      (body.error_description === undefined || typeof body.error_description === "string")
    // The transport-level refusals (413, 415, 429) come from the limits in front of every route, in
    // the general envelope; anything the token endpoint itself refuses is RFC 6749.
    if (ok || (transportRefusals.includes(answer.status) && envelope(body))) return undefined
    return "not an RFC 6749 error"
  }
  return envelope(body) ? undefined : "not the error envelope"
}

const transportRefusals = [413, 415, 429]

const envelope = (body: any): boolean => {
  const error = body?.error
  const ok = body !== null && typeof body === "object" && Object.keys(body).join() === "error" &&
    typeof error === "object" && error !== null &&
    ["type", "code", "message", "request_id"].every((key) => typeof error[key] === "string")
  return ok
}

/**
 * The fixture: a sandbox organisation with a linked connection, a facility, a package, a webhook
 * with a delivery, a link token; a spare connection and webhook for the destructive operations,
 * and a connection in another sandbox world (provider_b, HI) for the sandbox operations, whose
 * faults (an outage, slow answers) would otherwise stall every other case.
 */
const fixture = Effect.gen(function*() {
  const me = yield* signIn
  const main = yield* linkSandbox(me.access)
  const spare = yield* linkSandbox(me.access)
  const faulty = yield* linkSandbox(me.access, "provider_b")
  const facilities = yield* call("GET", `/v1/connections/${main.connection_id}/facilities`, { token: me.access })
  const facility = facilities.body.data[0].id as string
  const packages = yield* call(
    "GET",
    `/v1/connections/${main.connection_id}/facilities/${facility}/packages?per_page=1`,
    { token: me.access }
  )
  const pkg = packages.body.data[0].id as string
  const hook = { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] }
  const webhook = yield* call("POST", "/v1/webhooks", { token: me.access, json: hook })
  const spareWebhook = yield* call("POST", "/v1/webhooks", { token: me.access, json: hook })
  yield* call("POST", `/v1/sandbox/${main.connection_id}/simulate`, {
    token: me.access,
    json: { scenario: "transfer_arrived" }
  })
  const deliveries = yield* call("GET", `/v1/webhooks/${webhook.body.data.id}/deliveries`, { token: me.access })
  const linkToken = yield* call("POST", "/v1/link/token/create", { token: me.access, json: { external_id: "fuzz" } })
  const publicToken = yield* call("POST", "/v1/sandbox/public_token/create", {
    token: me.access,
    json: { provider: "provider_a", state: "CO" }
  })
  // The OAuth cases rotate and replay refresh tokens, which revokes a token family: theirs is not ours.
  const oauth = yield* call("POST", "/v1/oauth/token", {
    json: { grant_type: "client_credentials", client_id: me.client_id, client_secret: me.client_secret }
  })
  const ids: Readonly<Record<string, string>> = {
    connection_id: main.connection_id,
    facility_id: facility,
    id: pkg,
    webhook_id: webhook.body.data.id,
    delivery_id: deliveries.body.data[0]?.id
  }
  return {
    me,
    pkg,
    hook,
    ids,
    spareIds: {
      ...ids,
      connection_id: spare.connection_id,
      webhook_id: spareWebhook.body.data.id
    } as Readonly<Record<string, string>>,
    sandboxIds: { ...ids, connection_id: faulty.connection_id } as Readonly<Record<string, string>>,
    linkToken: linkToken.body.data?.link_token as string,
    publicToken: publicToken.body.data?.public_token as string,
    oauthRefresh: oauth.body.refresh_token as string
  }
})

type Fixture = Effect.Effect.Success<typeof fixture>

/**
 * Failing cases found by the fuzzer, replayed on every run: each is the shrunk counterexample of a
 * failure (operation, method, URL with `{name}` standing for the fixture's ids, token, body). Add one
 * when a seed fails, with the seed and the date, and keep it after the fix.
 */
interface Regression {
  readonly name: string
  readonly operation: string
  readonly method: Method
  readonly url: string
  /** `"caller"`: the fixture's access token; otherwise the literal token, or none. */
  readonly token: "caller" | string | undefined
  readonly body: Body
}

const regressions: ReadonlyArray<Regression> = [
  {
    name: "provider_a lists: updated_since far in the past took ~27 s (seed 20261122, 2026-11-22)",
    operation: "listHarvests",
    method: "GET",
    url:
      "/v1/connections/{connection_id}/facilities/{facility_id}/harvests?page=8&updated_since=1970-01-01T00%3A00%3A00.023Z",
    token: "caller",
    body: { kind: "none" }
  },
  {
    name: "a request line over 16 KiB was a bare 431 (seed 20261122, 2026-11-22)",
    operation: "listSales",
    method: "GET",
    url: "/v1/connections/{connection_id}/facilities/{facility_id}/sales?page=" + "x".repeat(200_000),
    token: "caller",
    body: { kind: "none" }
  },
  {
    name: "oauth.token: JSON nested over 32 levels was not RFC 6749 (seed 20261122, 2026-11-22)",
    operation: "createToken",
    method: "POST",
    url: "/v1/oauth/token",
    token: undefined,
    body: { kind: "json", value: JSON.parse("[".repeat(40) + "]".repeat(40)) }
  },
  {
    name: "oauth.token: a JSON string over 10 000 characters was not RFC 6749 (2026-11-22)",
    operation: "createToken",
    method: "POST",
    url: "/v1/oauth/token",
    token: undefined,
    body: { kind: "json", value: { grant_type: "client_credentials", client_id: "x".repeat(10_001) } }
  }
]

const replay = (regression: Regression, fx: Fixture) => {
  const url = regression.url.replace(/\{([a-z_]+)\}/g, (_, name: string) => fx.ids[name] ?? name)
  const token = regression.token === "caller" ? fx.me.access : regression.token
  return send(regression.method, url, token, regression.body)
}

describe("fuzzing", () => {
  it.live(
    `every operation of /v1/openapi.json, ${RUNS} generated requests each: never a 500, never a hang, always the envelope (seed ${SEED})`,
    () =>
      Effect.gen(function*() {
        const served = yield* call("GET", "/v1/openapi.json")
        assert.strictEqual(served.status, 200)
        const document = served.body as OpenApiArbitrary.Document
        const documented = OpenApiArbitrary.operationsOf(document)
        // Every endpoint of the contract is in the document, and every operation of the document is fuzzed.
        assert.strictEqual(documented.length, endpointCount())
        const all = ONLY === undefined ? documented : documented.filter((operation) => operation.id === ONLY)
        assert.isAbove(all.length, 0, `no operation ${ONLY}`)

        const fx = yield* fixture
        const samples: Record<string, unknown> = {
          ...sampleBodies(fx.pkg, "Fuzz"),
          createWebhook: fx.hook
        }
        // Real values for the body properties of these names, half of the time.
        const hinted: Record<string, fc.Arbitrary<unknown>> = {
          package_id: fc.constant(fx.pkg),
          source_package_ids: fc.constant([fx.pkg]),
          connection_id: fc.constant(fx.ids["connection_id"]),
          quantity: fc.constantFrom(0.001, 1),
          link_token: fc.constant(fx.linkToken),
          public_token: fc.constant(fx.publicToken),
          url: fc.constant(fx.hook.url),
          scenario: fc.constantFrom(...Scenario.names)
        }
        const options: OpenApiArbitrary.Options = {
          components: document.components?.schemas ?? {},
          maxItems: 5,
          dates: { min: new Date(today - 800 * DAY), max: new Date(today + 30 * DAY) },
          hint: (name) => hinted[name]
        }
        const idsFor = (operation: Operation) =>
          operation.path.startsWith("/v1/sandbox/{connection_id}")
            ? fx.sandboxIds
            : operation.method === "DELETE"
            ? fx.spareIds
            : fx.ids

        const runtime = yield* Effect.runtime<HttpClient.HttpClient>()
        const run = Runtime.runPromise(runtime)
        const inFlight = new Map<string, string>()
        let fuzzed = 0

        const fuzz = (operation: Operation) => {
          const known = idsFor(operation)
          const pathParameters = operation.parameters.filter((parameter) => parameter.in === "path")
          const names = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!)
          const path = fc.tuple(
            ...names.map((name) =>
              segment(pathParameters.find((parameter) => parameter.name === name), known[name], options)
            ),
            fc.constant(null)
          ).map((segments) => {
            let i = 0
            return operation.path.replace(/\{[^}]+\}/g, () => segments[i++] as string)
          })
          const oauthBody: fc.Arbitrary<Body> = fc.oneof(
            bodies(operation, options, undefined),
            fc.constantFrom("client_credentials", "refresh_token", "password", "", "CLIENT_CREDENTIALS").chain((
              grant
            ) =>
              fc.record({
                grant_type: fc.constant(grant),
                client_id: fc.oneof(fc.constant(fx.me.client_id), fc.string()),
                client_secret: fc.oneof(fc.constant(fx.me.client_secret), fc.string()),
                refresh_token: fc.oneof(fc.constant(fx.oauthRefresh), fc.string())
              }, { requiredKeys: ["grant_type"] }).map((value): Body => ({ kind: "json", value }))
            )
          )
          const request = fc.record({
            path,
            query: queries(operation, options, { link_token: fx.linkToken }),
            body: operation.id === "createToken" ? oauthBody : bodies(operation, options, samples[operation.id]),
            token: fc.oneof({ weight: 9, arbitrary: fc.constant(fx.me.access) }, {
              weight: 1,
              arbitrary: fc.constantFrom(undefined, "", "tb_at_" + "x".repeat(64))
            })
          })
          const operationStarted = Date.now()
          return fc.assert(
            fc.asyncProperty(request, async ({ body, path, query, token }) => {
              const url = query === "" ? path : `${path}?${query}`
              const sent = operation.method === "GET" || operation.method === "DELETE"
                ? (body.kind === "none" ? body : { kind: "none" } as const)
                : body
              inFlight.set(
                operation.id,
                `${operation.method} ${url.slice(0, 200)} ${JSON.stringify(sent).slice(0, 200)}`
              )
              const answer = await run(send(operation.method, url, token, sent))
              inFlight.delete(operation.id)
              if (process.env["FUZZ_TRACE"]) console.error("done", operation.id, answer.status, url.slice(0, 120))
              const problem = violation(operation.id, answer)
              if (problem !== undefined) {
                throw new Error(`${operation.id}: ${problem}: ${answer.status} ${answer.text.slice(0, 300)}`)
              }
            }),
            { seed: SEED, numRuns: RUNS, endOnFailure: true }
          ).then(
            () => {
              fuzzed++
              if (process.env["FUZZ_TRACE"]) console.error("time", operation.id, Date.now() - operationStarted, "ms")
            },
            (error: unknown) => {
              throw new Error(
                `${operation.id} failed with FUZZ_SEED=${SEED} FUZZ_ONLY=${operation.id}: ${
                  error instanceof Error ? error.message : String(error)
                }`
              )
            }
          )
        }

        const started = Date.now()
        const watchdog = setInterval(() => console.error("in flight", [...inFlight.values()]), 10_000)
        const concurrency = Number(process.env["FUZZ_CONCURRENCY"] ?? 1)
        // DELETE /v1/connections/{id} runs alone, after the rest (see docs/security.md, "Fuzzing").
        const alone = (operation: Operation) => operation.id === "deleteConnection"
        const fuzzOne = (operation: Operation) =>
          Effect.promise(() => fuzz(operation)).pipe(
            // A generated fault (an outage, slow answers) is cleared before the next operation.
            Effect.zipLeft(
              operation.id === "setSandboxFault"
                ? Effect.asVoid(
                  call("DELETE", `/v1/sandbox/${fx.sandboxIds["connection_id"]}/faults`, { token: fx.me.access })
                )
                : Effect.void
            )
          )
        yield* Effect.forEach(all.filter((operation) => !alone(operation)), fuzzOne, { concurrency })
        yield* Effect.forEach(all.filter(alone), fuzzOne)
        clearInterval(watchdog)
        assert.strictEqual(fuzzed, all.length)
        console.log(
          `fuzzing: ${fuzzed} of ${documented.length} operations x ${RUNS} cases in ${
            Date.now() - started
          } ms (seed ${SEED})`
        )
      }).pipe(Effect.provide(FuzzApp)),
    300_000
  )

  it.live.skipIf(regressions.length === 0)(
    "regressions: the failing cases the fuzzer found",
    () =>
      Effect.gen(function*() {
        const fx = yield* fixture
        for (const regression of regressions) {
          const answer = yield* replay(regression, fx)
          const problem = violation(regression.operation, answer)
          assert.isUndefined(problem, `${regression.name}: ${problem} (${answer.status} ${answer.text.slice(0, 300)})`)
        }
      }).pipe(Effect.provide(FuzzApp))
  )
})
