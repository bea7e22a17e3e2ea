/**
 * The demo's vulnerability feed: a handful of OSV records shaped as osv.dev publishes them (Debian DSAs by source
 * package, Ubuntu USNs, Rocky RLSAs), written for the demo fleet's package versions. Ids and texts are illustrative.
 */

const CRITICAL = 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H'
const HIGH = 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H'
const MEDIUM = 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N'
const LOW = 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:L/I:N/A:N'

/** One record: id, summary, CVSS vector, and the (ecosystem, package, fixed version) it affects below. */
function record(id: string, summary: string, vector: string, cve: string, affected: [ecosystem: string, pkg: string, fixed: string][], published: string) {
  return {
    schema_version: '1.6.0', id, summary, aliases: [cve], published, modified: published,
    details: `${summary}. This record is part of Saltdeck's demo feed; see the upstream advisory for the real text.`,
    severity: [{ type: 'CVSS_V3', score: vector }],
    affected: affected.map(([ecosystem, name, fixed]) => ({ package: { ecosystem, name }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed }] }] })),
    references: [{ type: 'ADVISORY', url: `https://osv.dev/vulnerability/${id}` }],
  }
}

/** The demo feed's records. */
export const DEMO_OSV = [
  record('DSA-5764-1', 'openssl: denial of service and key recovery in TLS handshakes', HIGH, 'CVE-2024-5535', [['Debian:12', 'openssl', '3.0.14-1~deb12u1']], '2024-08-28T00:00:00Z'),
  record('DSA-5757-1', 'nginx: memory disclosure in the mp4 module', MEDIUM, 'CVE-2024-7347', [['Debian:12', 'nginx', '1.22.1-9+deb12u1']], '2024-08-20T00:00:00Z'),
  record('DSA-5753-1', 'curl: ASN.1 date parser overread', LOW, 'CVE-2024-7264', [['Debian:12', 'curl', '7.88.1-10+deb12u7']], '2024-08-14T00:00:00Z'),
  record('DSA-5736-1', 'openjdk-17: remote code execution in the Hotspot compiler', CRITICAL, 'CVE-2024-21147', [['Debian:12', 'openjdk-17', '17.0.12+7-2~deb12u1']], '2024-07-19T00:00:00Z'),
  record('DSA-5749-1', 'postgresql-15: arbitrary SQL during pg_dump', HIGH, 'CVE-2024-7348', [['Debian:12', 'postgresql-15', '15.8-0+deb12u1']], '2024-08-10T00:00:00Z'),
  record('DSA-5773-1', 'redis: remote code execution through a crafted Lua script', CRITICAL, 'CVE-2024-31449', [['Debian:12', 'redis', '5:7.0.15-1~deb12u2']], '2024-10-08T00:00:00Z'),
  record('USN-6986-1', 'OpenSSL vulnerabilities', HIGH, 'CVE-2024-6119', [['Ubuntu:22.04:LTS', 'openssl', '3.0.2-0ubuntu1.18']], '2024-09-03T00:00:00Z'),
  record('USN-6944-1', 'curl vulnerabilities', MEDIUM, 'CVE-2024-7264', [['Ubuntu:22.04:LTS', 'curl', '7.81.0-1ubuntu1.17']], '2024-08-05T00:00:00Z'),
  record('RLSA-2024:6356', 'haproxy: request smuggling', HIGH, 'CVE-2024-45506', [['Rocky Linux:9', 'haproxy', '2.4.22-3.el9_4.1']], '2024-09-05T00:00:00Z'),
  record('RLSA-2024:5101', 'kernel security update', MEDIUM, 'CVE-2024-26923', [['Rocky Linux:9', 'kernel', '5.14.0-427.31.1.el9_4']], '2024-08-12T00:00:00Z'),
]
