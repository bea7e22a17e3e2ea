DROP TABLE `minion_packages`;--> statement-breakpoint
ALTER TABLE `minions` DROP COLUMN `inventory_collected_at`;