/**
 * A bounded least-recently-used map: past its capacity, the entry used longest ago is dropped.
 * The caches of the service keep their entries in it (sandbox answers, auth rows, decrypted
 * logins), so none of them can grow without bound.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export class Lru<V> {
  private readonly entries = new Map<string, V>()
  /** At most this many entries; 0 keeps none. */
  constructor(readonly capacity: number) {}
  get size(): number {
    return this.entries.size
  }
  get(key: string): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }
  set(key: string, value: V): void {
    if (this.capacity === 0) return
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!)
  }
  clear(): void {
    this.entries.clear()
  }
}
