CREATE TABLE `login_failures` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `login_failures_key` ON `login_failures` (`kind`,`key`,`at`);--> statement-breakpoint
CREATE INDEX `login_failures_at` ON `login_failures` (`at`);--> statement-breakpoint
CREATE TABLE `instances` (
	`id` text PRIMARY KEY NOT NULL,
	`hostname` text NOT NULL,
	`version` text NOT NULL,
	`engine` text NOT NULL,
	`started_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`leads` text DEFAULT '[]' NOT NULL
);
--> statement-breakpoint
CREATE INDEX `instances_last_seen` ON `instances` (`last_seen_at`);