-- Substring search over activity (contract §6 `search`): an FTS5 trigram index on the five searched columns, external
-- content on activity_events. Rows are indexed in bulk behind a watermark (indexActivity), not by a per-row trigger,
-- which would cost the event ingest several times over; search scans the short unindexed tail itself.
CREATE VIRTUAL TABLE `activity_fts` USING fts5(`summary`, `minion_id`, `fun`, `initiator`, `target`, content='activity_events', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TABLE `activity_fts_state` (`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1), `watermark` integer NOT NULL);
--> statement-breakpoint
-- Deleting an indexed row removes it from the index; pruning indexes first, so every deleted row is indexed.
CREATE TRIGGER `activity_fts_delete` AFTER DELETE ON `activity_events` WHEN old.id <= (SELECT `watermark` FROM `activity_fts_state`) BEGIN
  INSERT INTO `activity_fts` (`activity_fts`, rowid, `summary`, `minion_id`, `fun`, `initiator`, `target`) VALUES ('delete', old.id, old.summary, old.minion_id, old.fun, old.initiator, old.target);
END;
--> statement-breakpoint
INSERT INTO `activity_fts` (`activity_fts`) VALUES ('rebuild');
--> statement-breakpoint
INSERT INTO `activity_fts_state` (`id`, `watermark`) SELECT 1, coalesce(max(`id`), 0) FROM `activity_events`;
