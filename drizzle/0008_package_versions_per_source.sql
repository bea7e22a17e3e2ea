-- package_versions keeps per-source rows only: nothing reads the all-sources ('') rows, and the writer now counts
-- versions across sources in memory, so keeping them would only double the version writes of every refresh.
DELETE FROM `package_versions` WHERE `source` = '';
