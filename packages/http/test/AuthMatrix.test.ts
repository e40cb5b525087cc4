/**
 * The authorisation matrix, generated from the OpenAPI document: every endpoint that takes a bearer
 * token, called with no token, a malformed one, an expired one, a revoked one, another
 * organisation's token and another connection's connection token, answers the documented status
 * in the error envelope, with no data of the victim in the body. A new endpoint joins the matrix
 * by itself; one whose path names an id this file does not know fails until it is taught here.
 */
import { OpenApi } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@tracebridge/api/Api"
import { Effect } from "effect"
import * as TestClock from "effect/TestClock"
import { sampleBodies } from "./support/Samples.js"
import { call, type Json, linkSandbox, otherOrganisation, signIn, TestApp } from "./support/TestApp.js"

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

interface Operation {
  readonly method: Method
  readonly path: string
  readonly id: string
}

const protectedOperations = (): ReadonlyArray<Operation> => {
  const spec = OpenApi.fromApi(Api) as unknown as {
    paths: Record<string, Record<string, { operationId: string; security?: ReadonlyArray<unknown> }>>
  }
  const out: Array<Operation> = []
  for (const [path, operations] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if ((operation.security ?? []).length === 0) continue
      out.push({ method: method.toUpperCase() as Method, path, id: operation.operationId })
    }
  }
  return out
}

let bodies: Record<string, unknown> = {}

/** The victim: an organisation with two connections, a facility, a package, a webhook, a delivery and its event. */
const victimWorld = Effect.gen(function*() {
  const me = yield* signIn
  const victim = yield* linkSandbox(me.access)
  const sibling = yield* linkSandbox(me.access)
  assert.isString(victim.connection_token)
  assert.isString(sibling.connection_token)
  const facilities = yield* call("GET", `/v1/connections/${victim.connection_id}/facilities`, {
    token: me.access
  })
  const facility = facilities.body.data[0].id as string
  const packages = yield* call(
    "GET",
    `/v1/connections/${victim.connection_id}/facilities/${facility}/packages?per_page=1`,
    { token: me.access }
  )
  const pkg = packages.body.data[0].id as string
  const webhook = yield* call("POST", "/v1/webhooks", {
    token: me.access,
    json: { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] }
  })
  assert.strictEqual(webhook.status, 201)
  const simulated = yield* call("POST", `/v1/sandbox/${victim.connection_id}/simulate`, {
    token: me.access,
    json: { scenario: "transfer_arrived" }
  })
  const event = simulated.body.data.event.id as string
  const deliveries = yield* call("GET", `/v1/webhooks/${webhook.body.data.id}/deliveries`, { token: me.access })
  const delivery = deliveries.body.data[0].id as string
  const ids: Record<string, string> = {
    connection_id: victim.connection_id,
    facility_id: facility,
    id: pkg,
    webhook_id: webhook.body.data.id,
    delivery_id: delivery,
    event_id: event
  }
  return {
    me,
    victim,
    sibling,
    ids,
    bodies: sampleBodies(pkg, "Matrix"),
    victimIds: [victim.connection_id, facility, pkg, webhook.body.data.id as string, delivery, event]
  }
})

/** An operation's path with the victim's ids filled in. */
const pathOf = (operation: Operation, ids: Record<string, string>) =>
  operation.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    assert.property(ids, name, `${operation.id}: teach the matrix the path parameter {${name}}`)
    return ids[name]!
  })

/** What a response reveals once and must never reach another principal. */
const secretsIn = (text: string): ReadonlyArray<string> =>
  text.match(/(whsec_|tb_ct_|tb_at_|tb_rt_|link-(sandbox|production)-|public-(sandbox|production)-)[A-Za-z0-9_-]+/g) ??
    []

const send = (method: Method, path: string, token: string | undefined, id: string, key?: string) =>
  call(method, path, {
    ...(token === undefined ? {} : { token }),
    ...(method === "GET" || method === "DELETE" ? {} : { json: bodies[id] ?? {} }),
    ...(key === undefined ? {} : { headers: { "idempotency-key": key } })
  })

const assertRefused = (answer: Json, status: number, codes: ReadonlyArray<string>, where: string) => {
  assert.strictEqual(answer.status, status, `${where}: ${JSON.stringify(answer.body)}`)
  assert.include(codes, answer.body?.error?.code, where)
  assert.isString(answer.body.error.request_id, where)
  assert.deepStrictEqual(Object.keys(answer.body), ["error"], where)
}

describe("authorisation matrix", () => {
  it.effect(
    "every protected endpoint refuses every wrong token, with nothing of the victim's in the body",
    () =>
      Effect.gen(function*() {
        const operations = protectedOperations()
        assert.isAtLeast(operations.length, 40)

        const { bodies: sample, ids, me, sibling, victimIds } = yield* victimWorld
        bodies = sample
        // A token that will expire, and one whose family is revoked by a refresh token used twice.
        const client = { client_id: me.client_id, client_secret: me.client_secret }
        const mint = call("POST", "/v1/oauth/token", { json: { grant_type: "client_credentials", ...client } })
        const expiring = (yield* mint).body.access_token as string
        const revokable = (yield* mint).body
        const refresh = { grant_type: "refresh_token", refresh_token: revokable.refresh_token, ...client }
        assert.strictEqual((yield* call("POST", "/v1/oauth/token", { json: refresh })).status, 200)
        assert.strictEqual((yield* call("POST", "/v1/oauth/token", { json: refresh })).status, 400)
        yield* TestClock.adjust("3601 seconds")
        const stranger = yield* otherOrganisation

        for (const operation of operations) {
          // the per-client limiter refills between operations (its bucket counts on the TestClock)
          yield* TestClock.adjust("2 seconds")
          const path = pathOf(operation, ids)
          const where = `${operation.method} ${operation.path}`
          const run = (token: string | undefined) => send(operation.method, path, token, operation.id)

          assertRefused(yield* run(undefined), 401, ["unauthorized"], `${where} without a token`)
          assertRefused(yield* run("not a token"), 401, ["unauthorized"], `${where} with a malformed token`)
          assertRefused(yield* run(expiring), 401, ["token_expired"], `${where} with an expired token`)
          assertRefused(yield* run(revokable.access_token), 401, ["unauthorized"], `${where} with a revoked token`)

          // A valid token opens the event stream, which never ends by itself: its scoping by organisation
          // and connection is tested in Events.test.ts.
          if (operation.id === "streamEvents") continue
          const scoped = operation.path.includes("{connection_id}") || operation.path.includes("{webhook_id}")
          const foreign = yield* run(stranger)
          const siblingToken = yield* run(sibling.connection_token!)
          if (scoped) {
            assertRefused(foreign, 404, ["resource_not_found"], `${where} with another organisation's token`)
            assertRefused(
              siblingToken,
              403,
              ["forbidden"],
              `${where} with another connection's connection token`
            )
          } else {
            // Organisation-wide endpoints answer the caller about its own organisation only.
            assert.notStrictEqual(foreign.status, 500, where)
            assert.notStrictEqual(siblingToken.status, 500, where)
          }
          for (const answer of [foreign, siblingToken]) {
            const text = JSON.stringify(answer.body)
            // An id the caller sent may be echoed in the message; anything else of the victim's may not.
            for (const id of victimIds.filter((id) => !path.includes(id))) {
              assert.notInclude(text, id, `${where} leaked ${id}`)
            }
          }
        }
      }).pipe(Effect.provide(TestApp)),
    120_000
  )

  it.effect(
    "an Idempotency-Key on every POST is the sender's own: any other principal gets what it would get without one",
    () =>
      Effect.gen(function*() {
        const posts = protectedOperations().filter((o) => o.method === "POST")
        assert.isAtLeast(posts.length, 9)
        const { bodies: sample, ids, me, sibling, victim } = yield* victimWorld
        bodies = sample
        const stranger = yield* otherOrganisation
        const principals: ReadonlyArray<readonly [string, string]> = [
          ["the organisation's access token", me.access],
          ["the connection's own connection token", victim.connection_token!],
          ["another connection's connection token", sibling.connection_token!],
          ["another organisation's access token", stranger]
        ]
        for (const operation of posts) {
          const path = pathOf(operation, ids)
          // Each principal in turn goes first with a fresh key; every other principal then reuses it.
          for (const [firstName, firstToken] of principals) {
            const key = `matrix-${operation.id}-${firstName.replace(/\W+/g, "-")}`
            const first = yield* send("POST", path, firstToken, operation.id, key)
            assert.notStrictEqual(first.status, 500, `${operation.id} by ${firstName}: ${JSON.stringify(first.body)}`)
            const revealed = secretsIn(JSON.stringify(first.body))
            for (const [name, token] of principals) {
              if (token === firstToken) continue
              const where = `POST ${operation.path}: ${name} reusing the key of ${firstName}`
              const keyed = yield* send("POST", path, token, operation.id, key)
              const plain = yield* send("POST", path, token, operation.id)
              assert.strictEqual(keyed.status, plain.status, `${where}: ${JSON.stringify(keyed.body)}`)
              assert.strictEqual(keyed.body?.error?.code, plain.body?.error?.code, where)
              assert.isUndefined(keyed.headers["idempotent-replayed"], where)
              const text = JSON.stringify(keyed.body)
              for (const secret of revealed) assert.notInclude(text, secret, `${where} got the first answer's secret`)
              if (first.status < 300 && keyed.status < 300) assert.notDeepEqual(keyed.body, first.body, where)
            }
            // the sender's own retry is still a replay (after a success or a stored 4xx)
            const again = yield* send("POST", path, firstToken, operation.id, key)
            // (a refusal before authorisation is not stored: the retry is refused afresh)
            if (first.status < 300) {
              assert.strictEqual(again.headers["idempotent-replayed"], "true", `${operation.id} by ${firstName}`)
            }
            if (again.headers["idempotent-replayed"] === "true") {
              assert.deepStrictEqual(again.body, first.body, `${operation.id} by ${firstName}`)
            } else {
              assert.include(
                [401, 403, 404],
                again.status,
                `${operation.id} by ${firstName}: ${JSON.stringify(again.body)}`
              )
            }
          }
        }
      }).pipe(Effect.provide(TestApp)),
    240_000
  )
})
