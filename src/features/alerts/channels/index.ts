/** The channel senders: one notification to one channel, and the test message. Pure of storage and HTTP routes. */
import { newId } from '../../../lib/ids'
import { channelKind } from './registry'
import type { Notification, SendOptions, SendResult } from './types'

export type { Notification, SendResult } from './types'

/** Sends a notification through a channel of a type (the registry's sender for it). */
export function sendNotification(type: string, config: Record<string, unknown>, n: Notification, o: SendOptions): Promise<SendResult> {
  return channelKind(type).send(config, n, o)
}

/** The test message: a notification of a rule named "Saltdeck test" with one subject. */
export function testNotification(type: string, config: Record<string, unknown>, o: SendOptions): Promise<SendResult> {
  const now = new Date().toISOString()
  const n: Notification = {
    id: newId(), rule: { id: newId(), name: 'Saltdeck test', kind: 'test' }, status: 'firing', sent_at: now,
    alerts: [{ id: newId(), subject: 'saltdeck', summary: 'This is a test from Saltdeck: the channel works.', first_seen_at: now, details: {} }],
  }
  return sendNotification(type, config, n, o)
}
