// The progress renderer and the final summary, with a fake clock (the CLI tests check them live).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ImportProgress, ReadingProgress, renderSummary } from '../../../src/import/report/progress.js';
import { emptyCounts } from '../../../src/import/report/report.js';
import { createTestIO } from '../../../src/io/memory.js';

describe('ImportProgress', () => {
  it('prints a summary line per tick when stderr is not a terminal, with rate and time left', () => {
    const io = createTestIO();
    const counts = emptyCounts(10_000);
    let now = 0;
    const progress = new ImportProgress(io, counts, { tty: false, now: () => now });
    progress.start();
    counts.created = 1_990;
    counts.failed = 10;
    now = 5_000;
    progress.tick();
    progress.stop();
    expect(io.stderrText()).toBe(
      'import: 2,000/10,000 orders (20%) · created 1,990, skipped 0, failed 10, unknown 0, invalid 0 · 400/s, 20s left\n',
    );
  });

  it('measures the rate over the last seconds, so the ETA follows a slow-down', () => {
    const io = createTestIO();
    const counts = emptyCounts(10_000);
    let now = 0;
    const progress = new ImportProgress(io, counts, { tty: false, now: () => now });
    progress.start();
    for (let second = 1; second <= 10; second++) {
      counts.created += second <= 5 ? 400 : 100;
      now = second * 1000;
      progress.tick();
    }
    progress.stop();
    expect(Math.round(progress.rate())).toBe(100);
  });

  it('draws a bar that fits the terminal, and clears it before the summary', () => {
    const io = createTestIO({ tty: true, columns: 80 });
    const counts = emptyCounts(200);
    let now = 0;
    const progress = new ImportProgress(io, counts, { now: () => now });
    progress.start();
    counts.created = 100;
    counts.unknown = 2;
    now = 1_000;
    progress.tick();
    const bar = progress.bar(80);
    expect(bar.length).toBeLessThan(80);
    expect(bar).toMatch(/^\[█+░+\] 102\/200 {2}51% · 102\/s · ETA 1s · 2 unknown$/);
    progress.stop();
    expect(io.stderrText().endsWith('\r\x1b[2K')).toBe(true);
    expect(io.stderrText()).toContain(`\r\x1b[2K${bar}`);
  });
});

describe('ImportProgress after a stop', () => {
  it('never counts the orders not sent, and says it is stopping once interrupted', () => {
    const io = createTestIO();
    const counts = emptyCounts(1_000);
    const interrupt = new AbortController();
    let now = 0;
    const progress = new ImportProgress(io, counts, { tty: false, now: () => now, signal: interrupt.signal });
    progress.start();
    counts.created = 100;
    interrupt.abort();
    counts.notSent = 900;
    now = 1_000;
    progress.tick();
    progress.stop();
    expect(io.stderrText()).toBe(
      'import: 100/1,000 orders (10%) · created 100, skipped 0, failed 0, unknown 0, invalid 0 · 100/s, 9s left · stopping (Ctrl-C)\n',
    );
  });
});

describe('ReadingProgress', () => {
  it('prints the records read so far and their rate when stderr is not a terminal', () => {
    const io = createTestIO();
    const counts = { read: 0, invalid: 0 };
    let now = 0;
    const progress = new ReadingProgress(io, counts, {
      tty: false,
      now: () => now,
      noun: 'contact references',
    });
    progress.start();
    counts.read = 120_000;
    counts.invalid = 3;
    now = 2_000;
    progress.tick();
    progress.stop();
    expect(io.stderrText()).toBe(
      'import: reading and validating: 120,000 contact references so far, 3 invalid · 60,000/s\n',
    );
  });

  it('on a terminal draws nothing before its first tick, then one line in place, erased at the end', () => {
    const io = createTestIO({ tty: true, columns: 60 });
    const counts = { read: 0, invalid: 0 };
    let now = 0;
    const progress = new ReadingProgress(io, counts, { now: () => now });
    progress.start();
    expect(io.stderrText()).toBe('');
    counts.read = 45_000;
    now = 1_000;
    progress.tick();
    expect(io.stderrText()).toBe('\r\x1b[2KReading and validating: 45,000 orders · 45,000/s');
    counts.read = 90_000;
    counts.invalid = 12;
    now = 2_000;
    progress.tick();
    // Fitted to the width: one column short, so that the cursor never wraps to a new line.
    const line = progress.bar(60);
    expect(line).toBe('Reading and validating: 90,000 orders · 45,000/s · 12 inval');
    progress.stop();
    expect(io.stderrText().endsWith(`\r\x1b[2K${line}\r\x1b[2K`)).toBe(true);
  });

  it('a stop before the first tick leaves the terminal untouched', () => {
    const io = createTestIO({ tty: true, columns: 80 });
    const progress = new ReadingProgress(io, { read: 10, invalid: 0 });
    progress.start();
    progress.stop();
    expect(io.stderrText()).toBe('');
  });
});

describe('progress lines across phases', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the first sending line comes one period after the last reading line, not after sending starts', () => {
    vi.useFakeTimers();
    const io = createTestIO();
    const options = { tty: false, lineIntervalMs: 5_000, now: () => Date.now() };
    const reading = new ReadingProgress(io, { read: 0, invalid: 0 }, options);
    reading.start();
    vi.advanceTimersByTime(8_000);
    reading.stop();
    expect(io.stderrText().split('\n').filter(Boolean)).toHaveLength(1);
    const sending = new ImportProgress(io, emptyCounts(10), { ...options, lastLineAt: reading.lastLineAt });
    sending.start();
    vi.advanceTimersByTime(1_999);
    expect(io.stderrText()).not.toContain('import: 0/10');
    vi.advanceTimersByTime(1);
    expect(io.stderrText()).toContain('import: 0/10 orders');
    vi.advanceTimersByTime(5_000);
    sending.stop();
    expect(io.stderrText().split('\n').filter(Boolean)).toHaveLength(3);
  });
});

describe('renderSummary', () => {
  it('lists the counts, what was sent and where the files are', () => {
    const counts = {
      ...emptyCounts(1_254),
      created: 1_200,
      skipped: 30,
      failed: 12,
      notSent: 4,
      unknown: 3,
      invalid: 5,
    };
    const text = renderSummary({
      counts,
      durationMs: 3_456,
      input: 'orders.csv',
      baseUrl: 'http://127.0.0.1:4780',
      journal: 'exports/orders.csv',
      report: 'report.csv',
      sent: 1_211,
      sentPerSecond: 392.4,
    });
    expect(text).toBe(
      [
        'Import of orders.csv → http://127.0.0.1:4780: finished in 3.5 s, 1,211 orders sent (392/s)',
        '  created  1,200',
        '  skipped     30   already created, or being sent by another ordercli',
        '  failed      12   refused by the service: fix, then run again',
        '  unknown      3   may have been created: see below',
        '  invalid      5',
        '  not sent     4   the import stopped first: run it again to send them',
        '  total    1,254',
        '  history  ordercli orders journal exports/orders.csv',
        '  report   report.csv',
        '',
      ].join('\n'),
    );
  });

  it('says why a run stopped, and when nothing was sent', () => {
    const text = renderSummary({
      counts: emptyCounts(3),
      durationMs: 100,
      input: 'stdin',
      stopped: 'interrupted',
      sent: 0,
      sentPerSecond: 0,
    });
    expect(text.split('\n')[0]).toBe('Import of stdin: stopped (interrupted) after 0.1 s, nothing sent');
  });
});
