-- What the SQLite migrations (drizzle/) create beside the tables, which drizzle-kit cannot derive from the schema.

-- The rows of the one-row tables (SQLite: 0003, 0006, 0014).
INSERT INTO "auth_version" ("id", "v") VALUES (1, 0);
--> statement-breakpoint
INSERT INTO "package_key_generation" ("id", "generation") VALUES (1, 0);
--> statement-breakpoint
INSERT INTO "vuln_generation" ("id", "generation") VALUES (1, 0);
--> statement-breakpoint
-- auth_version (SQLite: 0003's triggers): bumped by every write that can change a session's user, state or grants, so
-- every process's authentication cache (features/auth/service.ts) notices. Row triggers, as SQLite's are.
CREATE FUNCTION "auth_version_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "auth_version" SET "v" = "v" + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "auth_v_users_u" AFTER UPDATE ON "users" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
CREATE TRIGGER "auth_v_users_d" AFTER DELETE ON "users" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
CREATE TRIGGER "auth_v_roles_d" AFTER DELETE ON "roles" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
CREATE TRIGGER "auth_v_perms_i" AFTER INSERT ON "role_permissions" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
CREATE TRIGGER "auth_v_perms_d" AFTER DELETE ON "role_permissions" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
CREATE TRIGGER "auth_v_user_roles_i" AFTER INSERT ON "user_roles" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
CREATE TRIGGER "auth_v_user_roles_d" AFTER DELETE ON "user_roles" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
CREATE TRIGGER "auth_v_sessions_d" AFTER DELETE ON "sessions" FOR EACH ROW EXECUTE FUNCTION "auth_version_bump"();
--> statement-breakpoint
-- The activity search (contract §6 `search`: a substring of summary, minion_id, fun, initiator or target, any case),
-- where SQLite keeps an FTS5 trigram index in search.db: one trigram GIN index over the five columns, so
-- `summary ILIKE $1 OR minion_id ILIKE $1 OR ...` is a bitmap scan of it (GIN serves a condition on any of its columns).
CREATE INDEX "activity_search_trgm" ON "activity_events" USING gin ("summary" gin_trgm_ops, "minion_id" gin_trgm_ops, "fun" gin_trgm_ops, "initiator" gin_trgm_ops, "target" gin_trgm_ops);
