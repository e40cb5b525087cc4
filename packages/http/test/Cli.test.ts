/**
 * The operator CLI, as an operator runs it (the built `dist/cli.js`), against a fresh data folder.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Accounts } from "../src/persistence/Accounts.js"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Database from "../src/persistence/Database.js"
import { IdempotencyStore } from "../src/persistence/IdempotencyStore.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import * as Crypto from "../src/services/Crypto.js"

const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url))

describe("Cli", () => {
  it("creates an organisation and a client, switches the plan and lists", () => {
    const env = { ...process.env, TRACEBRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "tb-cli-")), DATABASE_URL: "" }
    const run = (...args: Array<string>) => spawnSync(process.execPath, [cli, ...args], { env, encoding: "utf8" })
    const org = run("create-org", "Acme Retail")
    assert.strictEqual(org.status, 0, org.stderr)
    const [id, name, plan] = org.stdout.trim().split("\t")
    assert.match(id!, /^org_/)
    assert.deepStrictEqual([name, plan], ["Acme Retail", "sandbox"])
    const client = run("create-client", id!)
    assert.match(client.stdout, /client_id=tb_client_/)
    assert.match(client.stdout, /client_secret=tb_secret_/)
    assert.strictEqual(run("set-plan", id!, "production").status, 0)
    assert.include(run("list-orgs").stdout, `${id}\tAcme Retail\tproduction`)
    assert.strictEqual(run("list-connections", id!).stdout, "")
    const bad = run("set-plan", id!, "platinum")
    assert.strictEqual(bad.status, 2)
    assert.include(bad.stderr, "usage")
    assert.strictEqual(run("create-client", "org_missing").status, 2)
    // nine runs of the built CLI, about 2 s each (Node, the modules and the migrations check): 19 s
    // alone, over 30 s beside another suite on a two-core machine
  }, 120_000)
})

describe("Cli reencrypt", () => {
  const keyA = randomBytes(32)
  const keyB = randomBytes(32)
  const keyC = randomBytes(32)
  const now = 1_767_225_600_000
  const login = JSON.stringify({ user_key: "rotation-login-secret" })
  const whsec = "whsec_rotation_current"
  const whsecOld = "whsec_rotation_previous"
  const replayed = JSON.stringify({ status: 201, body: "{\"secret\":\"whsec_replayed_once\"}" })

  const seed = (file: string, key: Buffer, connectionId: string, withEndpoint: boolean) =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const connectionStore = yield* ConnectionStore
      const webhookStore = yield* WebhookStore
      const idempotencyStore = yield* IdempotencyStore
      const crypto = Crypto.make([key])
      if (Option.isNone(yield* accounts.getOrganisation("org_rot"))) {
        yield* accounts.insertOrganisation({ id: "org_rot", name: "Rotation", plan: "sandbox", created_at: now })
      }
      const sealed = crypto.encrypt(login)
      yield* connectionStore.insertConnection({
        id: connectionId,
        organisation_id: "org_rot",
        provider: "provider_a",
        state: "CO",
        status: "active",
        is_sandbox: true,
        external_id: null,
        credentials: sealed.ciphertext,
        key_id: sealed.keyId,
        token_issued: true,
        created_at: now,
        updated_at: now,
        sandbox_version: 0,
        sandbox_fault: null
      })
      if (!withEndpoint) return
      const secret = crypto.encrypt(whsec)
      const previous = crypto.encrypt(whsecOld)
      yield* webhookStore.insertWebhookEndpoint({
        id: "wh_rot",
        organisation_id: "org_rot",
        url: "https://example.com/hook",
        events: "[\"transfer.arrived\"]",
        description: null,
        status: "enabled",
        secret: secret.ciphertext,
        key_id: secret.keyId,
        previous_secret: previous.ciphertext,
        previous_key_id: previous.keyId,
        previous_expires_at: now + 86_400_000,
        created_at: now,
        updated_at: now
      })
      // A completed idempotency key: its stored response holds a once-shown secret.
      const stored = crypto.encrypt(replayed)
      yield* idempotencyStore.claimIdempotencyKey({
        scope: "org_rot",
        idem_key: "rotation key/1",
        fingerprint: "f".repeat(64),
        state: "in_progress",
        response: null,
        key_id: null,
        created_at: now,
        expires_at: now + 86_400_000
      })
      yield* idempotencyStore.completeIdempotencyKey("org_rot", "rotation key/1", stored.ciphertext, stored.keyId)
    }).pipe(Effect.provide(Database.layerSqlite(file)), Effect.orDie)

  const read = (file: string, keys: ReadonlyArray<Buffer>) =>
    Effect.gen(function*() {
      const connectionStore = yield* ConnectionStore
      const webhookStore = yield* WebhookStore
      const idempotencyStore = yield* IdempotencyStore
      const crypto = Crypto.make(keys)
      const connection = Option.getOrThrow(yield* connectionStore.getConnection("conn_a"))
      const endpoint = Option.getOrThrow(yield* webhookStore.getWebhookEndpoint("wh_rot"))
      const idempotent = Option.getOrThrow(yield* idempotencyStore.getIdempotencyKey("org_rot", "rotation key/1", now))
      return {
        keyIds: [connection.key_id, endpoint.key_id, endpoint.previous_key_id, idempotent.key_id],
        plain: [
          crypto.decrypt(connection.credentials!, connection.key_id!),
          crypto.decrypt(endpoint.secret, endpoint.key_id),
          crypto.decrypt(endpoint.previous_secret!, endpoint.previous_key_id!),
          crypto.decrypt(idempotent.response!, idempotent.key_id!)
        ]
      }
    }).pipe(Effect.provide(Database.layerSqlite(file)), Effect.orDie)

  it.effect(
    "moves every ciphertext to the current key, idempotently, and names rows under an unknown key",
    () =>
      Effect.gen(function*() {
        const dataDir = mkdtempSync(join(tmpdir(), "tb-cli-rot-"))
        const file = join(dataDir, Database.sqliteFileName)
        const run = (env: Record<string, string>) =>
          spawnSync(process.execPath, [cli, "reencrypt"], {
            env: { ...process.env, TRACEBRIDGE_DATA_DIR: dataDir, DATABASE_URL: "", ...env },
            encoding: "utf8"
          })
        const b64 = (k: Buffer) => k.toString("base64")
        yield* seed(file, keyA, "conn_a", true)

        // rotate: B is current, A is previous
        const rotated = { TRACEBRIDGE_ENCRYPTION_KEY: b64(keyB), TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: b64(keyA) }
        const first = run(rotated)
        assert.strictEqual(first.status, 0, first.stderr)
        assert.strictEqual(first.stdout, `reencrypted=4 skipped=0 failed=0 key_id=${Crypto.keyIdOf(keyB)}\n`)
        const again = run(rotated)
        assert.strictEqual(again.stdout, `reencrypted=0 skipped=0 failed=0 key_id=${Crypto.keyIdOf(keyB)}\n`)

        // drop A: everything still decrypts under B alone
        const after = yield* read(file, [keyB])
        assert.deepStrictEqual(after.keyIds, Array(4).fill(Crypto.keyIdOf(keyB)))
        assert.deepStrictEqual(after.plain, [login, whsec, whsecOld, replayed])

        // a row under a key nobody configured: reported by id, exit code 1, no crash, nothing else touched
        yield* seed(file, keyC, "conn_c", false)
        const unknown = run({ TRACEBRIDGE_ENCRYPTION_KEY: b64(keyB) })
        assert.strictEqual(unknown.status, 1, unknown.stderr)
        assert.strictEqual(
          unknown.stdout,
          `reencrypted=0 skipped=0 failed=1 key_id=${Crypto.keyIdOf(keyB)}\n` +
            `failed\tconnection.credentials\tconn_c\tunknown key id ${Crypto.keyIdOf(keyC)}\n`
        )
        assert.strictEqual(unknown.stderr, "")
        // configuring C as previous fixes it
        const fixed = run({ TRACEBRIDGE_ENCRYPTION_KEY: b64(keyB), TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: b64(keyC) })
        assert.strictEqual(fixed.stdout, `reencrypted=1 skipped=0 failed=0 key_id=${Crypto.keyIdOf(keyB)}\n`)

        // never a secret or a key in the output
        for (const output of [first, again, unknown, fixed].flatMap((r) => [r.stdout, r.stderr])) {
          for (
            const secret of [
              "rotation-login-secret",
              whsec,
              whsecOld,
              "whsec_replayed_once",
              b64(keyA),
              b64(keyB),
              b64(keyC)
            ]
          ) {
            assert.notInclude(output, secret)
          }
        }

        // a malformed previous key is refused without echoing it
        const bad = run({ TRACEBRIDGE_ENCRYPTION_KEY: b64(keyB), TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: "c2hvcnQ=" })
        assert.notStrictEqual(bad.status, 0)
        assert.include(
          bad.stderr + bad.stdout,
          "TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: key 1 must be base64 of 32 bytes"
        )
        assert.notInclude(bad.stderr + bad.stdout, "c2hvcnQ=")
      }),
    { timeout: 60_000 }
  )
})
