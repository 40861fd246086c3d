/**
 * The smoke set: the test files that show, in about half a minute, that ordercli works on a given
 * Node and machine — the built binary end to end (start-up, a command of each group, import,
 * listen, the sandbox, the demo) and the parts that lean on the platform rather than on our own
 * logic: undici's HTTP client, Node's HTTP parser, readline's keypresses, file locks read from
 * /proc, signals. The logic itself (validation, rendering, the ledger's rules) behaves alike on
 * every Node and is proven by the whole suite under Node 20.
 *
 * `ORDERCLI_TEST_SET=smoke npx vitest run` runs it (vitest.config.ts reads the variable). It is
 * what `scripts/test-other-nodes.mjs` runs under Node 22 and 24, and what the fresh clone of
 * `test/release/fresh-clone.test.ts` runs as its `npm test`, whose summary then says so in a
 * SKIPPED line.
 */
export const SMOKE_TESTS = [
  // Start-up of the binary: --version, --help, a request, exit codes of errors.
  'test/cli/main.bin.test.ts',
  // One --verbose session through the binary: login, listen, webhooks subscribe and available,
  // api, orders create and import, a notification received; no secret in any output.
  'test/release/verbose-session.test.ts',
  // undici: its modules where we load them from, retries, timeouts, resets, Ctrl-C in flight.
  'test/api/transport.test.ts',
  'test/api/client.test.ts',
  // orders: a claim in the ledger on disk before each request, standard input, the binary.
  'test/commands/orders/create.test.ts',
  // orders import: re-runs, faults, Ctrl-C, nothing beside the input, an old journal folded into the ledger.
  'test/commands/orders/import.test.ts',
  // refs: tables on a terminal (string widths, accents), tab-separated when piped, JSON.
  'test/commands/refs/packagings-list.lists.test.ts',
  // Prompts: readline turning the input into keypresses (Escape, Ctrl-C) on this Node.
  'test/commands/login/login.test.ts',
  // listen: Node's HTTP server and parser (statuses, 408, 431), then forwarding across a kill -9.
  'test/commands/listen/listen.test.ts',
  'test/webhooks/receiver.abuse.test.ts',
  'test/commands/listen/listen.forward.test.ts',
  // The sandbox command, and the demo on an embedded sandbox, as installed and through npx.
  'test/commands/sandbox/sandbox.test.ts',
  'test/commands/demo/demo.test.ts',
  // listen --tunnel: the tunnel under its guard (node -e, a pipe that closes when listen dies, signals passed on).
  'test/webhooks/tunnel.test.ts',
  // The file lock: its owner record from /proc, a FIFO or a device refused, a wait ended by Ctrl-C.
  'test/io/file-lock.test.ts',
  // SIGHUP, SIGQUIT and SIGTERM through the binary, also while it loads.
  'test/release/signals.test.ts',
];
