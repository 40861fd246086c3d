/**
 * `login`: asks for (or reads) the base URL, token and auth header, checks them with one request,
 * and saves them in a profile (file mode 0600). The token is never echoed nor printed.
 *
 * The check is `GET /api/v1/webhooks/available`: the interface says it lists the events "the calling
 * user is authorized for", so every valid token may call it (a partner token as well as a CRM one),
 * its answer is small, and it changes nothing. The contacts and packagings lists need rights a
 * partner lacks, and the reference lists can hold tens of thousands of records.
 */
import { ApiError } from '../../api/errors.js';
import { PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { ProfileStore } from '../../config/profiles.js';
import { CancelledError, UsageError } from '../../core/errors.js';
import { checkBaseUrl, isInsecureHttp } from '../../core/url.js';
import { readStream } from '../../io/input.js';
import { writeJson } from '../../io/json-output.js';
import { createPrompter, PromptEscape } from '../../io/prompter.js';
import type { LoginFlags } from './index.js';

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

interface Credentials {
  baseUrl: string;
  token: string;
  /** Empty: `Authorization: Bearer`. */
  authHeader: string;
}

export async function run(flags: LoginFlags, ctx: Context): Promise<void> {
  ctx.createsProfile();
  const settings = await ctx.settings();
  const credentials = flags.withToken
    ? await fromStdin(ctx, settings.baseUrl, settings.authHeader)
    : await fromPrompts(ctx, settings.baseUrl, settings.authHeader, settings.allowInsecureHttp);
  ctx.io.redactor.addSecret(credentials.token);
  checkBaseUrl(credentials.baseUrl, settings.allowInsecureHttp);
  if (credentials.authHeader !== '' && !HEADER_NAME.test(credentials.authHeader)) {
    throw new UsageError(
      `The auth header must be an HTTP header name such as X-Api-Key, not ${JSON.stringify(credentials.authHeader)}.`,
    );
  }

  // An empty header override means Bearer, even when the environment or the profile names one.
  const api = await ctx.api({
    baseUrl: credentials.baseUrl,
    token: credentials.token,
    authHeader: credentials.authHeader,
  });
  try {
    await api.get(PATHS.webhooksAvailable, { signal: ctx.signal });
  } catch (error) {
    if (error instanceof ApiError) {
      error.hint =
        error.status === 404
          ? `Nothing was saved. Is ${credentials.baseUrl} the service root? ordercli appends /api/v1/... to it.`
          : `Nothing was saved. Check the token${credentials.authHeader ? ` and that the service reads it from ${credentials.authHeader}` : ', and whether the service expects it in another header (--auth-header)'}.`;
    }
    throw error;
  }

  const store = await ProfileStore.open(ctx.env);
  const insecure = isInsecureHttp(new URL(credentials.baseUrl));
  await store.update(settings.profileName, {
    'base-url': credentials.baseUrl,
    token: credentials.token,
    'auth-header': credentials.authHeader,
    ...(insecure ? { 'allow-insecure-http': 'true' } : {}),
  });

  const sentAs = credentials.authHeader
    ? `in the ${credentials.authHeader} header`
    : 'as Authorization: Bearer';
  if (ctx.json) {
    writeJson(ctx.io, {
      profile: settings.profileName,
      baseUrl: credentials.baseUrl,
      authHeader: credentials.authHeader || null,
      configPath: store.path,
    });
  }
  ctx.io.err(
    `Logged in to ${credentials.baseUrl}: the token (sent ${sentAs}) was accepted. Saved in profile "${settings.profileName}" (${store.path}, readable by you only).\n`,
  );
  const saved: Record<string, string> = {
    ORDERCLI_TOKEN: credentials.token,
    ORDERCLI_BASE_URL: credentials.baseUrl,
    ORDERCLI_AUTH_HEADER: credentials.authHeader,
  };
  for (const [name, value] of Object.entries(saved)) {
    const fromEnv = ctx.env[name]?.trim();
    if (fromEnv && fromEnv !== value) {
      ctx.io.err(
        `note: ${name} is set in the environment to another value, and takes precedence over the profile.\n`,
      );
    }
  }
}

/** `--with-token`: the token from stdin, the rest from flags, environment or the existing profile. */
async function fromStdin(
  ctx: Context,
  baseUrl: string | undefined,
  authHeader: string | undefined,
): Promise<Credentials> {
  if (ctx.io.stdinIsTTY) {
    throw new UsageError(
      '--with-token reads the token from stdin, which is a terminal here (it would echo the token): pipe it in, e.g. printenv ORDER_TOKEN | ordercli login --with-token --base-url <url>, or run ordercli login to be prompted.',
    );
  }
  if (!baseUrl) {
    throw new UsageError(
      'No service address: with --with-token, pass --base-url <url> or set ORDERCLI_BASE_URL.',
    );
  }
  const token = (await readStream(ctx.io.stdin)).trim();
  if (token === '') throw new UsageError('No token on stdin: --with-token reads the token from stdin.');
  if (/\s/.test(token)) {
    throw new UsageError('The token read from stdin holds spaces or several lines: give the token alone.');
  }
  return { baseUrl, token, authHeader: authHeader ?? '' };
}

/** Interactive: base URL, token (never echoed), auth header. */
async function fromPrompts(
  ctx: Context,
  baseUrl: string | undefined,
  authHeader: string | undefined,
  allowInsecureHttp: boolean,
): Promise<Credentials> {
  if (!ctx.io.canPrompt()) {
    throw new UsageError(
      'login asks for the base URL and token on a terminal, and there is none here (or --yes/CI is set). In scripts: printenv ORDER_TOKEN | ordercli login --with-token --base-url <url>.',
    );
  }
  const prompter = createPrompter(ctx.io, ctx.signal);
  // The three questions in turn; Escape goes back one (offering what was answered there), and
  // leaves from the first, as in `orders new`.
  const answers = { url: baseUrl ?? '', token: '', header: authHeader ?? '' };
  const questions: (() => Promise<void>)[] = [
    async () => {
      answers.url = (
        await prompter.input('Base URL of the service', {
          default: answers.url || undefined,
          validate: (value) => baseUrlProblem(value, allowInsecureHttp),
        })
      ).trim();
    },
    async () => {
      answers.token = (await prompter.password('API token (not shown)', { validate: tokenProblem })).trim();
    },
    async () => {
      answers.header = (
        await prompter.input('Header to send the token in (empty: Authorization: Bearer)', {
          default: answers.header || undefined,
          validate: (value) =>
            value.trim() === '' || HEADER_NAME.test(value.trim())
              ? true
              : 'Give an HTTP header name such as X-Api-Key, or nothing.',
        })
      ).trim();
    },
  ];
  for (let index = 0; index < questions.length; ) {
    try {
      await questions[index]!();
      index++;
    } catch (error) {
      if (!(error instanceof PromptEscape)) throw error;
      if (index === 0) throw new CancelledError('Login abandoned; nothing was saved.');
      index--;
    }
  }
  return { baseUrl: answers.url, token: answers.token, authHeader: answers.header };
}

function baseUrlProblem(value: string, allowInsecureHttp: boolean): true | string {
  try {
    checkBaseUrl(value.trim(), allowInsecureHttp);
    return true;
  } catch (error) {
    return (error as Error).message;
  }
}

function tokenProblem(value: string): true | string {
  if (value.trim() === '') return 'The token must not be empty.';
  return /\s/.test(value.trim()) ? 'The token must not hold spaces.' : true;
}
