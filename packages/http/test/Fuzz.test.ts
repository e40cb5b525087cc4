/**
 * Property-based fuzzing, generated from the API itself: for every endpoint of the HttpApi (so every
 * operation of the OpenAPI document, the public ones included) fast-check sends bodies, path
 * parameters and query strings derived from the endpoint's schemas and valid samples, plus
 * mutations: wrong types, missing and extra fields, huge numbers, unicode, empty strings, nulls,
 * arrays instead of objects, broken JSON text, odd path segments and very long ids. Half of the path
 * parameters are the real ids of a linked sandbox connection so that requests get past authorisation.
 *
 * Properties: never a 500, never a hang (each request under a timeout), and every non-2xx answer is
 * the error envelope (RFC 6749 `{error, error_description?}` on the OAuth endpoint).
 *
 * Reproduce a failure with `FUZZ_SEED=<seed> npx vitest run --project http test/Fuzz.test.ts`;
 * `FUZZ_RUNS` changes the number of cases per endpoint (default 200).
 */
import { type HttpApiEndpoint, type HttpApiGroup, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Http, RateLimit } from "@tracebridge/http"
import type { Schema } from "effect"
import { Effect, Layer, Logger, LogLevel, Option, Runtime } from "effect"
import fc from "fast-check"
import { Api } from "../src/Api.js"
import * as RepoMemory from "../src/persistence/RepoMemory.js"
import * as Crypto from "../src/services/Crypto.js"
import { sampleBodies } from "./support/Samples.js"
import { call, linkSandbox, signIn } from "./support/TestApp.js"

const SEED = Number(process.env["FUZZ_SEED"] ?? 20261122)
const RUNS = Number(process.env["FUZZ_RUNS"] ?? 200)
const TIMEOUT = "5 seconds"

/** The whole service without a rate limit (the fuzzer is one client sending thousands of requests). */
const FuzzApp = Http.makeHttpLive({ worker: false, rateLimiter: RateLimit.layerWith({ enabled: false }) }).pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(RepoMemory.layer),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

interface Operation {
  readonly id: string
  readonly method: Method
  readonly path: string
  readonly payload: Option.Option<Schema.Schema.Any>
  readonly urlParams: Option.Option<Schema.Schema.Any>
  readonly pathParams: Option.Option<Schema.Schema.Any>
}

const operations = (): ReadonlyArray<Operation> => {
  const out: Array<Operation> = []
  for (const group of Object.values(Api.groups) as unknown as Array<HttpApiGroup.HttpApiGroup.AnyWithProps>) {
    for (const endpoint of Object.values(group.endpoints) as Array<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>) {
      out.push({
        id: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method as Method,
        path: endpoint.path.replace(/:([a-z_]+)/g, "{$1}"),
        payload: endpoint.payloadSchema as Option.Option<Schema.Schema.Any>,
        urlParams: endpoint.urlParamsSchema as Option.Option<Schema.Schema.Any>,
        pathParams: endpoint.pathSchema as Option.Option<Schema.Schema.Any>
      })
    }
  }
  return out
}

const weird: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    "",
    " ",
    0,
    -1,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    9007199254740993n.toString(),
    true,
    [],
    {},
    [null],
    "\u0000",
    "é\u202e🧪",
    "x".repeat(10_000),
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "2026-13-45T99:99:99Z",
    { $ne: null },
    { __proto__: { polluted: true } }
  ),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 3 })
)

/** A valid body with one mutation: a field dropped, a field replaced by a weird value, or an extra field. */
const mutate = (valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.tuple(valid, fc.nat(), weird, fc.string({ maxLength: 20 }), fc.constantFrom("drop", "replace", "extra"))
    .map(([value, pick, odd, key, how]) => {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return odd
      const copy: Record<string, unknown> = { ...value }
      const keys = Object.keys(copy)
      const target = keys.length === 0 ? key : keys[pick % keys.length]!
      if (how === "drop") delete copy[target]
      else if (how === "replace") copy[target] = odd
      else copy[key === "" ? "extra" : key] = odd
      return copy
    })

type Body =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "raw"; readonly text: string; readonly contentType: string }
  | { readonly kind: "none" }

let samples: Record<string, unknown> = {}

const bodies = (operation: Operation): fc.Arbitrary<Body> => {
  // Arbitrary.make spins forever on the filters of some payload schemas: the valid bodies are the
  // samples of the authorisation matrix, and the generation comes from their mutations.
  const sample = samples[operation.id]
  const valid = sample !== undefined
    ? fc.constant(sample)
    : Option.match(operation.payload, { onNone: () => fc.constant({}), onSome: () => fc.jsonValue({ maxDepth: 2 }) })
  const json = (arbitrary: fc.Arbitrary<unknown>) => arbitrary.map((value): Body => ({ kind: "json", value }))
  return fc.oneof(
    { weight: 3, arbitrary: json(valid) },
    { weight: 4, arbitrary: json(mutate(valid)) },
    { weight: 2, arbitrary: json(weird) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        valid.chain((value) =>
          fc.nat().map((cut) => {
            const text = JSON.stringify(value) ?? "null"
            return text.slice(0, cut % Math.max(1, text.length))
          })
        ),
        fc.constantFrom("{", "{\"a\":", "[1,2", "nul", "{'a':1}", "\u0000", "{\"a\":1}}", "\"\\ud800\""),
        fc.string({ unit: "binary", maxLength: 50 })
      ).map((text): Body => ({ kind: "raw", text, contentType: "application/json" }))
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "application/xml", "")
        .map((contentType): Body => ({ kind: "raw", text: "a=1&b=2", contentType }))
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

const segment = (real: string | undefined): fc.Arbitrary<string> =>
  fc.oneof(
    ...(real === undefined ? [] : [{ weight: 6, arbitrary: fc.constant(real) }]),
    { weight: 3, arbitrary: oddSegment },
    { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent) }
  )

const queries = (operation: Operation, realLinkToken: string | undefined): fc.Arbitrary<string> => {
  const valid = Option.match(operation.urlParams, {
    onNone: () => fc.constant<Record<string, unknown>>({}),
    // Arbitrary.make on the query schemas spins forever on their filters: the keys come from the
    // schema, the values from plausible strings.
    onSome: (schema) =>
      fc.record(
        Object.fromEntries(
          Object.keys((schema as any).fields ?? {}).map((key) => [
            key,
            fc.oneof(
              fc.integer({ min: 1, max: 100 }).map(String),
              fc.string({ maxLength: 12 }),
              fc.constantFrom("true", "false", "2026-01-01T00:00:00Z", "passed", "incoming")
            )
          ])
        ),
        { requiredKeys: [] }
      ) as fc.Arbitrary<Record<string, unknown>>
  })
  const withToken = realLinkToken === undefined
    ? valid
    : fc.tuple(valid, fc.boolean()).map(([params, real]) => real ? { ...params, link_token: realLinkToken } : params)
  const pairs = fc.oneof(
    withToken.map((params) => Object.entries(params).map(([key, value]) => [key, String(value)] as const)),
    fc.tuple(withToken, fc.string({ maxLength: 12 }), weird).map(([params, key, odd]) => {
      const keys = Object.keys(params)
      const name = keys.length === 0 || key.length > 6 ? key : keys[key.length % keys.length]!
      return [...Object.entries(params).map(([k, v]) => [k, String(v)] as const), [name, JSON.stringify(odd) ?? ""]]
    }),
    fc.array(fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 })), { maxLength: 4 })
  )
  return fc.oneof(
    { weight: 8, arbitrary: pairs.map((list) => new URLSearchParams(list.map(([k, v]) => [k, v])).toString()) },
    { weight: 1, arbitrary: fc.constantFrom("page=%", "per_page=-1&per_page=99999999999999999999", "a[b]=1&a[c]=2") }
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
    return { status: response.status, text: yield* response.text } satisfies Answer
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => new Error(`hang: ${method} ${url}`) })
  )

/** The property every answer must hold; returns a description of what is wrong, or undefined. */
const violation = (operation: Operation, answer: Answer): string | undefined => {
  if (answer.status >= 500 && answer.status !== 502 && answer.status !== 503 && answer.status !== 504) {
    return `status ${answer.status}`
  }
  if (answer.status < 300) return undefined
  let body: any
  try {
    body = JSON.parse(answer.text)
  } catch {
    return `non-JSON ${answer.status} body`
  }
  if (operation.id === "oauth.token") {
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

describe("fuzzing", () => {
  it.live(
    `every endpoint, ${RUNS} generated requests each: never a 500, never a hang, always the envelope (seed ${SEED})`,
    () =>
      Effect.gen(function*() {
        const all = operations()
        assert.isAtLeast(all.length, 49)

        // The caller: a sandbox organisation with a linked connection, a facility, a package, a webhook.
        const me = yield* signIn
        const main = yield* linkSandbox(me.access)
        const spare = yield* linkSandbox(me.access)
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
        const linkToken = yield* call("POST", "/v1/link/token/create", {
          token: me.access,
          json: { external_id: "fuzz" }
        })

        const ids: Record<string, string> = {
          connection_id: main.connection_id,
          facility_id: facility,
          id: pkg,
          webhook_id: webhook.body.data.id,
          delivery_id: deliveries.body.data[0]?.id
        }
        // Destructive operations and sandbox faults (an outage or slow answers would stall every
        // other case) get a connection and a webhook of their own.
        const spareIds: Record<string, string> = {
          ...ids,
          connection_id: spare.connection_id,
          webhook_id: spareWebhook.body.data.id
        }
        const destructive = (operation: Operation) =>
          operation.method === "DELETE" || operation.id.startsWith("sandbox.")

        // The OAuth cases rotate and replay refresh tokens, which revokes a token family: theirs is not ours.
        const oauth = yield* call("POST", "/v1/oauth/token", {
          json: { grant_type: "client_credentials", client_id: me.client_id, client_secret: me.client_secret }
        })
        const oauthRefresh = oauth.body.refresh_token as string

        samples = {
          ...sampleBodies(pkg, "Fuzz"),
          // An outage would stall every other case: the fuzzer's faults never parse.
          "sandbox.setFault": { kind: "not_a_fault" },
          "webhooks.createWebhook": hook,
          "connect.connectSubmit": { link_token: linkToken.body.data?.link_token, username: "u", password: "p" }
        }
        const runtime = yield* Effect.runtime<HttpClient.HttpClient>()
        const run = Runtime.runPromise(runtime)
        const inFlight = new Map<string, string>()

        const fuzz = (operation: Operation) => {
          const known = destructive(operation) ? spareIds : ids
          const names = [...operation.path.matchAll(/\{([a-z_]+)\}/g)].map((match) => match[1]!)
          const path = fc.tuple(...names.map((name) => segment(known[name])), fc.constant(null)).map((segments) => {
            let i = 0
            return operation.path.replace(/\{[a-z_]+\}/g, () => segments[i++] as string)
          })
          const oauthBody: fc.Arbitrary<Body> = fc.oneof(
            bodies(operation),
            fc.constantFrom("client_credentials", "refresh_token", "password", "", "CLIENT_CREDENTIALS").chain((
              grant
            ) =>
              fc.record({
                grant_type: fc.constant(grant),
                client_id: fc.oneof(fc.constant(me.client_id), fc.string()),
                client_secret: fc.oneof(fc.constant(me.client_secret), fc.string()),
                refresh_token: fc.oneof(fc.constant(oauthRefresh), fc.string())
              }, { requiredKeys: ["grant_type"] }).map((value): Body => ({ kind: "json", value }))
            )
          )
          const request = fc.record({
            path,
            query: queries(
              operation,
              operation.id === "connect.connectSession" ? linkToken.body.data?.link_token : undefined
            ),
            body: operation.id === "oauth.token" ? oauthBody : bodies(operation),
            token: fc.oneof({ weight: 9, arbitrary: fc.constant(me.access) }, {
              weight: 1,
              arbitrary: fc.constantFrom(undefined, "", "tb_at_" + "x".repeat(64))
            })
          })
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
              if (process.env["FUZZ_TRACE"]) console.error("done", answer.status, url.slice(0, 120))
              const problem = violation(operation, answer)
              if (problem !== undefined) {
                throw new Error(`${operation.id}: ${problem}: ${answer.status} ${answer.text.slice(0, 300)}`)
              }
            }),
            { seed: SEED, numRuns: RUNS, endOnFailure: true }
          ).catch((error: unknown) => {
            throw new Error(
              `${operation.id} failed with FUZZ_SEED=${SEED}: ${error instanceof Error ? error.message : String(error)}`
            )
          })
        }

        const started = Date.now()
        const watchdog = setInterval(() => console.error("in flight", [...inFlight.values()]), 10_000)
        const concurrency = Number(process.env["FUZZ_CONCURRENCY"] ?? 1)
        // DELETE /v1/connections/{id} runs alone, after the rest (see docs/security.md, "Fuzzing").
        const alone = (operation: Operation) => operation.id === "connections.deleteConnection"
        yield* Effect.forEach(
          all.filter((operation) => !alone(operation)),
          (operation) => Effect.promise(() => fuzz(operation)),
          { concurrency }
        )
        yield* Effect.forEach(all.filter(alone), (operation) => Effect.promise(() => fuzz(operation)))
        clearInterval(watchdog)
        console.log(`fuzzing: ${all.length} endpoints x ${RUNS} cases in ${Date.now() - started} ms (seed ${SEED})`)
      }).pipe(Effect.provide(FuzzApp)),
    300_000
  )
})
