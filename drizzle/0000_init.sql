CREATE TABLE `role_permissions` (
	`id` text PRIMARY KEY NOT NULL,
	`role_id` text NOT NULL,
	`verb` text NOT NULL,
	`resource_glob` text NOT NULL,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `role_permissions_grant` ON `role_permissions` (`role_id`,`verb`,`resource_glob`);--> statement-breakpoint
CREATE TABLE `roles` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`is_builtin` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `roles_name_key` ON `roles` (`name_key`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`name` text,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_token_hash` ON `sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `user_roles` (
	`user_id` text NOT NULL,
	`role_id` text NOT NULL,
	PRIMARY KEY(`user_id`, `role_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `user_roles_role` ON `user_roles` (`role_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`username_key` text NOT NULL,
	`display_name` text DEFAULT '' NOT NULL,
	`password_hash` text NOT NULL,
	`must_change_pw` integer DEFAULT false NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`is_builtin` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_key` ON `users` (`username_key`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`ts` integer NOT NULL,
	`username` text,
	`action` text NOT NULL,
	`target` text,
	`ok` integer NOT NULL,
	`detail` text,
	`client` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_ts` ON `audit_log` (`ts`);--> statement-breakpoint
CREATE TABLE `settings` (
	`section` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `activity_counts` (
	`category` text PRIMARY KEY NOT NULL,
	`n` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `activity_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`ts` integer NOT NULL,
	`category` text NOT NULL,
	`event_type` text NOT NULL,
	`minion_id` text,
	`jid` text,
	`fun` text,
	`success` integer,
	`changed` integer,
	`initiator` text,
	`target` text,
	`duration_ms` integer,
	`summary` text NOT NULL,
	`dedupe_key` text
);
--> statement-breakpoint
CREATE INDEX `activity_ts` ON `activity_events` (`ts`,`id`);--> statement-breakpoint
CREATE INDEX `activity_category_ts` ON `activity_events` (`category`,`ts`,`id`);--> statement-breakpoint
CREATE INDEX `activity_minion_ts` ON `activity_events` (`minion_id`,`ts`,`id`);--> statement-breakpoint
CREATE INDEX `activity_jid` ON `activity_events` (`jid`);--> statement-breakpoint
CREATE UNIQUE INDEX `activity_job_once` ON `activity_events` (`dedupe_key`);--> statement-breakpoint
CREATE TABLE `job_returns` (
	`jid` text NOT NULL,
	`minion_id` text NOT NULL,
	`success` integer,
	`retcode` integer,
	`ret` text,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`jid`, `minion_id`)
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`jid` text PRIMARY KEY NOT NULL,
	`fun` text,
	`target` text,
	`tgt_type` text,
	`user` text,
	`arg` text,
	`minions` text,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_started` ON `jobs` (`started_at`,`jid`);--> statement-breakpoint
CREATE INDEX `jobs_fun` ON `jobs` (`fun`,`started_at`);--> statement-breakpoint
CREATE INDEX `jobs_user` ON `jobs` (`user`,`started_at`);--> statement-breakpoint
CREATE TABLE `minions` (
	`id` text PRIMARY KEY NOT NULL,
	`key_state` text,
	`online` integer DEFAULT false NOT NULL,
	`last_seen` integer,
	`os` text,
	`osrelease` text,
	`ip` text,
	`salt_version` text,
	`os_family` text,
	`grains` text,
	`last_run_status` text,
	`last_run_completed_at` integer,
	`inventory_collected_at` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `minions_key_state` ON `minions` (`key_state`,`id`);--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`minion_id` text NOT NULL,
	`jid` text NOT NULL,
	`fun` text NOT NULL,
	`completed_at` integer NOT NULL,
	`pass_count` integer NOT NULL,
	`fail_count` integer NOT NULL,
	`change_count` integer NOT NULL,
	`total_count` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`blocked` integer NOT NULL,
	`status` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runs_minion_jid` ON `runs` (`minion_id`,`jid`);--> statement-breakpoint
CREATE INDEX `runs_minion_time` ON `runs` (`minion_id`,`completed_at`,`jid`);--> statement-breakpoint
CREATE INDEX `runs_minion_status_time` ON `runs` (`minion_id`,`status`,`completed_at`,`jid`);--> statement-breakpoint
CREATE TABLE `inventory_refreshes` (
	`id` text PRIMARY KEY NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`target` text NOT NULL,
	`minions_asked` integer DEFAULT 0 NOT NULL,
	`minions_answered` integer DEFAULT 0 NOT NULL,
	`packages_stored` integer DEFAULT 0 NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE TABLE `minion_packages` (
	`minion_id` text NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`arch` text DEFAULT '' NOT NULL,
	`source` text NOT NULL,
	PRIMARY KEY(`minion_id`, `name`, `version`, `arch`)
);
--> statement-breakpoint
CREATE TABLE `package_seen` (
	`source` text NOT NULL,
	`name` text NOT NULL,
	`seen_at` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`source`, `name`, `seen_at`)
);
--> statement-breakpoint
CREATE TABLE `package_stats` (
	`source` text NOT NULL,
	`name` text NOT NULL,
	`minion_count` integer NOT NULL,
	`version_count` integer NOT NULL,
	`last_seen` integer NOT NULL,
	PRIMARY KEY(`source`, `name`)
);
--> statement-breakpoint
CREATE INDEX `package_stats_minions` ON `package_stats` (`source`,`minion_count`,`name`);--> statement-breakpoint
CREATE INDEX `package_stats_versions` ON `package_stats` (`source`,`version_count`,`name`);--> statement-breakpoint
CREATE INDEX `package_stats_seen` ON `package_stats` (`source`,`last_seen`,`name`);--> statement-breakpoint
CREATE TABLE `package_versions` (
	`source` text NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`arch` text NOT NULL,
	`minion_count` integer NOT NULL,
	PRIMARY KEY(`source`, `name`, `version`, `arch`)
);
