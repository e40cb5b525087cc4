/**
 * Slots: state that belongs to an owner (the sandbox or one of its worlds) and is made on first
 * use. The owner keeps its slots, so they go when it goes: a world's slots when the world is
 * reset or regenerated, the sandbox's state slots on its reset. Nothing is kept beside the owner
 * in a module-level table.
 */

/** A kind of value kept per owner, with how to make the first one. */
export interface Slot<Owner, A> {
  readonly name: string
  readonly make: (owner: Owner) => A
}

/** A slot kind (compare by identity: two slots of one name are two slots). */
export const make = <Owner, A>(name: string, make: (owner: Owner) => A): Slot<Owner, A> => ({ name, make })

/** The slots of one owner. */
export class Slots<Owner> {
  private readonly values = new Map<Slot<Owner, unknown>, unknown>()

  /** The owner's value of a slot, made on first use. */
  get<A>(owner: Owner, slot: Slot<Owner, A>): A {
    if (this.values.has(slot)) return this.values.get(slot) as A
    const value = slot.make(owner)
    this.values.set(slot, value)
    return value
  }

  /** Replaces the owner's value of a slot. */
  set<A>(slot: Slot<Owner, A>, value: A): void {
    this.values.set(slot, value)
  }

  /** Forgets every value. */
  clear(): void {
    this.values.clear()
  }
}

/** Where a world keeps its slots (a symbol key, not enumerable: not in JSON, equality or hashes). */
export const worldSlots: unique symbol = Symbol.for("@tracebridge/sandbox/World/slots")

/**
 * Gives `fields` an empty set of slots under the hidden key {@link worldSlots} (defined, not
 * enumerable, so `defineProperty`'s type cannot say it: the one assertion is here).
 */
export const withSlots = <Owner extends { readonly [worldSlots]: Slots<Owner> }>(
  fields: Omit<Owner, typeof worldSlots>
): Owner => Object.defineProperty(fields, worldSlots, { value: new Slots<Owner>(), enumerable: false }) as Owner
