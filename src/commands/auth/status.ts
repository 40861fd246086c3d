/**
 * `auth status`: the profile, the base URL, where the token and the webhook key come from, and
 * whether the service accepts the token and with which access. Never a secret, not even a part
 * of one: a token or key is only said to be set, and where it comes from.
 *
 * The check is one `GET /api/v1/contacts`. The interface knows two kinds of client, one with CRM
 * and catalog access and the partner application with neither, and says the contacts need CRM
 * access: an answer is full access, a 403 a partner token the service knows (exit 0), a 401 a
 * token it refuses (exit 3). `GET /webhooks/available`, which `login` uses, answers every valid
 * token alike and so could not tell the two apart (docs/assumptions.md).
 */
import { ApiError, ConnectionError } from '../../api/errors.js';
import { PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { knownConfigPath } from '../../config/profiles.js';
import type { Settings } from '../../config/settings.js';
import { type SettingSource, sourceName } from '../../config/sources.js';
import { CancelledError, CliError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { statusLine } from '../../core/http-status.js';
import { withoutPassword } from '../../core/url.js';
import { writeJson } from '../../io/json-output.js';

/** What the service made of the token: `not-checked` when nothing was sent. */
export type ServiceResult = 'accepted' | 'refused' | 'unreachable' | 'failed' | 'not-checked';
export type Access = 'full' | 'partner';

interface SettingOrigin {
  source: SettingSource | null;
  /** `--token`, `ORDERCLI_TOKEN`, `profile`; null when not set. */
  sourceName: string | null;
}

/** The `--json` shape of `auth status`. */
export interface AuthStatusReport {
  profile: string;
  /** Null when the config folder would be relative (see `src/config/profiles.ts`). */
  configPath: string | null;
  baseUrl: SettingOrigin & { value: string | null };
  /** `header`: the header the token is sent in (`Authorization` means `Bearer <token>`). */
  token: SettingOrigin & { set: boolean; header: string };
  webhookKey: SettingOrigin & { set: boolean };
  service: { request: string; result: ServiceResult; status: number | null; access: Access | null };
}

const CHECK = { method: 'GET', path: PATHS.contacts } as const;

export async function run(ctx: Context): Promise<void> {
  const settings = await ctx.settings();
  const report = describeSettings(settings, ctx.env);
  const failure = await checkService(ctx, settings, report.service);
  if (ctx.json) writeJson(ctx.io, report);
  else ctx.io.out(renderReport(report));
  if (failure) throw failure;
}

/** Everything but the service's answer: read from the settings, nothing sent. */
function describeSettings(settings: Settings, env: NodeJS.ProcessEnv): AuthStatusReport {
  const origin = (key: 'base-url' | 'token' | 'webhook-key', source: SettingSource | undefined) => ({
    source: source ?? null,
    sourceName: sourceName(key, source) ?? null,
  });
  return {
    profile: settings.profileName,
    configPath: knownConfigPath(env) ?? null,
    baseUrl: {
      value: settings.baseUrl ? withoutPassword(settings.baseUrl) : null,
      ...origin('base-url', settings.sources.baseUrl),
    },
    token: {
      set: Boolean(settings.token),
      header: settings.authHeader ?? 'Authorization',
      ...origin('token', settings.sources.token),
    },
    webhookKey: { set: Boolean(settings.webhookKey), ...origin('webhook-key', settings.sources.webhookKey) },
    service: { request: `${CHECK.method} ${CHECK.path}`, result: 'not-checked', status: null, access: null },
  };
}

/**
 * Sends the one request and fills in `service`. Returns the error the command ends with (its
 * exit code: 3 refused or no token, 1 unreachable or failed, 2 unusable settings), or undefined
 * when the token is accepted.
 */
async function checkService(
  ctx: Context,
  settings: Settings,
  service: AuthStatusReport['service'],
): Promise<CliError | undefined> {
  try {
    // First, as every command: no base URL, or one that cannot be used, is exit 2.
    const api = await ctx.api();
    if (!settings.token) return noToken();
    const answer = await api.get(CHECK.path, { signal: ctx.signal });
    Object.assign(service, { result: 'accepted', status: answer.status, access: 'full' });
    return undefined;
  } catch (error) {
    if (error instanceof CancelledError || !(error instanceof CliError)) throw error;
    return classify(error, settings, service);
  }
}

/** Turns a failed check into the report's words and the command's error (undefined: a partner token). */
function classify(
  error: CliError,
  settings: Settings,
  service: AuthStatusReport['service'],
): CliError | undefined {
  if (error instanceof ApiError) {
    service.status = error.status;
    if (error.status === 403) {
      Object.assign(service, { result: 'accepted', access: 'partner' });
      return undefined;
    }
    service.result = error.status === 401 ? 'refused' : 'failed';
    if (error.status === 401) error.hint = tokenHint(settings);
    if (error.status === 404)
      error.hint = `Is ${settings.baseUrl} the service root? ordercli appends /api/v1/... to it.`;
  } else if (error instanceof ConnectionError) {
    service.result = 'unreachable';
  }
  return error;
}

function noToken(): CliError {
  const error = new CliError('No token, so the service was not asked.', ExitCode.Auth);
  error.hint =
    'pass --token, set ORDERCLI_TOKEN, or save one in the profile with ordercli login (or printenv ORDER_TOKEN | ordercli config set token -).';
  return error;
}

/** Where the refused token came from, and how it was sent. */
function tokenHint(settings: Settings): string {
  const from =
    settings.sources.token === 'profile' ? 'the profile' : sourceName('token', settings.sources.token);
  const header = settings.authHeader
    ? `it was sent in the ${settings.authHeader} header (auth-header)`
    : 'it was sent as Authorization: Bearer; if the service reads it from another header, set --auth-header';
  return `The token comes from ${from}; ${header}. Log in again with ordercli login.`;
}

/** The report as aligned lines, one per subject. */
function renderReport(report: AuthStatusReport): string {
  const profileLine = report.configPath
    ? `${report.profile} (${report.configPath})`
    : `${report.profile} (no config file: the config folder is not set)`;
  const lines: [string, string][] = [
    ['Profile', profileLine],
    [
      'Base URL',
      report.baseUrl.value
        ? `${report.baseUrl.value} ${fromWhere(report.baseUrl, report.profile)}`
        : 'not set (--base-url, ORDERCLI_BASE_URL or ordercli login)',
    ],
    ['Token', tokenLine(report)],
    [
      'Webhook key',
      report.webhookKey.set ? `set ${fromWhere(report.webhookKey, report.profile)}` : 'not set',
    ],
    ['Service', serviceLine(report.service)],
  ];
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  return lines.map(([label, value]) => `${`${label}:`.padEnd(width + 1)}${value}\n`).join('');
}

function fromWhere(origin: SettingOrigin, profile: string): string {
  if (origin.source === 'profile') return `(from the profile "${profile}")`;
  return `(from ${origin.sourceName ?? 'nowhere'})`;
}

function tokenLine(report: AuthStatusReport): string {
  if (!report.token.set) return 'not set (--token, ORDERCLI_TOKEN or ordercli login)';
  const sent =
    report.token.header === 'Authorization'
      ? 'sent as Authorization: Bearer'
      : `sent in the ${report.token.header} header`;
  return `set ${fromWhere(report.token, report.profile)}, ${sent}`;
}

function serviceLine(service: AuthStatusReport['service']): string {
  const answered =
    service.status === null ? '' : `; ${service.request} answered ${statusLine(service.status)}`;
  switch (service.result) {
    case 'accepted':
      return service.access === 'full'
        ? `accepts the token: full access (CRM and catalog)${answered}`
        : `accepts the token: partner access (no CRM access; partners use the reference lists)${answered}`;
    case 'refused':
      return `refuses the token${answered}`;
    case 'unreachable':
      return `not reached (${service.request})`;
    case 'failed':
      return `could not say${answered}`;
    default:
      return 'not asked';
  }
}
