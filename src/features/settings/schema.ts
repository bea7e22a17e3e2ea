/** The settings table of contract §5: every field's type, bounds and default in one place. */
import { Type as T, type TObject, type TSchema } from '@sinclair/typebox'
import { Nullable } from '../../lib/schemas'

const int = (minimum: number, maximum: number) => T.Integer({ minimum, maximum })
const bool = () => T.Boolean()

/** Poller fields: schema and default. */
export const POLLER_FIELDS = {
  inventory_refresh_minutes: [int(0, 1440), 360],
  inventory_refresh_initial_delay_s: [int(0, 3600), 60],
  fleet_poll_interval_seconds: [int(0, 86400), 300],
  jobs_poll_interval_seconds: [int(0, 86400), 300],
  minion_state_keys_interval_seconds: [int(0, 86400), 300],
  minion_state_presence_interval_seconds: [int(0, 86400), 60],
  minion_state_grains_interval_seconds: [int(0, 86400), 300],
  /** Wait before the first tick of the keys, presence and grains pollers, and also of the jobs and fleet pollers. */
  minion_state_initial_delay_seconds: [int(0, 3600), 10],
  event_stream_enabled: [bool(), true],
  event_stream_retention_days: [int(1, 365), 30],
} as const satisfies Record<string, [TSchema, unknown]>

/** Widget fields: schema and default. */
export const WIDGET_FIELDS = {
  widget_hide_dispatch: [bool(), true],
  widget_hide_routine: [bool(), false],
  widget_show_jobs: [bool(), true],
  widget_show_keys: [bool(), true],
  widget_show_minions: [bool(), true],
  widget_event_count: [int(1, 50), 6],
  widget_heartbeat_minutes: [int(5, 1440), 60],
} as const satisfies Record<string, [TSchema, unknown]>

const Eauth = T.Union(['pam', 'sharedsecret', 'ldap', 'file', 'auto'].map((v) => T.Literal(v)))
const LogFormat = T.Union([T.Literal('json'), T.Literal('text')])
/** How presence is polled: `present` reads the master's connection table, `status` pings. */
export const PRESENCE_METHODS = ['present', 'status'] as const
const PresenceMethod = T.Union(PRESENCE_METHODS.map((v) => T.Literal(v)))

/** Salt connection fields as written (password is write-only). */
export const SALT_FIELDS = {
  url: [T.String({ format: 'http-url', maxLength: 2048 }), null],
  username: [T.String({ minLength: 1, maxLength: 255 }), null],
  password: [T.String({ minLength: 1, maxLength: 1024, writeOnly: true }), null],
  verify: [bool(), true],
  eauth: [Eauth, 'pam'],
  presence_method: [PresenceMethod, 'present'],
} as const satisfies Record<string, [TSchema, unknown]>

/** Logging fields. */
export const LOGGING_FIELDS = { log_format: [LogFormat, 'json'] } as const satisfies Record<string, [TSchema, unknown]>

type Fields = Record<string, readonly [TSchema, unknown]>
/** A PUT body: every field optional and nullable, nothing else accepted. */
export const patchBody = (f: Fields) =>
  T.Object(Object.fromEntries(Object.entries(f).map(([k, [s]]) => [k, T.Optional(Nullable(s))])), { additionalProperties: false })
/** A section as returned: every field required, typed field by field (so the dashboard's type of it is exact). */
const outOf = <F extends Fields>(f: F) => T.Object(Object.fromEntries(Object.entries(f).map(([k, [s]]) => [k, s]))) as TObject<{ -readonly [K in keyof F]: F[K][0] }>
/** Defaults of a section. */
export const defaultsOf = (f: Fields) => Object.fromEntries(Object.entries(f).map(([k, [, d]]) => [k, d]))

/** The five-field SettingsOut document. */
export const SettingsOut = T.Object({
  salt: T.Object({ url: Nullable(T.String()), username: Nullable(T.String()), password_set: T.Boolean(), verify: T.Boolean(), eauth: Eauth, presence_method: PresenceMethod }),
  pollers: outOf(POLLER_FIELDS),
  widget: outOf(WIDGET_FIELDS),
  logging: outOf(LOGGING_FIELDS),
  updated_at: T.String({ format: 'date-time' }),
})

/** The widget settings alone. */
export const WidgetOut = outOf(WIDGET_FIELDS)

/** GET /api/admin/settings/status: whether the salt connection is configured, and what it misses. */
export const SettingsStatusOut = T.Object({ configured: T.Boolean(), missing: T.Array(T.String()) })

/** Section name → its fields. */
export const SECTIONS = { salt: SALT_FIELDS, pollers: POLLER_FIELDS, widget: WIDGET_FIELDS, logging: LOGGING_FIELDS } as const
/** A settings section name. */
export type Section = keyof typeof SECTIONS
/** A field of a section: a misspelt one is a compile error, never a setting silently read as unset. */
export type FieldOf<S extends Section> = keyof (typeof SECTIONS)[S] & string
/** A poller setting's name (the pollers read their timing by these). */
export type PollerSetting = FieldOf<'pollers'>
/** A section's values by field name; the salt section also keeps its password encrypted (`password_enc`). */
export type SectionValues<S extends Section> = Record<FieldOf<S>, unknown> & (S extends 'salt' ? { password_enc?: unknown } : unknown)
