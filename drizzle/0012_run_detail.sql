CREATE TABLE `job_marks` (
	`jid` text PRIMARY KEY NOT NULL,
	`initiator` text,
	`internal` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `job_marks_created` ON `job_marks` (`created_at`);--> statement-breakpoint
CREATE TABLE `run_details` (
	`run_id` text PRIMARY KEY NOT NULL,
	`minion_id` text NOT NULL,
	`states` blob,
	`changes` text,
	`errors` text
);
--> statement-breakpoint
CREATE INDEX `run_details_minion` ON `run_details` (`minion_id`);--> statement-breakpoint
CREATE TABLE `run_trend` (
	`day` text PRIMARY KEY NOT NULL,
	`healthy` integer NOT NULL,
	`changed` integer NOT NULL,
	`unhealthy` integer NOT NULL,
	`blocked` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `state_failures` (
	`ident_id` integer NOT NULL,
	`minion_id` text NOT NULL,
	`failed_at` integer NOT NULL,
	`comment_id` integer,
	PRIMARY KEY(`ident_id`, `minion_id`)
);
--> statement-breakpoint
CREATE INDEX `state_failures_time` ON `state_failures` (`failed_at`);--> statement-breakpoint
CREATE TABLE `state_idents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`sls` text NOT NULL,
	`state_id` text NOT NULL,
	`function` text NOT NULL,
	`name` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `state_idents_key_sls` ON `state_idents` (`key`,`sls`);--> statement-breakpoint
CREATE TABLE `state_texts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`text` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `state_texts_text` ON `state_texts` (`text`);--> statement-breakpoint
DROP INDEX `runs_minion_time_cover`;--> statement-breakpoint
ALTER TABLE `runs` ADD `test` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `sls` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
CREATE INDEX `runs_minion_time_cover` ON `runs` (`minion_id`,`completed_at`,`jid`,`id`,`fun`,`pass_count`,`fail_count`,`change_count`,`total_count`,`duration_ms`,`blocked`,`status`,`test`,`sls`);--> statement-breakpoint
ALTER TABLE `jobs` ADD `initiator` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `internal` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `killed_at` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `killed_by` text;--> statement-breakpoint
CREATE INDEX `minions_key_last_status` ON `minions` (`key_state`,`last_run_status`);--> statement-breakpoint
-- Pollers are on by default from here (contract §5). An install that existed before keeps the values it ran with:
-- the old defaults are written under whatever it stored, so only a fresh install (no users yet) gets the new ones.
INSERT INTO `settings` (`section`, `value`, `updated_at`)
SELECT 'pollers', json_patch('{"inventory_refresh_minutes":0,"inventory_refresh_initial_delay_s":30,"fleet_poll_interval_seconds":0,"jobs_poll_interval_seconds":0,"event_stream_enabled":false}', coalesce((SELECT `value` FROM `settings` WHERE `section` = 'pollers'), '{}')), CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE EXISTS (SELECT 1 FROM `users`)
ON CONFLICT (`section`) DO UPDATE SET `value` = excluded.`value`;
--> statement-breakpoint
-- Today's point of the fleet trend, from the last runs stored so far.
INSERT INTO `run_trend` (`day`, `healthy`, `changed`, `unhealthy`, `blocked`)
SELECT date('now'), count(*) FILTER (WHERE `last_run_status` = 'healthy'), count(*) FILTER (WHERE `last_run_status` = 'changed'),
  count(*) FILTER (WHERE `last_run_status` = 'unhealthy'), count(*) FILTER (WHERE `last_run_status` = 'blocked')
FROM `minions` WHERE `last_run_status` IS NOT NULL
HAVING count(*) > 0;
