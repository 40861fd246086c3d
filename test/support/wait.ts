/**
 * The one polling helper of the tests: for state that changes on another process's or a server's
 * schedule (a file appears, a request arrives, a line is printed), where no event can be awaited.
 * It waits for something to happen, never for nothing to happen: a test that must show that
 * something did not happen asserts on a counter after a known point (an exit, a stop, a
 * reset, a later event) instead.
 */

/**
 * Resolves with what `probe` gives once it gives a value (not undefined, not false), looking again
 * every `intervalMs`; rejects after `timeoutMs` naming `what`. A probe that throws (a child exited
 * before it was ready) ends the wait with its error.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what = 'condition',
  intervalMs = 10,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
