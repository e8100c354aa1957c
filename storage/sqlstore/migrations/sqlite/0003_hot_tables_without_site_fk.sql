-- 0003_hot_tables_without_site_fk: PostgreSQL drops the site foreign keys
-- of the hot tables (lock contention on the sites row). SQLite has one
-- writer and no such contention; its schema keeps them. This step exists so
-- that both dialects share version numbers.
SELECT 1;
