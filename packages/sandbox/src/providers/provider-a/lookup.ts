/**
 * Indexes over a world's lists, so that a read of a large facility (the bench's 100,000
 * packages) costs the emulator a page, not a pass over every record: the lastModified of each
 * record of a list, and a record by key.
 *
 * An index belongs to one list array (a write that replaces a list makes a new array; one that
 * pushes changes its length) and to one revision of the world's stamps (every `modified.set`
 * raises it), so it is rebuilt on the first read after a change and never answers stale.
 */
import type { World } from "../../World.js"
import * as Worlds from "../../World.js"

interface Times {
  readonly revision: number
  readonly length: number
  readonly times: Float64Array
}

/** The world's times indexes, by list (the world keeps them: they go with it). */
const timesSlot = Worlds.slot("provider_a/times", () => new WeakMap<ReadonlyArray<{ readonly id: string }>, Times>())

/** When each record of `items` last changed (epoch ms, 0 when never), in the list's order. */
export const modifiedTimes = (world: World, items: ReadonlyArray<{ readonly id: string }>): Float64Array => {
  const revision = world.modified.revision
  const timesByList = Worlds.slotOf(world, timesSlot)
  const cached = timesByList.get(items)
  if (cached !== undefined && cached.revision === revision && cached.length === items.length) return cached.times
  const times = new Float64Array(items.length)
  for (let i = 0; i < items.length; i++) times[i] = world.modified.get(items[i]!.id) ?? 0
  timesByList.set(items, { revision, length: items.length, times })
  return times
}

/** The records of `items` changed in `[start, end)`, in the list's order. */
export const changedIn = <A extends { readonly id: string }>(
  world: World,
  items: ReadonlyArray<A>,
  start: number,
  end: number
): Array<A> => {
  const times = modifiedTimes(world, items)
  const out: Array<A> = []
  for (let i = 0; i < times.length; i++) {
    const t = times[i]!
    if (t >= start && t < end) out.push(items[i]!)
  }
  return out
}

interface Keys {
  readonly length: number
  readonly positions: Map<string, number>
}

/**
 * A finder of the first record of a list that one of `keysOf(record)` names, as `items.find`
 * would find it. Its key → position index is kept per list and length (the world's writes replace
 * a list or push to it, never put a new record in an old place); a hit is checked against the
 * record there, and the index is rebuilt when the check fails.
 */
export const byKey = <A>(keysOf: (item: A) => ReadonlyArray<string | null | undefined>) => {
  const indexes = new WeakMap<ReadonlyArray<A>, Keys>()
  return (items: ReadonlyArray<A>, key: string): A | undefined => {
    const lookUp = (keys: Keys) => {
      const i = keys.positions.get(key)
      if (i === undefined) return { found: undefined, fresh: true }
      const item = items[i]
      return item !== undefined && keysOf(item).includes(key)
        ? { found: item, fresh: true }
        : { found: undefined, fresh: false }
    }
    const cached = indexes.get(items)
    if (cached !== undefined && cached.length === items.length) {
      const answer = lookUp(cached)
      if (answer.fresh) return answer.found
    }
    const positions = new Map<string, number>()
    items.forEach((item, i) => {
      for (const k of keysOf(item)) if (typeof k === "string" && !positions.has(k)) positions.set(k, i)
    })
    const keys = { length: items.length, positions }
    indexes.set(items, keys)
    return lookUp(keys).found
  }
}

interface Keys {
  readonly length: number
  readonly positions: Map<string, number>
}
