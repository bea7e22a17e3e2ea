-- Each activity event carries the transaction that inserted it: a reader exposes only events whose transactions, and
-- every older one, have ended (pg_snapshot_xmin), in (xid, id) order, so an event committed after one with a larger id
-- is never stepped over (docs/architecture.md, "Activity order across instances"). The constant default adds the column
-- without rewriting the table (rows stored before read as ended long ago); new rows take their own transaction's id.
ALTER TABLE "activity_events" ADD COLUMN "xid" xid8 DEFAULT '1' NOT NULL;--> statement-breakpoint
ALTER TABLE "activity_events" ALTER COLUMN "xid" SET DEFAULT pg_current_xact_id();--> statement-breakpoint
CREATE INDEX "activity_xid" ON "activity_events" USING btree ("xid","id");
