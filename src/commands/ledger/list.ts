/**
 * `ledger list`: one row per key of the order ledger — its status, the service, the input and
 * line that sent it, when, by which command, who holds its claim, the service's id and code, why
 * it is in doubt or failed — for any runner sharing the ledger (`--status in-doubt` in a fleet).
 */
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { identitiesOf } from '../../import/input-identity.js';
import { listOptions } from '../../io/list-flags.js';
import { writeList } from '../../io/list-output.js';
import { quote } from '../../io/quote.js';
import type { Column } from '../../io/record-columns.js';
import { ledgerPlaceOf } from '../../ledger/open.js';
import type { LedgerEntry } from '../../ledger/record.js';
import type { LedgerKind } from '../../ledger/store.js';
import type { LedgerListFlags } from './index.js';
import { ledgerWhere, readService, serviceFlag, serviceOf, servicesInScope } from './scope.js';
import { LEDGER_STATUSES, type LedgerListStatus } from './statuses.js';

/** One key as `ledger list` shows it; its `--json` shape. */
export interface LedgerRow {
  externalId: string;
  status: LedgerListStatus;
  service: string;
  kind: LedgerKind;
  input: string | null;
  line: number | null;
  at: string;
  sentAt: string | null;
  by: string | null;
  owner: { pid: number; host: string } | null;
  id: string | number | null;
  code: string | null;
  httpStatus: number | null;
  reason: string | null;
  message: string | null;
}

export async function run(flags: LedgerListFlags, ctx: Context): Promise<void> {
  const options = listOptions(flags, ctx.json);
  const statuses = parseStatuses(flags.status);
  const given = flags.service === undefined ? undefined : serviceFlag(flags.service);
  const service = given ?? (await ctx.settings()).baseUrl;
  const place = await ledgerPlaceOf(ctx);
  const inputs = flags.input === undefined ? undefined : identitiesOf(flags.input, ctx.cwd);
  const rows: LedgerRow[] = [];
  for (const scope of await servicesInScope(place, service, flags.kind)) {
    const listed = await readService(place, scope, ctx.signal, async (store) => {
      const entries = await store.list(inputs === undefined ? {} : { inputs });
      return entries.map(({ externalId, entry }) => rowOf(externalId, entry, serviceOf(store), scope.kind));
    });
    // A validated order is a created one too: --status created lists it.
    const wanted = (status: LedgerListStatus) =>
      statuses === undefined || statuses.has(status) || (status === 'validated' && statuses.has('created'));
    rows.push(...listed.filter((row) => wanted(row.status)));
  }
  rows.sort(byService);
  const services = new Set(rows.map((row) => row.service));
  const columns = ledgerColumns({
    service: service === undefined && services.size !== 1,
    kind: rows.some((row) => row.kind !== 'orders'),
  });
  await writeList(ctx.io, rows, columns, {
    ...options,
    what: 'keys',
    emptyNote: emptyNote(ledgerWhere(place).location, service, statuses, flags.input),
  });
}

/** `--status`, repeated or comma-separated, checked; undefined for every status. */
export function parseStatuses(values: readonly string[] | undefined): Set<LedgerListStatus> | undefined {
  if (values === undefined) return undefined;
  const statuses = new Set<LedgerListStatus>();
  for (const value of values.flatMap((each) => each.split(','))) {
    const status = value.trim().toLowerCase().replace(/[ _]/g, '-');
    if (status === '') continue;
    if (!(LEDGER_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(
        `--status ${quote(value)} is not a status: choose among ${LEDGER_STATUSES.join(', ')}.`,
      );
    }
    statuses.add(status as LedgerListStatus);
  }
  return statuses.size === 0 ? undefined : statuses;
}

/** How `ledger list` names a state: `failed` for a key the service refused, `not-created` for one resolved so. */
export function listStatus(entry: LedgerEntry): LedgerListStatus {
  if (entry.status === 'created' && entry.validatedAt !== undefined) return 'validated';
  if (entry.status !== 'not-created') return entry.status;
  return entry.event === 'resolved' ? 'not-created' : 'failed';
}

function rowOf(externalId: string, entry: LedgerEntry, service: string, kind: LedgerKind): LedgerRow {
  return {
    externalId,
    status: listStatus(entry),
    service,
    kind,
    input: entry.input ?? entry.journal ?? null,
    line: entry.line ?? null,
    at: entry.at,
    sentAt: entry.sentAt ?? null,
    by: entry.by ?? null,
    owner: entry.owner ? { pid: entry.owner.pid, host: entry.owner.host } : null,
    id: entry.id ?? null,
    code: entry.code ?? null,
    httpStatus: entry.httpStatus ?? null,
    reason: entry.reason ?? null,
    message: entry.message ?? null,
  };
}

/** By service and kind, then in the order they were sent (or recorded), then by key. */
function byService(a: LedgerRow, b: LedgerRow): number {
  return (
    a.service.localeCompare(b.service) ||
    a.kind.localeCompare(b.kind) ||
    (a.sentAt ?? a.at).localeCompare(b.sentAt ?? b.at) ||
    a.externalId.localeCompare(b.externalId)
  );
}

const text = (value: string | number | null): string => (value === null ? '' : String(value));

/** The columns of `ledger list`; SERVICE and KIND shown when the rows need them, else on demand. */
export function ledgerColumns(show: { service: boolean; kind: boolean }): Column<LedgerRow>[] {
  return [
    {
      key: 'external-id',
      header: 'EXTERNAL ID',
      value: (r) => r.externalId,
      identifier: true,
      paths: ['externalId'],
      priority: 100,
    },
    { key: 'status', header: 'STATUS', value: (r) => r.status, priority: 95 },
    {
      key: 'service',
      header: 'SERVICE',
      value: (r) => r.service,
      optional: !show.service,
      minWidth: 16,
      priority: 70,
    },
    { key: 'kind', header: 'KIND', value: (r) => r.kind, optional: !show.kind, priority: 40 },
    { key: 'input', header: 'INPUT', value: (r) => text(r.input), minWidth: 10, priority: 80 },
    { key: 'line', header: 'LINE', value: (r) => text(r.line), align: 'right', priority: 75 },
    {
      key: 'sent-at',
      header: 'SENT AT',
      value: (r) => r.sentAt ?? r.at,
      paths: ['sentAt', 'at'],
      priority: 60,
    },
    { key: 'by', header: 'BY', value: (r) => text(r.by), priority: 30 },
    {
      key: 'claimed-by',
      header: 'CLAIMED BY',
      value: (r) => (r.owner === null ? '' : `pid ${r.owner.pid} on ${r.owner.host}`),
      paths: ['owner'],
      priority: 65,
    },
    { key: 'id', header: 'ID', value: (r) => text(r.id), align: 'right', identifier: true, priority: 50 },
    { key: 'code', header: 'CODE', value: (r) => text(r.code), identifier: true, priority: 45 },
    {
      key: 'reason',
      header: 'REASON',
      value: (r) => text(r.reason ?? r.message),
      paths: ['reason', 'message'],
      minWidth: 12,
      priority: 20,
    },
    { key: 'at', header: 'AT', value: (r) => r.at, optional: true },
    {
      key: 'http-status',
      header: 'HTTP STATUS',
      value: (r) => text(r.httpStatus),
      paths: ['httpStatus'],
      optional: true,
    },
  ];
}

function emptyNote(
  location: string,
  service: string | undefined,
  statuses: Set<LedgerListStatus> | undefined,
  input: string | undefined,
): string {
  const which = statuses === undefined ? 'keys' : `keys with status ${[...statuses].join(' or ')}`;
  const of = [
    service === undefined ? '' : ` of ${service}`,
    input === undefined ? '' : ` sent from ${input}`,
  ].join('');
  return `No ${which}${of} in the order ledger ${location}.`;
}
