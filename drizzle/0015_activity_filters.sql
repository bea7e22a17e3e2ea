-- activity_notable_ts: a partial index of the events hide_routine keeps, so its page does not walk the routine job
-- returns that make most of a busy feed (only those events pay its insert).
CREATE INDEX `activity_notable_ts` ON `activity_events` (`ts`,`id`) WHERE NOT (event_type = 'job.ret' AND coalesce(success, 0) = 1 AND coalesce(changed, 0) = 0);