/**
 * `webhooks available`: `GET /api/v1/webhooks/available`. The interface does not show the body,
 * so any reasonable shape is rendered: a list of names, a list of objects, a list wrapped in an
 * object, or an object mapping names to descriptions. Anything else is printed as JSON.
 */
import { PATHS, unwrapList } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { writeJson } from '../../io/json-output.js';
import { type ListFlags, listOptions } from '../../io/list-flags.js';
import { listFormat, writeList } from '../../io/list-output.js';
import type { Column } from '../../io/record-columns.js';
import { answerToShow } from '../../io/service-answer.js';

export interface EventRow {
  event: string;
  description: string;
}

/** Keys an events list may be wrapped under, tried before the usual list wrappers. */
const EVENT_WRAPPER_KEYS = ['events', 'available', 'webhooks'];
/** Where an event's name is read from; `key` last, as it is more often a secret than a name. */
const NAME_KEYS = ['event', 'name', 'id', 'type', 'code', 'key'];
const DESCRIPTION_KEYS = ['description', 'label', 'title', 'summary', 'meaning'];

/** The list inside the answer, as the service returned it, or undefined. */
export function eventRecords(body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  for (const key of EVENT_WRAPPER_KEYS) if (Array.isArray(record[key])) return record[key] as unknown[];
  const { records } = unwrapList(body);
  if (records !== undefined) return records;
  const arrays = Object.values(record).filter(Array.isArray);
  if (arrays.length === 1) return arrays[0];
  return undefined;
}

/** Rows for the table, or undefined when the shape is not one a table can show. */
export function eventRows(body: unknown): EventRow[] | undefined {
  const records = eventRecords(body);
  if (records === undefined) {
    // `{ "sales_order_validated": "An order has been validated." }`
    if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const entries = Object.entries(body as Record<string, unknown>);
    if (entries.length === 0 || !entries.every(([, v]) => typeof v === 'string' || typeof v === 'boolean'))
      return undefined;
    return entries.map(([event, v]) => ({ event, description: typeof v === 'string' ? v : '' }));
  }
  const rows: EventRow[] = [];
  for (const record of records) {
    if (typeof record === 'string') {
      rows.push({ event: record, description: '' });
      continue;
    }
    if (!record || typeof record !== 'object') return undefined;
    const r = record as Record<string, unknown>;
    const name = NAME_KEYS.map((k) => r[k]).find((v) => typeof v === 'string' && v !== '');
    if (typeof name !== 'string') return undefined;
    const description = DESCRIPTION_KEYS.map((k) => r[k]).find((v) => typeof v === 'string');
    rows.push({ event: name, description: typeof description === 'string' ? description : '' });
  }
  return rows;
}

const COLUMNS: Column<EventRow>[] = [
  { key: 'event', header: 'EVENT', value: (r) => r.event },
  { key: 'description', header: 'DESCRIPTION', value: (r) => r.description },
];

export async function run(flags: ListFlags, ctx: Context): Promise<void> {
  const options = listOptions(flags, ctx.json);
  listFormat(ctx.io, options); // refuses --json with --csv before anything is sent
  if (options.json && options.columns !== undefined && options.columns.length > 0) {
    // The events may be bare names: there are no fields to pick, so the combination is refused.
    throw new UsageError(
      'webhooks available --json prints the events as the service returned them, which may be bare names: drop --columns (it chooses the columns of the table, TSV and CSV).',
    );
  }
  const api = await ctx.api();
  const response = await api.get(PATHS.webhooksAvailable, { signal: ctx.signal });
  // The table shows event names and descriptions only; whatever is printed as JSON has its
  // secret-named fields masked (an answer listing subscriptions would carry their keys).
  const secrets = { showWith: `ordercli api GET ${PATHS.webhooksAvailable} --show-secrets` };
  if (ctx.json) {
    writeJson(ctx.io, answerToShow(ctx.io, eventRecords(response.body) ?? response.body, secrets));
    return;
  }
  const rows = eventRows(response.body);
  if (rows === undefined) {
    ctx.io.err('The answer has a shape the table cannot show; here it is as JSON:\n');
    writeJson(ctx.io, answerToShow(ctx.io, response.body, secrets));
    return;
  }
  await writeList(ctx.io, rows, COLUMNS, {
    ...options,
    emptyNote: 'No events are available to this user (the list is filtered by its rights).',
  });
}
