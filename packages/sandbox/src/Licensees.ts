/**
 * The other licensees a sandbox world's state system knows: the licences outside the login a
 * transfer may go to (issue #30). A state system refuses a transfer to a licence it does not know,
 * so the sandbox does too; these are the ones it knows besides the login's own facilities.
 *
 * They are derived from the world's seed, never stored: the same world always knows the same
 * licensees, and generating a world does not change. The first is the shipper of the world's
 * incoming transfer from outside (`internal/generate/transfers.ts`), so a reader finds one in any
 * transfers list; BioTrack's `sync_vendor` serves all of them, as the real one lists every vendor.
 *
 * @since 0.1.0
 */
import { faker } from "@faker-js/faker/locale/en"
import { worldSeed } from "./internal/generate/context.js"
import * as Profile from "./Profile.js"
import * as Seed from "./Seed.js"
import type { Role, World } from "./World.js"

/**
 * A licence outside the login.
 *
 * @since 0.1.0
 * @category models
 */
export interface Licensee {
  readonly license_number: string
  readonly name: string
  readonly role: Role
  readonly address: string
  readonly city: string
  readonly zip: string
}

/** The facility numbers of the licensees (the login's own facilities are 0 to 4). */
const NUMBERS = [8, 9, 10] as const

const ROLES: Record<(typeof NUMBERS)[number], Role> = { 8: "cultivation", 9: "retail", 10: "manufacturing" }

const SUFFIX: Record<Role, string> = {
  cultivation: "Cultivation",
  manufacturing: "Manufacturing",
  testing: "Testing Lab",
  retail: "Dispensary",
  medical: "Medical Dispensary"
}

/**
 * The world's other licensees, in a fixed order.
 *
 * @since 0.1.0
 * @category getters
 */
export const of = (world: World): ReadonlyArray<Licensee> => {
  const profile = Profile.of(world)
  const seed = worldSeed(world)
  const numericSeed = Seed.integer(seed, "world", 0)
  return NUMBERS.map((n): Licensee => {
    faker.seed(Seed.integer(seed, "licensee", n))
    const company = faker.company.name().replace(/[,]/g, "")
    return {
      license_number: profile.license(n, numericSeed),
      name: `${company} ${SUFFIX[ROLES[n]]}`,
      role: ROLES[n],
      address: faker.location.streetAddress(),
      city: faker.location.city(),
      zip: faker.location.zipCode("#####")
    }
  })
}

/**
 * Whether the world's state system knows a licence: one of the login's facilities or another
 * licensee.
 *
 * @since 0.1.0
 * @category predicates
 */
export const knows = (world: World, license: string): boolean =>
  world.facilities.some((d) => d.facility.license_number === license) ||
  of(world).some((l) => l.license_number === license)
