/**
 * The parties of a transfer write (DECISIONS "Transfer parties"): `shipper_facility` and
 * `recipient_facility` name a facility by its `fac_…` id, its licence number or its exact name.
 * The port resolves them against the connection's facilities once, for every provider, so that
 * drivers only ever see licence numbers.
 *
 * - A `fac_…` value must be the id of one of the connection's facilities (ids are derived and
 *   reversible, ADR 0005): one that does not decode, is another provider's, or names no facility
 *   of the connection is refused.
 * - Otherwise the value is matched, as given, against each facility's licence number and name; a
 *   value matching several facilities is ambiguous and refused.
 * - The shipper must be the facility the write is made at, and the recipient another one.
 * - `estimated_arrival` is not before `estimated_departure` (the state systems refuse it; issue #30).
 * - A recipient matching none of the connection's facilities is another licensee's licence number
 *   (the state system checks it), when it reads as one: a single word of letters, digits and
 *   `-._/` holding a digit. Anything else (a name with spaces, a word without digits) is a name of
 *   no facility and is refused.
 *
 * Every refusal is `InvalidInput` with `path` the field (400 `invalid_parameter`, `param`).
 */
import { Either, Option } from "effect"
import type { CreateTransfer } from "../Commands.js"
import type { Facility } from "../Facility.js"
import * as Ids from "../Ids.js"
import { InvalidInput } from "../ProviderError.js"
import type { ProviderName } from "../ProviderName.js"

type Field = "shipper_facility" | "recipient_facility"

const OPERATION = "create_transfer"

const ID_PREFIX = `${Ids.prefixes.facility}_`

const HINT = "send a facility's id (fac_…), licence number or exact name, as GET …/facilities lists them"

/** Whether a value reads as a licence number rather than a name. */
const readsAsLicence = (value: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(value) && /[0-9]/.test(value)

const label = (f: Facility): string => `${f.name} (${f.license_number})`

const refuse = (path: Field, message: string) => Either.left(new InvalidInput({ operation: OPERATION, path, message }))

/**
 * The facility of the connection a party value names: `Some` when it names exactly one, `None`
 * when it names none (and is not a `fac_…` id); refused when it is a bad id or ambiguous.
 */
const facilityNamed = (
  provider: ProviderName,
  facilities: ReadonlyArray<Facility>,
  field: Field,
  value: string
): Either.Either<Option.Option<Facility>, InvalidInput> => {
  const shown = JSON.stringify(value)
  if (value.startsWith(ID_PREFIX)) {
    if (Option.isNone(Ids.decodeAs("facility", provider, value))) {
      return refuse(field, `${field} ${shown} is not a ${provider} facility id: ${HINT}`)
    }
    const found = facilities.find((f) => f.id === value)
    return found === undefined
      ? refuse(field, `${field} ${shown} is no facility of this connection: ${HINT}`)
      : Either.right(Option.some(found))
  }
  const found = facilities.filter((f) => f.license_number === value || f.name === value)
  if (found.length > 1) {
    return refuse(
      field,
      `${field} ${shown} names several facilities of this connection (${
        found.map(label).join(", ")
      }): send the facility's id or licence number instead`
    )
  }
  return Either.right(Option.fromNullable(found[0]))
}

/**
 * The command with both parties as licence numbers, or why a party names no facility it may.
 * `at` is the facility the write is made at; `facilities` every facility of the connection.
 */
export const resolve = (
  provider: ProviderName,
  facilities: ReadonlyArray<Facility>,
  at: Facility,
  command: CreateTransfer
): Either.Either<CreateTransfer, InvalidInput> =>
  Either.gen(function*() {
    const shipper = yield* facilityNamed(provider, facilities, "shipper_facility", command.shipper_facility)
    if (Option.isNone(shipper)) {
      return yield* refuse(
        "shipper_facility",
        `shipper_facility ${JSON.stringify(command.shipper_facility)} is no facility of this connection: the ` +
          `shipper is the facility the transfer is made at, ${label(at)}; send its id, licence number or exact name`
      )
    }
    if (shipper.value.id !== at.id) {
      return yield* refuse(
        "shipper_facility",
        `shipper_facility names ${label(shipper.value)}, but the transfer is made at ${label(at)}: ` +
          `a facility ships only its own packages; post the transfer under ${shipper.value.id} instead, or name ${at.id}`
      )
    }
    const recipient = yield* facilityNamed(provider, facilities, "recipient_facility", command.recipient_facility)
    if (Option.isNone(recipient) && !readsAsLicence(command.recipient_facility)) {
      return yield* refuse(
        "recipient_facility",
        `recipient_facility ${
          JSON.stringify(command.recipient_facility)
        } is no facility of this connection (by id, licence number or exact name), nor a licence number: ${HINT}, ` +
          "or another licensee's licence number"
      )
    }
    const recipientLicence = Option.match(recipient, {
      onNone: () => command.recipient_facility,
      onSome: (f) => f.license_number
    })
    if (recipientLicence === shipper.value.license_number) {
      return yield* refuse(
        "recipient_facility",
        `recipient_facility names the shipper itself, ${label(at)}: a transfer goes to another facility or licensee`
      )
    }
    const departure = command.estimated_departure ?? null
    const arrival = command.estimated_arrival ?? null
    if (departure !== null && arrival !== null && Date.parse(arrival) < Date.parse(departure)) {
      return yield* Either.left(
        new InvalidInput({
          operation: OPERATION,
          path: "estimated_arrival",
          message: `estimated_arrival (${arrival}) is before estimated_departure (${departure}): it must be the same ` +
            "time or later"
        })
      )
    }
    return { ...command, shipper_facility: shipper.value.license_number, recipient_facility: recipientLicence }
  })
