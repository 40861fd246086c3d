/**
 * Sends a recorded event again, as `webhooks replay`, `listen --forward-to` and the inspector's
 * Replay all do: its original headers and body bytes, the key added back at sending (the record
 * never holds it).
 */
import { type EventRecord, originalBodyBytes, replayHeaders } from './event-record.js';
import { type NotificationResult, type SendNotificationOptions, sendNotification } from './notify.js';

export type SendRecordedOptions = Omit<SendNotificationOptions, 'event' | 'body' | 'headers' | 'userAgent'>;

/** POSTs `record` to `options.url` with the key given; network errors and time-outs reject. */
export function sendRecordedEvent(
  record: EventRecord,
  options: SendRecordedOptions,
): Promise<NotificationResult> {
  return sendNotification({
    ...options,
    event: record.event ?? '',
    body: originalBodyBytes(record),
    headers: replayHeaders(record),
  });
}
