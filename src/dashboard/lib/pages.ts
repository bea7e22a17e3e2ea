/** The shape every dashboard page registers with: its route pattern, its nav entry and who may see it. */
import type { ComponentType } from 'preact'

/** Props a page receives: the route's params and the current query. */
export interface PageProps {
  params: Record<string, string>
  query: URLSearchParams
}

/** One page of the dashboard. */
export interface PageDef {
  /** Hash path pattern, e.g. `/minions/:id`. */
  pattern: string
  /** Shown in the document title. */
  title: string
  component: ComponentType<PageProps>
  /** Present when the page has a link in the side navigation. */
  nav?: { label: string; section: 'Fleet' | 'Alerts' | 'Vulnerabilities' | 'Admin' }
  /** The permission the page needs; the nav hides it when missing (the API still enforces it). */
  needs?: [verb: string, resource: string]
}
