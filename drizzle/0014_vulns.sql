-- Vulnerabilities (contract §12): the holder index of package keys (filled from the stored sets at the next start),
-- learned source packages, OSV feeds and the findings kept against the inventory.
CREATE TABLE `package_holders` (
	`chunk` integer NOT NULL,
	`key_id` integer NOT NULL,
	`bits` blob NOT NULL,
	PRIMARY KEY(`chunk`, `key_id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `vuln_affected` (
	`ecosystem` text NOT NULL,
	`package` text NOT NULL,
	`vuln_id` text NOT NULL,
	`ranges` text NOT NULL,
	`versions` text NOT NULL,
	PRIMARY KEY(`ecosystem`, `package`, `vuln_id`)
);
--> statement-breakpoint
CREATE INDEX `vuln_affected_package` ON `vuln_affected` (`package`);--> statement-breakpoint
CREATE INDEX `vuln_affected_vuln` ON `vuln_affected` (`vuln_id`);--> statement-breakpoint
CREATE TABLE `vuln_feeds` (
	`ecosystem` text PRIMARY KEY NOT NULL,
	`records` integer NOT NULL,
	`imported_at` integer NOT NULL,
	`source` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `vuln_generation` (
	`id` integer PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `vuln_matches` (
	`ecosystem` text NOT NULL,
	`key_id` integer NOT NULL,
	`vuln_id` text NOT NULL,
	`package` text NOT NULL,
	`fixed` text,
	PRIMARY KEY(`ecosystem`, `key_id`, `vuln_id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `vuln_matches_vuln` ON `vuln_matches` (`vuln_id`,`ecosystem`,`key_id`);--> statement-breakpoint
CREATE INDEX `vuln_matches_key` ON `vuln_matches` (`key_id`);--> statement-breakpoint
CREATE TABLE `vuln_minions` (
	`minion_num` integer PRIMARY KEY NOT NULL,
	`minion_id` text NOT NULL,
	`ecosystem` text,
	`vuln_count` integer DEFAULT 0 NOT NULL,
	`worst` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `vuln_minions_id` ON `vuln_minions` (`minion_id`);--> statement-breakpoint
CREATE INDEX `vuln_minions_worst` ON `vuln_minions` (`worst`,`minion_id`);--> statement-breakpoint
CREATE TABLE `vuln_records` (
	`id` text PRIMARY KEY NOT NULL,
	`aliases` text NOT NULL,
	`summary` text NOT NULL,
	`details` text NOT NULL,
	`severity` text NOT NULL,
	`score` real,
	`published` text,
	`modified` text,
	`packages` text NOT NULL,
	`fixed_versions` text NOT NULL,
	`minion_count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `vuln_records_count` ON `vuln_records` (`minion_count`,`id`);--> statement-breakpoint
CREATE INDEX `vuln_records_severity` ON `vuln_records` (`severity`,`minion_count`,`id`);--> statement-breakpoint
ALTER TABLE `package_keys` ADD `source_name` text;--> statement-breakpoint
ALTER TABLE `package_keys` ADD `source_tried_at` integer;--> statement-breakpoint
CREATE INDEX `package_keys_source` ON `package_keys` (`source_name`);
--> statement-breakpoint
INSERT INTO `vuln_generation` (`id`, `generation`) VALUES (1, 0);
