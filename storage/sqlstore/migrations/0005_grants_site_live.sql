-- +goose Up
-- 0005_grants_site_live: the admin area lists and counts a site's live
-- grants, newest first, a page at a time. Only unrevoked grants are indexed,
-- so the index stays the size of what such a list can show.
CREATE INDEX grants_site_live ON grants (site_id, created_at DESC, id) WHERE revoked_at IS NULL;
