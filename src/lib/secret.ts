/** AES-256-GCM for secrets at rest, under a 0600 key file in the data directory. */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Reads `<dir>/secret.key`, creating it (32 random bytes, mode 0600) on first use. */
export function loadSecretKey(dir: string, keyFile?: string | null): Uint8Array {
  // A key file given is the operator's (shared by several instances): read it, never create or re-mode it.
  if (keyFile) {
    if (!existsSync(keyFile)) throw new Error(`SALTDECK_SECRET_KEY_FILE ${keyFile} does not exist`)
    const key = readFileSync(keyFile)
    if (key.length !== 32) throw new Error(`${keyFile} must hold exactly 32 bytes`)
    return key
  }
  const file = join(dir, 'secret.key')
  if (!existsSync(file)) writeFileSync(file, randomBytes(32), { mode: 0o600 })
  chmodSync(file, 0o600)
  const key = readFileSync(file)
  if (key.length !== 32) throw new Error(`${file} must hold exactly 32 bytes`)
  return key
}

/** Encrypts a string: base64 of iv(12) | tag(16) | ciphertext. */
export function encrypt(key: Uint8Array, plain: string): string {
  const iv = randomBytes(12)
  const c = createCipheriv('aes-256-gcm', key, iv)
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()])
  return Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64')
}

/** Decrypts what encrypt() produced; throws when the key or data do not match. */
export function decrypt(key: Uint8Array, sealed: string): string {
  const b = Buffer.from(sealed, 'base64')
  const d = createDecipheriv('aes-256-gcm', key, b.subarray(0, 12))
  d.setAuthTag(b.subarray(12, 28))
  return Buffer.concat([d.update(b.subarray(28)), d.final()]).toString('utf8')
}
