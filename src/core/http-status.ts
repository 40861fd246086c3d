/** Status texts as people know them (`Not Found`), from Node's own table. */
import { STATUS_CODES } from 'node:http';

/** `Not Found` for 404; undefined for a status Node has no text for. */
export function statusText(status: number): string | undefined {
  return STATUS_CODES[status];
}

/** `404 Not Found`; only the number for a status Node has no text for. */
export function statusLine(status: number): string {
  const text = STATUS_CODES[status];
  return text ? `${status} ${text}` : String(status);
}
