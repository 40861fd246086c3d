/**
 * A refused key tells the caller only `401` and the header at fault: nothing about the expected
 * key's length, fingerprint, case or quoting (an oracle for anyone who can reach the port). The
 * diagnosis goes to the operator's console. Real HTTP (fetch) against the built binary's listen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBin, spawnListen } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_oracle_test_0123456789ABCDEF';
const TOKEN = 'api-token-for-oracle-tests';

let listen: RunningBin;
beforeAll(async () => {
  listen = await spawnListen(['--port', '0', '--key', KEY], { ORDERCLI_TOKEN: TOKEN });
});
afterAll(async () => {
  listen.child.kill('SIGINT');
  await listen.exited;
});

async function send(key: string | undefined): Promise<{ status: number; text: string; headers: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-webhook-event': 'x' };
  if (key !== undefined) headers['x-webhook-key'] = key;
  const answer = await fetch(listen.url, { method: 'POST', headers, body: '{}' });
  return { status: answer.status, text: await answer.text(), headers: JSON.stringify([...answer.headers]) };
}

describe('listen: what a refused caller learns', () => {
  const cases: [string, string | undefined, string, RegExp][] = [
    ['no key', undefined, 'missing', /X-WEBHOOK-KEY header missing/],
    [
      'another key',
      'whk_guess',
      'wrong',
      /received 9 characters, sha256:[0-9a-f]{8}; expected 32 characters/,
    ],
    ['the key in lower case', KEY.toLowerCase(), 'wrong', /differs from the key only in letter case/],
    ['the key in quotes', `"${KEY}"`, 'wrong', /wrapped in quotes/],
    ['the API token', TOKEN, 'wrong', /holds the API token/],
  ];
  for (const [name, key, fault, diagnosis] of cases) {
    it(`${name}: the answer says 401 and the header ${fault}; the console says why`, async () => {
      const answer = await send(key);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toEqual({ status: 401, error: `X-WEBHOOK-KEY header ${fault}` });
      expect(answer.text + answer.headers).not.toMatch(/sha256|characters|case|quote|token/i);
      await waitFor(() =>
        listen
          .stderr()
          .split('\n')
          .find((l) => l.includes('rejected 401') && diagnosis.test(l)),
      );
    });
  }

  it('the key itself is accepted, and never printed', async () => {
    expect((await send(KEY)).status).toBe(200);
    expect(listen.stdout() + listen.stderr()).not.toContain(KEY);
  });
});
