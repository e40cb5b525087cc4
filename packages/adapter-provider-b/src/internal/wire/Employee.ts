/**
 * `sync_employee`: the employees of the login, whom `inventory_manifest` names as the driver
 * (`employee_id`). As recorded (openthc/bunk `sync/employee.php`): `employee_id`,
 * `employee_name`, the birth and hire dates in parts, and no `location`; a `location`, if a state
 * sends one, keeps the employee to that licence.
 */
import { Schema } from "effect"
import { IdString, OptionalText, syncColumns } from "./Common.js"

/** One employee row. */
export const Employee = Schema.Struct({
  employee_id: IdString,
  employee_name: OptionalText,
  location: Schema.optionalWith(Schema.NullOr(IdString), { default: () => null }),
  ...syncColumns
})
/** An employee row. */
export type Employee = typeof Employee.Type
