/**
 * undici parses HTTP with a WebAssembly module, and V8's background optimisation of it outlives a
 * short command by ~150 ms at exit (measured by bench/startup). The baseline compiler is plenty
 * for parsing answers. Imported by transport.ts before undici, so it runs first.
 */
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--liftoff-only');
