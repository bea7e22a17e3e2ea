-- The inventory's counter tables keep free room in each page: a flush rewrites most of their rows (package_seen.n,
-- package_versions.minion_count, package_holders.bits), and with room on the page the new row version is a HOT update
-- that adds no index entry (these columns are in no index). About twice as fast per row (bench/RESULTS.md). Existing
-- pages keep their fill until rewritten; new ones follow the setting.
ALTER TABLE "package_seen" SET (fillfactor = 50);--> statement-breakpoint
ALTER TABLE "package_versions" SET (fillfactor = 50);--> statement-breakpoint
ALTER TABLE "package_holders" SET (fillfactor = 70);
