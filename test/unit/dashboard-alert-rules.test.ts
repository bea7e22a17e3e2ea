// Proves the alert rule form's logic (issue 23 item 1): the vulnerable kind and its min_severity, fleet-wide kinds
// without a minion glob, a blank form after a create, edit bodies that keep the kind, and alert rows' links.
import { expect, test } from 'bun:test'
import { alertLinks, blankRule, createBody, formOf, minionsText, patchBody } from '../../src/dashboard/pages/alerts/rule-form'
import { KINDS } from '../../src/dashboard/pages/alerts/types'
import { RULE_KINDS } from '../../src/features/alerts/service'

test('the form offers every kind the API has, the vulnerable one with words', () => {
  expect(Object.keys(KINDS).sort()).toEqual([...RULE_KINDS].sort())
  expect(KINDS.vulnerable).not.toBe('vulnerable')
})

test('a vulnerable rule sends min_severity; a salt_unreachable one sends no minion glob; a run rule its fun_glob', () => {
  expect(createBody({ ...blankRule(), name: 'vulns', kind: 'vulnerable', min_severity: 'critical', minion_glob: 'db-*' })).toEqual({
    name: 'vulns', kind: 'vulnerable', minion_glob: 'db-*', params: { min_severity: 'critical' }, channel_ids: [], renotify_minutes: 0,
  })
  const salt = createBody({ ...blankRule(), name: 'salt', kind: 'salt_unreachable', minion_glob: 'db-*', for_minutes: '7' })
  expect(salt).toEqual({ name: 'salt', kind: 'salt_unreachable', params: { for_minutes: 7 }, channel_ids: [], renotify_minutes: 0 })
  expect(createBody({ ...blankRule(), name: 'runs', fun_glob: 'state.*' }).params).toEqual({ fun_glob: 'state.*' })
  expect(minionsText({ kind: 'salt_unreachable', minion_glob: '*' })).toBeNull()
  expect(minionsText({ kind: 'run_failed', minion_glob: 'web*' })).toBe('web*')
})

test('a blank form has the "*" glob (no stale glob after a create); editing fills the form and never sends the kind', () => {
  expect(blankRule().minion_glob).toBe('*')
  const rule = {
    id: 'r1', name: 'db runs', kind: 'run_failed' as const, minion_glob: 'db-*', params: { fun_glob: 'state.apply' }, channel_ids: ['c1'], enabled: true, renotify_minutes: 60,
    created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  }
  const f = formOf(rule)
  expect(f).toMatchObject({ name: 'db runs', kind: 'run_failed', minion_glob: 'db-*', fun_glob: 'state.apply', renotify: '60', channel_ids: ['c1'] })
  expect(patchBody({ ...f, minion_glob: 'web-*' })).toEqual({ name: 'db runs', minion_glob: 'web-*', params: { fun_glob: 'state.apply' }, channel_ids: ['c1'], renotify_minutes: 60 })
  expect(formOf({ ...rule, kind: 'vulnerable', params: { min_severity: 'medium' } }).min_severity).toBe('medium')
})

test('an alert row links to its minion and its run and job, a vulnerability, the keys, or Salt health', () => {
  expect(alertLinks({ kind: 'run_failed', subject: 'web 01', details: { jid: '2026', function: 'state.apply' } })).toEqual([
    { label: 'web 01', path: '/minions/web%2001' }, { label: 'Run', path: '/minions/web%2001/runs/2026' }, { label: 'Job', path: '/jobs/2026' },
  ])
  expect(alertLinks({ kind: 'vulnerable', subject: 'db-01', details: { vulnerability_ids: ['DSA-1', 'DSA-2'] } })).toEqual([
    { label: 'db-01', path: '/minions/db-01' }, { label: 'DSA-1', path: '/vulns/DSA-1' }, { label: 'DSA-2', path: '/vulns/DSA-2' },
  ])
  expect(alertLinks({ kind: 'salt_unreachable', subject: 'salt-api', details: {} })).toEqual([{ label: 'Salt health', path: '/salt-health' }])
  expect(alertLinks({ kind: 'key_pending', subject: 'new-01', details: {} }).map((l) => l.path)).toEqual(['/minions/new-01', '/keys'])
  expect(alertLinks({ kind: 'minion_offline', subject: 'cache-01', details: {} })).toEqual([{ label: 'cache-01', path: '/minions/cache-01' }])
})
