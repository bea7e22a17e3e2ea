/** The dashboard's entry: loads the session, then shows login, the forced password change, or the app shell. */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, onAuthFailure } from './lib/api'
import { href, match, useLocation } from './lib/router'
import { holds, SessionContext, type Me } from './lib/session'
import type { PageDef } from './lib/pages'
import { ErrorBox, Page } from './lib/ui'
import { localZoneName, setTimeZone, type ZoneChoice } from './lib/format'
import { ChangePassword, Login } from './pages/auth'
import { fleetPages } from './pages/fleet'
import { adminPages } from './pages/admin'
import { alertPages } from './pages/alerts'
import { vulnPages } from './pages/vulns'

const pages: PageDef[] = [
  ...fleetPages,
  ...alertPages,
  ...vulnPages,
  ...adminPages,
  { pattern: '/account/password', title: 'Change password', component: () => <ChangePassword /> },
]

/** The side navigation, filtered by what the user holds. */
function Nav({ me, path, onLogout, zone, onZone }: { me: Me; path: string; onLogout: () => void; zone: ZoneChoice; onZone: (z: ZoneChoice) => void }) {
  const visible = pages.filter((p) => p.nav && (!p.needs || holds(me, ...p.needs)))
  const sections = ['Fleet', 'Alerts', 'Vulnerabilities', 'Admin'] as const
  // The most specific entry containing the path is the current one (on /alerts/rules that is Rules, not Alerts too).
  const within = (p: PageDef) => (p.pattern === '/' ? path === '/' : path === p.pattern || path.startsWith(`${p.pattern}/`))
  const current = visible.filter(within).sort((a, b) => b.pattern.length - a.pattern.length)[0]
  // On a narrow screen the links fold behind the Menu button (CSS shows the button there only); a page opened closes them.
  const [open, setOpen] = useState(false)
  useEffect(() => setOpen(false), [path])
  return (
    <nav class="side" aria-label="Main">
      <div class="side-top">
        <a class="brand" href="#/">Saltdeck</a>
        <button type="button" class="menu-toggle" aria-expanded={open} aria-controls="nav-links" onClick={() => setOpen(!open)}>Menu</button>
      </div>
      <div id="nav-links" class={open ? 'nav-links open' : 'nav-links'}>
        {sections.map((s) => {
          const items = visible.filter((p) => p.nav!.section === s)
          if (!items.length) return null
          return (
            <div class="nav-section">
              <h2>{s}</h2>
              <ul>
                {items.map((p) => {
                  const active = p === current
                  return <li><a href={href(p.pattern)} aria-current={active ? 'page' : undefined}>{p.nav!.label}</a></li>
                })}
              </ul>
            </div>
          )
        })}
        <div class="nav-user">
          <span>{me.display_name || me.username}</span>
          <a href="#/account/password">Change password</a>
          <label class="zone-choice">
            Times in{' '}
            <select value={zone} onChange={(e) => onZone((e.currentTarget as HTMLSelectElement).value as ZoneChoice)}>
              <option value="local">{`local time (${localZoneName()})`}</option>
              <option value="utc">UTC</option>
            </select>
          </label>
          <button type="button" class="link" onClick={onLogout}>Sign out</button>
        </div>
      </div>
    </nav>
  )
}

/** The routed content area. */
function Routed({ path, query }: { path: string; query: URLSearchParams }) {
  for (const p of pages) {
    const params = match(p.pattern, path)
    // Keyed by the path: another minion's (or job's, role's...) page starts from nothing instead of showing the previous
    // one's answers until its own arrive. A query change (filters, paging) keeps the page and its answer meanwhile.
    if (params) return <p.component key={path} params={params} query={query} />
  }
  return <Page title="Not found"><p>There is no page at this address. <a href="#/">Go to the overview.</a></p></Page>
}

/** The whole dashboard. */
function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const [bootError, setBootError] = useState<Error | undefined>()
  // The signed-in user's time zone (local or UTC), read before the pages render so their times show in it at once.
  const [zone, setZone] = useState<ZoneChoice | undefined>()
  const loc = useLocation()
  useEffect(() => {
    api<Me>('GET', '/api/auth/me').then(setMe, (e) => (e instanceof ApiError && e.status === 401 ? setMe(null) : setBootError(e)))
    return onAuthFailure((status) => (status === 401 ? setMe(null) : api<Me>('GET', '/api/auth/me').then(setMe, () => setMe(null))))
  }, [])
  const signedIn = !!me && !me.must_change_pw
  useEffect(() => {
    if (!signedIn) return setZone(undefined)
    const use = (z: ZoneChoice) => {
      setTimeZone(z)
      setZone(z)
    }
    // Without the preference (an older server, a failed read) times stay in the browser's zone, named.
    api<{ time_zone: ZoneChoice }>('GET', '/api/auth/me/preferences').then((p) => use(p.time_zone), () => use('local'))
  }, [signedIn, me?.username])
  const chooseZone = (z: ZoneChoice) => {
    api<{ time_zone: ZoneChoice }>('PUT', '/api/auth/me/preferences', { time_zone: z }).then((p) => {
      setTimeZone(p.time_zone)
      setZone(p.time_zone)
    }, () => {})
  }
  const logout = () => api('POST', '/api/auth/logout').finally(() => setMe(null))
  let body
  if (bootError) body = <main class="login"><ErrorBox error={bootError} /></main>
  else if (me === undefined) body = <p class="muted" role="status">Loading…</p>
  else if (me === null) body = <Login />
  else if (me.must_change_pw) body = <main class="login"><ChangePassword forced /></main>
  else if (!zone) body = <p class="muted" role="status">Loading…</p>
  else body = (
    // Keyed by the zone: choosing another renders every page again, its times in the new zone.
    <div class="shell" key={zone}>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>Skip to content</button>
      <Nav me={me} path={loc.path} onLogout={logout} zone={zone} onZone={chooseZone} />
      <main id="main" class="content" tabIndex={-1}><Routed path={loc.path} query={loc.query} /></main>
    </div>
  )
  return <SessionContext.Provider value={{ me: me ?? null, setMe }}>{body}</SessionContext.Provider>
}

render(<App />, document.getElementById('app')!)
