-- Job events are de-duplicated through the jobs and job_returns keys (a job.new lands with a new job, a job.ret with
-- a new return), so the unique key on activity_events, one more B-tree insert per event, goes.
DROP INDEX `activity_job_once`;--> statement-breakpoint
-- The search index moves to its own file (search.db, see src/features/activity/search-index.ts), indexed on a worker
-- thread under that file's write lock instead of this one's. It is rebuilt there from the events.
DROP TRIGGER `activity_fts_delete`;--> statement-breakpoint
DROP TABLE `activity_fts`;--> statement-breakpoint
DROP TABLE `activity_fts_state`;
