/**
 * Issue 28, items 4–6: a disconnected connection takes no login and keeps none; a link token is
 * claimed once, atomically, before the slow link; a plan change and a revoked or rotated API
 * client take effect at the next request of every token already issued.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import type { Context } from "effect"
import { Clock, Effect, Fiber, Layer, Option } from "effect"
import { ConnectionStore } from "../../src/persistence/ConnectionStore.js"
import * as Crypto from "../../src/services/Crypto.js"
import { Accounts, call, linkSandbox, signIn, TestApp } from "../support/TestApp.js"
import * as TestDatabase from "../support/TestDatabase.js"

/** A real wait (not the test clock's): the server's fibers run meanwhile. */
const pause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

type Store = Context.Tag.Service<typeof ConnectionStore>

/** The whole service over a connection store changed by `change` (to make a step slow). */
const appWith = (change: (store: Store) => Store) =>
  Http.HttpLive.pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(
      Layer.effect(ConnectionStore, Effect.map(ConnectionStore, change)).pipe(Layer.provideMerge(TestDatabase.layer))
    )
  )

/** Storing a new connection takes 50 ms, as the state system's login check does: concurrent submits overlap. */
const SlowLinkApp = appWith((store) => ({
  ...store,
  insertConnection: (c) => Effect.zipRight(pause(50), store.insertConnection(c))
}))

/**
 * A gate on the write of a re-entered login: the write tells `reached` when it starts and waits
 * for `open`, so a DELETE lands between the submit's read and its write, every time.
 */
const gate = () => {
  let arrive = () => {}
  let release = () => {}
  const reached = new Promise<void>((resolve) => (arrive = resolve))
  const opened = new Promise<void>((resolve) => (release = resolve))
  return { reached, open: () => release(), wait: Effect.promise(() => (arrive(), opened)) }
}
let relinkGate = gate()

const SlowRelinkApp = appWith((store) => ({
  ...store,
  updateConnection: (id, patch) =>
    Effect.zipRight(
      typeof patch.credentials === "string" ? Effect.suspend(() => relinkGate.wait) : Effect.void,
      store.updateConnection(id, patch)
    ),
  storeLogin: (id, login) => Effect.zipRight(Effect.suspend(() => relinkGate.wait), store.storeLogin(id, login))
}))

const good = { provider: "provider_a", state: "CO", credentials: { user_key: "user_good" } }

const linkToken = (access: string, json: Record<string, unknown> = {}) =>
  Effect.map(call("POST", "/v1/link/token/create", { token: access, json }), (r) => r.body.data.link_token as string)

const session = (token: string) => call("GET", `/connect/session?link_token=${encodeURIComponent(token)}`)

const submit = (token: string, login: typeof good | { [k: string]: unknown } = good) =>
  call("POST", "/connect/submit", { json: { link_token: token, ...login } })

const storedLogin = (connectionId: string) =>
  Effect.flatMap(
    ConnectionStore,
    (store) => Effect.map(store.getConnection(connectionId), (c) => Option.getOrThrow(c).credentials)
  )

/** An organisation on `plan` with its own client, and a client-credentials grant's answer. */
const organisationWith = (plan: "sandbox" | "production") =>
  Effect.gen(function*() {
    const organisation = yield* Bootstrap.createOrganisation(`Issue 28 ${plan}`, plan)
    const client = yield* Bootstrap.createClient(organisation.id)
    const granted = yield* call("POST", "/v1/oauth/token", { json: { grant_type: "client_credentials", ...client } })
    assert.strictEqual(granted.status, 200, JSON.stringify(granted.body))
    return {
      organisation,
      client,
      access: granted.body.access_token as string,
      refresh: granted.body.refresh_token as string,
      scope: granted.body.scope as string
    }
  })

const refresh = (refreshToken: string) =>
  call("POST", "/v1/oauth/token", { json: { grant_type: "refresh_token", refresh_token: refreshToken } })

describe("a disconnected connection takes no login (issue 28, item 4)", () => {
  it.effect("an update-mode link token made before DELETE is refused at the session and the submit; no login is stored", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const token = yield* linkToken(me.access, { connection_id: linked.connection_id })
      const removed = yield* call("DELETE", `/v1/connections/${linked.connection_id}`, { token: me.access })
      assert.strictEqual(removed.status, 200)
      const opened = yield* session(token)
      assert.strictEqual(opened.status, 400, JSON.stringify(opened.body))
      assert.strictEqual(opened.body.error.code, "link_token_invalid")
      const submitted = yield* submit(token)
      assert.strictEqual(submitted.status, 400, JSON.stringify(submitted.body))
      assert.strictEqual(submitted.body.error.code, "link_token_invalid")
      assert.isNull(yield* storedLogin(linked.connection_id))
      const connection = yield* call("GET", `/v1/connections/${linked.connection_id}`, { token: me.access })
      assert.strictEqual(connection.body.data.status, "inactive")
    }).pipe(Effect.provide(TestApp)))

  it.effect("an update-mode link token for an inactive connection is not created (409 connection_inactive)", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      yield* call("DELETE", `/v1/connections/${linked.connection_id}`, { token: me.access })
      const created = yield* call("POST", "/v1/link/token/create", {
        token: me.access,
        json: { connection_id: linked.connection_id }
      })
      assert.strictEqual(created.status, 409, JSON.stringify(created.body))
      assert.strictEqual(created.body.error.code, "connection_inactive")
    }).pipe(Effect.provide(TestApp)))

  it.effect("a DELETE of an already-inactive connection erases a login stored on it", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      yield* call("DELETE", `/v1/connections/${linked.connection_id}`, { token: me.access })
      // a login that reached the inactive row some other way (today's main stored one there)
      const store = yield* ConnectionStore
      yield* store.updateConnection(linked.connection_id, { credentials: "stale-ciphertext", key_id: "k1" })
      const again = yield* call("DELETE", `/v1/connections/${linked.connection_id}`, { token: me.access })
      assert.strictEqual(again.status, 200, JSON.stringify(again.body))
      assert.isNull(yield* storedLogin(linked.connection_id))
    }).pipe(Effect.provide(TestApp)))

  it.effect("a submit racing a disconnect (the DELETE lands while its login is checked and stored) stores no login", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const token = yield* linkToken(me.access, { connection_id: linked.connection_id })
      relinkGate = gate()
      const submitting = yield* Effect.fork(submit(token))
      yield* Effect.promise(() => relinkGate.reached)
      const removed = yield* call("DELETE", `/v1/connections/${linked.connection_id}`, { token: me.access })
      assert.strictEqual(removed.status, 200, JSON.stringify(removed.body))
      relinkGate.open()
      const submitted = yield* Fiber.join(submitting)
      assert.strictEqual(submitted.status, 400, JSON.stringify(submitted.body))
      assert.strictEqual(submitted.body.error.code, "link_token_invalid")
      const store = yield* ConnectionStore
      const after = Option.getOrThrow(yield* store.getConnection(linked.connection_id))
      assert.strictEqual(after.status, "inactive")
      assert.isNull(after.credentials)
    }).pipe(Effect.provide(SlowRelinkApp)))
})

describe("a link token is claimed once (issue 28, item 5)", () => {
  it.effect("six concurrent submits of one link token give one connection; the others are link_token_used", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const token = yield* linkToken(me.access)
      const answers = yield* Effect.all(Array.from({ length: 6 }, () => submit(token)), { concurrency: "unbounded" })
      const ok = answers.filter((a) => a.status === 200)
      const used = answers.filter((a) => a.status === 400 && a.body.error.code === "link_token_used")
      assert.strictEqual(ok.length, 1, JSON.stringify(answers.map((a) => a.body)))
      assert.strictEqual(used.length, 5, JSON.stringify(answers.map((a) => a.body)))
      const listed = yield* call("GET", "/v1/connections", { token: me.access })
      assert.strictEqual(listed.body.data.length, 1)
    }).pipe(Effect.provide(SlowLinkApp)))

  it.effect("a refused login gives the claim back: the user types it again, and the token is then used", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const token = yield* linkToken(me.access)
      const wrong = yield* submit(token, { ...good, credentials: { user_key: "user_bad" } })
      assert.strictEqual(wrong.status, 400, JSON.stringify(wrong.body))
      assert.strictEqual(wrong.body.error.code, "invalid_credentials")
      const right = yield* submit(token)
      assert.strictEqual(right.status, 200, JSON.stringify(right.body))
      const third = yield* submit(token)
      assert.strictEqual(third.body.error.code, "link_token_used")
    }).pipe(Effect.provide(TestApp)))
})

describe("plan and client state at every request (issue 28, item 6)", () => {
  it.effect("a downgrade takes production from an access token already issued, and a refresh grants sandbox only", () =>
    Effect.gen(function*() {
      const prod = yield* organisationWith("production")
      assert.strictEqual(prod.scope, "sandbox production")
      const store = yield* ConnectionStore
      const now = yield* Clock.currentTimeMillis
      yield* store.insertConnection({
        id: "conn_issue28_production",
        organisation_id: prod.organisation.id,
        provider: "provider_a",
        state: "CO",
        status: "pending",
        is_sandbox: false,
        external_id: null,
        credentials: null,
        key_id: null,
        token_issued: false,
        created_at: now,
        updated_at: now,
        sandbox_version: 0,
        sandbox_fault: null
      })
      const path = "/v1/connections/conn_issue28_production/sync"
      const before = yield* call("GET", path, { token: prod.access })
      assert.strictEqual(before.status, 200, JSON.stringify(before.body))
      const accounts = yield* Accounts
      assert.isTrue(yield* accounts.setPlan(prod.organisation.id, "sandbox"))
      const after = yield* call("GET", path, { token: prod.access })
      assert.strictEqual(after.status, 403, JSON.stringify(after.body))
      assert.strictEqual(after.body.error.code, "plan_not_enabled")
      const refreshed = yield* refresh(prod.refresh)
      assert.strictEqual(refreshed.status, 200, JSON.stringify(refreshed.body))
      assert.strictEqual(refreshed.body.scope, "sandbox")
      const asked = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, scope: "production" }
      })
      assert.strictEqual(asked.status, 400, JSON.stringify(asked.body))
      assert.strictEqual(asked.body.error, "invalid_scope")
      // and an upgrade gives it back to the same token
      assert.isTrue(yield* accounts.setPlan(prod.organisation.id, "production"))
      const upgraded = yield* call("GET", path, { token: prod.access })
      assert.strictEqual(upgraded.status, 200, JSON.stringify(upgraded.body))
    }).pipe(Effect.provide(TestApp)))

  it.effect("a revoked client's access and refresh tokens stop working at their next use", () =>
    Effect.gen(function*() {
      const org = yield* organisationWith("sandbox")
      assert.strictEqual((yield* call("GET", "/v1/connections", { token: org.access })).status, 200)
      const accounts = yield* Accounts
      // only the client's revoked_at: the tokens themselves are not marked
      assert.isTrue(yield* accounts.revokeClient(org.client.client_id, yield* Clock.currentTimeMillis))
      const listed = yield* call("GET", "/v1/connections", { token: org.access })
      assert.strictEqual(listed.status, 401, JSON.stringify(listed.body))
      const refreshed = yield* refresh(org.refresh)
      assert.strictEqual(refreshed.status, 400, JSON.stringify(refreshed.body))
      assert.strictEqual(refreshed.body.error, "invalid_grant")
      const granted = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", ...org.client }
      })
      assert.strictEqual(granted.status, 401, JSON.stringify(granted.body))
    }).pipe(Effect.provide(TestApp)))

  it.effect("a rotated client takes its old and new secret until the old one's expiry, then only the new one", () =>
    Effect.gen(function*() {
      const org = yield* organisationWith("sandbox")
      const accounts = yield* Accounts
      const grant = (secret: string) =>
        Effect.map(
          call("POST", "/v1/oauth/token", {
            json: { grant_type: "client_credentials", client_id: org.client.client_id, client_secret: secret }
          }),
          (r) => r.status
        )
      const now = yield* Clock.currentTimeMillis
      const second = Crypto.token("tb_secret_")
      assert.isTrue(yield* accounts.rotateClient(org.client.client_id, Crypto.hash(second), now + 3_600_000))
      assert.strictEqual(yield* grant(org.client.client_secret), 200)
      assert.strictEqual(yield* grant(second), 200)
      // a second rotation whose grace is over: only the newest secret works
      const third = Crypto.token("tb_secret_")
      assert.isTrue(yield* accounts.rotateClient(org.client.client_id, Crypto.hash(third), now - 1))
      assert.strictEqual(yield* grant(third), 200)
      assert.strictEqual(yield* grant(second), 401)
      assert.strictEqual(yield* grant(org.client.client_secret), 401)
      // the access token issued before the rotations still works
      assert.strictEqual((yield* call("GET", "/v1/connections", { token: org.access })).status, 200)
    }).pipe(Effect.provide(TestApp)))
})
