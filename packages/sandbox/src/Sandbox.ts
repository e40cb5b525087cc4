/**
 * The sandbox state: one world per (provider, state, login), generated on first use from the seed
 * and reference date and never stored; what changes it (writes, scenarios) is an ordered change
 * log per world, so that replaying the log on the seeded world gives the same state every time.
 * Every accepted change is announced to subscribers.
 *
 * The sandbox is a leaf store: it holds everything the emulators keep, and nothing is kept beside
 * it in a module-level table.
 *
 * - the worlds and their change logs (each world holds its emulators' per-world slots,
 *   `World.slot`);
 * - the upstream fault of each world (`fault`, `setFault`);
 * - each emulator's state (`slot`: sessions, rate windows), and its configuration (`setting`,
 *   kept through resets: it is how the emulator was started, not what it served).
 *
 * One `reset` clears it: a world's reset forgets that world, its log and its fault; the whole
 * reset forgets every world, log, fault and emulator state.
 *
 * Which providers it can generate worlds for is injected (`Options.providers`, the sandbox's
 * `Registry.installed` in the product), so the store names no emulator.
 *
 * @since 0.1.0
 */
import type { Fault, ProviderDescriptor, ProviderName } from "@tracebridge/core"
import { Catalog } from "@tracebridge/providers"
import { Either } from "effect"
import type { Size } from "./Generate.js"
import { generate } from "./Generate.js"
import * as Key from "./internal/key.js"
import * as Slots from "./internal/slot.js"
import type { Profile } from "./Profile.js"
import * as Scenario from "./Scenario.js"
import type { World } from "./World.js"
import type { Refusal } from "./Writes.js"
import * as Writes from "./Writes.js"

/**
 * A change to a world, as logged (inputs only, so that it can be replayed).
 *
 * @since 0.1.0
 * @category models
 */
export type Change =
  | { readonly _tag: "SplitPackage"; readonly input: Writes.Split }
  | { readonly _tag: "RecordLabResult"; readonly input: Writes.RecordLabResult }
  | { readonly _tag: "CreateTransfer"; readonly input: Writes.CreateTransfer }
  | { readonly _tag: "Scenario"; readonly input: Scenario.Input }
  /**
   * The login was entered again (update mode): a refusal the `connection_login_required` scenario
   * left pending is gone, here and wherever the log is replayed.
   */
  | { readonly _tag: "RenewLogin" }

/**
 * What subscribers hear after each accepted change.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChangeEvent {
  readonly key: string
  readonly change: Change["_tag"]
  readonly name?: string
  readonly result: unknown
  readonly at: number
}

/**
 * What the sandbox needs of a provider to generate its worlds: its descriptor and world profile
 * (a `Registry.Lookup` is one).
 *
 * @since 0.1.0
 * @category models
 */
export interface Providers {
  readonly get: (name: string) =>
    | {
      readonly module: { readonly descriptor: ProviderDescriptor.ProviderDescriptor }
      readonly profile: Profile
    }
    | undefined
}

/**
 * A kind of value an emulator keeps per sandbox (its sessions, its rate windows, or its
 * configuration), made on first use.
 *
 * @since 0.1.0
 * @category models
 */
export type Slot<A> = Slots.Slot<Sandbox, A>

/**
 * A kind of per-sandbox value and how to make its first one (compared by identity).
 *
 * @since 0.1.0
 * @category slots
 */
export const slot = <A>(name: string, make: (sandbox: Sandbox) => A): Slot<A> => Slots.make(name, make)

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly seed: string
  /** ISO 8601: the instant worlds are generated at. */
  readonly referenceDate: string
  readonly size?: Size
  /** The clock writes are stamped with (Effect's `Clock` in services, so tests control it). */
  readonly now: () => number
  /** The providers it generates worlds for (`Registry.installed`: every installed one). */
  readonly providers: Providers
  /**
   * Upstream requests per second per login before an emulator answers 429 with `Retry-After`, as
   * the state systems do under bursts (emulators of systems with a documented limit apply it).
   * Off when not given: in process, the sandbox's clock is the caller's (a test's clock may stand
   * still); the standalone sandbox, on the wall clock, turns it on.
   */
  readonly requestsPerSecond?: number
}

/**
 * The key of a world.
 *
 * @since 0.1.0
 * @category constructors
 */
export const keyOf = (provider: ProviderName.ProviderName, state: string, login: string): string =>
  Key.keyOf(provider, state, login)

/**
 * @since 0.1.0
 * @category models
 */
export class Sandbox {
  private readonly worlds = new Map<string, World>()
  private readonly logs = new Map<string, Array<Change>>()
  private readonly listeners = new Set<(event: ChangeEvent) => void>()
  private readonly versions = new Map<string, number>()
  private readonly faults = new Map<string, Fault.Fault>()
  private readonly state = new Slots.Slots<Sandbox>()
  private readonly settings = new Slots.Slots<Sandbox>()
  private epoch = 0
  options: Options

  constructor(options: Options) {
    this.options = options
  }

  /**
   * The world of a login, generated on first use (at `referenceDate`, default the sandbox's: a
   * service anchors each connection's world to a date of its own, so that it stays the same
   * world whenever and wherever it is regenerated).
   */
  world(
    provider: ProviderName.ProviderName,
    state: ProviderName.UsState,
    login: string,
    referenceDate: string = this.options.referenceDate
  ): World {
    const key = keyOf(provider, state, login)
    let world = this.worlds.get(key)
    if (world === undefined) {
      const installed = seedingOf(this.options.providers, provider)
      world = generate({
        provider,
        descriptor: installed.module.descriptor,
        profile: installed.profile,
        state,
        login,
        seed: this.options.seed,
        referenceDate,
        ...(this.options.size ? { size: this.options.size } : {})
      })
      this.worlds.set(key, world)
    }
    return world
  }

  /** The worlds generated so far. */
  keys(): ReadonlyArray<string> {
    return [...this.worlds.keys()]
  }

  /**
   * A token that changes whenever a world's state may have: on every accepted change, restore,
   * reset and reseed. Equal tokens mean equal state, so a reader may cache answers by it.
   */
  version(key: string): string {
    return `${this.epoch}.${this.versions.get(key) ?? 0}`
  }

  private bump(key: string): void {
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1)
  }

  /** The change log of a world. */
  log(key: string): ReadonlyArray<Change> {
    return this.logs.get(key) ?? []
  }

  now(): number {
    return this.options.now()
  }

  /**
   * Applies a change; a refused change changes nothing and is not logged. A scenario that switches
   * the world's upstream into a fault (`upstream_timeout`) sets that fault instead: it changes how
   * the state system answers, not the world, so it is neither logged nor announced, and it lasts
   * as a fault does (until cleared or reset; a restart forgets it).
   */
  apply<A, E = Refusal>(world: World, change: Change): Either.Either<A, E> {
    const result = run(world, change) as Either.Either<A, E>
    if (Either.isRight(result)) {
      const key = keyOf(world.provider, world.state, world.login)
      const fault = change._tag === "Scenario" ? (result.right as Scenario.Outcome).fault : undefined
      if (fault !== undefined) {
        this.setFault(key, fault)
        return result
      }
      const log = this.logs.get(key) ?? []
      log.push(change)
      this.logs.set(key, log)
      this.bump(key)
      const event: ChangeEvent = {
        key,
        change: change._tag,
        ...(change._tag === "Scenario" ? { name: change.input.name } : {}),
        result: result.right,
        at: this.now()
      }
      for (const listener of this.listeners) listener(event)
    }
    return result
  }

  /**
   * Re-applies changes stored elsewhere (a service's database) to a freshly generated world,
   * without announcing them again.
   */
  restore(world: World, changes: ReadonlyArray<Change>): void {
    const key = keyOf(world.provider, world.state, world.login)
    const log = this.logs.get(key) ?? []
    for (const change of changes) {
      if (Either.isRight(run(world, change))) log.push(change)
    }
    this.logs.set(key, log)
    this.bump(key)
  }

  /** Whether a world has been generated in this process. */
  has(provider: ProviderName.ProviderName, state: string, login: string): boolean {
    return this.worlds.has(keyOf(provider, state, login))
  }

  /** Hears every accepted change; returns the unsubscribe function. */
  subscribe(listener: (event: ChangeEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Forgets every world (or one), with its log, its fault and what the emulators kept about it:
   * the next use regenerates it from the seed. The whole reset also forgets every emulator's
   * state (sessions, rate windows); their configuration stays.
   */
  reset(key?: string): void {
    if (key === undefined) {
      this.worlds.clear()
      this.logs.clear()
      this.faults.clear()
      this.state.clear()
      this.epoch++
    } else {
      this.worlds.delete(key)
      this.logs.delete(key)
      this.faults.delete(key)
      this.bump(key)
    }
  }

  /** The upstream fault switched on for a world (`keyOf(provider, state, login)`), if any. */
  fault(key: string): Fault.Fault | undefined {
    return this.faults.get(key)
  }

  /** Switches a world's upstream fault on, or off with null (a fault stays until cleared or reset). */
  setFault(key: string, fault: Fault.Fault | null): void {
    if (fault === null) this.faults.delete(key)
    else this.faults.set(key, fault)
  }

  /** Switches the upstream fault of a provider, state and login's world on, or off with null. */
  setFaultFor(
    world: { readonly provider: ProviderName.ProviderName; readonly state: string; readonly login: string },
    fault: Fault.Fault | null
  ): void {
    this.setFault(keyOf(world.provider, world.state, world.login), fault)
  }

  /** Every fault switched on, by world key. */
  faultList(): ReadonlyArray<readonly [string, Fault.Fault]> {
    return [...this.faults.entries()]
  }

  /** Switches every fault off. */
  clearFaults(): void {
    this.faults.clear()
  }

  /** An emulator's state in this sandbox (made on first use; the whole reset forgets it). */
  slot<A>(slot: Slot<A>): A {
    return this.state.get(this, slot)
  }

  /** An emulator's configuration in this sandbox (its default until `configure`; resets keep it). */
  setting<A>(slot: Slot<A>): A {
    return this.settings.get(this, slot)
  }

  /** Sets an emulator's configuration in this sandbox. */
  configure<A>(slot: Slot<A>, value: A): void {
    this.settings.set(slot, value)
  }

  /** Changes the seed (and optionally the reference date), forgetting every world. */
  reseed(seed: string, referenceDate?: string): void {
    this.options = { ...this.options, seed, ...(referenceDate ? { referenceDate } : {}) }
    this.reset()
  }
}

/** The provider of a name, or a registration error naming it. */
const seedingOf = (providers: Providers, name: string) => {
  const installed = providers.get(name)
  if (installed === undefined) throw new Catalog.RegistrationError([`${name} is not an installed provider`])
  return installed
}

const run = (world: World, change: Change): Either.Either<unknown, Refusal | Scenario.Failure> => {
  switch (change._tag) {
    case "SplitPackage":
      return Writes.splitPackage(world, change.input)
    case "RecordLabResult":
      return Writes.recordLabResult(world, change.input)
    case "CreateTransfer":
      return Writes.createTransfer(world, change.input)
    case "Scenario":
      return Scenario.run(world, change.input)
    case "RenewLogin":
      world.loginRequired = false
      return Either.right(null)
  }
}

/**
 * Regenerates a world and replays a change log on it (what a restarted service does with the log
 * it stored).
 *
 * @since 0.1.0
 * @category constructors
 */
export const replay = (
  options: Omit<Options, "now"> & {
    readonly provider: ProviderName.ProviderName
    readonly state: ProviderName.UsState
    readonly login: string
  },
  log: ReadonlyArray<Change>
): World => {
  const installed = seedingOf(options.providers, options.provider)
  const world = generate({
    provider: options.provider,
    state: options.state,
    login: options.login,
    seed: options.seed,
    referenceDate: options.referenceDate,
    descriptor: installed.module.descriptor,
    profile: installed.profile,
    ...(options.size ? { size: options.size } : {})
  })
  for (const change of log) run(world, change)
  return world
}
