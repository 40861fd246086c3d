/**
 * Stand-ins named `cloudflared` and `ngrok`, put on PATH by the tests of `listen --tunnel`: they
 * take the real programs' arguments and answer as the real ones do (see each .mjs), with a
 * loopback proxy as their "public" side. Nothing reaches the internet.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../cli.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** A folder holding executable `cloudflared` and `ngrok` stand-ins (only those asked for). */
export function standInPath(programs: ('cloudflared' | 'ngrok')[] = ['cloudflared', 'ngrok']): string {
  const dir = tempDir('ordercli-tunnel-bin-');
  for (const program of programs) {
    const file = join(dir, program);
    writeFileSync(file, `#!/bin/sh\nexec "${process.execPath}" "${join(HERE, `${program}.mjs`)}" "$@"\n`);
    chmodSync(file, 0o755);
  }
  return dir;
}

/**
 * A folder holding a `cloudflared` that is a shell wrapper, as some installs are: it starts a
 * long-running child (its process id written to $STANDIN_CHILD_PIDFILE), waits for it, and never
 * gives a public address.
 */
export function wrapperStandInPath(): string {
  const dir = tempDir('ordercli-tunnel-bin-');
  const file = join(dir, 'cloudflared');
  writeFileSync(file, '#!/bin/sh\nsleep 1000 &\necho $! > "$STANDIN_CHILD_PIDFILE"\nwait\n');
  chmodSync(file, 0o755);
  return dir;
}
