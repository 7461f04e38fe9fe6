-- Each key counts the changes of its globs and limits (the admin API's PATCH), so the
-- keys' version changes with them and every process reloads its copy of the keys.
ALTER TABLE api_keys ADD COLUMN changes BIGINT NOT NULL DEFAULT 0;
