CREATE TABLE `batch_slices` (
	`batch_id` text NOT NULL,
	`idx` integer NOT NULL,
	`minions` text NOT NULL,
	`jid` text,
	`started_at` integer,
	`finished_at` integer,
	PRIMARY KEY(`batch_id`, `idx`)
);
--> statement-breakpoint
CREATE TABLE `batches` (
	`id` text PRIMARY KEY NOT NULL,
	`initiator` text NOT NULL,
	`fun` text NOT NULL,
	`arg` text NOT NULL,
	`kwarg` text NOT NULL,
	`target` text NOT NULL,
	`tgt_type` text NOT NULL,
	`size` integer NOT NULL,
	`wait_seconds` integer NOT NULL,
	`stop_on_failure` integer NOT NULL,
	`state` text NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `batches_state` ON `batches` (`state`);