-- The activity search off the insert path (PostgreSQL's twin of SQLite's search.db): a trigram GIN index over five
-- columns of activity_events cost the ingest's multi-row INSERT about 100 µs a row. Events now go into
-- activity_search_queue in the insert's own statement (a statement trigger over the inserted rows, whatever wrote
-- them: a bigint key each, cheap), and the search indexer moves them into activity_search (one text of the five
-- columns, its own trigram index) a batch at a time. A search asks activity_search for candidates plus every queued
-- id, and ILIKE on the columns decides: an event is found from the moment its insert commits, whatever the commit
-- order of concurrent instances.
CREATE TABLE "activity_search" ("id" bigint PRIMARY KEY NOT NULL, "doc" text NOT NULL);
--> statement-breakpoint
CREATE INDEX "activity_search_doc_trgm" ON "activity_search" USING gin ("doc" gin_trgm_ops);
--> statement-breakpoint
CREATE TABLE "activity_search_queue" ("id" bigint PRIMARY KEY NOT NULL);
--> statement-breakpoint
CREATE FUNCTION "activity_search_enqueue"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "activity_search_queue" ("id") SELECT "id" FROM "inserted";
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "activity_search_enqueue" AFTER INSERT ON "activity_events" REFERENCING NEW TABLE AS "inserted" FOR EACH STATEMENT EXECUTE FUNCTION "activity_search_enqueue"();
--> statement-breakpoint
INSERT INTO "activity_search_queue" ("id") SELECT "id" FROM "activity_events";
--> statement-breakpoint
DROP INDEX "activity_search_trgm";
