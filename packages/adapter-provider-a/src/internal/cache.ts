/** A bounded cache whose entries expire `ttlMs` after they were set (the oldest goes first when full). */
export class TtlCache<A> {
  private readonly entries = new Map<string, { readonly at: number; readonly value: A }>()
  constructor(private readonly ttlMs: number, private readonly max = 10_000) {}
  get(key: string, now: number): A | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined || now - hit.at > this.ttlMs) return undefined
    return hit.value
  }
  set(key: string, value: A, now: number): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { at: now, value })
  }
  delete(key: string): void {
    this.entries.delete(key)
  }
}
