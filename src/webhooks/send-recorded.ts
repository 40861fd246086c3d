/**
 * Sends a recorded event again, as `webhooks replay`, `listen --forward-to` and the inspector's
 * Replay all do: its original headers and body bytes, the key added back at sending (the record
 * never holds it).
 */
import { type EventRecord, originalBodyBytes, replayHeaders } from './event-record.js';
import { type NotificationResult, type SendNotificationOptions, sendNotification } from './notify.js';
import { FORWARDED_BY_HEADER, withHop } from './self-forward.js';

export type SendRecordedOptions = Omit<
  SendNotificationOptions,
  'event' | 'body' | 'headers' | 'userAgent'
> & {
  /** `listen --forward-to`: this run's id, added to the hop header (`self-forward.ts`). */
  forwardedBy?: string;
};

/** POSTs `record` to `options.url` with the key given; network errors and time-outs reject. */
export function sendRecordedEvent(
  record: EventRecord,
  options: SendRecordedOptions,
): Promise<NotificationResult> {
  const { forwardedBy, ...sending } = options;
  const headers = replayHeaders(record);
  if (forwardedBy !== undefined)
    headers[FORWARDED_BY_HEADER] = withHop(headers[FORWARDED_BY_HEADER], forwardedBy);
  return sendNotification({
    ...sending,
    event: record.event ?? '',
    body: originalBodyBytes(record),
    headers,
  });
}
