/**
 * Destination URLs with their secrets masked, for people who may not manage alerts: a Slack or Mattermost webhook URL
 * is itself the credential, and a webhook URL may carry `user:pass@` or a token in its query or path.
 */

/** What stands in for a hidden part of a URL. */
export const URL_MASK = '********'

/** Query parameters whose value is a credential: token, key, secret, sig(nature), password, auth, code… */
const SECRET_PARAM = /token|key|secret|sig|pass|pwd|auth|code|credential|session/i
/** A path segment that reads as a generated token: 16 or more characters with both letters and digits. */
const isTokenLike = (seg: string) => seg.length >= 16 && /[a-z]/i.test(seg) && /\d/.test(seg)

function decodeURIComponentSafe(s: string) {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

const parsed = (url: string) => {
  try {
    return new URL(url)
  } catch {
    return null
  }
}

/** Slack/Mattermost: scheme, host and the first path segment stay (when more follow), the rest is the mask (`https://hooks.slack.com/services/********`). */
export function maskChatUrl(url: string): string {
  const u = parsed(url)
  if (!u) return URL_MASK
  const segs = u.pathname.split('/').filter(Boolean)
  return `${u.protocol}//${u.host}/${segs.length > 1 ? `${segs[0]}/` : ''}${URL_MASK}`
}

/** Webhook: user info, token-like path segments and secret-looking query values become the mask (`https://********@host/hook?token=********`). */
export function maskWebhookUrl(url: string): string {
  const u = parsed(url)
  if (!u) return URL_MASK
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
