/**
 * The dashboard's role matrix (issue #33, `docs/dashboard.md`): every call of the internal API,
 * by each of the four roles, against the member's own organisation and against another
 * organisation's members, API keys, connections, webhooks, deliveries, request logs, Connect
 * settings and sandbox connections, which are never reachable (404 where the role may act, 403
 * where it may not), never listed, and never changed. The list of calls is checked against
 * `DashboardApi` itself: an endpoint with no row (or, when its path names a record, no row naming
 * another organisation's) fails the test.
 */
import { HttpApi } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { DashboardApi } from "@tracebridge/api"
import { Bootstrap, Http } from "@tracebridge/http"
import { Clock, Duration, Effect, Layer, Option, TestClock } from "effect"
import * as OTPAuth from "otpauth"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import * as RequestLogCapture from "../src/RequestLogCapture.js"
import * as Server from "../src/Server.js"
import * as Crypto from "../src/services/Crypto.js"
import { accept, type Answer, firstOwner, invited, type Member, raw, tokenFor } from "./support/Dashboard.js"
import { call } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

type Role = "owner" | "admin" | "developer" | "viewer"
const roles: ReadonlyArray<Role> = ["owner", "admin", "developer", "viewer"]

/** The status each role gets; one number: every role. */
type Expected = number | Readonly<Record<Role, number>>
const by = (owner: number, admin: number, developer: number, viewer: number) => ({ owner, admin, developer, viewer })

/** Stores a sandbox connection of an organisation directly. */
const connectionOf = (organisationId: string, id: string) =>
  Effect.flatMap(ConnectionStore, (store) =>
    store.insertConnection({
      id,
      organisation_id: organisationId,
      provider: "provider_a",
      state: "CO",
      status: "active",
      is_sandbox: true,
      external_id: null,
      credentials: null,
      key_id: null,
      token_issued: false,
      created_at: 0,
      updated_at: 0,
      sandbox_version: 0,
      sandbox_fault: null
    }))

/** Stores a webhook endpoint of an organisation directly (its secret is never used here). */
const webhookOf = (organisationId: string, id: string) =>
  Effect.flatMap(WebhookStore, (store) =>
    store.insertWebhookEndpoint({
      id,
      organisation_id: organisationId,
      url: "http://127.0.0.1:9/hooks",
      events: JSON.stringify(["lab_result.received"]),
      description: null,
      status: "enabled",
      secret: "sealed",
      key_id: "k",
      previous_secret: null,
      previous_key_id: null,
      previous_expires_at: null,
      created_at: 0,
      updated_at: 0
    }))

/** Stores an event of a connection and one failed delivery of it to an endpoint. */
const failedDeliveryOf = (organisationId: string, connectionId: string, endpointId: string, id: string) =>
  Effect.flatMap(WebhookStore, (store) =>
    store.insertWebhookEvent(
      {
        id: `evt_${id}`,
        organisation_id: organisationId,
        connection_id: connectionId,
        type: "lab_result.received",
        body: "{}",
        created_at: 0,
        trace_parent: null
      },
      [{
        id,
        organisation_id: organisationId,
        endpoint_id: endpointId,
        event_id: `evt_${id}`,
        event_type: "lab_result.received",
        status: "failed",
        attempts: 8,
        claims: 8,
        next_attempt_at: null,
        locked_until: null,
        created_at: 0,
        updated_at: 0
      }]
    ))

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** Every endpoint of the dashboard's API, read from its definition, with a pattern of its path. */
const endpoints = (() => {
  const all: Array<
    {
      readonly name: string
      readonly method: Method
      readonly session: boolean
      readonly pattern: RegExp
      readonly params: number
    }
  > = []
  HttpApi.reflect(DashboardApi.DashboardApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      const segments = endpoint.path.split("/")
      all.push({
        name: `${endpoint.method} ${endpoint.path}`,
        method: endpoint.method as Method,
        session: [...middleware].some((tag) => tag.key === DashboardApi.DashboardSession.key),
        pattern: new RegExp(`^${segments.map((s) => s.startsWith(":") ? "[^/]+" : s).join("/")}$`),
        params: segments.filter((s) => s.startsWith(":")).length
      })
    }
  })
  return all
})()

/** The endpoint a call reaches: of those whose method and path match, the one with fewest parameters. */
const endpointOf = (method: Method, url: string) => {
  const path = url.split("?")[0]!
  const matching = endpoints.filter((e) => e.method === method && e.pattern.test(path)).sort((a, b) =>
    a.params - b.params
  )
  assert.isAbove(matching.length, 0, `${method} ${url} is no endpoint of DashboardApi`)
  return matching[0]!
}

/**
 * The endpoints outside the matrix: they need no session, so no role and no organisation applies
 * (sign-in and accepting an invitation run here for every member; `Dashboard.test.ts` and
 * `DashboardSso.test.ts` test them all).
 */
const open = [
  "POST /dashboard/api/session",
  "POST /dashboard/api/invitations/accept",
  "GET /dashboard/api/sso",
  "GET /dashboard/api/sso/start",
  "POST /dashboard/api/sso/callback"
]

const flush = Effect.flatMap(
  Effect.serviceOption(RequestLogCapture.Capture),
  (capture) => Option.isSome(capture) ? capture.value.flush : Effect.dieMessage("the request log is off")
)

/** A TOTP code now, for the secret of an enrolment's answer. */
const totpNow = (enrolment: Answer | undefined) =>
  Effect.map(
    Clock.currentTimeMillis,
    (timestamp) => (OTPAuth.URI.parse(enrolment!.body.otpauth_uri) as OTPAuth.TOTP).generate({ timestamp })
  )

/** `id` as a whole word of `text` (not the start of a longer id). */
const mentions = (text: string, id: string) =>
  new RegExp(`(?<![\\w-])${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`).test(text)

describe("Dashboard roles", () => {
  it("the API's endpoints are read from its definition", () => {
    assert.isAbove(endpoints.length, 50)
    assert.sameMembers(endpoints.filter((e) => !e.session).map((e) => e.name), open)
    assert.strictEqual(
      endpointOf("POST", "/dashboard/api/deliveries/resend_failed").name,
      "POST /dashboard/api/deliveries/resend_failed"
    )
    assert.strictEqual(endpointOf("GET", "/dashboard/api/logs/req_1").name, "GET /dashboard/api/logs/:request_id")
  })

  it.scoped("every call, four roles, and another organisation's data never reachable", () =>
    Effect.gen(function*() {
      // organisation A: its first owner, and one member of each other role
      const start = Option.getOrThrow(yield* Bootstrap.firstStart)
      const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "owner@a.example")
      const members: Record<Role, Member> = {
        owner,
        admin: yield* invited(owner, "admin@a.example", "admin"),
        developer: yield* invited(owner, "developer@a.example", "developer"),
        viewer: yield* invited(owner, "viewer@a.example", "viewer")
      }
      // organisation B: its owner, a member and an API key
      const orgB = yield* Bootstrap.createOrganisation("Organisation B")
      const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
      const memberB = yield* invited(ownerB, "member@b.example", "viewer")
      const keyB = yield* raw("POST", "/dashboard/api/keys", { cookie: ownerB.cookie, csrf: ownerB.csrf })
      assert.strictEqual(keyB.status, 201)
      const clientB = keyB.body.client_id as string
      yield* connectionOf(orgB.id, "conn_b")
      yield* webhookOf(orgB.id, "wh_b")
      yield* failedDeliveryOf(orgB.id, "conn_b", "wh_b", "whd_b")
      const domainB = yield* raw("POST", "/dashboard/api/sso/domains", {
        cookie: ownerB.cookie,
        csrf: ownerB.csrf,
        json: { domain: "b.example" }
      })
      assert.strictEqual(domainB.status, 201)
      const connectB = yield* raw("PUT", "/dashboard/api/connect/settings", {
        cookie: ownerB.cookie,
        csrf: ownerB.csrf,
        json: { client_name: "Brand of B", logo_url: null }
      })
      assert.strictEqual(connectB.status, 200)
      yield* connectionOf(owner.organisationId, "conn_a_hooks")
      yield* webhookOf(owner.organisationId, "wh_a")
      // a /v1 call of each organisation's, in the request log
      const accessOf = (answer: Answer) =>
        Effect.map(tokenFor(answer.body.client_id, answer.body.client_secret), (t) => t.body.access_token as string)
      const keyLogA = yield* raw("POST", "/dashboard/api/keys", { cookie: owner.cookie, csrf: owner.csrf })
      const requestA = (yield* call("GET", "/v1/connections", { token: yield* accessOf(keyLogA) })).headers[
        "x-request-id"
      ]!
      const requestB = (yield* call("GET", "/v1/connections", { token: yield* accessOf(keyB) })).headers[
        "x-request-id"
      ]!
      yield* flush
      // what of B's must never be in an answer to A's members (B's ids, its domain, its Connect name)
      const foreign = [
        clientB,
        "b.example",
        "Brand of B",
        orgB.id,
        ownerB.userId,
        memberB.userId,
        "conn_b",
        "wh_b",
        "whd_b",
        "evt_whd_b",
        requestB
      ]
      /** Per endpoint of the API: a row on A's data, a row naming B's. */
      const covered = new Map<string, { own: boolean; other: boolean }>()
      const cover = (method: Method, url: string, json: unknown) => {
        const endpoint = endpointOf(method, url)
        const request = `${url} ${JSON.stringify(json ?? null)}`
        const seen = covered.get(endpoint.name) ?? { own: false, other: false }
        if (foreign.some((id) => mentions(request, id))) seen.other = true
        else seen.own = true
        covered.set(endpoint.name, seen)
      }

      for (const role of roles) {
        // the per-address rate limit's bucket (200) refills: every call here comes from one address
        yield* TestClock.adjust(Duration.seconds(3))
        const me = members[role]
        // fresh targets in A for this role's changes, made by the owner
        const target = yield* invited(owner, `target-${role}@a.example`, "viewer")
        const removable = yield* invited(owner, `removable-${role}@a.example`, "viewer")
        const keyA = (yield* raw("POST", "/dashboard/api/keys", { cookie: owner.cookie, csrf: owner.csrf })).body
          .client_id as string
        yield* connectionOf(owner.organisationId, `conn_a_${role}`)
        yield* connectionOf(owner.organisationId, `conn_a_relink_${role}`)
        yield* failedDeliveryOf(owner.organisationId, "conn_a_hooks", "wh_a", `whd_a_${role}`)
        // an endpoint of A's made on the page (port 9: a test event meets a refused connection)
        const hookA = (yield* raw("POST", "/dashboard/api/webhooks", {
          cookie: owner.cookie,
          csrf: owner.csrf,
          json: { url: "http://127.0.0.1:9/hooks", events: ["lab_result.received"] }
        })).body.webhook.id as string
        // a sandbox connection of A's made on the page
        const sandboxA = (yield* raw("POST", "/dashboard/api/sandbox/connections", {
          cookie: owner.cookie,
          csrf: owner.csrf,
          json: { provider: "provider_a", state: "CO" }
        })).body.id as string
        /** This round's answers by row, for the rows that need an earlier one's (TOTP codes). */
        const answers = new Map<string, Answer>()

        /** A row: what, method, URL, body (or an effect making it, run just before the call), status. */
        const calls: ReadonlyArray<
          readonly [string, Method, string, unknown, Expected]
        > = [
          ["me", "GET", "/dashboard/api/session", undefined, 200],
          ["members", "GET", "/dashboard/api/members", undefined, 200],
          ["audit", "GET", "/dashboard/api/audit?per_page=100", undefined, 200],
          ["keys", "GET", "/dashboard/api/keys", undefined, 200],
          ["invite a developer", "POST", "/dashboard/api/invitations", {
            email: `d-${role}@a.example`,
            role: "developer"
          }, by(200, 200, 403, 403)],
          ["invite an owner", "POST", "/dashboard/api/invitations", {
            email: `o-${role}@a.example`,
            role: "owner"
          }, by(200, 403, 403, 403)],
          [
            "change a member's role",
            "PATCH",
            `/dashboard/api/members/${target.userId}`,
            { role: "developer" },
            by(200, 200, 403, 403)
          ],
          [
            "make an owner",
            "PATCH",
            `/dashboard/api/members/${target.userId}`,
            { role: "owner" },
            by(200, 403, 403, 403)
          ],
          [
            "back to viewer (for the owner: an owner demoted while another owner remains)",
            "PATCH",
            `/dashboard/api/members/${target.userId}`,
            { role: "viewer" },
            by(200, 200, 403, 403)
          ],
          [
            "demote the last owner",
            "PATCH",
            `/dashboard/api/members/${owner.userId}`,
            { role: "admin" },
            by(409, 403, 403, 403)
          ],
          [
            "remove the last owner",
            "DELETE",
            `/dashboard/api/members/${owner.userId}`,
            undefined,
            by(409, 403, 403, 403)
          ],
          [
            "remove a member",
            "DELETE",
            `/dashboard/api/members/${removable.userId}`,
            undefined,
            by(204, 204, 403, 403)
          ],
          ["create a key", "POST", "/dashboard/api/keys", undefined, by(201, 201, 201, 403)],
          [
            "roll a key",
            "POST",
            `/dashboard/api/keys/${keyA}/roll`,
            { expires_in_seconds: 3600 },
            by(200, 200, 200, 403)
          ],
          ["revoke a key", "POST", `/dashboard/api/keys/${keyA}/revoke`, undefined, by(200, 200, 200, 403)],
          ["enrol TOTP", "POST", "/dashboard/api/totp/enrol", undefined, 200],
          [
            "confirm TOTP",
            "POST",
            "/dashboard/api/totp/confirm",
            Effect.map(Effect.suspend(() => totpNow(answers.get("enrol TOTP"))), (code) => ({ code })),
            200
          ],
          [
            "disable TOTP (with the next window's code: a code works once)",
            "POST",
            "/dashboard/api/totp/disable",
            Effect.zipRight(
              TestClock.adjust(Duration.seconds(30)),
              Effect.map(Effect.suspend(() => totpNow(answers.get("enrol TOTP"))), (code) => ({ code }))
            ),
            200
          ],
          // the request log: A's request, B's never (not listed, not found, not by filter)
          ["logs", "GET", "/dashboard/api/logs?limit=100", undefined, 200],
          ["a request's log", "GET", `/dashboard/api/logs/${requestA}`, undefined, 200],
          ["B's request's log", "GET", `/dashboard/api/logs/${requestB}`, undefined, 404],
          ["logs filtered by B's request", "GET", `/dashboard/api/logs?request_id=${requestB}`, undefined, 200],
          ["logs filtered by B's connection", "GET", "/dashboard/api/logs?connection_id=conn_b", undefined, 200],
          // Connect defaults: A's own (B's name never shown)
          ["Connect settings", "GET", "/dashboard/api/connect/settings", undefined, 200],
          [
            "change Connect settings",
            "PUT",
            "/dashboard/api/connect/settings",
            { client_name: `Brand of A by ${role}`, logo_url: null },
            by(200, 200, 403, 403)
          ],
          ["Connect preview", "POST", "/dashboard/api/connect/preview", undefined, by(200, 200, 200, 403)],
          // sandbox tools, on A's sandbox connection and on B's
          ["sandbox options", "GET", "/dashboard/api/sandbox", undefined, 200],
          [
            "make a sandbox connection",
            "POST",
            "/dashboard/api/sandbox/connections",
            { provider: "provider_a", state: "CO" },
            by(201, 201, 201, 403)
          ],
          [
            "simulate a scenario",
            "POST",
            `/dashboard/api/sandbox/connections/${sandboxA}/simulate`,
            { scenario: "transfer_arrived" },
            by(200, 200, 200, 403)
          ],
          [
            "simulate on B's connection",
            "POST",
            "/dashboard/api/sandbox/connections/conn_b/simulate",
            { scenario: "transfer_arrived" },
            by(404, 404, 404, 403)
          ],
          [
            "set a fault",
            "PUT",
            `/dashboard/api/sandbox/connections/${sandboxA}/fault`,
            { kind: "outage" },
            by(200, 200, 200, 403)
          ],
          [
            "set a fault on B's connection",
            "PUT",
            "/dashboard/api/sandbox/connections/conn_b/fault",
            { kind: "outage" },
            by(404, 404, 404, 403)
          ],
          ["read a fault", "GET", `/dashboard/api/sandbox/connections/${sandboxA}/fault`, undefined, 200],
          ["read B's fault", "GET", "/dashboard/api/sandbox/connections/conn_b/fault", undefined, 404],
          [
            "clear a fault",
            "DELETE",
            `/dashboard/api/sandbox/connections/${sandboxA}/fault`,
            undefined,
            by(200, 200, 200, 403)
          ],
          [
            "clear B's fault",
            "DELETE",
            "/dashboard/api/sandbox/connections/conn_b/fault",
            undefined,
            by(404, 404, 404, 403)
          ],
          [
            "reset a sandbox connection",
            "POST",
            `/dashboard/api/sandbox/connections/${sandboxA}/reset`,
            undefined,
            by(200, 200, 200, 403)
          ],
          [
            "reset B's sandbox connection",
            "POST",
            "/dashboard/api/sandbox/connections/conn_b/reset",
            undefined,
            by(404, 404, 404, 403)
          ],
          ["connections", "GET", "/dashboard/api/connections", undefined, 200],
          [
            "delete a connection",
            "DELETE",
            `/dashboard/api/connections/conn_a_${role}`,
            undefined,
            by(200, 200, 200, 403)
          ],
          ["delete B's connection", "DELETE", "/dashboard/api/connections/conn_b", undefined, by(404, 404, 404, 403)],
          ["a connection's page", "GET", `/dashboard/api/connections/conn_a_relink_${role}`, undefined, 200],
          ["B's connection's page", "GET", "/dashboard/api/connections/conn_b", undefined, 404],
          [
            "relink a connection",
            "POST",
            `/dashboard/api/connections/conn_a_relink_${role}/relink`,
            undefined,
            by(200, 200, 200, 403)
          ],
          [
            "relink B's connection",
            "POST",
            "/dashboard/api/connections/conn_b/relink",
            undefined,
            by(404, 404, 404, 403)
          ],
          ["issues", "GET", "/dashboard/api/issues", undefined, 200],
          ["overview", "GET", "/dashboard/api/overview", undefined, 200],
          ["webhooks", "GET", "/dashboard/api/webhooks", undefined, 200],
          ["a webhook's deliveries", "GET", "/dashboard/api/webhooks/wh_a/deliveries", undefined, 200],
          ["B's webhook's deliveries", "GET", "/dashboard/api/webhooks/wh_b/deliveries", undefined, 404],
          ["a delivery", "GET", `/dashboard/api/deliveries/whd_a_${role}`, undefined, 200],
          ["B's delivery", "GET", "/dashboard/api/deliveries/whd_b", undefined, 404],
          [
            "resend a delivery",
            "POST",
            `/dashboard/api/deliveries/whd_a_${role}/resend`,
            undefined,
            by(200, 200, 200, 403)
          ],
          ["resend B's delivery", "POST", "/dashboard/api/deliveries/whd_b/resend", undefined, by(404, 404, 404, 403)],
          ["deliveries across endpoints", "GET", "/dashboard/api/deliveries", undefined, 200],
          ["B's endpoint's deliveries, across", "GET", "/dashboard/api/deliveries?webhook_id=wh_b", undefined, 404],
          ["create a webhook", "POST", "/dashboard/api/webhooks", {
            url: "http://127.0.0.1:9/made",
            events: ["transfer.arrived"]
          }, by(201, 201, 201, 403)],
          [
            "edit a webhook",
            "PATCH",
            `/dashboard/api/webhooks/${hookA}`,
            { events: ["transfer.arrived"] },
            by(
              200,
              200,
              200,
              403
            )
          ],
          [
            "rotate a webhook's secret",
            "POST",
            `/dashboard/api/webhooks/${hookA}/rotate_secret`,
            undefined,
            by(
              200,
              200,
              200,
              403
            )
          ],
          ["test a webhook", "POST", `/dashboard/api/webhooks/${hookA}/test`, undefined, by(200, 200, 200, 403)],
          ["disable a webhook", "POST", `/dashboard/api/webhooks/${hookA}/disable`, undefined, by(200, 200, 200, 403)],
          ["enable a webhook", "POST", `/dashboard/api/webhooks/${hookA}/enable`, undefined, by(200, 200, 200, 403)],
          ["resend failed deliveries", "POST", "/dashboard/api/deliveries/resend_failed", {
            created_from: 0,
            created_to: 0,
            webhook_id: "wh_a"
          }, by(200, 200, 200, 403)],
          [
            "edit B's webhook",
            "PATCH",
            "/dashboard/api/webhooks/wh_b",
            { events: ["transfer.arrived"] },
            by(
              404,
              404,
              404,
              403
            )
          ],
          [
            "rotate B's webhook's secret",
            "POST",
            "/dashboard/api/webhooks/wh_b/rotate_secret",
            undefined,
            by(
              404,
              404,
              404,
              403
            )
          ],
          ["test B's webhook", "POST", "/dashboard/api/webhooks/wh_b/test", undefined, by(404, 404, 404, 403)],
          ["disable B's webhook", "POST", "/dashboard/api/webhooks/wh_b/disable", undefined, by(404, 404, 404, 403)],
          ["enable B's webhook", "POST", "/dashboard/api/webhooks/wh_b/enable", undefined, by(404, 404, 404, 403)],
          ["resend B's failed deliveries", "POST", "/dashboard/api/deliveries/resend_failed", {
            created_from: 0,
            created_to: 0,
            webhook_id: "wh_b"
          }, by(404, 404, 404, 403)],
          // another organisation's member and key: never reachable
          [
            "change B's member",
            "PATCH",
            `/dashboard/api/members/${memberB.userId}`,
            { role: "admin" },
            by(
              404,
              404,
              403,
              403
            )
          ],
          [
            "remove B's member",
            "DELETE",
            `/dashboard/api/members/${memberB.userId}`,
            undefined,
            by(404, 404, 403, 403)
          ],
          ["remove B's owner", "DELETE", `/dashboard/api/members/${ownerB.userId}`, undefined, by(404, 404, 403, 403)],
          [
            "roll B's key",
            "POST",
            `/dashboard/api/keys/${clientB}/roll`,
            { expires_in_seconds: 0 },
            by(
              404,
              404,
              404,
              403
            )
          ],
          ["revoke B's key", "POST", `/dashboard/api/keys/${clientB}/revoke`, undefined, by(404, 404, 404, 403)],
          // single sign-on domains, and the organisation switch
          ["sso domains", "GET", "/dashboard/api/sso/domains", undefined, 200],
          [
            "add an sso domain",
            "POST",
            "/dashboard/api/sso/domains",
            { domain: `${role}.sso-a.example` },
            by(201, 201, 403, 403)
          ],
          [
            "remove an sso domain",
            "DELETE",
            `/dashboard/api/sso/domains/${role}.sso-a.example`,
            undefined,
            by(204, 204, 403, 403)
          ],
          [
            "remove B's sso domain",
            "DELETE",
            "/dashboard/api/sso/domains/b.example",
            undefined,
            by(404, 404, 403, 403)
          ],
          [
            "switch to A (its own: nothing changes)",
            "POST",
            "/dashboard/api/session/organisation",
            { organisation_id: owner.organisationId },
            200
          ],
          ["switch to B", "POST", "/dashboard/api/session/organisation", { organisation_id: orgB.id }, 404]
        ]
        for (const [what, method, url, body, expected] of calls) {
          const status = typeof expected === "number" ? expected : expected[role]
          const json = Effect.isEffect(body) ? yield* (body as Effect.Effect<unknown>) : body
          cover(method, url, json)
          const answer = yield* raw(method, url, {
            cookie: me.cookie,
            csrf: me.csrf,
            ...(json === undefined ? {} : { json })
          })
          answers.set(what, answer)
          assert.strictEqual(answer.status, status, `${role}: ${what} answered ${answer.text}`)
          if (status >= 400) {
            assert.containsAllKeys(answer.body.error, ["type", "code", "message", "request_id"])
          }
          if (role === "viewer") assert.notInclude(answer.text, "client_secret", `viewer: ${what}`)
          // a webhook's secret is in the answers that make one only
          if (!/^(create a webhook|rotate a webhook's secret)$/.test(what)) {
            assert.notInclude(answer.text, "whsec_", `${role}: ${what}`)
          }
          // B's data is never in an answer to A's members (a refusal may name the id it was asked for)
          const asked = `${url} ${JSON.stringify(json ?? null)}`
          for (const id of foreign) {
            if (status >= 400 && mentions(asked, id)) continue
            assert.isFalse(mentions(answer.text, id), `${role}: ${what} answered ${id} of B's: ${answer.text}`)
          }
          if (what.startsWith("logs filtered by B's")) assert.deepStrictEqual(answer.body.data, [], `${role}: ${what}`)
        }
        // sign-out, for every role
        cover("DELETE", "/dashboard/api/session", undefined)
        assert.strictEqual(
          (yield* raw("DELETE", "/dashboard/api/session", { cookie: me.cookie, csrf: me.csrf })).status,
          204,
          role
        )
        assert.strictEqual((yield* raw("GET", "/dashboard/api/session", { cookie: me.cookie })).status, 401, role)
        // signed in again for the next rounds (the owner makes targets)
        const back = yield* raw("POST", "/dashboard/api/session", { json: { email: me.email, password: me.password } })
        assert.strictEqual(back.status, 200)
        members[role] = { ...me, cookie: back.cookie!, csrf: back.body.csrf_token }
        if (role === "owner") Object.assign(owner, members.owner)
      }

      // nothing of B's changed: its key still works, its member is still there with the same role
      const listedB = yield* raw("GET", "/dashboard/api/members", { cookie: ownerB.cookie })
      assert.deepStrictEqual(
        listedB.body.data.map((m: any) => [m.email, m.role]).sort(),
        [["member@b.example", "viewer"], ["owner@b.example", "owner"]]
      )
      assert.strictEqual((yield* tokenFor(clientB, keyB.body.client_secret)).status, 200)
      const domainsB = yield* raw("GET", "/dashboard/api/sso/domains", { cookie: ownerB.cookie })
      assert.deepStrictEqual(domainsB.body.data.map((d: any) => d.domain), ["b.example"])
      const auditB = yield* raw("GET", "/dashboard/api/audit?per_page=100", { cookie: ownerB.cookie })
      assert.notInclude(auditB.text, "a.example")
      // B's delivery was never resent, its connection never given a link token
      const deliveryB = yield* raw("GET", "/dashboard/api/deliveries/whd_b", { cookie: ownerB.cookie })
      assert.strictEqual(deliveryB.body.status, "failed")
      assert.notInclude(auditB.text, "webhook_delivery.resent")
      assert.notInclude(auditB.text, "connection.relink_started")
      assert.notInclude(auditB.text, "webhook.")
      // B's endpoint was never changed: its events, status and sealed secret are as stored
      const endpointB = yield* Effect.flatMap(WebhookStore, (store) => store.getWebhookEndpoint("wh_b"))
      assert.strictEqual(Option.getOrThrow(endpointB).events, JSON.stringify(["lab_result.received"]))
      assert.strictEqual(Option.getOrThrow(endpointB).status, "enabled")
      assert.strictEqual(Option.getOrThrow(endpointB).secret, "sealed")
      // B's Connect name and its sandbox connection's fault are as B left them
      const settingsB = yield* raw("GET", "/dashboard/api/connect/settings", { cookie: ownerB.cookie })
      assert.strictEqual(settingsB.body.client_name, "Brand of B")
      assert.deepStrictEqual(
        (yield* raw("GET", "/dashboard/api/sandbox/connections/conn_b/fault", { cookie: ownerB.cookie })).body,
        { connection_id: "conn_b", fault: null }
      )
      assert.notInclude(auditB.text, "sandbox.")

      // every endpoint of the API is in the matrix: on A's data, and, when its path names a record,
      // on B's too; the open ones only are left out
      for (const endpoint of endpoints.filter((e) => e.session)) {
        const seen = covered.get(endpoint.name)
        assert.isTrue(seen?.own === true, `${endpoint.name} has no row in the role matrix`)
        if (endpoint.params > 0) {
          assert.isTrue(seen?.other === true, `${endpoint.name} has no row on another organisation's data`)
        }
      }

      yield* TestClock.adjust(Duration.seconds(3))
      // an unauthenticated call is refused 401 everywhere but the open endpoints (read from the API)
      for (const endpoint of endpoints.filter((e) => e.session)) {
        const [method, path] = endpoint.name.split(" ") as [Method, string]
        const url = path.replace(/:[a-z_]+/g, "x_unknown")
        const answer = yield* raw(method, url)
        assert.strictEqual(answer.status, 401, `${method} ${url}`)
        assert.strictEqual(answer.body.error.type, "authentication_error")
      }
    }).pipe(Effect.provide(app)), { timeout: 240_000 })
})
