/**
 * undici parses HTTP with a WebAssembly module. Under Node 20, V8 also compiles it with its
 * optimising compiler on background threads, and the process cannot exit before that work ends,
 * which every short command would feel; the baseline compiler (Liftoff) is plenty for parsing
 * answers. V8 reads the flag when it compiles the module, so it is set here, imported by
 * transport.ts before undici. There is no other way: NODE_OPTIONS refuses this flag, and
 * process.exit() waits for those threads too. The V8 of Node 22 and later does not hold the exit,
 * so the flag is left alone there, and this file goes when Node 20 does (figures in
 * docs/ENGINEERING.md).
 */
import { setFlagsFromString } from 'node:v8';

if (process.versions.node.startsWith('20.')) setFlagsFromString('--liftoff-only');
