-- +goose Up
-- 0014_language: the language a person chose with the language selector
-- of the pages (issue 19), remembered on the account so it follows them to
-- another browser: a supported language code ("en", "de", "fr", "es"), or
-- empty while they never chose one (the browser's Accept-Language, then
-- the site's default language decide). The site's default language is the
-- existing sites.locale.
ALTER TABLE users ADD COLUMN language text NOT NULL DEFAULT '';
