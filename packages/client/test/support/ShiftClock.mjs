// Preloaded into a test server (`node --import`): SIGUSR2 moves the process's clock two hours on,
// so that an access token issued before it has expired when the next request reads the time.
const realNow = Date.now
let offset = 0
Date.now = () => realNow() + offset
process.on("SIGUSR2", () => {
  offset += 2 * 3600 * 1000
})
