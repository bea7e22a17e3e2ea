CREATE TABLE `job_templates` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text NOT NULL,
	`tgt` text NOT NULL,
	`tgt_type` text NOT NULL,
	`fun` text NOT NULL,
	`arg` text NOT NULL,
	`kwarg` text NOT NULL,
	`batch` text,
	`shared` integer NOT NULL,
	`owner_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `job_templates_name_key` ON `job_templates` (`name_key`);--> statement-breakpoint
CREATE INDEX `job_templates_owner` ON `job_templates` (`owner_id`);--> statement-breakpoint
CREATE TABLE `schedule_firings` (
	`schedule_id` text NOT NULL,
	`due_at` integer NOT NULL,
	`claimed_at` integer NOT NULL,
	PRIMARY KEY(`schedule_id`, `due_at`)
);
--> statement-breakpoint
CREATE TABLE `schedules` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`template_id` text NOT NULL,
	`cron` text NOT NULL,
	`timezone` text NOT NULL,
	`enabled` integer NOT NULL,
	`next_run_at` integer,
	`last_run_at` integer,
	`last_jid` text,
	`last_error` text,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `schedules_name_key` ON `schedules` (`name_key`);--> statement-breakpoint
CREATE INDEX `schedules_due` ON `schedules` (`enabled`,`next_run_at`);--> statement-breakpoint
CREATE INDEX `schedules_template` ON `schedules` (`template_id`);