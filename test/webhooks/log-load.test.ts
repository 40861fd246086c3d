/**
 * `listen --log` under concurrent load: every request answered 200 is in the log exactly once,
 * every line is one whole JSON object, and nothing refused is logged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';
import { post, startListen } from './support.js';

const KEY = 'whk_load_test_key_0123456789';

describe('listen --log under load', () => {
  it('500 concurrent POSTs: each 200 logged exactly once, each line whole JSON', async () => {
    const log = join(tempDir(), 'events.ndjson');
    const listen = await startListen(['--key', KEY, '--log', log]);
    const requests = Array.from({ length: 500 }, (_, i) => {
      // Every tenth request has a wrong key; bodies vary in size so that writes interleave.
      const key = i % 10 === 9 ? 'whk_wrong_key' : KEY;
      const body = JSON.stringify({
        id: i,
        code: `SO-2026-${String(i).padStart(6, '0')}`,
        note: 'x'.repeat((i * 37) % 3000),
      });
      return post(listen.url, body, {
        'content-type': 'application/json',
        'x-webhook-event': 'sales_order_validated',
        'x-webhook-key': key,
      }).then((answer) => ({ i, status: answer.status }));
    });
    const answers = await Promise.all(requests);
    const result = await listen.stop();
    expect(result.code).toBe(0);

    const ok = answers.filter((a) => a.status === 200).map((a) => a.i);
    expect(ok).toHaveLength(450);
    expect(answers.filter((a) => a.status === 401)).toHaveLength(50);

    const text = readFileSync(log, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(450);
    const ids = lines.map((line) => JSON.parse(line).body.id as number);
    expect(new Set(ids).size).toBe(450);
    expect([...ids].sort((a, b) => a - b)).toEqual([...ok].sort((a, b) => a - b));
    expect(text).not.toContain(KEY);
    expect(result.stderr).toContain('Stopped: 450 accepted (450 shown), 50 rejected.');
  });
});
