/**
 * The email channel: SMTP through nodemailer (the maintained SMTP client for Node; STARTTLS, TLS and login are a
 * protocol not to write again). A plain-text and an HTML part; every piece of alert data is escaped in the HTML.
 */
import { isIP } from 'node:net'
import { createTransport } from 'nodemailer'
import { canonicalHost, checkDestination, DestinationRefused, networkReason } from '../../../lib/outbound'
import { alertsLink, headline, listed, type Notification, type SendOptions, type SendResult } from './types'

/** An email channel's settings. */
export interface EmailConfig {
  host: string
  port: number
  security: 'none' | 'starttls' | 'tls'
  username?: string
  password?: string
  /** With `security: none`, send the login over a connection without TLS anyway (default false: refused). */
  allow_insecure_auth?: boolean
  from: string
  to: string[]
}

/** HTML's five special characters, escaped. */
export const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

/** The text and HTML bodies of a notification. */
export function mailBodies(n: Notification, o: SendOptions) {
  const { shown, more } = listed(n)
  const link = alertsLink(o)
  const text = [headline(n), '', ...shown.map((a) => `- ${a.subject}: ${a.summary}`), ...(more ? [`...and ${more.toLocaleString('en-US')} more`] : []), ...(link ? ['', `See the alerts in Saltdeck: ${link}`] : [])].join('\n')
  const html = [
    `<p><strong>${escapeHtml(headline(n))}</strong></p>`,
    `<ul>${shown.map((a) => `<li><code>${escapeHtml(a.subject)}</code>: ${escapeHtml(a.summary)}</li>`).join('')}</ul>`,
    more ? `<p>…and ${more.toLocaleString('en-US')} more</p>` : '',
    link ? `<p><a href="${escapeHtml(link)}">See the alerts in Saltdeck</a></p>` : '',
  ].join('')
  return { text, html }
}

/** Why the mail server did not take a message, in Saltdeck's words: its reply code at most, never its text. */
export function smtpReason(e: unknown): string {
  const err = e as { code?: string; responseCode?: number; command?: string }
  const n = err.responseCode ? ` (${err.responseCode})` : ''
  switch (err.code) {
    case 'EAUTH':
    case 'ENOAUTH':
      return `it refused the login${n}`
    case 'EENVELOPE':
      return `it refused the sender or the recipients${n}`
    case 'EMESSAGE':
      return `it refused the message${n}`
    case 'EPROTOCOL':
      if (err.command === 'CONN') return err.responseCode ? `it refused the connection${n}` : 'not an SMTP server'
      return `it answered out of turn${n}`
    case 'ETLS':
    case 'EREQUIRETLS':
      return 'TLS could not be set up'
    case 'ETIMEDOUT':
      return 'timed out'
  }
  return networkReason(e)
}

/**
 * Sends one mail to an allowed destination (connecting to the address checked) within `timeoutMs` in all: nodemailer's
 * per-phase timeouts alone let a server that drips its answers hold the attempt for minutes. `tlsInsecure` (tests only)
 * accepts a self-signed certificate.
 */
export async function sendEmail(c: EmailConfig, n: Notification, o: SendOptions & { tlsInsecure?: boolean }): Promise<SendResult> {
  // The API refuses such a channel; one stored before that rule existed is refused here, before any connection.
  if (c.username && c.security === 'none' && c.allow_insecure_auth !== true)
    return { ok: false, detail: 'Not sent: the channel has a login but no TLS; set security to starttls or tls, or allow_insecure_auth.' }
  const deadline = AbortSignal.timeout(o.timeoutMs)
  let addresses: string[]
  try {
    addresses = await checkDestination(c.host, o.outboundAllow)
  } catch (e) {
    if (e instanceof DestinationRefused) return { ok: false, detail: `Not sent: ${e.message}.` }
    throw e
  }
  // Connect to an address just checked (IPv4 first, as nodemailer prefers), TLS still verifying the configured name.
  const host = addresses.find((a) => isIP(a) === 4) ?? addresses[0]
  if (!host) return { ok: false, detail: 'The mail server could not be reached: the name does not resolve.' }
  const named = !isIP(canonicalHost(c.host))
  const transport = createTransport({
    host, servername: named ? canonicalHost(c.host) : undefined, port: c.port, secure: c.security === 'tls', requireTLS: c.security === 'starttls', ignoreTLS: c.security === 'none',
    auth: c.username ? { user: c.username, pass: c.password ?? '' } : undefined,
    connectionTimeout: o.timeoutMs, greetingTimeout: o.timeoutMs, socketTimeout: o.timeoutMs,
    tls: o.tlsInsecure ? { rejectUnauthorized: false } : undefined,
  })
  try {
    const { text, html } = mailBodies(n, o)
    const info = await transport.sendMail({ from: c.from, to: c.to, subject: `[Saltdeck] ${headline(n)}`, text, html, headers: { 'X-Saltdeck-Notification': n.id }, signal: deadline })
    return { ok: true, detail: `Delivered: the mail server accepted the message for ${info.accepted.length} recipient${info.accepted.length === 1 ? '' : 's'}.` }
  } catch (e) {
    if (deadline.aborted) return { ok: false, detail: `The mail server did not finish within ${Math.round(o.timeoutMs / 1000)} s.` }
    return { ok: false, detail: `The mail server did not take the message: ${smtpReason(e)}.` }
  } finally {
    transport.close()
  }
}
