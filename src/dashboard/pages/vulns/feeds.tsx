/** The imported vulnerability feeds, and an import form for those who manage them. */
import { useState } from 'preact/hooks'
import { upload } from '../../lib/api'
import { ago, count, dateTime } from '../../lib/format'
import { useAction, useGet } from '../../lib/hooks'
import { useSession } from '../../lib/session'
import { ErrorBox, Field, Form, FormFooter, Loading, Page, Panel, Table, type Column } from '../../lib/ui'
import type { Feed, FeedList, ImportResult } from './types'


const columns: Column<Feed>[] = [
  { label: 'Ecosystem', cell: (f) => f.ecosystem },
  { label: 'Records', cell: (f) => count(f.records), class: 'num' },
  { label: 'Imported', cell: (f) => <time dateTime={f.imported_at} title={dateTime(f.imported_at)}>{ago(f.imported_at)} ({dateTime(f.imported_at)})</time> },
  { label: 'From', cell: (f) => f.source },
]

/** Uploads an all.zip or a JSON file of OSV records and says what the server did. */
function ImportForm({ onDone }: { onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null)
  const [done, setDone] = useState<ImportResult | null>(null)
  const act = useAction()
  const submit = () => act.run(async () => {
    if (!file) throw new Error('Choose a file first.')
    setDone(null)
    const type = /\.zip$/i.test(file.name) ? 'application/zip' : 'application/json'
    setDone(await upload<ImportResult>('/api/vulns/import', file, type))
    onDone()
  })
  return (
    <Panel id="vuln-import-h" title="Import a feed">
      <p class="muted">An OSV <code>all.zip</code> as osv.dev publishes it per ecosystem, or a JSON array of records. Each ecosystem in the file replaces its earlier import.</p>
      <Form onSubmit={submit} label="Import a feed">
        <Field id="vuln-file" label="Feed file">
          <input id="vuln-file" type="file" accept=".zip,.json,application/zip,application/json" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </Field>
        <FormFooter act={act} label="Import" />
      </Form>
      {done ? (
        <p role="status" class="ok-text">
          Imported {count(done.records)} record{done.records === 1 ? '' : 's'} ({done.feeds.map((f) => `${f.ecosystem}: ${count(f.records)}`).join(', ') || 'no ecosystem matched'}); {count(done.skipped)} of other ecosystems skipped, {count(done.withdrawn)} withdrawn.
        </p>
      ) : null}
    </Panel>
  )
}

/** The page at `/vulns/feeds`. */
export function FeedsPage() {
  const { can } = useSession()
  const r = useGet<FeedList>('/api/vulns/feeds')
  return (
    <Page title="Vulnerability feeds">
      <ErrorBox error={r.error} />
      <Loading when={r.loading && !r.data} />
      <Table caption="Feeds" rows={r.data?.feeds} columns={columns} rowKey={(f) => f.ecosystem} empty="No feed imported yet. Import osv.dev's all.zip of each distribution the fleet runs (see the README's Vulnerabilities section)." />
      {can('manage', 'vuln:*') ? <ImportForm onDone={r.reload} /> : null}
    </Page>
  )
}
