/**
 * Secrets at rest: hashing and constant-time matching, and the encryption keyring from
 * configuration (the current key encrypts, previous keys decrypt, key ids are stable), and the
 * keys derived from it (HKDF-SHA256, one label per use: the feed cursor's signing key, issue #28).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { createHash, hkdfSync, randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Crypto from "../src/services/Crypto.js"

const keyring = (env: Record<string, string>) =>
  Effect.provide(Crypto.Crypto, Crypto.layer).pipe(Effect.withConfigProvider(ConfigProvider.fromJson(env)))

describe("Crypto", () => {
  it("stores hashes and matches them in constant time", () => {
    const secret = Crypto.token("tb_secret_")
    const stored = Crypto.hash(secret)
    assert.notInclude(stored, secret)
    assert.isTrue(Crypto.matches(secret, stored))
    assert.isFalse(Crypto.matches(`${secret}x`, stored))
    assert.isFalse(Crypto.matches(secret, "00"))
  })

  it("a key id is the first 12 hex digits of the key's SHA-256", () => {
    const key = randomBytes(32)
    assert.strictEqual(Crypto.keyIdOf(key), createHash("sha256").update(key).digest("hex").slice(0, 12))
    assert.strictEqual(Crypto.make([key]).keyId, Crypto.keyIdOf(key))
  })

  it("derives a key per label with HKDF-SHA256: the same on every node with the key, apart from it and from other labels", () => {
    const [current, previous] = [randomBytes(32), randomBytes(32)]
    const label = "tracebridge/change-feed-cursor/v2"
    const derived = Crypto.make([current, previous]).derive(label)
    assert.strictEqual(derived.length, 2, "the current key's first, then the previous one's")
    assert.deepStrictEqual(
      derived[0],
      Buffer.from(hkdfSync("sha256", current, Buffer.alloc(0), Buffer.from(label), 32))
    )
    assert.deepStrictEqual(Crypto.make([current]).derive(label)[0], derived[0], "another node, the same key")
    assert.deepStrictEqual(derived[1], Crypto.deriveKey(previous, label))
    assert.notDeepEqual(derived[0], current)
    assert.notDeepEqual(Crypto.make([current]).derive("another/use")[0], derived[0])
  })

  it.effect("encrypts under the current key and decrypts under previous ones", () =>
    Effect.gen(function*() {
      const [a, b, c] = [randomBytes(32), randomBytes(32), randomBytes(32)]
      const underA = Crypto.make([a]).encrypt("login-a")
      const underC = Crypto.make([c]).encrypt("login-c")
      const ring = yield* keyring({
        TRACEBRIDGE_ENCRYPTION_KEY: b.toString("base64"),
        TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: ` ${a.toString("base64")} , ${c.toString("base64")},`
      })
      assert.strictEqual(ring.keyId, Crypto.keyIdOf(b))
      assert.isTrue(ring.configured)
      assert.strictEqual(ring.encrypt("x").keyId, Crypto.keyIdOf(b))
      assert.strictEqual(ring.decrypt(underA.ciphertext, underA.keyId), "login-a")
      assert.strictEqual(ring.decrypt(underC.ciphertext, underC.keyId), "login-c")
      assert.isTrue(ring.knows(Crypto.keyIdOf(a)))
      const without = yield* keyring({ TRACEBRIDGE_ENCRYPTION_KEY: b.toString("base64") })
      assert.isFalse(without.knows(underA.keyId))
      assert.throws(() => without.decrypt(underA.ciphertext, underA.keyId), /no encryption key with id/)
    }))

  it.effect("keeps previous keys beside the development key", () =>
    Effect.gen(function*() {
      const a = randomBytes(32)
      const underA = Crypto.make([a]).encrypt("login-a")
      const ring = yield* keyring({
        TRACEBRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "tb-crypto-")),
        TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: a.toString("base64")
      })
      assert.notStrictEqual(ring.keyId, Crypto.keyIdOf(a))
      assert.isFalse(ring.configured, "the development key may seal sandbox logins only")
      assert.strictEqual(ring.decrypt(underA.ciphertext, underA.keyId), "login-a")
    }))

  it.effect("refuses a malformed key without echoing it", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(keyring({
        TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: `${randomBytes(32).toString("base64")},c2hvcnQ=`
      }))
      assert.isTrue(Exit.isFailure(exit))
      const text = String(Exit.isFailure(exit) ? exit.cause : "")
      assert.include(text, "TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: key 2 must be base64 of 32 bytes")
      assert.notInclude(text, "c2hvcnQ=")
    }))

  describe("a key that is not 32 random-looking bytes refuses to start (issue #28)", () => {
    const ascending = Buffer.from(Array.from({ length: 32 }, (_, i) => i))
    const period16 = randomBytes(16)
    const weak: ReadonlyArray<readonly [string, Buffer]> = [
      ["all zero", Buffer.alloc(32)],
      ["one byte repeated", Buffer.alloc(32, 0xa7)],
      ["a short pattern repeated", Buffer.from("abcd".repeat(8), "latin1")],
      ["16 random bytes twice", Buffer.concat([period16, period16])],
      ["counting bytes", ascending],
      ["counting down", Buffer.from(ascending).reverse()],
      ["a password typed as text", Buffer.from("correct-horse-battery-staple-123", "utf8")]
    ]
    for (const [what, key] of weak) {
      it.effect(`${what}: refused with a message, never echoed, as the current or a previous key`, () =>
        Effect.gen(function*() {
          assert.strictEqual(key.length, 32)
          const encoded = key.toString("base64")
          for (
            const env of [
              { TRACEBRIDGE_ENCRYPTION_KEY: encoded },
              {
                TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
                TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: `${randomBytes(32).toString("base64")},${encoded}`
              }
            ]
          ) {
            const exit = yield* Effect.exit(keyring(env))
            assert.isTrue(Exit.isFailure(exit), `${what} was accepted`)
            const text = String(Exit.isFailure(exit) ? exit.cause : "")
            const name = env.TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS === undefined
              ? "TRACEBRIDGE_ENCRYPTION_KEY: key 1"
              : "TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS: key 2"
            assert.include(text, `${name} does not look random`)
            assert.include(text, "openssl rand -base64 32")
            assert.notInclude(text, encoded)
          }
        }))
    }

    it("random keys are accepted, a thousand of them", () => {
      for (let i = 0; i < 1_000; i++) {
        const key = randomBytes(32)
        assert.strictEqual(Crypto.weakness(key), undefined, key.toString("hex"))
      }
    })
  })
})
