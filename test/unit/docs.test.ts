// The generated parts of README.md and docs/api.md match the code they are written from (`bun run docs` rewrites them).
import { expect, test } from 'bun:test'
import { readSection, type Generated } from '../../scripts/generated-section'
import { README_DOC } from '../../scripts/gen-config-table'
import { API_DOC, apiReference } from '../../scripts/gen-api-doc'

for (const doc of [README_DOC, API_DOC] as Generated[])
  for (const [name, make] of Object.entries(doc.sections))
    test(`${doc.file} section ${name} is what the code generates (run \`bun run docs\`)`, () => {
      expect(readSection(doc.file, name)).toBe(make())
    })

test('the configuration table marks secret options', () => {
  const rows = readSection(README_DOC.file, 'config-table').split('\n')
  expect(rows.find((r) => r.startsWith('| `SALTDECK_SALT_PASSWORD`'))).toContain('**Secret**')
  expect(rows.find((r) => r.startsWith('| `SALTDECK_PUBLIC_URL`'))).not.toContain('**Secret**')
})

test('the route reference reads only the documented fields and ignores others', () => {
  const route = { method: 'POST', path: '/api/x/:id', summary: 'A | B', tag: 'x', access: { verb: 'do', resource: 'x:*' }, status: 202, audit: { action: 'x.do' }, handler: () => null, extra: 1 }
  expect(apiReference([route])).toBe(
    '### x\n\n| method | path | summary | who may call | query | body | success | audited as |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n' +
      '| POST | `/api/x/{id}` | A \\| B | `do x:*` |  |  | 202 | `x.do` |\n',
  )
})
