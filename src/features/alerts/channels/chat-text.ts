/**
 * Minion-controlled text (minion ids, state ids, comments, jids, salt's errors) made safe for a Slack or Mattermost
 * message, so it is shown as text. One escaping serves both, since one `slack` channel may point at either: Slack does
 * not know backslash escapes (they would show), so markup is broken with an invisible U+2060 WORD JOINER instead.
 */

/** The invisible character that breaks a mention, a link or an address apart without changing what is shown. */
export const JOINER = '\u2060'

/**
 * Text for a chat message: line breaks and other control characters become a space (no injected lines, quotes or
 * headings); `&`, `<` and `>` become entities (Slack's escaping, which also stops `<!channel>`, `<@U…>` and `<url|text>`,
 * and Mattermost's translation of them); a joiner after every `@` (no `@channel`, `@here`, `@all`, `@someone`), between
 * `]` and `(` or `[` (no `[text](url)` link, no `![img](url)` image) and after the `:` of `://` (no bare link).
 */
export function chatEscape(s: string): string {
  return s
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@/g, `@${JOINER}`)
    .replace(/\](?=[([])/g, `]${JOINER}`)
    .replace(/:\/\//g, `:${JOINER}//`)
}
