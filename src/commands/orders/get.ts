/** `orders get <id>`: one order as the service returns it. */
import { pathFor } from '../../api/client.js';
import type { Context } from '../../command-support/context.js';
import { CliError, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { statusLine } from '../../core/http-status.js';
import { writeAnswerJson } from '../../io/service-answer.js';

export async function run(options: { id: string }, ctx: Context): Promise<void> {
  if (options.id.trim() === '') throw new UsageError('The order id must not be empty.');
  const path = pathFor('/api/v1/orders/{id}', { id: options.id.trim() });
  const api = await ctx.api();
  const response = await api.get(path, { signal: ctx.signal });
  const body = response.body;
  // An empty or non-JSON answer is not an order: say so rather than print `null` or raw text.
  if (body === null || typeof body !== 'object') {
    const what =
      body === null || body === ''
        ? 'an empty answer'
        : `an answer that is not JSON (${response.headers['content-type'] ?? 'no content type'}: ${JSON.stringify(String(body).slice(0, 60))})`;
    throw new CliError(
      `The service answered ${statusLine(response.status)} to GET ${path} with ${what}, not an order.`,
      ExitCode.Failure,
      [`check --base-url (${api.baseUrl}): it must be the service's root.`],
    );
  }
  writeAnswerJson(ctx.io, body, { showWith: `ordercli get orders ${options.id.trim()} --show-secrets` });
}
