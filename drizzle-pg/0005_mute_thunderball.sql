CREATE TABLE "salt_sources" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "minion_sources" (
	"minion_id" text NOT NULL,
	"source" text NOT NULL,
	"first_seen_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL,
	CONSTRAINT "minion_sources_minion_id_source_pk" PRIMARY KEY("minion_id","source")
);
--> statement-breakpoint
ALTER TABLE "activity_events" ADD COLUMN "source" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "source" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "source" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
CREATE INDEX "minion_sources_source" ON "minion_sources" USING btree ("source","minion_id");--> statement-breakpoint
CREATE INDEX "jobs_source" ON "jobs" USING btree ("source","started_at");--> statement-breakpoint
-- Every minion known before sources existed came through the one salt-api there was: "default".
INSERT INTO "minion_sources" ("minion_id", "source", "first_seen_at", "last_seen_at") SELECT "id", 'default', "updated_at", "updated_at" FROM "minions";
