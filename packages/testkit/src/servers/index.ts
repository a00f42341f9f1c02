export { type RunningServer, startPostgres } from "./postgres.js";
export { freePort, postgresBinDir, runAs, startProcess, stopProcess, waitFor, which } from "./process.js";
