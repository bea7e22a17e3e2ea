CREATE TABLE `auth_version` (
	`id` integer PRIMARY KEY NOT NULL,
	`v` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `minions` ADD `run_count` integer DEFAULT 0 NOT NULL;