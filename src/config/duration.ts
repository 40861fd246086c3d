/**
 * The one reader of durations on the command line, in the environment and in profiles:
 * `500ms`, `30s`, `2m`, `1h`, `1.5s`. One rule for bare numbers, the same for every duration:
 * a duration takes a unit, and a bare number is refused with a hint to add one, except for the
 * settings whose bare unit the contract fixed before durations took units, where scripts rely on
 * it: milliseconds for the request timeout (--timeout, ORDERCLI_TIMEOUT, profile timeout) and
 * sandbox --latency and --validation-delay; seconds for listen --wait and ORDERCLI_LOCK_WAIT. Each
 * of those says its unit in --help. A duration added later has no bare unit.
 */
import { UsageError } from '../core/errors.js';

export type DurationUnit = 'ms' | 's';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?$/i;

export interface DurationRule {
  /** The option or variable named in the error (`--wait`, `ORDERCLI_TIMEOUT`). */
  name: string;
  /**
   * What a bare number means, for the settings whose unit the contract fixed (see above); absent,
   * a bare number is refused with a hint to add a unit.
   */
  bare?: DurationUnit;
  /** Smallest and largest accepted, in ms (default 0 and 24 h). */
  minMs?: number;
  maxMs?: number;
}

/** Milliseconds (whole) of a duration text, or a UsageError naming the option and the syntax. */
export function parseDuration(text: string, rule: DurationRule): number {
  const match = DURATION.exec(text.trim());
  const minMs = rule.minMs ?? 0;
  const maxMs = rule.maxMs ?? 86_400_000;
  const bare =
    rule.bare === undefined
      ? 'a unit is needed'
      : `a bare number is ${rule.bare === 'ms' ? 'milliseconds' : 'seconds'}`;
  const syntax = `a duration such as 500ms, 30s, 2m or 1h (${bare})`;
  if (!match) throw new UsageError(`${rule.name} must be ${syntax}, not ${JSON.stringify(text)}.`);
  const written = match[2] ?? rule.bare;
  if (written === undefined) {
    const number = match[1]!;
    const error = new UsageError(
      `${rule.name} needs a unit: ${JSON.stringify(text)} could be ${number}ms or ${number}s.`,
    );
    error.hint = `write it with its unit, such as ${number}s or ${number}ms (units: ms, s, m, h).`;
    throw error;
  }
  const unit = written.toLowerCase();
  const ms = Math.round(Number(match[1]) * UNIT_MS[unit]!);
  if (ms < minMs || ms > maxMs) {
    throw new UsageError(
      `${rule.name} must be from ${formatDuration(minMs)} to ${formatDuration(maxMs)}, not ${JSON.stringify(text)}.`,
    );
  }
  return ms;
}

/** A duration in the syntax parseDuration reads, in the largest unit that is exact: `90s`, `2m`, `250ms`. */
export function formatDuration(ms: number): string {
  for (const unit of ['h', 'm', 's'] as const) {
    const size = UNIT_MS[unit]!;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
