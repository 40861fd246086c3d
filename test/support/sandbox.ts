/**
 * A sandbox for the tests of one file: started before them on a free port of 127.0.0.1, reset
 * before each (unless `resetEach: false`), closed after them.
 *
 *   const sandbox = useSandbox({ validationDelayMs: 10 });
 *   it('…', () => runCli(['--base-url', sandbox.url, …]));
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.js';

export function useSandbox(options: SandboxOptions = {}, { resetEach = true } = {}): Sandbox {
  let current: Sandbox | undefined;
  beforeAll(async () => {
    current = await startSandbox({ port: 0, quiet: true, ...options });
  });
  afterAll(async () => {
    await current?.close();
  });
  if (resetEach) beforeEach(() => current!.reset());
  // The tests get the sandbox once it runs; until then (at import time) there is none to give.
  return new Proxy({} as Sandbox, {
    get(_target, key) {
      if (!current) throw new Error('useSandbox: the sandbox starts in beforeAll; use it inside tests');
      const value = Reflect.get(current, key, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}
