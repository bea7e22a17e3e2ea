/** The outbound destination check of an address being saved or tested, answered as the contract's 422 (§1.1). */
import { checkDestination, DestinationRefused } from '../lib/outbound'
import { ValidationFailed, valueErrorEntry } from './errors'

/**
 * Refuses a link-local or cloud metadata destination (by address, or by what its name resolves to) with a 422
 * value_error at `loc`; `input` is the value as sent. SALTDECK_OUTBOUND_ALLOW (`allow`) lets named addresses through.
 */
export async function allowedDestination(host: string, allow: string | null, loc: (string | number)[], input: unknown): Promise<void> {
  try {
    await checkDestination(host, allow)
  } catch (e) {
    if (e instanceof DestinationRefused) throw new ValidationFailed([valueErrorEntry(loc, e.message, input)])
    throw e
  }
}

/** allowedDestination for an http(s) URL. */
export const allowedUrl = (url: string, allow: string | null, loc: (string | number)[]) => allowedDestination(new URL(url).hostname, allow, loc, url)
