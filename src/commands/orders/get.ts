/** `orders get <id>`: one order as the service returns it. */
import { pathFor } from '../../api/client.js';
import type { Context } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import { fetchEntity } from '../get/get.js';

export async function run(options: { id: string }, ctx: Context): Promise<void> {
  if (options.id.trim() === '') throw new UsageError('The order id must not be empty.');
  const id = options.id.trim();
  await fetchEntity(ctx, pathFor('/api/v1/orders/{id}', { id }), {
    showWith: `ordercli get orders ${id} --show-secrets`,
  });
}
