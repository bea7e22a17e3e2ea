CREATE TABLE `alert_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` text NOT NULL,
	`at` integer NOT NULL,
	`ok` integer NOT NULL,
	`detail` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `alert_attempts_delivery` ON `alert_attempts` (`delivery_id`,`id`);--> statement-breakpoint
CREATE TABLE `alert_channels` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`config` text NOT NULL,
	`enabled` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `alert_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`notification_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`last_error` text,
	`next_attempt_at` integer,
	`sent_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `alert_deliveries_due` ON `alert_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `alert_deliveries_time` ON `alert_deliveries` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `alert_notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`rule_id` text NOT NULL,
	`status` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `alert_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`kind` text NOT NULL,
	`minion_glob` text NOT NULL,
	`params` text NOT NULL,
	`channel_ids` text NOT NULL,
	`enabled` integer NOT NULL,
	`renotify_minutes` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alert_rules_name_key` ON `alert_rules` (`name_key`);--> statement-breakpoint
CREATE TABLE `alert_silences` (
	`id` text PRIMARY KEY NOT NULL,
	`rule_id` text,
	`subject_glob` text NOT NULL,
	`ends_at` integer NOT NULL,
	`comment` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `alert_transitions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`rule_id` text NOT NULL,
	`alert_id` text NOT NULL,
	`status` text NOT NULL,
	`at` integer NOT NULL,
	`notification_id` text
);
--> statement-breakpoint
CREATE INDEX `alert_transitions_pending` ON `alert_transitions` (`notification_id`,`rule_id`,`at`);--> statement-breakpoint
CREATE TABLE `alerts` (
	`id` text PRIMARY KEY NOT NULL,
	`rule_id` text NOT NULL,
	`subject` text NOT NULL,
	`state` text NOT NULL,
	`summary` text NOT NULL,
	`count` integer NOT NULL,
	`first_seen_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`resolved_at` integer,
	`acked_by` text,
	`acked_at` integer,
	`details` text NOT NULL,
	`notified_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alerts_open` ON `alerts` (`rule_id`,`subject`) WHERE state = 'firing';--> statement-breakpoint
CREATE INDEX `alerts_time` ON `alerts` (`first_seen_at`,`id`);--> statement-breakpoint
CREATE INDEX `alerts_state_time` ON `alerts` (`state`,`first_seen_at`,`id`);