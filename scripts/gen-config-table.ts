/** Writes README.md's configuration table from the option table in src/config.ts (`bun run docs`). */
import { optionList, SECRET_MASK, type Option } from '../src/config'
import { cell, table, writeAll, type Generated } from './generated-section'

/** The generated section of README.md. */
export const README_DOC: Generated = { file: 'README.md', sections: { 'config-table': () => configTable() } }

const defaultOf = (o: Option) => (o.default === null ? 'unset' : `\`${String(o.default)}\``)

/** The table: variable, `serve` flag, default and description of every option; secret ones say so. */
export function configTable(): string {
  const rows = optionList().map(([, o]) => [
    `\`${o.env}\``,
    o.flag ? `\`--${o.flag}\`` : '',
    defaultOf(o),
    cell((o.secret ? `**Secret**: \`saltdeck config\` shows \`${SECRET_MASK}\`. ` : '') + o.doc),
  ])
  return table(['environment variable', '`serve` flag', 'default', 'description'], rows)
}

if (import.meta.main) writeAll(README_DOC)
