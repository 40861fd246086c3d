// The progress renderer and the final summary, with a fake clock (the CLI tests check them live).
import { describe, expect, it } from 'vitest';
import { ImportProgress, renderSummary } from '../../../src/import/report/progress.js';
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
