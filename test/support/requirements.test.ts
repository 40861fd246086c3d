// The rule for a test whose tool is missing: run, skip with a SKIPPED line, or (CI) fail. The
// whole path, through npm test's summary, is test/release/test-runner.test.ts's.
import { describe, expect, it } from 'vitest';
import { inCi, judgeNeed, type Need, probe } from './requirements.js';

const POSTGRES: Need = {
  what: 'the PostgreSQL ledger tests',
  missing: 'no PostgreSQL server binaries',
  how: 'apt-get install -y postgresql',
  ciRequired: true,
};

describe('judgeNeed', () => {
  it('runs what has its tool, in CI or not', () => {
    expect(judgeNeed('PostgreSQL', { ...POSTGRES, missing: undefined }, {})).toEqual({ run: true });
    expect(judgeNeed('PostgreSQL', { ...POSTGRES, missing: undefined }, { CI: 'true' })).toEqual({
      run: true,
    });
  });

  it('outside CI (CI unset or empty), skips with one SKIPPED line saying what, why and how', () => {
    const line =
      'SKIPPED: the PostgreSQL ledger tests: no PostgreSQL server binaries. To enable: apt-get install -y postgresql.';
    expect(judgeNeed('PostgreSQL', POSTGRES, {})).toEqual({ run: false, skipped: line });
    expect(judgeNeed('PostgreSQL', POSTGRES, { CI: '' })).toEqual({ run: false, skipped: line });
  });

  it('with CI set to anything, fails for a tool CI must have, naming it and how to install it', () => {
    for (const value of ['true', '1', 'yes']) {
      expect(judgeNeed('PostgreSQL', POSTGRES, { CI: value })).toEqual({
        run: false,
        failure: `the PostgreSQL ledger tests cannot run: no PostgreSQL server binaries. With CI set (CI=${value}) that fails the run instead of a skip; install PostgreSQL: apt-get install -y postgresql.`,
      });
    }
  });

  it('with CI set, still skips (saying so) for a tool CI need not have', () => {
    const mkfifo: Need = { what: 'a pipe', missing: 'no mkfifo', how: 'apt-get install -y coreutils' };
    expect(judgeNeed('mkfifo', mkfifo, { CI: 'true' })).toEqual({
      run: false,
      skipped: 'SKIPPED: a pipe: no mkfifo. To enable: apt-get install -y coreutils.',
    });
  });

  it('inCi: any non-empty CI', () => {
    expect(inCi({})).toBe(false);
    expect(inCi({ CI: '' })).toBe(false);
    expect(inCi({ CI: 'false' })).toBe(true);
  });
});

describe('probe', () => {
  it('says nothing of a command that works, and why one does not', () => {
    expect(probe(process.execPath, '-e', '0')).toBeUndefined();
    expect(probe('ordercli-no-such-tool', '--version')).toBe(
      'ordercli-no-such-tool is not installed (not on PATH)',
    );
    expect(probe(process.execPath, '-e', 'console.error("not permitted"); process.exit(3)')).toBe(
      `${process.execPath} -e console.error("not permitted"); process.exit(3) fails here (exit 3: not permitted)`,
    );
  });
});
