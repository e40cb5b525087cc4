/**
 * Deterministic randomness for seeded worlds: one independent random stream per entity, derived
 * from the world's seed, the entity's kind and its index. Adding a kind of entity, or more of one,
 * therefore shifts no other entity's values (a single global stream would).
 *
 * @since 0.1.0
 */
import { Random } from "effect"

/**
 * The random stream of one entity.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stream = (seed: string | number, kind: string, index: number): Random.Random =>
  Random.make(`${seed}:${kind}:${index}`)

/**
 * An integer seed for libraries that take one (such as faker), derived the same way.
 *
 * @since 0.1.0
 * @category constructors
 */
export const integer = (seed: string | number, kind: string, index: number): number => {
  // FNV-1a over the key: stable across platforms and Node versions.
  let hash = 0x811c9dc5
  const key = `${seed}:${kind}:${index}`
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

/**
 * A fast uniform generator in [0, 1) for one entity (mulberry32 over {@link integer}): for values
 * drawn by the thousand, where faker would be too slow.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prng = (seed: string | number, kind: string, index: number): () => number => {
  let state = integer(seed, kind, index)
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
