/**
 * The package scenario: `package_hold`, a package put on hold (administrative, an investigation or
 * a recall) or released. No event.
 *
 * @since 0.1.0
 */
import type { Package } from "@tracebridge/core"
import { ProviderError, Transitions } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as Profile from "../Profile.js"
import type { FacilityData, World } from "../World.js"
import { define, exhausted, fail, findPackage, transition } from "./common.js"

const setPackage = (world: World, data: FacilityData, id: string, patch: Partial<Package.Package>, at: number) => {
  data.packages = data.packages.map((p) =>
    p.id === id
      ? {
        ...p,
        ...patch,
        metadata: Profile.of(world).touchMetadata(p.metadata, at)
      }
      : p
  )
  world.modified.set(id, Math.floor(at / 1000) * 1000)
}

/**
 * `package_hold`: the package named (or the first off hold) is put on hold or released
 * (`on_hold`; by default the other of what it is), with the hold's kind remembered.
 *
 * @since 0.1.0
 * @category scenarios
 */
export const hold = define({
  params: Schema.Struct({
    package_id: Schema.optional(Schema.String),
    on_hold: Schema.optional(Schema.Boolean),
    /** What kind of hold (default administrative): each stops the package and reads as on hold. */
    kind: Schema.optional(Schema.Literal("administrative", "investigation", "recall"))
  }),
  run: (world, params, at) => {
    const found = findPackage(world, params.package_id, (p) => !p.is_on_hold)
    if (found === undefined) {
      return params.package_id !== undefined
        ? fail(ProviderError.ResourceNotFound.of("package", params.package_id))
        : exhausted(
          "package_hold",
          "package off hold",
          "package_id",
          "release a package (package_hold with params.on_hold false) or create packages first (POST …/packages)"
        )
    }
    const to = params.on_hold ?? !found.pkg.is_on_hold
    const moved = transition(Transitions.packageHold, found.pkg.is_on_hold, to)
    if (Either.isLeft(moved)) return Either.left(moved.left)
    setPackage(world, found.data, found.pkg.id, { is_on_hold: to }, at)
    if (to && params.kind !== undefined && params.kind !== "administrative") {
      world.holds.set(found.pkg.id, params.kind)
    } else world.holds.delete(found.pkg.id)
    return Either.right({ change: null, loginRequired: false })
  }
})
