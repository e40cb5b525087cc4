/**
 * Key rotation: re-encrypts every stored ciphertext (connection logins, webhook secrets and previous
 * secrets, the stored responses of idempotency keys, and dashboard users' TOTP secrets) that is not under the keyring's current key. Each row is decrypted with its own key and
 * re-encrypted under the current one in a transaction, compare-and-set, so a second run does nothing
 * and a concurrent writer is never overwritten. A row under a key the keyring does not hold is
 * counted and reported by column and id, never decrypted and never fatal. Only counts and ids come
 * out: never a plaintext, a ciphertext or a key.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { CiphertextColumn } from "../persistence/Ciphertexts.js"
import { Ciphertexts } from "../persistence/Ciphertexts.js"
import { Transactions } from "../persistence/Transactions.js"
import { Crypto } from "./Crypto.js"

/**
 * What a run did.
 *
 * @since 0.1.0
 * @category models
 */
export interface Report {
  /** The current key's id, which every re-encrypted row is now under. */
  readonly keyId: string
  readonly reencrypted: number
  /** Rows changed by someone else during the run (left as they are; run again). */
  readonly skipped: number
  /** Rows under a key the keyring does not hold, or that failed to decrypt. */
  readonly failed: ReadonlyArray<{ readonly column: CiphertextColumn; readonly id: string; readonly reason: string }>
}

/**
 * Re-encrypts everything not under the current key.
 *
 * @since 0.1.0
 * @category operations
 */
export const reencrypt: Effect.Effect<Report, never, Ciphertexts | Transactions | Crypto> = Effect.gen(function*() {
  const ciphertexts = yield* Ciphertexts
  const transactions = yield* Transactions
  const crypto = yield* Crypto
  const rows = yield* ciphertexts.listCiphertexts(crypto.keyId)
  let reencrypted = 0
  let skipped = 0
  const failed: Array<Report["failed"][number]> = []
  for (const row of rows) {
    if (!crypto.knows(row.key_id)) {
      failed.push({ column: row.column, id: row.id, reason: `unknown key id ${row.key_id || "(none)"}` })
      continue
    }
    let plaintext: string
    try {
      plaintext = crypto.decrypt(row.ciphertext, row.key_id)
    } catch {
      failed.push({ column: row.column, id: row.id, reason: "does not decrypt (tampered or wrong key)" })
      continue
    }
    const sealed = crypto.encrypt(plaintext)
    const done = yield* transactions.transaction(ciphertexts.replaceCiphertext(row, sealed.ciphertext, sealed.keyId))
    if (done) reencrypted++
    else skipped++
  }
  return { keyId: crypto.keyId, reencrypted, skipped, failed }
})
