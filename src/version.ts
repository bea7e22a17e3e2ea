/** The product version, stamped at build time by build.ts through --define. */
export const VERSION: string = typeof SALTDECK_VERSION === 'string' ? SALTDECK_VERSION : '0.1.0'
declare const SALTDECK_VERSION: string | undefined
