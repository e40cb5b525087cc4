// `node --import <this file>`: records every module the process loads into
// `TRACEBRIDGE_RECORD_LOADS` (see RecordLoads.mjs).
import { register } from "node:module"

register(new URL("./RecordLoads.mjs", import.meta.url), { data: { file: process.env.TRACEBRIDGE_RECORD_LOADS } })
