/** Records of the alerts API (contract §11) as the dashboard reads them, from the routes' answer schemas. */
import type { Static } from '@sinclair/typebox'
import type {
  AlertListOut, AlertOut, ChannelListOut, ChannelOut, ChannelTestOut, DeliveryListOut, DeliveryOut, RULE_KINDS, RuleListOut, RuleOut, SilenceListOut, SilenceOut,
} from '../../../features/alerts/schema'

/** One alert. */
export type Alert = Static<typeof AlertOut>
/** GET /api/alerts. */
export type AlertList = Static<typeof AlertListOut>
/** One rule. */
export type Rule = Static<typeof RuleOut>
/** GET /api/alerts/rules. */
export type RuleList = Static<typeof RuleListOut>
/** One channel; secrets only as *_set flags. */
export type Channel = Static<typeof ChannelOut>
/** GET /api/alerts/channels. */
export type ChannelList = Static<typeof ChannelListOut>
/** POST /api/alerts/channels/{id}/test. */
export type ChannelTest = Static<typeof ChannelTestOut>
/** One silence. */
export type Silence = Static<typeof SilenceOut>
/** GET /api/alerts/silences. */
export type SilenceList = Static<typeof SilenceListOut>
/** One delivery of a notification to a channel. */
export type Delivery = Static<typeof DeliveryOut>
/** GET /api/alerts/deliveries. */
export type DeliveryList = Static<typeof DeliveryListOut>
/** A rule kind. */
export type RuleKind = (typeof RULE_KINDS)[number]

/** The rule kinds, with what each watches for. */
export const KINDS: Record<RuleKind, string> = {
  run_failed: 'a state run fails', run_blocked: 'a state run does not run', run_changed: 'a state run changes something',
  minion_offline: 'a minion is offline for a while', key_pending: 'a key waits for acceptance', salt_unreachable: 'salt-api does not answer for a while',
  master_unreachable: 'the salt-master does not answer (through salt-api) for a while',
  vulnerable: 'a minion has a vulnerability at or above a severity',
}
