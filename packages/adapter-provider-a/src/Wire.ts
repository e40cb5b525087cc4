/**
 * provider_a's wire schemas, named as the provider names them: the shapes the adapter reads and
 * writes. Public for services that bring their own transport. The sandbox's emulator does not use
 * them: it writes the provider's JSON itself, checked against recorded payloads, so that a mistake
 * here cannot hide itself (issue 16).
 * Fields the adapter does not use are left out; decoding ignores them.
 *
 * @since 0.1.0
 */
export {
  /** @since 0.1.0 */
  ItemV2,
  /** @since 0.1.0 */
  LocationV2,
  /** @since 0.1.0 */
  PatientV2,
  /** @since 0.1.0 */
  StrainV2,
  /** @since 0.1.0 */
  UnitOfMeasure
} from "./internal/wire/Catalog.js"
export {
  /** @since 0.1.0 */
  ErrorMessage,
  /** @since 0.1.0 */
  ErrorRow,
  /** @since 0.1.0 */
  Paged,
  /** @since 0.1.0 */
  WriteResult
} from "./internal/wire/common.js"
export {
  /** @since 0.1.0 */
  FacilityV2,
  /** @since 0.1.0 */
  License
} from "./internal/wire/Facility.js"
export {
  /** @since 0.1.0 */
  HarvestV2
} from "./internal/wire/Harvest.js"
export {
  /** @since 0.1.0 */
  LabTestResultRow,
  /** @since 0.1.0 */
  RecordLabTest,
  /** @since 0.1.0 */
  RecordResult
} from "./internal/wire/LabTest.js"
export {
  /** @since 0.1.0 */
  AvailableTag,
  /** @since 0.1.0 */
  CreatePackage,
  /** @since 0.1.0 */
  Ingredient,
  /** @since 0.1.0 */
  PackageItem,
  /** @since 0.1.0 */
  PackageSourceHarvest,
  /** @since 0.1.0 */
  PackageV2
} from "./internal/wire/Package.js"
export {
  /** @since 0.1.0 */
  PlantBatchV2,
  /** @since 0.1.0 */
  PlantV2
} from "./internal/wire/Plant.js"
export {
  /** @since 0.1.0 */
  SalesDeliveryV2,
  /** @since 0.1.0 */
  SalesReceipt,
  /** @since 0.1.0 */
  SaleTransaction
} from "./internal/wire/Sale.js"
export {
  /** @since 0.1.0 */
  CreateTemplate,
  /** @since 0.1.0 */
  DeliveryPackage,
  /** @since 0.1.0 */
  TemplateDestination,
  /** @since 0.1.0 */
  TemplatePackage,
  /** @since 0.1.0 */
  TransferDelivery,
  /** @since 0.1.0 */
  TransferRow
} from "./internal/wire/Transfer.js"
