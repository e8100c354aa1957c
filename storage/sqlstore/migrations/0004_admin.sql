-- +goose Up
-- 0004_admin: what the operators' API (/api/v1) manages beyond the catalog:
-- coupons, posts, pages, comments, forms and their submissions, uploaded
-- files, the site's appearance and members' subscriptions. Every table
-- carries site_id; references to other site-owned rows are checked for the
-- same site by the API (a foreign key alone would accept another site's id).

CREATE TABLE coupons (
    id               {{.ID}},
    site_id          {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    code             text NOT NULL,
    description      text NOT NULL DEFAULT '',
    percent_off      integer NOT NULL DEFAULT 0 CHECK (percent_off BETWEEN 0 AND 100),
    amount_off_cents {{.Int64}} NOT NULL DEFAULT 0 CHECK (amount_off_cents >= 0),
    currency         text NOT NULL DEFAULT 'USD',
    max_redemptions  integer NOT NULL DEFAULT 0,
    redemptions      integer NOT NULL DEFAULT 0,
    expires_at       {{.Time}},
    active           boolean NOT NULL DEFAULT true,
    created_at       {{.Time}} NOT NULL,
    updated_at       {{.Time}} NOT NULL,
    UNIQUE (site_id, code)
);

CREATE TABLE posts (
    id           {{.ID}},
    site_id      {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug         text NOT NULL,
    title        text NOT NULL,
    body         text NOT NULL DEFAULT '',
    status       text NOT NULL CHECK (status IN ('draft', 'published')),
    author_id    text NOT NULL DEFAULT '',
    published_at {{.Time}},
    created_at   {{.Time}} NOT NULL,
    updated_at   {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE pages (
    id         {{.ID}},
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug       text NOT NULL,
    title      text NOT NULL,
    body       text NOT NULL DEFAULT '',
    status     text NOT NULL CHECK (status IN ('draft', 'published')),
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE comments (
    id         {{.ID}},
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    course_id  {{.Int64}} REFERENCES courses (id) ON DELETE CASCADE,
    lecture_id {{.Int64}} REFERENCES lectures (id) ON DELETE CASCADE,
    post_id    {{.Int64}} REFERENCES posts (id) ON DELETE CASCADE,
    body       text NOT NULL,
    created_at {{.Time}} NOT NULL
);
CREATE INDEX comments_site_id ON comments (site_id, id);

CREATE TABLE forms (
    id         {{.ID}},
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug       text NOT NULL,
    title      text NOT NULL,
    fields     text NOT NULL DEFAULT '[]',
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE form_submissions (
    id         {{.ID}},
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    form_id    {{.Int64}} NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    user_id    text REFERENCES users (id) ON DELETE SET NULL,
    email      text NOT NULL DEFAULT '',
    data       text NOT NULL DEFAULT '{}',
    created_at {{.Time}} NOT NULL
);
CREATE INDEX form_submissions_form ON form_submissions (form_id, id);

CREATE TABLE files (
    id           {{.ID}},
    site_id      {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    storage_key  text NOT NULL,
    name         text NOT NULL,
    content_type text NOT NULL,
    size_bytes   {{.Int64}} NOT NULL,
    sha256       text NOT NULL,
    created_by   text NOT NULL DEFAULT '',
    created_at   {{.Time}} NOT NULL,
    UNIQUE (site_id, storage_key)
);

CREATE TABLE appearance (
    site_id          {{.Int64}} PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    primary_color    text NOT NULL,
    accent_color     text NOT NULL,
    background_color text NOT NULL,
    text_color       text NOT NULL,
    logo_file_id     {{.Int64}} REFERENCES files (id) ON DELETE SET NULL,
    updated_at       {{.Time}} NOT NULL
);

CREATE TABLE subscriptions (
    id                   {{.ID}},
    site_id              {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id              text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    plan_id              {{.Int64}} NOT NULL REFERENCES membership_plans (id) ON DELETE RESTRICT,
    status               text NOT NULL CHECK (status IN ('active', 'past_due', 'canceled')),
    started_at           {{.Time}} NOT NULL,
    current_period_end   {{.Time}} NOT NULL,
    cancel_at_period_end boolean NOT NULL DEFAULT false,
    canceled_at          {{.Time}},
    created_at           {{.Time}} NOT NULL,
    updated_at           {{.Time}} NOT NULL
);
CREATE INDEX subscriptions_site_user ON subscriptions (site_id, user_id);

-- Lists of the admin API filter a site's rows by a parent and page by id.
CREATE INDEX sections_site_course ON sections (site_id, course_id, id);
CREATE INDEX lectures_site_section ON lectures (site_id, section_id, id);
CREATE INDEX enrollments_site_enrolled ON enrollments (site_id, enrolled_at);
