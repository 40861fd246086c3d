/**
 * `listen --log` under concurrent load: every request answered 200 is in the log exactly once,
 * every line is one whole JSON object, and nothing refused is logged.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, tempDir, testEnv } from '../../support/cli.js';
import { post, READY, startListen } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

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
      // Every seventh carries header bytes outside ASCII (é goes out as UTF-8, C3 A9, which the
      // receiver reads as Latin-1, Ã©): recorded as read, in lines that stay whole.
      const extra: Record<string, string> = i % 7 === 3 ? { 'x-note': 'commande validée' } : {};
      return post(listen.url, body, {
        'content-type': 'application/json',
        'x-webhook-event': 'sales_order_validated',
        'x-webhook-key': key,
        ...extra,
      }).then((answer) => ({ i, status: answer.status }));
    });
    const answers = await Promise.all(requests);
    const result = await listen.stop();
    expect(result.code).toBe(130);

    const ok = answers.filter((a) => a.status === 200).map((a) => a.i);
    expect(ok).toHaveLength(450);
    expect(answers.filter((a) => a.status === 401)).toHaveLength(50);

    const text = readFileSync(log, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(450);
    const records = lines.map((line) => JSON.parse(line));
    const ids = records.map((record) => record.body.id as number);
    const note = Buffer.from('commande validée', 'utf8').toString('latin1');
    for (const record of records) {
      expect(record.headers['x-note']).toBe(record.body.id % 7 === 3 ? note : undefined);
    }
    expect(new Set(ids).size).toBe(450);
    expect([...ids].sort((a, b) => a - b)).toEqual([...ok].sort((a, b) => a - b));
    expect(text).not.toContain(KEY);
    expect(result.stderr).toContain('Stopped: 450 accepted (450 shown), 50 rejected.');
  });
});

describe('listen with a stdout nobody reads', () => {
  it('keeps answering: 400 events while its stdout pipe is full, all printed once it is read', async () => {
    const log = join(tempDir(), 'events.ndjson');
    const child = spawn(
      process.execPath,
      [BIN, 'listen', '--port', '0', '--key', KEY, '--log', log, '--json'],
      {
        env: testEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await waitFor(() => READY.exec(stderr)?.[1], 15_000, 'the ready line');
    // stdout stays paused: its pipe fills after some 64 KiB, a tenth of what the events print.
    const answers: number[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const sent = Array.from({ length: 20 }, (_, j) => {
        const i = batch * 20 + j;
        const body = JSON.stringify({
          id: i,
          code: `SO-2026-${String(i).padStart(6, '0')}`,
          note: 'x'.repeat(1500),
        });
        return post(url, body, {
          'content-type': 'application/json',
          'x-webhook-event': 'sales_order_validated',
          'x-webhook-key': KEY,
        }).then((answer) => answer.status);
      });
      answers.push(...(await Promise.all(sent)));
    }
    expect(answers).toEqual(Array(400).fill(200));
    expect(readFileSync(log, 'utf8').trimEnd().split('\n')).toHaveLength(400);

    // Now read it: every event is there, in the order of the log.
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const printed = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).body.id as number);
    const logged = readFileSync(log, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).body.id as number);
    expect(printed).toEqual(logged);
    expect(stderr).toContain('Stopped: 400 accepted (400 shown), 0 rejected.');
  }, 60_000);
});
