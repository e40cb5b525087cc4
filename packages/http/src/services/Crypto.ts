/**
 * Secrets at rest: opaque tokens and client secrets are stored as SHA-256 hashes and compared in
 * constant time; provider logins are encrypted with AES-256-GCM under a key with an id, so that
 * keys can rotate. The keyring: the current key from `TRACEBRIDGE_ENCRYPTION_KEY` (without it a
 * development key is generated once and kept in the data folder, sandbox only) encrypts; older keys
 * from `TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS` (comma-separated base64) still decrypt. A key's id is
 * the first 12 hex digits of its SHA-256, so it is stable wherever the key is configured.
 *
 * Other server keys are derived from the keyring (`derive`: HKDF-SHA256, one label per use), so
 * every node of a deployment shares them with no setting of their own: the change feed's cursor
 * signing key (`Cursor.KEY_LABEL` of `@tracebridge/sync`, issue #28) is one.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as AppConfig from "../AppConfig.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The id of the key new ciphertexts use. */
  readonly keyId: string
  /** Whether the keyring holds a key with this id. */
  readonly knows: (keyId: string) => boolean
  /**
   * Whether the current key came from `TRACEBRIDGE_ENCRYPTION_KEY`; false for the development key
   * kept in the data folder, which may seal sandbox logins only.
   */
  readonly configured: boolean
  readonly encrypt: (plaintext: string) => { readonly ciphertext: string; readonly keyId: string }
  /** Fails (as a defect) on a ciphertext under an unknown key or tampered with. */
  readonly decrypt: (ciphertext: string, keyId: string) => string
  /**
   * 32-byte keys for one use, derived from the keyring with HKDF-SHA256 (`info` = `label`, no salt):
   * the current key's first (to sign with), then the previous keys' (still accepted). The label
   * keeps each use's key apart from the encryption key and from every other use.
   */
  readonly derive: (label: string) => ReadonlyArray<Buffer>
}

/**
 * A 32-byte key for one use (`label`) derived from an encryption key: HKDF-SHA256, no salt.
 *
 * @since 0.1.0
 * @category keys
 */
export const deriveKey = (key: Buffer, label: string): Buffer =>
  Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), Buffer.from(label, "utf8"), 32))

/**
 * @since 0.1.0
 * @category tags
 */
export class Crypto extends Context.Tag("Services/Crypto")<Crypto, Service>() {}

/**
 * The hex SHA-256 of a token or secret, as stored.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hash = (secret: string): string => createHash("sha256").update(secret).digest("hex")

/**
 * Whether a secret matches a stored hash, in constant time.
 *
 * @since 0.1.0
 * @category hashing
 */
export const matches = (secret: string, storedHash: string): boolean => {
  const a = Buffer.from(hash(secret), "hex")
  const b = Buffer.from(storedHash, "hex")
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * A new opaque token: the prefix, then 32 random bytes in base64url.
 *
 * @since 0.1.0
 * @category tokens
 */
export const token = (prefix: string): string => `${prefix}${randomBytes(32).toString("base64url")}`

/**
 * An id with a prefix and 16 random bytes in hex.
 *
 * @since 0.1.0
 * @category tokens
 */
export const id = (prefix: string): string => `${prefix}${randomBytes(16).toString("hex")}`

/**
 * A key's id: the first 12 hex digits of its SHA-256.
 *
 * @since 0.1.0
 * @category keys
 */
export const keyIdOf = (key: Buffer): string => createHash("sha256").update(key).digest("hex").slice(0, 12)

/**
 * Why 32 bytes do not look like a random key (issue #28), or undefined when they do: fewer than 20
 * distinct byte values (all zero, one byte repeated), a pattern of at most 16 bytes repeated,
 * bytes counting up or down by a constant step, or printable text only (a password typed in). 32
 * random bytes have about 30 distinct values, and each of these has a chance far below one in a
 * billion; a key that fails them was not made by `openssl rand -base64 32`.
 *
 * @since 0.1.0
 * @category keys
 */
export const weakness = (key: Buffer): string | undefined => {
  if (new Set(key).size < 20) return "too few distinct bytes (all zero, or a byte repeated)"
  for (let period = 1; period <= 16; period++) {
    if (key.every((byte, i) => i < period || byte === key[i - period])) return "a short pattern repeated"
  }
  const step = (key[1]! - key[0]! + 256) % 256
  if (key.every((byte, i) => i === 0 || (byte - key[i - 1]! + 256) % 256 === step)) return "bytes counting by a step"
  if (key.every((byte) => byte >= 0x20 && byte <= 0x7e)) return "printable text, not random bytes"
  return undefined
}

/**
 * Parses base64 keys (comma-separated); dies with the offending position, never the key: one
 * that is not 32 bytes, or not random-looking (`weakness`), refuses to start.
 *
 * @since 0.1.0
 * @category keys
 */
export const parseKeys = (name: string, text: string): Effect.Effect<ReadonlyArray<Buffer>> =>
  Effect.forEach(
    text.split(",").map((k) => k.trim()).filter((k) => k.length > 0),
    (k, i) => {
      const key = Buffer.from(k, "base64")
      if (key.length !== 32) return Effect.dieMessage(`${name}: key ${i + 1} must be base64 of 32 bytes`)
      const weak = weakness(key)
      return weak === undefined
        ? Effect.succeed(key)
        : Effect.dieMessage(
          `${name}: key ${i + 1} does not look random (${weak}); make one with \`openssl rand -base64 32\``
        )
    }
  )

/**
 * The service for a set of keys: the first encrypts, all decrypt.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (keys: ReadonlyArray<Buffer>, options: { readonly configured?: boolean } = {}): Service => {
  if (keys.length === 0 || keys.some((k) => k.length !== 32)) throw new Error("encryption keys must be 32 bytes")
  const byId = new Map(keys.map((k) => [keyIdOf(k), k]))
  const current = keys[0]!
  const keyId = keyIdOf(current)
  const derived = new Map<string, ReadonlyArray<Buffer>>()
  return {
    keyId,
    derive: (label) => {
      let keysFor = derived.get(label)
      if (keysFor === undefined) {
        keysFor = keys.map((k) => deriveKey(k, label))
        derived.set(label, keysFor)
      }
      return keysFor
    },
    knows: (id) => byId.has(id),
    configured: options.configured ?? true,
    encrypt: (plaintext) => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", current, iv)
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64"), keyId }
    },
    decrypt: (ciphertext, id) => {
      const key = byId.get(id)
      if (key === undefined) {
        throw new Error(`no encryption key with id ${id} (add it to TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS)`)
      }
      const raw = Buffer.from(ciphertext, "base64")
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
      decipher.setAuthTag(raw.subarray(12, 28))
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
    }
  }
}

/**
 * The keyring from configuration: the current key (or a development key kept in the data folder)
 * and the previous keys.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  Crypto,
  Effect.gen(function*() {
    const configured = yield* AppConfig.encryptionKey
    const previousText = yield* AppConfig.encryptionKeysPrevious
    const previous = Option.isSome(previousText)
      ? yield* parseKeys("TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS", Redacted.value(previousText.value))
      : []
    if (Option.isSome(configured)) {
      const keys = yield* parseKeys("TRACEBRIDGE_ENCRYPTION_KEY", Redacted.value(configured.value))
      if (keys.length !== 1) return yield* Effect.dieMessage("TRACEBRIDGE_ENCRYPTION_KEY must be one key")
      return make([keys[0]!, ...previous])
    }
    const dir = yield* AppConfig.dataDir
    const file = join(dir, "dev-encryption-key")
    if (!existsSync(file)) {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      writeFileSync(file, randomBytes(32).toString("base64"), { mode: 0o600 })
    }
    return make([Buffer.from(readFileSync(file, "utf8").trim(), "base64"), ...previous], { configured: false })
  }).pipe(Effect.orDie)
)

/**
 * A random key, for tests.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = Layer.sync(Crypto, () => make([randomBytes(32)]))
