/** Library entry: the program and the sandbox, for tests, benchmarks and embedding. */
export { main } from './cli/main.js';
export type { Sandbox, SandboxOptions } from './sandbox/server.js';
export { startSandbox } from './sandbox/server.js';
