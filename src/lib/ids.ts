/** Identifiers and secret tokens. */
import { createHash, randomBytes } from 'node:crypto'

/** A lower-case UUID v7 (time-ordered, so new rows land at the end of their index). */
export const newId = () => Bun.randomUUIDv7()

/** 256 random bits, base64url: the secret of a session or an API token. */
export const newToken = () => randomBytes(32).toString('base64url')

/** SHA-256 hex of a token: the only form a session secret is stored in. */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex')
