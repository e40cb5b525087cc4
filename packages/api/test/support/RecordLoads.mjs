// A module-loading hook (Node's `module.register`) that appends the URL of every module the process
// loads, one a line, to the file named in `data.file`. Used by ContractImport.test.ts.
import { appendFileSync } from "node:fs"

let file

export const initialize = (data) => {
  file = data.file
}

export const load = async (url, context, nextLoad) => {
  appendFileSync(file, `${url}\n`)
  return nextLoad(url, context)
}
