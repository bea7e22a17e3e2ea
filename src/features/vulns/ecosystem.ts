/** OSV ecosystems: which a minion is in (from its grains) and which feed ecosystems Saltdeck matches. */
import { compareDpkg, compareRpm } from '../../lib/version-order'

/** The OSV ecosystem of a minion from its grains (`os`, `osmajorrelease`, `osrelease`); null when Saltdeck has no feed kind for it. */
export function minionEcosystem(os: string | null | undefined, osrelease: string | null | undefined, osmajorrelease: unknown): string | null {
  const release = typeof osrelease === 'string' ? osrelease : ''
  const major = osmajorrelease != null && osmajorrelease !== '' ? String(osmajorrelease) : release.split('.')[0] ?? ''
  if (!/^\d+$/.test(major)) return os === 'Ubuntu' && /^\d+\.\d+$/.test(release) ? `Ubuntu:${release}` : null
  if (os === 'Debian') return `Debian:${major}`
  if (os === 'Ubuntu') return /^\d+\.\d+$/.test(release) ? `Ubuntu:${release}` : null
  if (os === 'AlmaLinux') return `AlmaLinux:${major}`
  if (os === 'Rocky') return `Rocky Linux:${major}`
  return null
}

/**
 * The ecosystem a record's `affected[].package.ecosystem` is matched as, or null for one Saltdeck does not match.
 * Ubuntu's `:LTS` suffix names the same release (a minion's grains do not say LTS), so it is dropped.
 */
export function feedEcosystem(eco: unknown): string | null {
  if (typeof eco !== 'string') return null
  let m = /^(Debian|AlmaLinux|Rocky Linux):(\d+)$/.exec(eco)
  if (m) return `${m[1]}:${m[2]}`
  m = /^Ubuntu:(\d+\.\d+)(:LTS)?$/.exec(eco)
  return m ? `Ubuntu:${m[1]}` : null
}

/** The version order of an ecosystem: dpkg's for Debian and Ubuntu, rpm's for the Enterprise Linux rebuilds. */
export function versionOrder(ecosystem: string): (a: string, b: string) => number {
  return ecosystem.startsWith('Debian:') || ecosystem.startsWith('Ubuntu:') ? compareDpkg : compareRpm
}
