CREATE TABLE `salt_sources` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `minion_sources` (
	`minion_id` text NOT NULL,
	`source` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	PRIMARY KEY(`minion_id`, `source`)
);
--> statement-breakpoint
CREATE INDEX `minion_sources_source` ON `minion_sources` (`source`,`minion_id`);--> statement-breakpoint
ALTER TABLE `activity_events` ADD `source` text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `source` text DEFAULT 'default' NOT NULL;--> statement-breakpoint
CREATE INDEX `jobs_source` ON `jobs` (`source`,`started_at`);--> statement-breakpoint
ALTER TABLE `runs` ADD `source` text DEFAULT 'default' NOT NULL;--> statement-breakpoint
-- Every minion known before sources existed came through the one salt-api there was: `default`.
INSERT INTO `minion_sources` (`minion_id`, `source`, `first_seen_at`, `last_seen_at`) SELECT `id`, 'default', `updated_at`, `updated_at` FROM `minions`;
