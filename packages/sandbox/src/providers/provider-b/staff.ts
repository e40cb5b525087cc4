/**
 * The employees and vehicles of a BioTrack login, which `inventory_manifest` names by
 * `employee_id` and `vehicle_id` and which `sync_employee` and `sync_vehicle` serve. The sandbox
 * world has neither, so the emulator derives them from the world, deterministically:
 *
 * - per facility (in the world's order), {@link EMPLOYEES_PER_FACILITY} employees and
 *   {@link VEHICLES_PER_FACILITY} vehicles, each from a faker seeded per entity from the world's
 *   seed (`Seed.integer`, as `internal/generate` seeds its facilities and transfers), so that
 *   adding one shifts no other; dates from a `Seed.prng` stream and the world's reference date,
 *   never the clock;
 * - ids from counters over the login: employees `1001`, `1002`, …, vehicles `1`, `2`, … (the
 *   recorded `inventory_manifest` request names employee `"12384"` and vehicle `"1"`);
 * - names unique in the login (a drawn name already taken is drawn again), so that a driver's
 *   name names one employee.
 *
 * Nothing here is stored in the world: its JSON and hash do not change. What the recorded
 * `sync_employee` rows show carries no `location`, so an employee belongs to the login; a vehicle
 * (no recording found) is kept to the facility it was made for.
 *
 * @since 0.1.0
 */
import { faker } from "@faker-js/faker/locale/en"
import * as Seed from "../../Seed.js"
import type { World } from "../../World.js"
import * as Worlds from "../../World.js"

/**
 * How many employees each facility gets.
 *
 * @since 0.1.0
 * @category constants
 */
export const EMPLOYEES_PER_FACILITY = 3

/**
 * How many vehicles each facility gets.
 *
 * @since 0.1.0
 * @category constants
 */
export const VEHICLES_PER_FACILITY = 2

/**
 * A day of the calendar.
 *
 * @since 0.1.0
 * @category models
 */
export interface Day {
  readonly year: number
  readonly month: number
  readonly day: number
}

/**
 * An employee of the login.
 *
 * @since 0.1.0
 * @category models
 */
export interface Employee {
  readonly employee_id: string
  /** The full name, as `employee_name` and a manifest's `transporter_name` carry it. */
  readonly name: string
  /** The facility it was seeded for (BioTrack's rows do not say). */
  readonly license: string
  readonly birth: Day
  readonly hired: Day
}

/**
 * A vehicle of a facility.
 *
 * @since 0.1.0
 * @category models
 */
export interface Vehicle {
  readonly vehicle_id: string
  /** The facility (`location`) it belongs to. */
  readonly license: string
  readonly nickname: string
  readonly make: string
  readonly model: string
  readonly color: string
  readonly plate: string
  readonly vin: string
}

/**
 * The employees and vehicles of a login.
 *
 * @since 0.1.0
 * @category models
 */
export interface Staff {
  readonly employees: ReadonlyArray<Employee>
  readonly vehicles: ReadonlyArray<Vehicle>
}

/**
 * A vehicle as a manifest's `transporter_vehicle_details` shows it: colour, make, model and plate
 * (the recorded one reads "Black Chevy Cavalier 23856").
 *
 * @since 0.1.0
 * @category formats
 */
export const details = (vehicle: Vehicle): string =>
  `${vehicle.color} ${vehicle.make} ${vehicle.model} ${vehicle.plate}`

/**
 * A vehicle's description, as the world records it on a transfer (`vehicle_info`): its details
 * and VIN, which is what a reader of the manifest (`transporter_vehicle_details` +
 * `transporter_vehicle_identification`) gets back.
 *
 * @since 0.1.0
 * @category formats
 */
export const description = (vehicle: Vehicle): string => `${details(vehicle)} ${vehicle.vin}`

/**
 * A date as BioTrack writes a date of birth (`transporter_dob`): `MM/DD/YYYY`.
 *
 * @since 0.1.0
 * @category formats
 */
export const mdy = (day: Day): string => `${two(day.month)}/${two(day.day)}/${day.year}`

/**
 * `n` in two digits (`"01"`), as `sync_employee` writes months and days.
 *
 * @since 0.1.0
 * @category formats
 */
export const two = (n: number): string => String(n).padStart(2, "0")

/** The seed a world's entities draw from (as `internal/generate/context.ts` builds it). */
const seedOf = (world: World): string => `${world.seed}|${world.provider}|${world.state}|${world.login.split("~")[0]}`

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)

const make = (world: World): Staff => {
  const seed = seedOf(world)
  const refYear = new Date(world.referenceDate).getUTCFullYear()
  const employees: Array<Employee> = []
  const vehicles: Array<Vehicle> = []
  const names = new Set<string>()
  for (const [f, data] of world.facilities.entries()) {
    const license = data.facility.license_number
    for (let i = 0; i < EMPLOYEES_PER_FACILITY; i++) {
      const index = f * 100 + i
      faker.seed(Seed.integer(seed, "biotrack-employee", index))
      const random = Seed.prng(seed, "biotrack-employee-dates", index)
      let name = ""
      for (let attempt = 0; attempt < 20 && (name === "" || names.has(name.toLowerCase())); attempt++) {
        name = `${faker.person.firstName()} ${faker.person.lastName()}`
      }
      if (names.has(name.toLowerCase())) name = `${name} ${employees.length + 1}`
      names.add(name.toLowerCase())
      const day = () => ({ month: 1 + Math.floor(random() * 12), day: 1 + Math.floor(random() * 28) })
      employees.push({
        employee_id: String(1001 + employees.length),
        name,
        license,
        birth: { year: refYear - 22 - Math.floor(random() * 40), ...day() },
        hired: { year: refYear - 1 - Math.floor(random() * 6), ...day() }
      })
    }
    for (let i = 0; i < VEHICLES_PER_FACILITY; i++) {
      faker.seed(Seed.integer(seed, "biotrack-vehicle", f * 100 + i))
      vehicles.push({
        vehicle_id: String(1 + vehicles.length),
        license,
        nickname: `Van ${i + 1}`,
        make: faker.vehicle.manufacturer(),
        model: faker.vehicle.model(),
        color: capitalized(faker.vehicle.color()),
        plate: faker.vehicle.vrm(),
        vin: faker.vehicle.vin()
      })
    }
  }
  return { employees, vehicles }
}

/**
 * The employees and vehicles of a world's login (made once per world).
 *
 * @since 0.1.0
 * @category getters
 */
export const of = (world: World): Staff => {
  const kept = Worlds.slotOf(world, staffSlot)
  if (kept.staff === undefined || kept.staff.employees.length !== world.facilities.length * EMPLOYEES_PER_FACILITY) {
    kept.staff = make(world)
  }
  return kept.staff
}

/** A world's staff, made when first asked for (and again if its facilities change). */
const staffSlot = Worlds.slot<{ staff?: Staff }>("provider_b/staff", () => ({}))

/**
 * The employee with this id, if the login has one.
 *
 * @since 0.1.0
 * @category getters
 */
export const employee = (world: World, id: string): Employee | undefined =>
  of(world).employees.find((e) => e.employee_id === id)

/**
 * The vehicle with this id at this location, if it has one.
 *
 * @since 0.1.0
 * @category getters
 */
export const vehicle = (world: World, id: string, license: string): Vehicle | undefined =>
  of(world).vehicles.find((v) => v.vehicle_id === id && v.license === license)
