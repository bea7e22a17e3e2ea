/**
 * Channel destinations as shown to people who may not manage alerts: each type masks its URL as the registry says
 * (channels/url-mask.ts). The sender reads the stored config; only answers are masked.
 */
import { invalid } from '../../lib/errors'
import { channelKind } from './channels/registry'
import { URL_MASK } from './channels/url-mask'

export { URL_MASK } from './channels/url-mask'

type Dict = Record<string, unknown>

/** A destination URL of a channel type with its secrets masked. */
export function maskUrl(type: string, url: string): string {
  const mask = channelKind(type).maskUrl
  return mask ? mask(url) : URL_MASK
}

/** A shown config with its destination masked (a type without a URL, email, holds no secret beyond the stored password). */
export function maskedConfig(type: string, config: Dict): Dict {
  const mask = channelKind(type).maskUrl
  return mask && typeof config.url === 'string' ? { ...config, url: mask(config.url) } : config
}

/**
 * A config sent in a change, with a masked URL sent back as it was shown replaced by the stored one, so the mask is
 * never stored; a URL that still holds the mask but is not the shown one is refused (422), as storing it would break
 * the channel.
 */
export function unmaskConfig(type: string, incoming: Dict, stored: Dict): Dict {
  if (typeof incoming.url !== 'string' || !incoming.url.includes(URL_MASK)) return incoming
  if (typeof stored.url === 'string' && incoming.url === maskUrl(type, stored.url)) return { ...incoming, url: stored.url }
  throw invalid(['config', 'url'], `the URL still holds the mask ${URL_MASK}: enter the full URL, or send the shown one unchanged`, incoming.url)
}
