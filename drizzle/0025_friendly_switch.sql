DROP INDEX `runs_minion_time_cover`;--> statement-breakpoint
CREATE INDEX `runs_minion_time_cover` ON `runs` (`minion_id`,`completed_at`,`jid`,`id`,`fun`,`pass_count`,`fail_count`,`change_count`,`total_count`,`duration_ms`,`blocked`,`status`,`test`,`sls`,`source`);--> statement-breakpoint
ALTER TABLE `minion_package_sets` ADD `salt_source` text DEFAULT 'default' NOT NULL;