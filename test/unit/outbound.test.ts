// The outbound destination check's address reading: link-local and metadata addresses in every spelling (IPv4-mapped,
// compatible and NAT64 IPv6 included) refused, loopback and private ranges allowed, SALTDECK_OUTBOUND_ALLOW read and checked.
import { expect, test } from 'bun:test'
import { allowProblem, canonicalHost, checkDestination, networkReason, refusedAddress, sameUrl } from '../../src/lib/outbound'
import { loadConfig } from '../../src/config'

test('link-local, AWS IPv6 and Alibaba metadata addresses are refused in every spelling; the rest is allowed', () => {
  for (const a of ['169.254.169.254', '169.254.0.0', '169.254.255.255', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::169.254.169.254', '64:ff9b::169.254.169.254', 'fe80::1', 'febf:ffff::1', 'FE80::1%eth0', '[fe80::1]', 'fd00:ec2::254', '100.100.100.200'])
    expect(refusedAddress(a, null), a).toBe(true)
  for (const a of ['169.253.255.255', '169.255.0.0', '127.0.0.1', '10.0.0.1', '172.16.0.1', '192.168.0.1', '::1', 'fec0::1', 'fd00:ec2::253', 'fd12::1', '::ffff:127.0.0.1', '8.8.8.8', '2001:db8::1', '100.100.100.201'])
    expect(refusedAddress(a, null), a).toBe(false)
})

test('SALTDECK_OUTBOUND_ALLOW: addresses and CIDR ranges let those through, and only those; a bad entry stops the start', () => {
  const allow = '169.254.169.254, fe80::/16,169.254.10.0/24'
  for (const a of ['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1', '169.254.10.7']) expect(refusedAddress(a, allow), a).toBe(false)
  for (const a of ['169.254.169.253', 'fe81::1', '169.254.11.1']) expect(refusedAddress(a, allow), a).toBe(true)
  expect(allowProblem(allow)).toBeNull()
  expect(allowProblem('169.254.169.254,metadata.google.internal,10.0.0.0/33')).toBe('not an address or CIDR range: "metadata.google.internal", "10.0.0.0/33"')
  expect(loadConfig({ SALTDECK_OUTBOUND_ALLOW: allow }).outboundAllow).toBe(allow)
  expect(() => loadConfig({ SALTDECK_OUTBOUND_ALLOW: '169.254.169.254/40' })).toThrow('SALTDECK_OUTBOUND_ALLOW: not an address or CIDR range: "169.254.169.254/40"')
})

test('hosts are read as a connection reads them: numeric IPv4 forms, a trailing dot, brackets', async () => {
  expect(canonicalHost('2852039166')).toBe('169.254.169.254')
  expect(canonicalHost('0xa9.0xfe.0xa9.0xfe')).toBe('169.254.169.254')
  expect(canonicalHost('169.254.169.254.')).toBe('169.254.169.254')
  expect(canonicalHost('[fe80::1]')).toBe('fe80::1')
  for (const h of ['2852039166', '0251.0376.0251.0376', '[::ffff:169.254.169.254]']) await expect(checkDestination(h, null), h).rejects.toThrow('is a link-local or cloud metadata address')
  expect(await checkDestination('127.0.0.1', null)).toEqual(['127.0.0.1'])
  expect(await checkDestination('localhost', null)).toContain('127.0.0.1')
  expect(await checkDestination('no-such-host.invalid', null)).toEqual([])
})

test('network failures in Saltdeck\'s own words; URLs compared as places', () => {
  expect(networkReason(Object.assign(new TypeError('ECONNREFUSED: Unable to connect'), { code: 'ECONNREFUSED' }))).toBe('connection refused')
  expect(networkReason(Object.assign(new TypeError('Malformed_HTTP_Response fetching'), { code: 'Malformed_HTTP_Response' }))).toBe('not an HTTP server')
  expect(networkReason(Object.assign(new TypeError('EPROTO: The TLS handshake failed'), { code: 'EPROTO' }))).toBe('TLS handshake failed')
  expect(networkReason(new DOMException('The operation timed out.', 'TimeoutError'))).toBe('timed out')
  expect(networkReason(new Error('SSH-2.0-OpenSSH secret banner'))).toBe('could not connect')
  expect(sameUrl('http://Salt.example:8000', 'http://salt.example:8000/')).toBe(true)
  expect(sameUrl('http://salt.example:8000', 'http://salt.example:8001')).toBe(false)
})
