/**
 * `login`: asks for (or reads) the base URL, token and auth header, checks them with one request,
 * and saves them in a profile (file mode 0600). The token is never echoed nor printed.
 *
 * The check is `GET /api/v1/webhooks/available`: the interface says it lists the events "the calling
 * user is authorized for", so every valid token may call it (a partner token as well as a CRM one),
 * its answer is small, and it changes nothing. The contacts and packagings lists need rights a
 * partner lacks, and the reference lists can hold tens of thousands of records.
 *
 * On a terminal, a token the service refuses (401, 403) is said at once and asked again, at most
 * MAX_ATTEMPTS times in all; then, as with `--with-token` or without a terminal, it is exit 3.
 */
import { ApiError, AuthError } from '../../api/errors.js';
import { PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { ProfileStore } from '../../config/profiles.js';
import { CancelledError, UsageError } from '../../core/errors.js';
import { statusLine } from '../../core/http-status.js';
import { checkBaseUrl, isInsecureHttp } from '../../core/url.js';
import { readStream } from '../../io/input.js';
import { writeJson } from '../../io/json-output.js';
import { createPrompter, PromptEscape, type ScreenMark, type ScreenPrompter } from '../../io/prompter.js';
import { wrapForStdout } from '../../io/wrap.js';
import type { LoginFlags } from './index.js';

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** Tokens a terminal user may try before login gives up (exit 3): enough for a typo or two. */
const MAX_ATTEMPTS = 3;

interface Credentials {
  baseUrl: string;
  token: string;
  /** Empty: `Authorization: Bearer`. */
  authHeader: string;
}

export async function run(flags: LoginFlags, ctx: Context): Promise<void> {
  ctx.createsProfile();
  const settings = await ctx.settings();
  let credentials: Credentials;
  if (flags.withToken) {
    credentials = await fromStdin(ctx, settings.baseUrl, settings.authHeader);
    await checkCredentials(ctx, credentials, settings.allowInsecureHttp);
  } else {
    credentials = await fromPrompts(ctx, settings.baseUrl, settings.authHeader, settings.allowInsecureHttp);
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

/** The one checking request; a refusal says what to check, and that nothing was saved. */
async function checkCredentials(
  ctx: Context,
  credentials: Credentials,
  allowInsecureHttp: boolean,
): Promise<void> {
  ctx.io.redactor.addSecret(credentials.token);
  checkBaseUrl(credentials.baseUrl, allowInsecureHttp);
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
}

/**
 * Interactive: base URL, token (never echoed), auth header, then the check. A refused token is
 * said on the screen and asked again (the header after it, its answer offered), up to
 * MAX_ATTEMPTS tokens; the last refusal is thrown (exit 3).
 */
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
  const dialogue = new LoginDialogue(createPrompter(ctx.io, ctx.signal), {
    url: baseUrl ?? '',
    token: '',
    header: authHeader ?? '',
    allowInsecureHttp,
  });
  for (let attempt = 1; ; attempt++) {
    const credentials = await dialogue.ask();
    try {
      await checkCredentials(ctx, credentials, allowInsecureHttp);
      return credentials;
    } catch (error) {
      if (!(error instanceof AuthError) || attempt >= MAX_ATTEMPTS) throw error;
      dialogue.refused(wrapForStdout(ctx.io, refusalNotice(error, credentials, MAX_ATTEMPTS - attempt)));
    }
  }
}

/** Why the service refused the token, what to check, and how many tries are left. */
function refusalNotice(error: AuthError, credentials: Credentials, left: number): string {
  const sentAs = credentials.authHeader
    ? `in the ${credentials.authHeader} header`
    : 'as Authorization: Bearer';
  const details = error.details.filter((line) => !line.startsWith('The service sent no details'));
  return [
    `The service at ${credentials.baseUrl} refused the token (${statusLine(error.status)}); nothing was saved.`,
    ...details,
    `Check the token, and that the service reads it ${sentAs}. ${left === 1 ? 'One more try' : `${left} more tries`} (Esc goes back to the base URL, Ctrl-C leaves).`,
  ]
    .map((line) => `${line}\n`)
    .join('');
}

interface DialogueAnswers {
  url: string;
  token: string;
  header: string;
  allowInsecureHttp: boolean;
}

/**
 * The three questions in turn; Escape goes back one (offering what was answered there, its
 * earlier answer erased from the screen), and leaves from the first, as in `orders new`.
 */
class LoginDialogue {
  /** Where each question began on the screen, to erase back to. */
  private readonly marks: ScreenMark[] = [];
  private index = 0;

  constructor(
    private readonly prompter: ScreenPrompter,
    private readonly answers: DialogueAnswers,
  ) {}

  /** Asks from the current question to the last. */
  async ask(): Promise<Credentials> {
    const questions = [() => this.askUrl(), () => this.askToken(), () => this.askHeader()];
    while (this.index < questions.length) {
      this.marks[this.index] = this.prompter.mark();
      try {
        await questions[this.index]!();
        this.index++;
      } catch (error) {
        if (!(error instanceof PromptEscape)) throw error;
        if (this.index === 0) throw new CancelledError('Login abandoned; nothing was saved.');
        this.index--;
        this.prompter.eraseTo(this.marks[this.index]!);
      }
    }
    const { url, token, header } = this.answers;
    return { baseUrl: url, token, authHeader: header };
  }

  /** The token was refused: back to its question, with why above it. */
  refused(notice: string): void {
    this.index = 1;
    this.prompter.eraseTo(this.marks[1]!);
    this.prompter.say(notice);
  }

  private async askUrl(): Promise<void> {
    const { prompter, answers } = this;
    answers.url = (
      await prompter.input('Base URL of the service', {
        default: answers.url || undefined,
        validate: (value) => baseUrlProblem(value, answers.allowInsecureHttp),
      })
    ).trim();
  }

  private async askToken(): Promise<void> {
    this.answers.token = (
      await this.prompter.password('API token (not shown)', { validate: tokenProblem })
    ).trim();
  }

  private async askHeader(): Promise<void> {
    const { prompter, answers } = this;
    answers.header = (
      await prompter.input('Header to send the token in (empty: Authorization: Bearer)', {
        default: answers.header || undefined,
        validate: (value) =>
          value.trim() === '' || HEADER_NAME.test(value.trim())
            ? true
            : 'Give an HTTP header name such as X-Api-Key, or nothing.',
      })
    ).trim();
  }
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
