/**
 * Channel destinations as shown to people who may not manage alerts: a Slack or Mattermost webhook URL is itself the
 * credential, and a webhook URL may carry `user:pass@` or a token in its query or path. The sender reads the stored
 * config; only answers are masked.
 */
import { invalid } from '../../lib/errors'

/** What stands in for a hidden part of a URL. */
export const URL_MASK = '********'

type Dict = Record<string, unknown>

/** Query parameters whose value is a credential: token, key, secret, sig(nature), password, auth, code… */
const SECRET_PARAM = /token|key|secret|sig|pass|pwd|auth|code|credential|session/i
/** A path segment that reads as a generated token: 16 or more characters with both letters and digits. */
const isTokenLike = (seg: string) => seg.length >= 16 && /[a-z]/i.test(seg) && /\d/.test(seg)

/**
 * A destination URL with its secrets masked. Slack/Mattermost: scheme, host and the first path segment stay (when
 * more follow), the rest is the mask (`https://hooks.slack.com/services/********`). Webhook: user info, token-like
 * path segments and secret-looking query values become the mask (`https://********@host/hook?token=********`).
 */
export function maskUrl(type: string, url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return URL_MASK
  }
  const segs = u.pathname.split('/').filter(Boolean)
  if (type === 'slack') return `${u.protocol}//${u.host}/${segs.length > 1 ? `${segs[0]}/` : ''}${URL_MASK}`
  const user = u.username || u.password ? `${URL_MASK}@` : ''
  const path = u.pathname.split('/').map((s) => (isTokenLike(decodeURIComponentSafe(s)) ? URL_MASK : s)).join('/')
  const query = u.search
    ? `?${u.search.slice(1).split('&').map((pair) => {
        const i = pair.indexOf('=')
        const name = i < 0 ? pair : pair.slice(0, i)
        return i >= 0 && SECRET_PARAM.test(decodeURIComponentSafe(name)) ? `${name}=${URL_MASK}` : pair
      }).join('&')}`
    : ''
  // A fragment is never sent, but it is the user's text and may hold anything.
  return `${u.protocol}//${user}${u.host}${path}${query}${u.hash ? `#${URL_MASK}` : ''}`
}

function decodeURIComponentSafe(s: string) {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** A shown config with its destination masked (email configs hold no secret beyond the stored password). */
export function maskedConfig(type: string, config: Dict): Dict {
  return typeof config.url === 'string' ? { ...config, url: maskUrl(type, config.url) } : config
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
