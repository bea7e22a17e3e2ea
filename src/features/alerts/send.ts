/** Sending through a channel: the deliveries' sender and the channel test, over the channel senders in channels/. */
import type { AppDeps } from '../../deps'
import { sendNotification, testNotification, type Notification } from './channels/index'
import type { SendFn } from './sender'

/** How long one send may take. */
export const SEND_TIMEOUT_MS = 10_000

/** The sender's send function; `body` is the notification the outbox stored. */
export const send: SendFn = (type, config, body, opts) => sendNotification(type, config, body as Notification, opts)

/** Sends a test message through a channel now; the outcome in a sentence. */
export function testSend(deps: AppDeps, ch: { type: string; config: Record<string, unknown> }) {
  return testNotification(ch.type, ch.config, { publicUrl: deps.config.publicUrl, timeoutMs: SEND_TIMEOUT_MS, outboundAllow: deps.config.outboundAllow })
}
