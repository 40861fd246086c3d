/** How a receiver's answer is shown by trigger, replay and listen's forwarding: status and first lines. */
import { statusLine } from '../core/http-status.js';
import { redactSecretFieldsInText } from '../core/redact.js';

export const PREVIEW_LINES = 5;

/**
 * The first lines of a text, indented, each cut to a sensible width, secret-named JSON fields
 * masked; empty text gives nothing.
 */
export function previewLines(text: string, indent: string, maxLines = PREVIEW_LINES): string {
  const lines = redactSecretFieldsInText(text).replace(/\s+$/, '').split(/\r?\n/);
  if (lines.length === 1 && lines[0] === '') return '';
  let out = '';
  for (const line of lines.slice(0, maxLines))
    out += `${indent}${line.length > 200 ? `${line.slice(0, 199)}…` : line}\n`;
  if (lines.length > maxLines) out += `${indent}… (${lines.length - maxLines} more lines)\n`;
  return out;
}

/** `200 OK in 4 ms`. */
export function answerLine(status: number, durationMs: number): string {
  return `${statusLine(status)} in ${durationMs} ms`;
}

/** Whether a receiver accepted a notification. */
export function isAccepted(status: number): boolean {
  return status >= 200 && status < 300;
}
