/** The login form and the password change (forced after first login, or chosen by the user). */
import { useEffect, useState } from 'preact/hooks'
import { api } from '../lib/api'
import { useAction } from '../lib/hooks'
import { current, navigate } from '../lib/router'
import { useSession, type Me } from '../lib/session'
import type { Static } from '@sinclair/typebox'
import type { ProvidersOut } from '../../features/auth/schema'
import { ErrorBox, Field, Form, Page } from '../lib/ui'

/** GET /api/auth/providers: the sign-in choices besides the password. */
type Providers = Static<typeof ProvidersOut>

/**
 * The login page, shown whenever there is no session. With OpenID Connect enabled it offers "Sign in with <name>";
 * a sign-in that failed at the provider comes back as `#/login?error=<sentence>`, shown here.
 */
export function Login() {
  const { setMe } = useSession()
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [providers, setProviders] = useState<Providers | null>(null)
  const [returned] = useState(() => current().query.get('error'))
  const act = useAction()
  useEffect(() => {
    // Without the answer the password form still works: the button is only missing.
    api<Providers>('GET', '/api/auth/providers').then(setProviders, () => setProviders(null))
  }, [])
  const submit = () => act.run(async () => {
    const me = await api<Me>('POST', '/api/auth/login', { username, password })
    if (current().path === '/login') navigate('/', {}, true)
    setMe(me)
  })
  return (
    <main class="login">
      <Page title="Sign in to Saltdeck">
        {returned ? <p class="error" role="alert" id="login-returned">{returned}</p> : null}
        {providers?.oidc ? (
          <p class="login-sso"><a class="button primary" href={providers.oidc.start}>Sign in with {providers.oidc.display_name}</a></p>
        ) : null}
        <Form onSubmit={submit} label="Sign in">
          <Field id="login-user" label="Username">
            <input id="login-user" name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
          </Field>
          <Field id="login-pass" label="Password">
            <input id="login-pass" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          </Field>
          <ErrorBox error={act.error} />
          <button type="submit" class="primary" disabled={act.busy}>Sign in</button>
        </Form>
      </Page>
    </main>
  )
}

/** The password change form; `forced` when the server demands it before anything else. */
export function ChangePassword({ forced = false }: { forced?: boolean }) {
  const { me, setMe } = useSession()
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [again, setAgain] = useState('')
  const [done, setDone] = useState(false)
  const act = useAction()
  const submit = () => act.run(async () => {
    if (next !== again) throw new Error('The two new passwords differ.')
    await api('POST', '/api/auth/change-password', { current_password: current, new_password: next })
    setDone(true)
    setCurrent(''); setNext(''); setAgain('')
    setMe(await api<Me>('GET', '/api/auth/me'))
  })
  return (
    <Page title={forced ? 'Choose a new password' : 'Change password'}>
      {forced ? <p>Your password was set by an administrator or at install. Choose your own before going on.</p> : null}
      <Form onSubmit={submit} label="Change password">
        <input type="text" name="username" autocomplete="username" value={me?.username ?? ''} hidden readOnly />
        <Field id="pw-current" label="Current password">
          <input id="pw-current" type="password" autocomplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
        </Field>
        <Field id="pw-new" label="New password" hint="8 to 1024 characters, not your username.">
          <input id="pw-new" type="password" autocomplete="new-password" required minLength={8} maxLength={1024} aria-describedby="pw-new-hint" value={next} onInput={(e) => setNext(e.currentTarget.value)} />
        </Field>
        <Field id="pw-again" label="New password again">
          <input id="pw-again" type="password" autocomplete="new-password" required value={again} onInput={(e) => setAgain(e.currentTarget.value)} />
        </Field>
        <ErrorBox error={act.error} />
        {done && !forced ? <p role="status" class="ok">Password changed.</p> : null}
        <button type="submit" class="primary" disabled={act.busy}>Change password</button>
      </Form>
    </Page>
  )
}
