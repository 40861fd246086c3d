/**
 * The pieces `listen` builds each line from: the headers' JSON (remembered between requests) and
 * the event log, which encodes lines given as parts into one buffer per turn of the event loop.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/webhooks/event-log.js';
import { HeaderRecorder, recordedHeaders } from '../../src/webhooks/event-record.js';

describe('HeaderRecorder', () => {
  const base = [
    'Host',
    '127.0.0.1:8787',
    'Content-Type',
    'application/json',
    'X-WEBHOOK-EVENT',
    'sales_order_validated',
    'X-Webhook-Key',
    'whk_secret_value_0123456789',
    'Content-Length',
    '120',
  ];

  it('writes what JSON.stringify(recordedHeaders()) writes, request after request', () => {
    const recorder = new HeaderRecorder();
    const requests = [
      base,
      base.map((v, i) => (i === 9 ? '97' : v)), // another content-length
      base.map((v, i) => (i === 5 ? 'order_"quoted"\\' : v)), // a value that needs escaping
      [...base, 'User-Agent', 'ordercli/1.0'], // one more header
      base.map((v, i) => (i === 0 ? 'HOST' : v)), // a name cased differently
      [...base, 'x-custom', 'a', 'X-Custom', 'b'], // a repeated name: joined
      [...base, 'x-webhook-key', 'second'], // the key twice: still redacted once
      ['Content-Type', 'application/json'], // no event header
      base,
    ];
    for (const raw of requests) {
      const json = recorder.record(raw);
      const expected = recordedHeaders(raw);
      expect(JSON.parse(json)).toEqual(expected);
      expect(recorder.event).toBe(expected['x-webhook-event'] ?? null);
      expect(json).not.toContain('whk_secret_value');
      expect(json).not.toContain('second');
      expect(recorder.ascii).toBe(!/[^\x00-\x7f]/.test(json));
    }
  });

  it('says whether the headers are ASCII, as values change and change back', () => {
    const recorder = new HeaderRecorder();
    // Node decodes header bytes as Latin-1: a byte 0xE9 arrives as é.
    const latin = base.map((v, i) => (i === 5 ? 'commande_validée' : v));
    expect(JSON.parse(recorder.record(base))).toEqual(recordedHeaders(base));
    expect(recorder.ascii).toBe(true);
    expect(JSON.parse(recorder.record(latin))['x-webhook-event']).toBe('commande_validée');
    expect(recorder.ascii).toBe(false);
    recorder.record(latin);
    expect(recorder.ascii).toBe(false);
    recorder.record(base);
    expect(recorder.ascii).toBe(true);
  });
});

describe('EventLog', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('writes lines given as text and bytes whole, in order, and calls back after the write', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ordercli-event-log-'));
    const path = join(dir, 'events.ndjson');
    const log = await EventLog.open(path);
    const written: string[] = [];
    const done: Promise<void>[] = [];
    // Enough, and long enough (non-ASCII, larger than the first buffer), to make the batch grow.
    for (let n = 0; n < 300; n++) {
      const body = Buffer.from(JSON.stringify({ n, note: 'é€😀'.repeat(n * 20) }), 'utf8');
      // 90 kB of UTF-8 first; then odd lines are ASCII (copied), even ones not (encoded).
      const note = n === 0 ? '€'.repeat(30_000) : n % 2 === 1 ? 'ascii'.repeat(n) : 'ü€'.repeat(n * 20);
      const head = `{"n":${n},"note":"${note}","body":`;
      written.push(`${head}${body.toString('utf8')}}`);
      done.push(
        new Promise<void>((resolve, reject) => {
          log.append(
            { text: head, ascii: n % 2 === 1 && !/[^\x00-\x7f]/.test(head), bytes: body, end: '}\n' },
            (error) => {
              if (error) reject(error);
              else resolve();
            },
          );
        }),
      );
    }
    // Nothing is written before the turn ends; all of it once the callbacks have run.
    expect(readFileSync(path, 'utf8')).toBe('');
    await Promise.all(done);
    expect(await readFile(path, 'utf8')).toBe(`${written.join('\n')}\n`);
    // A line larger than the buffer kept between turns (4 MiB), then a small one: both whole.
    const big = Buffer.alloc(5 * 1024 * 1024, 0x61);
    await new Promise<void>((resolve, reject) =>
      log.append({ text: '{"big":"', ascii: true, bytes: big, end: '"}\n' }, (e) =>
        e ? reject(e) : resolve(),
      ),
    );
    await new Promise<void>((resolve, reject) =>
      log.append({ text: '{"small":true}', end: '\n' }, (e) => (e ? reject(e) : resolve())),
    );
    const after = readFileSync(path, 'utf8')
      .slice(`${written.join('\n')}\n`.length)
      .split('\n');
    expect(after[0]).toBe(`{"big":"${big.toString('latin1')}"}`);
    expect(after.slice(1)).toEqual(['{"small":true}', '']);
    await log.close();
    await new Promise<void>((resolve) =>
      log.append({ text: 'late', end: '\n' }, (error) => {
        expect(error?.message).toMatch(/closed/);
        resolve();
      }),
    );
  });
});
