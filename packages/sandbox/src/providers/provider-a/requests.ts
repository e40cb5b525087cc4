/**
 * The bodies of the writes the emulator accepts, decoded by hand: each POST body is an array of
 * objects, and each object is checked field by field as Metrc documents it (a missing required
 * field, or a field of the wrong JSON type, refuses the object). Unknown fields are ignored.
 */

const FAIL: unique symbol = Symbol("provider-a/requests/FAIL")

/** Decodes a JSON value, or answers `FAIL`. */
type Decoder<A> = (u: unknown) => A | typeof FAIL

const string: Decoder<string> = (u) => (typeof u === "string" ? u : FAIL)
const number: Decoder<number> = (u) => (typeof u === "number" && Number.isFinite(u) ? u : FAIL)
const boolean: Decoder<boolean> = (u) => (typeof u === "boolean" ? u : FAIL)
const unknown: Decoder<unknown> = (u) => u

/** A field that may be absent or null (null either way). */
const nullable =
  <A>(decoder: Decoder<A>): Decoder<A | null> => (u) => (u === undefined || u === null ? null : decoder(u))

/** A field that may be absent (but not null). */
const optional = <A>(decoder: Decoder<A>): Decoder<A | undefined> => (u) => (u === undefined ? undefined : decoder(u))

const array = <A>(decoder: Decoder<A>): Decoder<ReadonlyArray<A>> => (u) => {
  if (!Array.isArray(u)) return FAIL
  const out: Array<A> = []
  for (const item of u) {
    const a = decoder(item)
    if (a === FAIL) return FAIL
    out.push(a)
  }
  return out
}

/** An array field that may be absent (empty then). */
const list = <A>(decoder: Decoder<A>): Decoder<ReadonlyArray<A>> => (u) => (u === undefined ? [] : array(decoder)(u))

/** What an object of these field decoders decodes to. */
type Decoded<F extends Record<string, Decoder<unknown>>> = {
  readonly [K in keyof F]: Exclude<ReturnType<F[K]>, typeof FAIL>
}

const object = <F extends Record<string, Decoder<unknown>>>(fields: F): Decoder<Decoded<F>> => (u) => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return FAIL
  const record = u as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [name, decoder] of Object.entries(fields)) {
    const a = decoder(record[name])
    if (a === FAIL) return FAIL
    out[name] = a
  }
  // every field was decoded by its own decoder above: the record is the mapped type
  return out as Decoded<F>
}

/** Decodes `u`, or answers undefined. */
const decodeWith = <A>(decoder: Decoder<A>) => (u: unknown): A | undefined => {
  const a = decoder(u)
  return a === FAIL ? undefined : a
}

// ------------------------------------------------------------------ POST /packages/v2/

const ingredient = object({ Package: string, Quantity: number, UnitOfMeasure: string })

/** One object of `POST /packages/v2/`: a new package drawn from others (`Ingredients`). */
export const createPackage = decodeWith(object({
  Tag: string,
  Location: nullable(string),
  Sublocation: nullable(string),
  Item: nullable(string),
  Quantity: number,
  UnitOfMeasure: string,
  PatientLicenseNumber: nullable(string),
  Note: nullable(string),
  IsProductionBatch: optional(boolean),
  ProductionBatchNumber: nullable(string),
  IsDonation: optional(boolean),
  IsTradeSample: optional(boolean),
  IsFinishedGood: optional(boolean),
  ProductRequiresRemediation: optional(boolean),
  UseSameItem: optional(boolean),
  ActualDate: string,
  ExpirationDate: nullable(string),
  SellByDate: nullable(string),
  UseByDate: nullable(string),
  Ingredients: array(ingredient)
}))

// ------------------------------------------------------------------ POST /labtests/v2/record

const labTestResult = object({
  LabTestTypeName: string,
  Quantity: number,
  Passed: boolean,
  Notes: nullable(string)
})

/** One object of `POST /labtests/v2/record`: the results of one tested package. */
export const recordLabTest = decodeWith(object({
  Label: string,
  ResultDate: string,
  DocumentFileName: nullable(string),
  DocumentFileBase64: nullable(string),
  Results: array(labTestResult)
}))

// ------------------------------------------------------------------ POST /transfers/v2/templates/outgoing

const templatePackage = object({ PackageLabel: string, WholesalePrice: nullable(number) })

const destination = object({
  RecipientLicenseNumber: string,
  TransferTypeName: string,
  PlannedRoute: nullable(string),
  EstimatedDepartureDateTime: nullable(string),
  EstimatedArrivalDateTime: nullable(string),
  Transporters: list(unknown),
  Packages: array(templatePackage)
})

/** One object of `POST /transfers/v2/templates/outgoing`: a template with its destinations. */
export const createTemplate = decodeWith(object({
  Name: string,
  TransporterFacilityLicenseNumber: nullable(string),
  DriverOccupationalLicenseNumber: nullable(string),
  DriverName: nullable(string),
  DriverLicenseNumber: nullable(string),
  PhoneNumberForQuestions: nullable(string),
  VehicleMake: nullable(string),
  VehicleModel: nullable(string),
  VehicleLicensePlateNumber: nullable(string),
  Destinations: array(destination)
}))
