/**
 * `PUT /api/v1/webhooks`, shared by `webhooks subscribe` and `listen --subscribe`. The interface
 * does not show the answer; a service may return the key of the subscription in it (the sandbox
 * does, as `key`). That key is a secret: it is found, registered with the redactor, and replaced
 * by `[redacted]` in anything shown.
 */
import type { ApiClient } from '../api/client.js';
import { InputError } from '../core/errors.js';
import { REDACTED, type Redactor, redactSecretFields } from '../core/redact.js';
import { validateWebhookSubscription } from '../schemas/webhook.js';

export interface SubscriptionAnswer {
  /** The service's answer with the key (and any other secret-named field) redacted. */
  shown: unknown;
  /** The service's answer as received, for --show-secrets. */
  body: unknown;
  /** Every secret field masked in `shown` (`key`, `data.secret`...). */
  redactedFields: string[];
  /** The key the answer carries, if any. */
  key: string | undefined;
  /** Where in the answer the key was (`key`, `subscription.secret`, ...). */
  keyField: string | undefined;
  status: number;
}

/** Field names a service may use for the key of a subscription. */
const KEY_FIELD = /^(webhook[_-]?)?(key|secret)$|^(auth(entication)?|signing|shared)[_-]?(key|secret)$/i;

/** Validates and sends one subscription; the key of the answer is registered as a secret at once. */
export async function subscribeWebhook(
  api: ApiClient,
  subscription: { event: string; url: string },
  options: { redactor: Redactor; signal?: AbortSignal },
): Promise<SubscriptionAnswer> {
  const problems = validateWebhookSubscription(subscription);
  if (problems.length > 0) {
    throw new InputError(
      'The webhook subscription is invalid; nothing was sent.',
      problems.map((p) => ({
        file: 'subscription',
        field: p.field === 'url' ? '--url' : `--${p.field}`,
        message: p.message,
      })),
    );
  }
  const response = await api.put('/api/v1/webhooks', subscription, { signal: options.signal });
  const found = findWebhookKey(response.body);
  options.redactor.addSecret(found?.value);
  const masked = redactSecretFields(found ? redactAt(response.body, found.path) : response.body);
  return {
    shown: masked.value,
    body: response.body,
    redactedFields: found ? [found.path.join('.'), ...masked.fields] : masked.fields,
    key: found?.value,
    keyField: found?.path.join('.'),
    status: response.status,
  };
}

/** A string field named like a key at the top of the answer, or one level down (`data`, `subscription`). */
export function findWebhookKey(answer: unknown): { path: string[]; value: string } | undefined {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return undefined;
  const record = answer as Record<string, unknown>;
  for (const [name, value] of Object.entries(record)) {
    if (typeof value === 'string' && value !== '' && KEY_FIELD.test(name)) return { path: [name], value };
  }
  for (const [name, value] of Object.entries(record)) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const inner = findWebhookKey(value);
      if (inner && inner.path.length === 1) return { path: [name, ...inner.path], value: inner.value };
    }
  }
  return undefined;
}

function redactAt(value: unknown, path: string[]): unknown {
  if (path.length === 0 || !value || typeof value !== 'object') return REDACTED;
  const [head, ...rest] = path as [string, ...string[]];
  const record = value as Record<string, unknown>;
  return { ...record, [head]: rest.length === 0 ? REDACTED : redactAt(record[head], rest) };
}
