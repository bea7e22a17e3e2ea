ALTER TABLE `minions` ADD `sources` text;--> statement-breakpoint
-- Each minion's sources as minion_sources holds them, in name order (minions/sources-store.ts keeps it from now on).
UPDATE `minions` SET `sources` = (SELECT string_agg(`source`, ',' ORDER BY `source`) FROM `minion_sources` WHERE `minion_sources`.`minion_id` = `minions`.`id`);
