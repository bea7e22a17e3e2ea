/** The webhook and Slack/Mattermost channels: one POST with a timeout; 2xx is delivered. */
import { createHmac } from 'node:crypto'
import { checkUrl, DestinationRefused, networkReason } from '../../../lib/outbound'
import { chatEscape } from './chat-text'
import { alertsLink, headline, listed, type Notification, type SendOptions, type SendResult } from './types'

/**
 * POSTs a body to an allowed destination, never following a redirect; the outcome in a sentence of Saltdeck's own
 * (never the receiver's answer, nor the URL's secrets, nor the signing secret).
 */
export async function post(url: string, body: string, headers: Record<string, string>, o: SendOptions): Promise<SendResult> {
  try {
    await checkUrl(url, o.outboundAllow)
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(o.timeoutMs), redirect: 'manual' })
    await res.body?.cancel().catch(() => {})
    if (res.ok) return { ok: true, detail: `Delivered: the receiver answered ${res.status}.` }
    const redirect = res.status >= 300 && res.status < 400 ? ', a redirect, which Saltdeck does not follow' : ''
    return { ok: false, detail: `The receiver answered ${res.status}${redirect}.` }
  } catch (e) {
    if (e instanceof DestinationRefused) return { ok: false, detail: `Not sent: ${e.message}.` }
    const name = (e as Error).name
    if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, detail: `The receiver did not answer within ${Math.round(o.timeoutMs / 1000)} s.` }
    return { ok: false, detail: `The receiver could not be reached: ${networkReason(e)}.` }
  }
}

/** A webhook: the notification as JSON, signed with HMAC-SHA256 of the body when a secret is set. */
export function sendWebhook(config: { url: string; secret?: string }, n: Notification, o: SendOptions) {
  const body = JSON.stringify(n)
  const headers: Record<string, string> = config.secret ? { 'x-saltdeck-signature': `sha256=${createHmac('sha256', config.secret).update(body).digest('hex')}` } : {}
  return post(config.url, body, headers, o)
}

/** The readable one-screen text of a notification; every piece of data escaped by chatEscape. */
export function slackText(n: Notification, o: SendOptions): string {
  const { shown, more } = listed(n)
  const lines = [`*${chatEscape(headline(n))}*`, ...shown.map((a) => `• ${chatEscape(a.subject)}: ${chatEscape(a.summary)}`)]
  if (more) lines.push(`…and ${more.toLocaleString('en-US')} more`)
  const link = alertsLink(o)
  if (link) lines.push(`<${link}|See the alerts in Saltdeck>`)
  return lines.join('\n')
}

/** A Slack/Mattermost-compatible incoming webhook: `{"text": ...}`. */
export const sendSlack = (config: { url: string }, n: Notification, o: SendOptions) => post(config.url, JSON.stringify({ text: slackText(n, o) }), {}, o)
