/**
 * How BioTrack's classic API writes values in JSON, as the emulator writes them itself (never
 * through the adapter's wire schemas, so that a mistake in those cannot hide behind an emulator
 * that shares it). Read from the recorded answers (research `provider-payloads/biotrack-*.json`):
 *
 * - numbers of quantities, weights and codes are strings (`"300.00"`, `"28"`), money has two
 *   decimals (`"8.00"`);
 * - flags are `"0"`/`"1"` in most tables, `0`/`1` in `vendor`;
 * - times are Unix epoch seconds: `sessiontime` a number, manifest times strings of digits;
 * - `transactionid` is a string in most tables and a number in `inventory` and `vendor`, in the
 *   answers of writes and in `inventory_qa_check`;
 * - a table is an array of rows, or an object keyed by row number (recorded for `inventory`;
 *   the emulator keys the tables it is told to, see `Emulator.configure`).
 *
 * Where the recordings show both forms for one column, the emulator keeps to one of them.
 *
 * @since 0.1.0
 */

/**
 * A JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type Json = string | number | boolean | null | ReadonlyArray<Json> | { readonly [key: string]: Json }

/**
 * A JSON object: an answer, a row.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: Json }

/**
 * The API version every request carries.
 *
 * @since 0.1.0
 * @category constants
 */
export const API_VERSION = "4.0"

/**
 * Epoch seconds of epoch milliseconds.
 *
 * @since 0.1.0
 * @category time
 */
export const seconds = (ms: number): number => Math.floor(ms / 1000)

/**
 * A number as a decimal string (`"12.5"`, `"300"`), never in exponent notation.
 *
 * @since 0.1.0
 * @category formats
 */
export const decimal = (n: number): string => {
  const text = String(n)
  if (!/e/i.test(text)) return text
  return n.toFixed(20).replace(/\.?0+$/, "")
}

/**
 * Money as a string with (at least) two decimals (`"8.00"`, `"14.29"`).
 *
 * @since 0.1.0
 * @category formats
 */
export const money = (n: number): string => (Math.round(n * 100) / 100 === n ? n.toFixed(2) : decimal(n))

/**
 * A whole-number code as a string (`"28"`).
 *
 * @since 0.1.0
 * @category formats
 */
export const code = (n: number): string => String(n)

/**
 * A flag as BioTrack writes it in most tables: `"0"` or `"1"`.
 *
 * @since 0.1.0
 * @category formats
 */
export const flag = (b: boolean): "0" | "1" => (b ? "1" : "0")

/**
 * A flag as `vendor` writes it: `0` or `1`.
 *
 * @since 0.1.0
 * @category formats
 */
export const bit = (b: boolean): 0 | 1 => (b ? 1 : 0)

/**
 * Epoch seconds as a string of digits (manifest times), or null.
 *
 * @since 0.1.0
 * @category formats
 */
export const epochText = (epoch: number | null): string | null => (epoch === null ? null : String(epoch))

/**
 * A list of barcodes, or null when there is none (BioTrack answers null for an empty list).
 *
 * @since 0.1.0
 * @category formats
 */
export const barcodes = (list: ReadonlyArray<string>): ReadonlyArray<string> | null => list.length === 0 ? null : list

/**
 * A table as an object keyed by row number (`{"0": row, "1": row}`), the other way BioTrack
 * answers a table besides an array (recorded for `sync_inventory`).
 *
 * @since 0.1.0
 * @category formats
 */
export const keyed = <A extends Json>(rows: ReadonlyArray<A>): { readonly [row: string]: A } =>
  Object.fromEntries(rows.map((row, i) => [String(i), row]))
