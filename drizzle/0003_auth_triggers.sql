-- auth_version: one row bumped by every write that can change a session's user, state or grants, so the
-- in-process authentication cache (features/auth/service.ts) is invalidated even by another process (the CLI).
INSERT INTO `auth_version` (`id`, `v`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `auth_v_users_u` AFTER UPDATE ON `users` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_v_users_d` AFTER DELETE ON `users` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_v_roles_d` AFTER DELETE ON `roles` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_v_perms_i` AFTER INSERT ON `role_permissions` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_v_perms_d` AFTER DELETE ON `role_permissions` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_v_user_roles_i` AFTER INSERT ON `user_roles` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_v_user_roles_d` AFTER DELETE ON `user_roles` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_v_sessions_d` AFTER DELETE ON `sessions` BEGIN UPDATE `auth_version` SET `v` = `v` + 1; END;
--> statement-breakpoint
UPDATE `minions` SET `run_count` = (SELECT count(*) FROM `runs` WHERE `runs`.`minion_id` = `minions`.`id`);
