DROP INDEX `role_permissions_grant`;--> statement-breakpoint
ALTER TABLE `role_permissions` ADD `target_glob` text DEFAULT '*' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `role_permissions_grant` ON `role_permissions` (`role_id`,`verb`,`resource_glob`,`target_glob`);