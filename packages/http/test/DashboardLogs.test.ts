/**
 * The dashboard's Logs page API (issue #33): a key made, used from outside (a `/v1` read that meets
 * a sandbox fault), and that call found in the log with its upstream call, its error code and its
 * request id; filtered by status class, route and connection, paged by cursor; another
 * organisation's request not found; every role reads it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { Effect, Layer, Option } from "effect"
import * as RequestLogCapture from "../src/RequestLogCapture.js"
import * as Crypto from "../src/services/Crypto.js"
import { clientFor, firstOwner, invited, ownerWithKey, raw } from "./support/Dashboard.js"
import { call, linkSandbox } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

const flush = Effect.flatMap(
  Effect.serviceOption(RequestLogCapture.Capture),
  (capture) => Option.isSome(capture) ? capture.value.flush : Effect.dieMessage("the request log is off")
)

describe("Dashboard logs", () => {
  it.scoped(
    "a key made on the page, used from outside: its failing call is in the log with its upstream call",
    () =>
      Effect.gen(function*() {
        const { access, dashboard, key, owner } = yield* ownerWithKey
        const linked = yield* linkSandbox(access)
        const fault = yield* call("PUT", `/v1/sandbox/${linked.connection_id}/faults`, {
          token: access,
          json: { kind: "expired_login" }
        })
        assert.strictEqual(fault.status, 200)
        const failed = yield* call("GET", `/v1/connections/${linked.connection_id}/facilities`, { token: access })
        assert.strictEqual(failed.status, 409)
        const requestId = failed.headers["x-request-id"]!
        yield* flush

        const errors = yield* dashboard.logs.list({ urlParams: { status_class: "4xx" } })
        const listed = errors.data.find((e) => e.request_id === requestId)
        assert.isDefined(listed, JSON.stringify(errors.data.map((e) => e.request_id)))
        assert.strictEqual(listed!.route, "/v1/connections/:connection_id/facilities")
        assert.strictEqual(listed!.status, 409)
        assert.strictEqual(listed!.error_code, "connection_login_required")
        assert.strictEqual(listed!.principal, key.client_id)
        assert.strictEqual(listed!.connection_id, linked.connection_id)
        assert.isAbove(listed!.upstream_calls, 0)
        assert.isTrue(errors.data.every((e) => e.status_class === "4xx"))

        const detail = yield* dashboard.logs.get({ path: { request_id: requestId } })
        assert.strictEqual(detail.request_id, requestId)
        assert.include(detail.error_body ?? "", "connection_login_required")
        const upstream = detail.upstream[0]!
        assert.strictEqual(upstream.provider, "provider_a")
        assert.strictEqual(upstream.state, "CO")
        assert.strictEqual(upstream.status, 401, "Metrc's answer to an expired login")
        assert.notInclude(JSON.stringify(detail), key.client_secret)

        // filters and paging
        const byConnection = yield* dashboard.logs.list({ urlParams: { connection_id: linked.connection_id } })
        assert.isTrue(byConnection.data.length >= 2)
        assert.isTrue(byConnection.data.every((e) => e.connection_id === linked.connection_id))
        const first = yield* dashboard.logs.list({ urlParams: { limit: 1 } })
        assert.strictEqual(first.data.length, 1)
        assert.isNotNull(first.next_cursor)
        const second = yield* dashboard.logs.list({ urlParams: { limit: 1, cursor: first.next_cursor! } })
        assert.notStrictEqual(second.data[0]!.request_id, first.data[0]!.request_id)
        assert.isAtMost(second.data[0]!.at, first.data[0]!.at)
        const bad = yield* raw("GET", "/dashboard/api/logs?cursor=nope", { cookie: owner.cookie })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.body.error.param, "cursor")
        const unknown = yield* raw("GET", "/dashboard/api/logs/req_unknown", { cookie: owner.cookie })
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual((yield* raw("GET", "/dashboard/api/logs")).status, 401)

        // a viewer reads it too; another organisation's owner does not find it
        const viewer = yield* clientFor(yield* invited(owner, "viewer@example.com", "viewer"))
        assert.strictEqual((yield* viewer.logs.get({ path: { request_id: requestId } })).request_id, requestId)
        const other = yield* Bootstrap.createOrganisation("Other")
        const otherOwner = yield* firstOwner(other.id, "o@example.com")
        const hidden = yield* raw("GET", `/dashboard/api/logs/${requestId}`, { cookie: otherOwner.cookie })
        assert.strictEqual(hidden.status, 404)
      }).pipe(Effect.provide(app)),
    120_000
  )
})
