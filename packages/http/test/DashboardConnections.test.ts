/**
 * The dashboard's Connections page API (issue #33): the organisation's connections, filtered by
 * status, provider, state and `external_id`, paged; another organisation's connections never
 * listed; every role reads it; an `external_id` holding markup comes back as a plain JSON string.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { Effect, Layer, Option } from "effect"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Crypto from "../src/services/Crypto.js"
import { accept, clientFor, firstOwner, invited, raw } from "./support/Dashboard.js"
import { call, linkSandbox } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

const MARKUP = `<script>alert("x")</script>`

/** Stores a connection directly, with an external id and a status no sandbox link gives. */
const insert = (organisationId: string, id: string, status: "error" | "pending", external_id: string, at: number) =>
  Effect.flatMap(ConnectionStore, (store) =>
    store.insertConnection({
      id,
      organisation_id: organisationId,
      provider: "provider_b",
      state: "HI",
      status,
      is_sandbox: true,
      external_id,
      credentials: null,
      key_id: null,
      token_issued: false,
      created_at: at,
      updated_at: at,
      sandbox_version: 0,
      sandbox_fault: null
    }))

describe("Dashboard connections", () => {
  it.scoped("lists the organisation's connections, filtered and paged, to every role", () =>
    Effect.gen(function*() {
      const start = Option.getOrThrow(yield* Bootstrap.firstStart)
      const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "owner@example.com")
      const viewer = yield* invited(owner, "viewer@example.com", "viewer")
      const dashboard = yield* clientFor(owner)
      const key = yield* dashboard.keys.create()
      const token = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: key.client_id, client_secret: key.client_secret }
      })
      const access = token.body.access_token as string
      const a = yield* linkSandbox(access, "provider_a", "CO")
      const b = yield* linkSandbox(access, "provider_a", "CO")
      const organisationId = (yield* dashboard.session.me()).organisation.id
      yield* insert(organisationId, "conn_markup", "error", MARKUP, Date.now() + 1_000)

      // another organisation's connection is never listed
      const orgB = yield* Bootstrap.createOrganisation("Organisation B")
      const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
      yield* insert(orgB.id, "conn_other", "error", "other", Date.now())

      const all = yield* dashboard.connections.list({ urlParams: {} })
      assert.strictEqual(all.total, 3)
      // oldest first (two links within one millisecond are ordered by id)
      const linked = all.data.slice(0, 2).map((c) => c.id)
      assert.sameMembers(linked, [a.connection_id, b.connection_id])
      assert.strictEqual(all.data[2]!.id, "conn_markup")
      assert.isFalse(all.has_more)

      const errors = yield* dashboard.connections.list({ urlParams: { status: "error" } })
      assert.deepStrictEqual(errors.data.map((c) => c.id), ["conn_markup"])
      const byProvider = yield* dashboard.connections.list({ urlParams: { provider: "provider_a", state: "CO" } })
      assert.deepStrictEqual(byProvider.data.map((c) => c.id), linked)
      const none = yield* dashboard.connections.list({ urlParams: { state: "HI", status: "active" } })
      assert.strictEqual(none.total, 0)
      const byExternal = yield* dashboard.connections.list({ urlParams: { external_id: MARKUP } })
      assert.deepStrictEqual(byExternal.data.map((c) => c.id), ["conn_markup"])
      assert.strictEqual(byExternal.data[0]!.external_id, MARKUP)
      assert.strictEqual(byExternal.data[0]!.provider, "provider_b")

      const first = yield* dashboard.connections.list({ urlParams: { per_page: 2 } })
      assert.deepStrictEqual(first.data.map((c) => c.id), linked)
      assert.isTrue(first.has_more)
      const second = yield* dashboard.connections.list({ urlParams: { per_page: 2, page: 2 } })
      assert.deepStrictEqual(second.data.map((c) => c.id), ["conn_markup"])
      assert.isFalse(second.has_more)

      // the markup is a plain JSON string, served as JSON
      const plain = yield* raw("GET", `/dashboard/api/connections?external_id=${encodeURIComponent(MARKUP)}`, {
        cookie: viewer.cookie
      })
      assert.strictEqual(plain.status, 200)
      assert.include(String(plain.headers["content-type"]), "application/json")
      assert.include(plain.text, JSON.stringify(MARKUP).slice(1, -1))
      assert.strictEqual(plain.body.data[0].external_id, MARKUP)

      // the other organisation sees only its own
      const theirs = yield* raw("GET", "/dashboard/api/connections", { cookie: ownerB.cookie })
      assert.deepStrictEqual(theirs.body.data.map((c: { id: string }) => c.id), ["conn_other"])

      // bad filters: the error envelope, 400; no session: 401
      const bad = yield* raw("GET", "/dashboard/api/connections?status=broken", { cookie: owner.cookie })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.error.type, "validation_error")
      const anonymous = yield* raw("GET", "/dashboard/api/connections")
      assert.strictEqual(anonymous.status, 401)
    }).pipe(Effect.provide(app)))

  it.scoped("deleting a connection runs /v1's delete: developer and up, audited, another organisation's is 404", () =>
    Effect.gen(function*() {
      const start = Option.getOrThrow(yield* Bootstrap.firstStart)
      const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "owner@example.com")
      const viewer = yield* invited(owner, "viewer@example.com", "viewer")
      const developer = yield* invited(owner, "developer@example.com", "developer")
      const dashboard = yield* clientFor(owner)
      const key = yield* dashboard.keys.create()
      const token = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: key.client_id, client_secret: key.client_secret }
      })
      const access = token.body.access_token as string
      const linked = yield* linkSandbox(access)
      const orgB = yield* Bootstrap.createOrganisation("Organisation B")
      yield* insert(orgB.id, "conn_other", "error", "other", Date.now())
      const path = `/dashboard/api/connections/${linked.connection_id}`

      // a viewer may not; without the CSRF token nobody may
      const refused = yield* raw("DELETE", path, { cookie: viewer.cookie, csrf: viewer.csrf })
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body.error.type, "permission_error")
      const noCsrf = yield* raw("DELETE", path, { cookie: developer.cookie })
      assert.strictEqual(noCsrf.status, 403)
      const still = yield* call("GET", `/v1/connections/${linked.connection_id}`, { token: access })
      assert.strictEqual(still.body.data.status, "active")

      // another organisation's connection is not found, and untouched
      const other = yield* raw("DELETE", "/dashboard/api/connections/conn_other", {
        cookie: developer.cookie,
        csrf: developer.csrf
      })
      assert.strictEqual(other.status, 404)
      const otherStored = yield* Effect.flatMap(ConnectionStore, (store) => store.getConnection("conn_other"))
      assert.strictEqual(Option.getOrThrow(otherStored).status, "error")

      const deleted = yield* raw("DELETE", path, { cookie: developer.cookie, csrf: developer.csrf })
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.body.status, "inactive")
      const after = yield* call("GET", `/v1/connections/${linked.connection_id}`, { token: access })
      assert.strictEqual(after.body.data.status, "inactive")
      const audit = yield* dashboard.team.audit({ urlParams: {} })
      const entry = audit.data.find((e) => e.action === "connection.deleted")
      assert.isDefined(entry)
      assert.strictEqual(entry!.target, linked.connection_id)
      assert.strictEqual(entry!.actor, "developer@example.com")
    }).pipe(Effect.provide(app)))
})
