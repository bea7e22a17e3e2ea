-- pg_trgm: the activity search's trigram index (contract §6 search, §15). PostgreSQL 13+ trusts it, so the database's
-- owner may create it; a role that may not is told the one statement to run, and nothing else is created.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
  RAISE EXCEPTION 'Saltdeck needs the pg_trgm extension and could not create it (%): run "CREATE EXTENSION IF NOT EXISTS pg_trgm;" in database % as a superuser or the database owner (Debian: apt-get install postgresql-contrib on older releases), then start Saltdeck again', SQLERRM, current_database();
END
$$;
