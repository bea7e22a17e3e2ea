CREATE TABLE `identity_mappings` (
	`id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`group_name` text NOT NULL,
	`group_key` text NOT NULL,
	`role_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identity_mappings_unique` ON `identity_mappings` (`provider`,`group_key`,`role_id`);--> statement-breakpoint
CREATE INDEX `identity_mappings_role` ON `identity_mappings` (`role_id`);--> statement-breakpoint
CREATE TABLE `identity_providers` (
	`provider` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `users` ADD `source` text DEFAULT 'local' NOT NULL;