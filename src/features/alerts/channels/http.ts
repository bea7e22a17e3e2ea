/** The webhook and Slack/Mattermost channels: one POST with a timeout; 2xx is delivered. */
import { createHmac } from 'node:crypto'
import { readAnswer } from './answer'
import { chatEscape } from './chat-text'
import { alertsLink, headline, listed, type Notification, type SendOptions, type SendResult } from './types'

/** POSTs a body; the outcome in a sentence (never the URL's secrets nor the signing secret). */
export async function post(url: string, body: string, headers: Record<string, string>, o: SendOptions): Promise<SendResult> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(o.timeoutMs), redirect: 'manual' })
    const text = (await readAnswer(res).catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 200)
    if (res.ok) return { ok: true, detail: `Delivered: the receiver answered ${res.status}.` }
    return { ok: false, detail: `The receiver answered ${res.status}${text ? `: ${text}` : ''}.` }
  } catch (e) {
    const name = (e as Error).name
    if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, detail: `The receiver did not answer within ${Math.round(o.timeoutMs / 1000)} s.` }
    return { ok: false, detail: `The receiver could not be reached: ${(e as Error).message}.` }
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
