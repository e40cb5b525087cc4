/**
 * The wire schemas of the BioTrack classic API, public for the sandbox emulator (which encodes
 * with them) and for embedders that hold raw rows. Names are BioTrack's own.
 *
 * @since 0.1.0
 */

/**
 * Value shapes: string numbers, epoch seconds, "0"/"1" flags, barcodes.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Barcode, BarcodeList, Code, Epoch, Flag, IdString, ManifestId, StringNumber } from "./internal/wire/Common.js"

/**
 * `sync_employee` rows (the drivers `inventory_manifest` names by `employee_id`).
 *
 * @since 0.1.0
 * @category schemas
 */
export { Employee } from "./internal/wire/Employee.js"

/**
 * The answer envelope: failures, login, writes.
 *
 * @since 0.1.0
 * @category schemas
 */
export { API_VERSION, Failure, LoginResult, WriteResult } from "./internal/wire/Envelope.js"

/**
 * `sync_inventory` rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Inventory } from "./internal/wire/Inventory.js"

/**
 * `sync_manifest` tables and transfer lines.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Manifest, ManifestStop, ManifestStopItem, TransferLine } from "./internal/wire/Manifest.js"

/**
 * `sync_plant` and `sync_plant_derivative` rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Plant, PlantDerivative } from "./internal/wire/Plant.js"

/**
 * QA samples and `inventory_qa_check` answers.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Panel, QaCheck, QaCheckResult, QaSample } from "./internal/wire/QaSample.js"

/**
 * Room rows (`sync_inventory_room`, `sync_plant_room`).
 *
 * @since 0.1.0
 * @category schemas
 */
export { Room } from "./internal/wire/Room.js"

/**
 * `sync_sale` rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Sale } from "./internal/wire/Sale.js"

/**
 * The sync actions, their tables and answer schemas.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Rows, syncActions, syncAnswer } from "./internal/wire/Tables.js"
export type { SyncAction, SyncTables } from "./internal/wire/Tables.js"

/**
 * `sync_vehicle` rows (columns inferred: no payload was found).
 *
 * @since 0.1.0
 * @category schemas
 */
export { Vehicle } from "./internal/wire/Vehicle.js"

/**
 * `sync_vendor` rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export { Vendor } from "./internal/wire/Vendor.js"
