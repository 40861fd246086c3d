/**
 * Who is calling and what they may see. The interface does not fix the credential scheme, so the
 * sandbox accepts the two forms the CLI can send: `Authorization: Bearer <token>` and the raw
 * token in `X-API-Key`. The full token has CRM and catalog access; the partner token has neither.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SALES_ORDER_VALIDATED } from '../schemas/webhook.js';

export type AuthLevel = 'full' | 'partner' | 'none';

export interface Rights {
  crm: boolean;
  catalog: boolean;
}

export interface SandboxTokens {
  full: string;
  partner: string;
}

/** Fixed defaults so that docs, demos and scripts can name them; the sandbox is a local tool. */
export const DEFAULT_TOKENS: SandboxTokens = {
  full: 'sandbox-full-token',
  partner: 'sandbox-partner-token',
};

export const RAW_TOKEN_HEADER = 'x-api-key';

/** A fresh key per sandbox unless one is configured: receivers must be told it, not guess it. */
export function generateWebhookKey(): string {
  return `whk_${randomBytes(24).toString('hex')}`;
}

/** Finds the caller's level from the request headers; an unknown token is `none`. */
export function authenticate(headers: IncomingHttpHeaders, tokens: SandboxTokens): AuthLevel {
  const token = presentedToken(headers);
  if (token === undefined) return 'none';
  if (token === tokens.full) return 'full';
  if (token === tokens.partner) return 'partner';
  return 'none';
}

/** The token as sent, or undefined; `Authorization` must use the Bearer scheme. */
export function presentedToken(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1];
  }
  const raw = headers[RAW_TOKEN_HEADER];
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

export function rightsOf(level: AuthLevel): Rights {
  return level === 'full' ? { crm: true, catalog: true } : { crm: false, catalog: false };
}

export type Right = keyof Rights;

export interface WebhookEventDefinition {
  event: string;
  description: string;
  /** The right a caller needs to subscribe; none means every authenticated caller. */
  requires?: Right;
}

/**
 * The interface names only `sales_order_validated`; the CRM and catalog events are invented so
 * that the rights filter of `GET /webhooks/available` has something to filter.
 */
export const WEBHOOK_EVENTS: readonly WebhookEventDefinition[] = [
  { event: SALES_ORDER_VALIDATED, description: 'An order has been validated.' },
  { event: 'contact_updated', description: 'A CRM contact has been changed.', requires: 'crm' },
  { event: 'packaging_updated', description: 'A catalog packaging has been changed.', requires: 'catalog' },
];

/** The events a caller with these rights may subscribe to. */
export function eventsAvailableTo(rights: Rights): WebhookEventDefinition[] {
  return WEBHOOK_EVENTS.filter(
    (definition) => definition.requires === undefined || rights[definition.requires],
  );
}

/** How each right is named in a 403, with what a partner should use instead. */
export const RIGHT_DESCRIPTIONS: Record<Right, { name: string; instead: string }> = {
  crm: { name: 'CRM access', instead: 'partner applications use GET /api/v1/contact_references' },
  catalog: { name: 'catalog access', instead: 'partner applications use GET /api/v1/packaging_references' },
};
