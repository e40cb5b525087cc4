/**
 * Every facility-level resource: a list (paged, with the filters of DECISIONS) and a get, chain of
 * custody, and the three sandbox writes.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  ChainOfCustody,
  Commands,
  Envelope,
  Harvest,
  Item,
  LabResult,
  Location,
  Package,
  Patient,
  Plant,
  Query,
  Sale,
  SalesDelivery,
  Strain,
  Transfer
} from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"
import { strict } from "./Schemas.js"

const P = "/v1/connections/:connection_id/facilities/:facility_id"
const FacilityPath = Schema.Struct({ connection_id: Schema.String, facility_id: Schema.String })
const ObjectPath = Schema.Struct({ connection_id: Schema.String, facility_id: Schema.String, id: Schema.String })

/** A resource's name in prose, plural and singular (from its path). */
const nouns = (path: string) => {
  const plural = path.replaceAll("_", " ")
  const singular = plural === "sales deliveries" ? "sales delivery" : plural.replace(/s$/, "")
  return { plural, singular }
}

const list = <const Name extends string, A, I, Q extends Schema.Schema.Any>(
  name: Name,
  path: string,
  item: Schema.Schema<A, I>,
  query: Q & HttpApiEndpoint.HttpApiEndpoint.ValidateUrlParams<Q>
) =>
  HttpApiEndpoint.get(name, `${P}/${path}` as `/${string}`)
    .annotate(OpenApi.Summary, `List ${nouns(path).plural}`)
    .annotate(
      OpenApi.Description,
      `The facility's ${
        nouns(path).plural
      }, read from the state system, paged (\`page\` from 1, \`per_page\` up to 100), ` +
        "with the filters below. Rows the state system sent but that could not be read are listed in `meta.skipped`."
    )
    .annotate(OpenApi.Transform, errors("params", "owned", "upstream"))
    .setPath(FacilityPath)
    .setUrlParams(query)
    .addSuccess(Envelope.Paginated(item))

const get = <const Name extends string, A, I>(name: Name, path: string, item: Schema.Schema<A, I>) =>
  HttpApiEndpoint.get(name, `${P}/${path}/:id` as `/${string}`)
    .annotate(OpenApi.Summary, `Get a ${nouns(path).singular}`)
    .annotate(OpenApi.Description, `One ${nouns(path).singular} of the facility, by its Tracebridge id.`)
    .annotate(OpenApi.Transform, errors("owned", "upstream"))
    .setPath(ObjectPath)
    .addSuccess(Envelope.Envelope(item))

// Sales and deliveries' filter schemas carry a from ≤ to refinement; the URL params need the struct.
const SalesQuery = Schema.Struct(Query.Sales.from.fields)
const SalesDeliveriesQuery = Schema.Struct(Query.SalesDeliveries.from.fields)

/**
 * @since 0.1.0
 * @category groups
 */
export class ResourcesApi extends HttpApiGroup.make("resources")
  .annotate(OpenApi.Title, "Resources")
  .annotate(
    OpenApi.Description,
    "Packages, plants, harvests, lab results, transfers, sales and the rest of a facility, read from its state system; the writes work on sandbox connections."
  )
  .add(list("listPackages", "packages", Package.Package, Query.withPage(Query.Packages)))
  .add(get("getPackage", "packages", Package.Package))
  .add(
    HttpApiEndpoint.get("getChainOfCustody", `${P}/packages/:id/chain_of_custody`)
      .annotate(OpenApi.Summary, "Get a package's chain of custody")
      .annotate(
        OpenApi.Description,
        "The package's sources back to their harvests and plants, its lab results and its transfers."
      )
      .annotate(OpenApi.Transform, errors("owned", "upstream"))
      .setPath(ObjectPath)
      .addSuccess(Envelope.Envelope(ChainOfCustody.ChainOfCustody))
  )
  .add(
    HttpApiEndpoint.post("createPackage", `${P}/packages`)
      .annotate(OpenApi.Summary, "Create a package (split)")
      .annotate(
        OpenApi.Description,
        "Takes quantity from one or more source packages into a new package. Sandbox connections only; production writes answer 403 `sandbox_only`."
      )
      .annotate(OpenApi.Transform, errors("body", "idempotent", "owned", "upstream", "write"))
      .setPath(FacilityPath)
      .setPayload(Commands.SplitPackage.annotations({ parseOptions: strict }))
      .addSuccess(Envelope.Envelope(Package.Package), { status: 201 })
  )
  .add(list("listPlants", "plants", Plant.Plant, Query.withPage(Query.Plants)))
  .add(get("getPlant", "plants", Plant.Plant))
  .add(list("listHarvests", "harvests", Harvest.Harvest, Query.withPage(Query.Harvests)))
  .add(get("getHarvest", "harvests", Harvest.Harvest))
  .add(list("listLabResults", "lab_results", LabResult.LabResult, Query.withPage(Query.LabResults)))
  .add(get("getLabResult", "lab_results", LabResult.LabResult))
  .add(
    HttpApiEndpoint.post("createLabResult", `${P}/lab_results`)
      .annotate(OpenApi.Summary, "Record a lab result")
      .annotate(
        OpenApi.Description,
        "Records a test result on a package at a testing facility (the facility needs the `labs` capability). Sandbox connections only."
      )
      .annotate(OpenApi.Transform, errors("body", "idempotent", "owned", "upstream", "write"))
      .setPath(FacilityPath)
      .setPayload(Commands.RecordLabResult.annotations({ parseOptions: strict }))
      .addSuccess(Envelope.Envelope(LabResult.LabResult), { status: 201 })
  )
  .add(list("listTransfers", "transfers", Transfer.Transfer, Query.withPage(Query.Transfers)))
  .add(get("getTransfer", "transfers", Transfer.Transfer))
  .add(
    HttpApiEndpoint.post("createTransfer", `${P}/transfers`)
      .annotate(OpenApi.Summary, "Create a transfer")
      .annotate(
        OpenApi.Description,
        "Creates an outgoing transfer (manifest) of packages to a recipient facility. Sandbox connections only."
      )
      .annotate(OpenApi.Transform, errors("body", "idempotent", "owned", "upstream", "write"))
      .setPath(FacilityPath)
      .setPayload(Commands.CreateTransfer.annotations({ parseOptions: strict }))
      .addSuccess(Envelope.Envelope(Transfer.Transfer), { status: 201 })
  )
  .add(list("listSales", "sales", Sale.Sale, Query.withPage(SalesQuery)))
  .add(get("getSale", "sales", Sale.Sale))
  .add(
    list("listSalesDeliveries", "sales_deliveries", SalesDelivery.SalesDelivery, Query.withPage(SalesDeliveriesQuery))
  )
  .add(get("getSalesDelivery", "sales_deliveries", SalesDelivery.SalesDelivery))
  .add(list("listItems", "items", Item.Item, Query.withPage(Query.Items)))
  .add(get("getItem", "items", Item.Item))
  .add(list("listStrains", "strains", Strain.Strain, Query.withPage(Query.Strains)))
  .add(get("getStrain", "strains", Strain.Strain))
  .add(list("listLocations", "locations", Location.Location, Query.withPage(Query.Locations)))
  .add(get("getLocation", "locations", Location.Location))
  .add(list("listPatients", "patients", Patient.Patient, Query.withPage(Query.Patients)))
  .add(get("getPatient", "patients", Patient.Patient))
  .middleware(Authentication)
{}
