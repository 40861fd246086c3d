/**
 * Fault injection, so that client retries and resumable imports are tested against real failures:
 * random rates (`--fail-rate`, …) and scripted rules that hit the next matching requests exactly.
 * Faults apply to `/api/v1/*` only.
 */
import { statusText } from '../core/http-status.js';
import { problem, type SandboxResponse } from './responses.js';

export interface FaultOptions {
  /** Added before every answer, in milliseconds. */
  latencyMs: number;
  /** Share of requests answered 500 without being processed (0..1). */
  failRate: number;
  /** Share of requests answered 429 with `Retry-After`, without being processed (0..1). */
  throttleRate: number;
  /** Share of requests whose connection is reset, before or after processing at random (0..1). */
  resetRate: number;
  /** `Retry-After` of throttled answers, in seconds. */
  retryAfterSeconds: number;
}

export const DEFAULT_FAULTS: FaultOptions = {
  latencyMs: 0,
  failRate: 0,
  throttleRate: 0,
  resetRate: 0,
  retryAfterSeconds: 1,
};

/**
 * - `reset-before-read`: the socket is destroyed before the body is read; nothing is processed.
 * - `reset-after` (alias `reset-after-response-computed`): the request is processed (the order
 *   IS created), then the socket is destroyed unanswered, so the client cannot know the outcome.
 * - `status`: answered with `status` (default 503) without being processed.
 * - `delay`: answered normally after `delayMs` more (to exercise client time-outs), or, given
 *   `until` (programmatic rules only), once that promise settles: a test holds answers until
 *   something has happened (requests of two clients in flight at once), never for a guessed time.
 */
export type FaultKind =
  | 'reset-before-read'
  | 'reset-after'
  | 'reset-after-response-computed'
  | 'status'
  | 'delay';

export interface FaultRule {
  /** Matches any method when absent; compared case-insensitively. */
  method?: string;
  /** Exact path without the query (`/api/v1/orders`), or a pattern; any API path when absent. */
  path?: string | RegExp;
  kind: FaultKind;
  status?: number;
  /** Seconds for `Retry-After`; 429 answers always carry one (default `retryAfterSeconds`). */
  retryAfter?: number;
  delayMs?: number;
  /** `delay` only: the answer waits for this promise instead of `delayMs`. */
  until?: PromiseLike<unknown>;
  /** How many matching requests the rule hits; default 1. */
  times?: number;
}

/** What happens to one request; `undefined` from `decide` means no fault. */
export type FaultDecision =
  | { kind: 'reset-before-read' }
  | { kind: 'reset-after' }
  | { kind: 'status'; status: number; retryAfter?: number }
  | { kind: 'delay'; delayMs: number; until?: PromiseLike<unknown> };

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
}

export class FaultPlan {
  private options: FaultOptions;
  private rules: ActiveRule[] = [];
  private readonly random: () => number;

  constructor(options: Partial<FaultOptions> = {}, random: () => number = Math.random) {
    this.options = checkFaultOptions({ ...DEFAULT_FAULTS, ...options });
    this.random = random;
  }

  get current(): Readonly<FaultOptions> {
    return this.options;
  }

  set(changes: Partial<FaultOptions>): void {
    this.options = checkFaultOptions({ ...this.options, ...definedOnly(changes) });
  }

  /** Adds rules after those still pending; each hits its next `times` matching requests. */
  script(rules: readonly FaultRule[]): void {
    for (const rule of rules) {
      const times = rule.times ?? 1;
      if (!Number.isInteger(times) || times < 1)
        throw new RangeError(`fault rule times must be a whole number >= 1`);
      this.rules.push({ rule, remaining: times });
    }
  }

  /** Back to the given options with no scripted rules. */
  reset(options: FaultOptions): void {
    this.options = checkFaultOptions({ ...options });
    this.rules = [];
  }

  /** Picks the fault for one API request: the first matching scripted rule, else the random rates. */
  decide(method: string, path: string): FaultDecision | undefined {
    const scripted = this.takeScripted(method, path);
    if (scripted) return decisionFor(scripted, this.options);
    const { resetRate, throttleRate, failRate, retryAfterSeconds } = this.options;
    if (resetRate > 0 && this.random() < resetRate) {
      return this.random() < 0.5 ? { kind: 'reset-before-read' } : { kind: 'reset-after' };
    }
    if (throttleRate > 0 && this.random() < throttleRate) {
      return { kind: 'status', status: 429, retryAfter: retryAfterSeconds };
    }
    if (failRate > 0 && this.random() < failRate) return { kind: 'status', status: 500 };
    return undefined;
  }

  private takeScripted(method: string, path: string): FaultRule | undefined {
    const index = this.rules.findIndex(({ rule }) => ruleMatches(rule, method, path));
    if (index === -1) return undefined;
    const active = this.rules[index]!;
    active.remaining--;
    if (active.remaining === 0) this.rules.splice(index, 1);
    return active.rule;
  }
}

function ruleMatches(rule: FaultRule, method: string, path: string): boolean {
  if (rule.method !== undefined && rule.method.toUpperCase() !== method) return false;
  if (rule.path === undefined) return true;
  return typeof rule.path === 'string' ? rule.path === path : rule.path.test(path);
}

function decisionFor(rule: FaultRule, options: FaultOptions): FaultDecision {
  switch (rule.kind) {
    case 'reset-before-read':
      return { kind: 'reset-before-read' };
    case 'reset-after':
    case 'reset-after-response-computed':
      return { kind: 'reset-after' };
    case 'delay':
      return rule.until === undefined
        ? { kind: 'delay', delayMs: rule.delayMs ?? 1000 }
        : { kind: 'delay', delayMs: 0, until: rule.until };
    case 'status': {
      const status = rule.status ?? 503;
      const retryAfter = rule.retryAfter ?? (status === 429 ? options.retryAfterSeconds : undefined);
      return retryAfter === undefined ? { kind: 'status', status } : { kind: 'status', status, retryAfter };
    }
  }
}

/** The answer to a `status` fault: a problem document saying it was injected, with `Retry-After`. */
export function faultResponse(decision: { status: number; retryAfter?: number }): SandboxResponse {
  const headers: Record<string, string> = {};
  if (decision.retryAfter !== undefined) headers['retry-after'] = String(decision.retryAfter);
  const title = statusText(decision.status) ?? 'Error';
  const detail =
    decision.status === 429
      ? `Too many requests: retry after ${decision.retryAfter ?? 1} s (fault injected by the sandbox).`
      : `The sandbox injected this ${decision.status} answer; the request was not processed.`;
  return problem(
    decision.status,
    decision.status === 429 ? 'rate-limited' : 'injected-fault',
    title,
    { detail },
    headers,
  );
}

/** Refuses rates outside 0..1 and negative delays, which would silently mean "always" or "never". */
export function checkFaultOptions(options: FaultOptions): FaultOptions {
  for (const key of ['failRate', 'throttleRate', 'resetRate'] as const) {
    const value = options[key];
    if (!(value >= 0 && value <= 1)) throw new RangeError(`${key} must be between 0 and 1, not ${value}`);
  }
  for (const key of ['latencyMs', 'retryAfterSeconds'] as const) {
    const value = options[key];
    if (!(Number.isFinite(value) && value >= 0))
      throw new RangeError(`${key} must be a number >= 0, not ${value}`);
  }
  return options;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
