// The extension points are registries keyed by a type, so forgetting a place is a compile error (`bun run typecheck`
// checks the `@ts-expect-error` lines below: each must fail to compile, or the typecheck fails). The runtime checks
// prove each registry holds exactly its list.
import { expect, test } from 'bun:test'
import { CHANNELS, channelKind, type ChannelKind } from '../../src/features/alerts/channels/registry'
import { CHANNEL_TYPES, type ChannelType } from '../../src/features/alerts/channels/types'
import { PROVIDERS, REGISTRY, type Provider, type ProviderDef } from '../../src/features/identity/providers'
import { POLLER_FIELDS, type PollerSetting, type SectionValues } from '../../src/features/settings/schema'

test('the channel registry holds exactly the channel types, and a type it does not know is an error, not email', () => {
  expect(Object.keys(CHANNELS).sort()).toEqual([...CHANNEL_TYPES].sort())
  expect(() => channelKind('pager')).toThrow('unknown alert channel type "pager"')
  // A registry missing a type does not compile…
  // @ts-expect-error email is missing
  const missing = { webhook: CHANNELS.webhook, slack: CHANNELS.slack } satisfies Record<ChannelType, ChannelKind>
  // …nor one with a type the list does not name.
  // @ts-expect-error pager is not a ChannelType
  const extra = { ...CHANNELS, pager: CHANNELS.slack } satisfies Record<ChannelType, ChannelKind>
  void missing, void extra
})

test('the identity provider registry holds exactly the providers', () => {
  expect(Object.keys(REGISTRY).sort()).toEqual([...PROVIDERS].sort())
  // @ts-expect-error oidc is missing
  const missing: { readonly [P in Provider]: ProviderDef } = { ldap: REGISTRY.ldap }
  void missing
})

test('poller setting keys are typed: a misspelt one does not compile', () => {
  const ok: PollerSetting = 'inventory_refresh_minutes'
  expect(ok in POLLER_FIELDS).toBe(true)
  // @ts-expect-error a typo (minute, not minutes) is not a poller setting
  const typo: PollerSetting = 'inventory_refresh_minute'
  const read = (v: SectionValues<'pollers'>) => v.event_stream_enabled
  // @ts-expect-error a section's values have only its fields
  const misread = (v: SectionValues<'pollers'>) => v.event_stream_enable
  void typo, void read, void misread
})
