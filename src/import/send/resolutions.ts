/**
 * The steps of `orders resolve`: what the user says (`--created`, `--not-created`), what a
 * `listen --log` file says (`--from-events`), and the plan of what changes in the journal. The
 * plan is made in full before anything is written, so a refused id leaves the journal untouched.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { UsageError } from '../../core/errors.js';
import type { LedgerEntry as JournalState, Resolution } from '../../ledger/record.js';
import { SALES_ORDER_VALIDATED } from '../../schemas/webhook.js';
import { parseEventLine } from '../../webhooks/event-record.js';
import { WEBHOOK_EVENT_HEADER } from '../../webhooks/verify.js';

/** One order the user (or a notification) vouches for. */
export interface ResolutionRequest {
  externalId: string;
  resolution: Resolution;
  id?: string | number;
  code?: string;
  /** What the word rests on, kept in the journal. */
  evidence: string;
  /** From a notification: only unknown orders are resolved by it; others are left as they are. */
  fromEvents?: boolean;
}

/** `--created EXT-1=10042 --not-created EXT-2`: the requests, each externalId once. */
export function requestsFromFlags(
  created: readonly string[],
  notCreated: readonly string[],
): ResolutionRequest[] {
  const requests: ResolutionRequest[] = [];
  for (const value of created) {
    const at = value.indexOf('=');
    const externalId = (at === -1 ? value : value.slice(0, at)).trim();
    const idText = at === -1 ? '' : value.slice(at + 1).trim();
    if (externalId === '') {
      throw new UsageError(
        `--created needs an externalId (--created <externalId>[=<id>]), not ${JSON.stringify(value)}.`,
      );
    }
    const request: ResolutionRequest = {
      externalId,
      resolution: 'created',
      evidence: 'checked at the service by the user',
    };
    if (at !== -1) {
      if (idText === '')
        throw new UsageError(
          `--created ${value}: the id after = is empty; give the service's id or leave out =.`,
        );
      request.id = /^[1-9]\d{0,15}$/.test(idText) ? Number(idText) : idText;
    }
    requests.push(request);
  }
  for (const value of notCreated) {
    const externalId = value.trim();
    if (externalId === '') throw new UsageError('--not-created needs an externalId.');
    requests.push({ externalId, resolution: 'not-created', evidence: 'checked at the service by the user' });
  }
  const seen = new Map<string, Resolution>();
  for (const request of requests) {
    const earlier = seen.get(request.externalId);
    if (earlier !== undefined) {
      throw new UsageError(
        earlier === request.resolution
          ? `${request.externalId} is given twice; give each externalId once.`
          : `${request.externalId} is given both as --created and as --not-created; check it at the service and give one.`,
      );
    }
    seen.set(request.externalId, request.resolution);
  }
  return requests;
}

/** What a `listen --log` file says about orders the service validated. */
export interface ValidatedOrders {
  /** externalId -> the first `sales_order_validated` notification naming it. */
  byExternalId: Map<string, { id?: string | number; code?: string; receivedAt: string }>;
  /** Lines read, notifications of `sales_order_validated`, lines that were not a recorded event. */
  lines: number;
  validated: number;
  skipped: number;
}

/**
 * Reads a `listen --log` file leniently: other events, bodies without an externalId, and lines
 * that are not a recorded event (a torn last line, a foreign line) are counted and passed over.
 * A body may be the order itself, an array of orders, or an order one level down (`{order: …}`).
 */
export async function readValidatedOrders(path: string, shown: string): Promise<ValidatedOrders> {
  const result: ValidatedOrders = { byExternalId: new Map(), lines: 0, validated: 0, skipped: 0 };
  let stream: ReturnType<typeof createReadStream>;
  try {
    stream = createReadStream(path, 'utf8');
    await new Promise<void>((resolvePromise, reject) => {
      stream.once('open', () => resolvePromise());
      stream.once('error', reject);
    });
  } catch (error) {
    throw new UsageError(
      `Cannot read the listen log ${shown} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): give the file that ordercli listen --log wrote.`,
    );
  }
  for await (const line of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.trim() === '') continue;
    result.lines++;
    const record = parseEventLine(line);
    if (record === undefined) {
      result.skipped++;
      continue;
    }
    const event = record.event ?? record.headers[WEBHOOK_EVENT_HEADER] ?? null;
    if (event !== SALES_ORDER_VALIDATED) continue;
    result.validated++;
    for (const order of ordersIn(record.body)) {
      if (!result.byExternalId.has(order.externalId)) {
        const entry: { id?: string | number; code?: string; receivedAt: string } = {
          receivedAt: record.receivedAt,
        };
        if (order.id !== undefined) entry.id = order.id;
        if (order.code !== undefined) entry.code = order.code;
        result.byExternalId.set(order.externalId, entry);
      }
    }
  }
  return result;
}

/** The orders a notification body names: the body, its array items, or one level down. */
function ordersIn(body: unknown): { externalId: string; id?: string | number; code?: string }[] {
  const candidates: unknown[] = Array.isArray(body) ? body : [body];
  if (!Array.isArray(body) && body && typeof body === 'object') {
    for (const key of ['order', 'salesOrder', 'sales_order', 'data', 'object']) {
      const inner = (body as Record<string, unknown>)[key];
      if (Array.isArray(inner)) candidates.push(...inner);
      else if (inner && typeof inner === 'object') candidates.push(inner);
    }
  }
  const out: { externalId: string; id?: string | number; code?: string }[] = [];
  for (const candidate of candidates) {
    if (!candidate || typeof candidate !== 'object' || Array.isArray(candidate)) continue;
    const record = candidate as Record<string, unknown>;
    if (typeof record.externalId !== 'string' || record.externalId === '') continue;
    const order: { externalId: string; id?: string | number; code?: string } = {
      externalId: record.externalId,
    };
    if (typeof record.id === 'number' || typeof record.id === 'string') order.id = record.id;
    if (typeof record.code === 'string') order.code = record.code;
    out.push(order);
  }
  return out;
}

/** The requests a listen log makes: each unknown order of the journal that it names. */
export function requestsFromEvents(
  validated: ValidatedOrders,
  states: ReadonlyMap<string, JournalState>,
  shown: string,
): ResolutionRequest[] {
  const requests: ResolutionRequest[] = [];
  for (const [externalId, state] of states) {
    if (state.status !== 'in-doubt' && state.status !== 'claimed') continue;
    const seen = validated.byExternalId.get(externalId);
    if (seen === undefined) continue;
    const request: ResolutionRequest = {
      externalId,
      resolution: 'created',
      evidence: `${SALES_ORDER_VALIDATED} received ${seen.receivedAt} (${shown})`,
      fromEvents: true,
    };
    if (seen.id !== undefined) request.id = seen.id;
    if (seen.code !== undefined) request.code = seen.code;
    requests.push(request);
  }
  return requests;
}

/** One order's fate in a resolve: changed (written), or left as it is, with why. */
export interface PlannedResolution {
  request: ResolutionRequest;
  /** The state before, in the words of `orders journal`. */
  from: string;
  change: boolean;
  note?: string;
}

/** Where the resolutions are recorded, in the words of the refusal of an id it does not hold. */
export interface ResolutionPlace {
  /** `The journal orders.csv.journal.ndjson`, `The order ledger`. */
  what: string;
  /** Where the ids it holds can be seen. */
  seeIds: string;
}

/** An import's journal (and the ledger behind it). */
export function historyPlace(shown: string): ResolutionPlace {
  return {
    what: `The order ledger (the history of ${shown})`,
    seeIds: `ordercli orders journal ${shown} lists the unknown ones`,
  };
}

/** The order ledger alone: what `orders create` and `orders new` sent, which no journal holds. */
export const LEDGER_PLACE: ResolutionPlace = {
  what: 'The order ledger',
  seeIds: 'as the error of orders create or orders new named it, with the same --base-url',
};

/** Where a request stands; throws (exit 2, nothing written) for ids the journal (or ledger) does not hold. */
export function planResolutions(
  requests: readonly ResolutionRequest[],
  states: ReadonlyMap<string, JournalState>,
  place: ResolutionPlace,
  baseUrl: string,
): PlannedResolution[] {
  const missing = requests.filter((request) => !states.has(request.externalId)).map((r) => r.externalId);
  if (missing.length > 0) {
    const list =
      missing.slice(0, 10).join(', ') + (missing.length > 10 ? `, … (${missing.length} in all)` : '');
    throw new UsageError(
      `${place.what} holds no order ${list} for ${baseUrl}, so nothing was recorded: check the externalId${missing.length > 1 ? 's' : ''} (${place.seeIds}).`,
    );
  }
  const contradicted: string[] = [];
  const plan = requests.map((request): PlannedResolution => {
    const state = states.get(request.externalId)!;
    const from = stateName(state);
    if (request.resolution === 'created') {
      if (state.event === 'created' && state.resolved === undefined) {
        return { request, from, change: false, note: 'already created (the service answered it): unchanged' };
      }
      if (state.status === 'created' && !request.fromEvents && request.id === undefined) {
        return { request, from, change: false, note: 'already recorded as created: unchanged' };
      }
      return { request, from, change: true };
    }
    if (state.event === 'created' && state.resolved === undefined) {
      contradicted.push(
        `${request.externalId}: the service answered ${state.httpStatus ?? '2xx'}${state.id === undefined ? '' : ` with id ${state.id}`}: it was created`,
      );
      return { request, from, change: false };
    }
    if (state.status === 'not-created') {
      return {
        request,
        from,
        change: false,
        note:
          state.resolved === 'not-created'
            ? 'already recorded as not created: unchanged'
            : 'the next run sends it anyway: unchanged',
      };
    }
    return { request, from, change: true };
  });
  if (contradicted.length > 0) {
    throw new UsageError(
      `--not-created contradicts the service's own answer, so nothing was recorded: ${contradicted.join('; ')}.`,
      ['Only orders whose outcome is unknown (or that you recorded yourself) can be marked not created.'],
    );
  }
  return plan;
}

/** A state in the words of `orders journal`. */
export function stateName(state: JournalState): string {
  if (state.resolved === 'created') return 'created (resolved)';
  if (state.resolved === 'not-created') return 'not created (resolved)';
  if (state.status === 'created') return 'created';
  if (state.status === 'not-created') return 'failed';
  return 'unknown';
}
