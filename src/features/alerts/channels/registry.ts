/**
 * The channel registry: everything Saltdeck knows of each channel type, keyed by ChannelType so a type added to
 * CHANNEL_TYPES and left out here (or the reverse) is a compile error. The route's config schema and extra rule, the
 * outbound check, the stored secrets, the masking and the sending all read it; nothing else lists the types.
 */
import { Type as T, type TSchema } from '@sinclair/typebox'
import { canonicalHost, sameUrl } from '../../../lib/outbound'
import { invalid } from '../../../lib/errors'
import { OneOf } from '../../../lib/schemas'
import { sendEmail, type EmailConfig } from './email'
import { sendSlack, sendWebhook } from './http'
import { maskChatUrl, maskWebhookUrl } from './url-mask'
import { CHANNEL_TYPES, type ChannelType, type Notification, type SendOptions, type SendResult } from './types'

type Dict = Record<string, unknown>

/** Where a channel sends: a URL, or a mail server. The key names the config field it is read from. */
export type Destination = { url: string } | { host: string; port: unknown }

/** What Saltdeck knows of one channel type. */
export interface ChannelKind {
  /** Its config as written, checked once the type is known (additional properties refused). */
  config: TSchema
  /** A rule across the config's fields the schema cannot state; throws Invalid naming the field. */
  check?(c: Dict): void
  /** Config keys holding secrets: stored encrypted as `<key>_enc`, shown as `<key>_set`. */
  secrets: readonly string[]
  /** Where it sends, for the outbound check and to tell a moved destination (which forgets the stored secrets). */
  destination(c: Dict): Destination
  /** Its destination URL with the secrets masked, for who may not manage alerts; absent when the config holds no URL. */
  maskUrl?(url: string): string
  /** Sends a notification; the outcome as a sentence. */
  send(c: Dict, n: Notification, o: SendOptions): Promise<SendResult>
}

const Secret = T.String({ minLength: 1, maxLength: 1024, writeOnly: true })
const HttpUrl = T.String({ format: 'http-url', maxLength: 2048 })
const Mailbox = (extra = {}) => T.String({ minLength: 3, maxLength: 255, pattern: '^[^\\s@<>]+@[^\\s@<>]+$', ...extra })

/** Every channel type's definition. */
export const CHANNELS = {
  webhook: {
    config: T.Object({ url: HttpUrl, secret: T.Optional(Secret) }, { additionalProperties: false }),
    secrets: ['secret'],
    destination: (c) => ({ url: String(c.url) }),
    maskUrl: maskWebhookUrl,
    send: (c, n, o) => sendWebhook(c as { url: string; secret?: string }, n, o),
  },
  slack: {
    config: T.Object({ url: HttpUrl }, { additionalProperties: false }),
    secrets: [],
    destination: (c) => ({ url: String(c.url) }),
    maskUrl: maskChatUrl,
    send: (c, n, o) => sendSlack(c as { url: string }, n, o),
  },
  email: {
    config: T.Object({
      host: T.String({ minLength: 1, maxLength: 255 }), port: T.Integer({ minimum: 1, maximum: 65535 }), security: OneOf(['none', 'starttls', 'tls'] as const),
      username: T.Optional(T.String({ minLength: 1, maxLength: 255 })), password: T.Optional(Secret), allow_insecure_auth: T.Optional(T.Boolean()),
      from: Mailbox(), to: T.Array(Mailbox(), { minItems: 1, maxItems: 50 }),
    }, { additionalProperties: false }),
    // A login over a connection without TLS gives the password to anyone on the path: only when the channel says so.
    check: (c) => {
      if ((c.username || c.password) && c.security === 'none' && c.allow_insecure_auth !== true)
        throw invalid(['config', 'security'], 'a login needs security starttls or tls (or allow_insecure_auth: true to send it without TLS)', c.security)
    },
    secrets: ['password'],
    destination: (c) => ({ host: String(c.host), port: c.port }),
    send: (c, n, o) => sendEmail(c as unknown as EmailConfig, n, o),
  },
} as const satisfies Record<ChannelType, ChannelKind>

/** Whether a string names a channel type. */
export const isChannelType = (s: string): s is ChannelType => (CHANNEL_TYPES as readonly string[]).includes(s)

/** A stored type's definition; a type no entry knows (a row from a newer version) is an error, never another channel's sender. */
export function channelKind(type: string): ChannelKind {
  if (!isChannelType(type)) throw new Error(`unknown alert channel type ${JSON.stringify(type)}`)
  return CHANNELS[type]
}

/** Every config key that holds a secret, over all types. */
export const SECRET_KEYS: readonly string[] = [...new Set(Object.values(CHANNELS).flatMap((k: ChannelKind) => k.secrets))]

/** Whether two configs of a type send to the same place: the URL, or the mail server's host and port. */
export function sameDestination(type: string, a: Dict, b: Dict): boolean {
  const kind = channelKind(type)
  const [x, y] = [kind.destination(a), kind.destination(b)]
  if ('url' in x && 'url' in y) return sameUrl(x.url, y.url)
  if ('host' in x && 'host' in y) return canonicalHost(x.host).toLowerCase() === canonicalHost(y.host).toLowerCase() && x.port === y.port
  return false
}
