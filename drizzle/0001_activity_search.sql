-- Substring search over activity: an FTS5 trigram index on the five searched columns (contract §6 `search`),
-- external content on activity_events, kept current by triggers. Case-insensitive; a quoted phrase is an exact substring.
CREATE VIRTUAL TABLE `activity_fts` USING fts5(`summary`, `minion_id`, `fun`, `initiator`, `target`, content='activity_events', content_rowid='id', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `activity_fts_insert` AFTER INSERT ON `activity_events` BEGIN
  INSERT INTO `activity_fts` (rowid, `summary`, `minion_id`, `fun`, `initiator`, `target`) VALUES (new.id, new.summary, new.minion_id, new.fun, new.initiator, new.target);
END;
--> statement-breakpoint
CREATE TRIGGER `activity_fts_delete` AFTER DELETE ON `activity_events` BEGIN
  INSERT INTO `activity_fts` (`activity_fts`, rowid, `summary`, `minion_id`, `fun`, `initiator`, `target`) VALUES ('delete', old.id, old.summary, old.minion_id, old.fun, old.initiator, old.target);
END;
--> statement-breakpoint
INSERT INTO `activity_fts` (`activity_fts`) VALUES ('rebuild');
