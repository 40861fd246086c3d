/**
 * A process that opens an order ledger and claims keys when told: the other process of the ledger
 * contract's races, takeovers and liveness tests (test/support/ledger-backends.ts bundles and
 * spawns it). It opens the ledger the way a command does (`openLedger`, by its `--ledger` value),
 * so that it works for every backend.
 *
 * argv: `<ledger setting> <base URL> <source as JSON>`. It prints one JSON line when open
 * (`{"open": owner}`), then answers each command read from stdin (one JSON line each):
 * - `{"claim": [keys], "concurrency": n, "outcome": "created" | "none", "line": n, "startAt": ms}` → `{"claimed":
 *   {won, refused, startedAt, firstWonAt}}` (times from Date.now(): one clock for every process);
 * - `{"close": true}` → `{"closed": true}` (the store is closed; the process stays until stdin ends).
 */
import { createInterface } from 'node:readline';
import { openLedger } from '../../src/ledger/open.js';
import type { RecordSource } from '../../src/ledger/record.js';

interface ClaimCommand {
  claim: string[];
  /** Start at this time (Date.now()), so that the processes of a race start together. */
  startAt?: number;
  concurrency?: number;
  outcome?: 'created' | 'none';
  line?: number;
}

const [ledger, baseUrl, source] = process.argv.slice(2);
const store = await openLedger(
  { ledger, configFolder: undefined, cwd: process.cwd() },
  { baseUrl: baseUrl!, kind: 'orders', source: JSON.parse(source!) as RecordSource },
);
const say = (message: unknown): void => {
  process.stdout.write(`${JSON.stringify(message)}\n`);
};
say({ open: store.owner });

async function claimAll(command: ClaimCommand) {
  const won: string[] = [];
  const refused: Record<string, number> = {};
  let firstWonAt: number | undefined;
  let next = 0;
  const wait = (command.startAt ?? 0) - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: command.concurrency ?? 8 }, async () => {
      while (next < command.claim.length) {
        const externalId = command.claim[next++]!;
        const request = { externalId, bodyHash: 'h', ...(command.line ? { line: command.line } : {}) };
        const result = await store.claim(request);
        if (result.claimed) {
          firstWonAt ??= Date.now();
          won.push(externalId);
          if (command.outcome === 'created') store.created(result.claim, { httpStatus: 201 });
        } else {
          refused[result.refusal.reason] = (refused[result.refusal.reason] ?? 0) + 1;
        }
      }
    }),
  );
  await store.sync();
  return { won, refused, startedAt, firstWonAt };
}

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as ClaimCommand | { close: true };
  if ('close' in command) {
    await store.close();
    say({ closed: true });
  } else {
    say({ claimed: await claimAll(command) });
  }
}
await store.close();
