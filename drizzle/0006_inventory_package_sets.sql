CREATE TABLE `minion_package_sets` (
	`minion_id` text PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`collected_at` integer NOT NULL,
	`keys` blob NOT NULL
);
--> statement-breakpoint
CREATE TABLE `package_key_generation` (
	`id` integer PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `package_keys` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`arch` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `package_keys_name` ON `package_keys` (`name`,`version`,`arch`);--> statement-breakpoint
-- Carry the stored inventory over: every (name, version, arch) held by some minion becomes a key, and each minion's
-- rows become one set row whose blob holds its key ids as little-endian uint32 (built with printf/unhex).
INSERT OR IGNORE INTO `package_keys` (`name`, `version`, `arch`) SELECT `name`, `version`, `arch` FROM `minion_packages`;
--> statement-breakpoint
INSERT INTO `minion_package_sets` (`minion_id`, `source`, `collected_at`, `keys`)
SELECT p.`minion_id`, min(p.`source`), coalesce(max(m.`inventory_collected_at`), 0),
	unhex(group_concat(printf('%02X%02X%02X%02X', k.`id` & 255, (k.`id` >> 8) & 255, (k.`id` >> 16) & 255, (k.`id` >> 24) & 255), ''))
FROM `minion_packages` p
JOIN `package_keys` k ON k.`name` = p.`name` AND k.`version` = p.`version` AND k.`arch` = p.`arch`
LEFT JOIN `minions` m ON m.`id` = p.`minion_id`
GROUP BY p.`minion_id`;
--> statement-breakpoint
-- Minions that reported an empty set keep their collection time.
INSERT INTO `minion_package_sets` (`minion_id`, `source`, `collected_at`, `keys`)
SELECT `id`, 'unknown', `inventory_collected_at`, x'' FROM `minions`
WHERE `inventory_collected_at` IS NOT NULL AND `id` NOT IN (SELECT `minion_id` FROM `minion_package_sets`);
--> statement-breakpoint
INSERT INTO `package_key_generation` (`id`, `generation`) VALUES (1, 0);
