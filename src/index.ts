/** Library entry: the program, the sandbox and a sample notification, for tests, benchmarks and embedding. */
export { main } from './cli/main.js';
export {
  LEDGER_SHARDS,
  LocalLedger,
  ledgerFolder,
  shardFileName,
  shardOf,
} from './ledger/local.js';
export { applyRecord } from './ledger/record.js';
export type { Sandbox, SandboxOptions } from './sandbox/server.js';
export { startSandbox } from './sandbox/server.js';
export { sampleSalesOrderValidated } from './webhooks/sample-events.js';
