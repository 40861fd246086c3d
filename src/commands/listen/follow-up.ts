/**
 * `listen --fetch` and `--exec`: work done per accepted event after its 200, one event at a time
 * in arrival order, so that the output reads in order and a script never runs twice at once.
 * The backlog is bounded: past it, events are still accepted, logged and forwarded, but shown
 * without their follow-up (and a note says so), so a slow script cannot make memory grow.
 */
import { spawn } from 'node:child_process';
import type { ApiClient } from '../../api/client.js';
import { pathFor } from '../../api/client.js';
import { entityOf, idOf } from '../../webhooks/event-record.js';
import type { AcceptedEvent } from '../../webhooks/receiver.js';
import type { FollowUpResult } from './console.js';

export const MAX_BACKLOG = 1000;
const EXEC_OUTPUT_LIMIT = 64 * 1024;
export const EXEC_TIMEOUT_MS = 60_000;

export interface FollowUpOptions {
  api: ApiClient | undefined;
  exec: string | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

/** Fetches the event's entity with `GET /api/v1/<entity>/{id}`; failures are reported, not thrown. */
export async function fetchEntityOf(
  api: ApiClient,
  event: AcceptedEvent,
  signal: AbortSignal,
): Promise<NonNullable<FollowUpResult['fetched']>> {
  const entity = entityOf(event.event);
  const id = idOf(event.body);
  if (entity === undefined || id === undefined) {
    return {
      path: '?',
      error: `cannot tell which entity to fetch (${entity === undefined ? `event ${JSON.stringify(event.event)} names none` : 'the body has no id'})`,
    };
  }
  const path = pathFor('/api/v1/{entity}/{id}', { entity, id });
  try {
    const response = await api.get(path, { signal, acceptErrors: true });
    return { path, status: response.status, body: response.body };
  } catch (error) {
    return { path, error: (error as Error).message };
  }
}

/** Runs the `--exec` command with the body on stdin; never throws. */
export function runExec(
  command: string,
  event: AcceptedEvent,
  options: { cwd: string; env: NodeJS.ProcessEnv; signal: AbortSignal; timeoutMs?: number },
): Promise<NonNullable<FollowUpResult['exec']>> {
  const started = performance.now();
  return new Promise((resolve) => {
    let output = '';
    let settled = false;
    const done = (result: Omit<NonNullable<FollowUpResult['exec']>, 'command' | 'durationMs' | 'output'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve({ command, output, durationMs: Math.round(performance.now() - started), ...result });
    };
    const child = spawn(command, {
      shell: true,
      cwd: options.cwd,
      env: { ...options.env, ORDERCLI_WEBHOOK_EVENT: event.event ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      if (output.length < EXEC_OUTPUT_LIMIT)
        output += chunk.toString('utf8').slice(0, EXEC_OUTPUT_LIMIT - output.length);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    // A command that does not read its stdin closes it early; that is its business.
    child.stdin.on('error', () => undefined);
    child.stdin.end(eventBytes(event));
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs ?? EXEC_TIMEOUT_MS);
    const onAbort = () => child.kill('SIGTERM');
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => done({ exitCode: null, signal: null, error: error.message }));
    child.on('close', (exitCode, signal) => done({ exitCode, signal }));
  });
}

/** The body bytes given to `--exec`: exactly as received. */
function eventBytes(event: AcceptedEvent): Buffer {
  return event.raw;
}

/** Runs follow-ups one event at a time, in order. */
export class FollowUpChain {
  private tail: Promise<void> = Promise.resolve();
  private backlog = 0;

  constructor(private readonly options: FollowUpOptions) {}

  /**
   * Queues the follow-ups of an event; `show` receives the result (or nothing when the backlog
   * is full, with `skipped` set).
   */
  add(event: AcceptedEvent, show: (result: FollowUpResult, skipped: boolean) => void): Promise<void> {
    if (this.backlog >= MAX_BACKLOG || this.options.signal.aborted) {
      show({}, true);
      return Promise.resolve();
    }
    this.backlog++;
    const run = this.tail.then(async () => {
      const result: FollowUpResult = {};
      if (this.options.api)
        result.fetched = await fetchEntityOf(this.options.api, event, this.options.signal);
      if (this.options.exec) result.exec = await runExec(this.options.exec, event, this.options);
      this.backlog--;
      show(result, false);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every queued follow-up has run. */
  idle(): Promise<void> {
    return this.tail;
  }
}
