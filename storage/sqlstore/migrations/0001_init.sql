-- +goose Up
-- 0001_init: sites, identity, OAuth state, audit, and the course data the
-- member API and the catalog read. Every site-owned table carries site_id.

CREATE TABLE sites (
    id                   {{.ID}},
    slug                 text NOT NULL UNIQUE,
    name                 text NOT NULL,
    origin               text NOT NULL UNIQUE,
    aliases              text NOT NULL DEFAULT '[]',
    registration_variant text NOT NULL CHECK (registration_variant IN ('A', 'B')),
    id_tokens_enabled    boolean NOT NULL DEFAULT false,
    mcp_connections_beta boolean NOT NULL DEFAULT false,
    cimd_open            boolean NOT NULL DEFAULT false,
    description          text NOT NULL DEFAULT '',
    locale               text NOT NULL DEFAULT 'en',
    settings             text NOT NULL DEFAULT '{}',
    created_at           {{.Time}} NOT NULL,
    updated_at           {{.Time}} NOT NULL
);

CREATE TABLE site_hosts (
    host    text PRIMARY KEY,
    site_id {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE
);
CREATE INDEX site_hosts_site ON site_hosts (site_id);

CREATE TABLE site_keys (
    id             {{.ID}},
    site_id        {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    kid            text NOT NULL,
    alg            text NOT NULL,
    public_jwk     text NOT NULL,
    sealed_private {{.Bytes}} NOT NULL,
    state          text NOT NULL CHECK (state IN ('next', 'active', 'retired')),
    activates_at   {{.Time}} NOT NULL,
    retired_at     {{.Time}},
    created_at     {{.Time}} NOT NULL,
    UNIQUE (site_id, kid)
);

CREATE TABLE users (
    id            text PRIMARY KEY,
    email         text NOT NULL UNIQUE,
    name          text NOT NULL,
    picture       text NOT NULL DEFAULT '',
    password_hash text NOT NULL DEFAULT '',
    created_at    {{.Time}} NOT NULL,
    updated_at    {{.Time}} NOT NULL
);

CREATE TABLE site_roles (
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'admin', 'lecturer', 'student')),
    created_at {{.Time}} NOT NULL,
    PRIMARY KEY (site_id, user_id, role)
);
CREATE INDEX site_roles_user ON site_roles (user_id);

-- site_id is NULL for the platform-wide client of a vendor integration.
CREATE TABLE clients (
    id               {{.ID}},
    site_id          {{.Int64}} REFERENCES sites (id) ON DELETE CASCADE,
    client_id        text NOT NULL,
    secret_hash      {{.Bytes}},
    name             text NOT NULL,
    audience         text NOT NULL CHECK (audience IN ('operator', 'member')),
    type             text NOT NULL CHECK (type IN ('public', 'confidential')),
    application_type text NOT NULL DEFAULT 'native',
    redirect_uris    text NOT NULL DEFAULT '[]',
    scopes           text NOT NULL DEFAULT '[]',
    source           text NOT NULL CHECK (source IN ('vendor', 'dcr', 'cimd', 'admin')),
    reviewed         boolean NOT NULL DEFAULT false,
    created_by       text NOT NULL DEFAULT '',
    last_used_at     {{.Time}},
    created_at       {{.Time}} NOT NULL,
    updated_at       {{.Time}} NOT NULL
);
CREATE UNIQUE INDEX clients_site_client ON clients (site_id, client_id) WHERE site_id IS NOT NULL;
CREATE UNIQUE INDEX clients_platform_client ON clients (client_id) WHERE site_id IS NULL;
CREATE INDEX clients_site_created ON clients (site_id, created_at);

CREATE TABLE vendor_integrations (
    id           {{.ID}},
    name         text NOT NULL,
    client_names text NOT NULL DEFAULT '[]',
    client_id    text NOT NULL UNIQUE,
    created_at   {{.Time}} NOT NULL
);

-- site_id is NULL for a platform-wide allowlist entry.
CREATE TABLE cimd_hosts (
    id         {{.ID}},
    site_id    {{.Int64}} REFERENCES sites (id) ON DELETE CASCADE,
    host       text NOT NULL,
    reviewed   boolean NOT NULL DEFAULT false,
    created_at {{.Time}} NOT NULL
);
CREATE UNIQUE INDEX cimd_hosts_site_host ON cimd_hosts (COALESCE(site_id, 0), host);

CREATE TABLE grants (
    id           text PRIMARY KEY,
    site_id      {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    client_id    text NOT NULL,
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes       text NOT NULL DEFAULT '[]',
    resource     text NOT NULL DEFAULT '',
    auth_time    {{.Time}} NOT NULL,
    created_at   {{.Time}} NOT NULL,
    expires_at   {{.Time}} NOT NULL,
    last_used_at {{.Time}} NOT NULL,
    revoked_at   {{.Time}}
);
CREATE INDEX grants_site_user ON grants (site_id, user_id);
CREATE INDEX grants_site_client ON grants (site_id, client_id);
CREATE INDEX grants_revoked ON grants (revoked_at) WHERE revoked_at IS NOT NULL;

CREATE TABLE refresh_tokens (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    grant_id    text NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
    token_hash  {{.Bytes}} NOT NULL UNIQUE,
    parent_hash {{.Bytes}},
    created_at  {{.Time}} NOT NULL,
    expires_at  {{.Time}} NOT NULL,
    used_at     {{.Time}},
    revoked_at  {{.Time}}
);
CREATE INDEX refresh_tokens_grant ON refresh_tokens (grant_id);

CREATE TABLE consents (
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  text NOT NULL,
    scopes     text NOT NULL DEFAULT '[]',
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL,
    PRIMARY KEY (site_id, user_id, client_id)
);

CREATE TABLE audit_events (
    id         {{.ID}},
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    actor      text NOT NULL,
    action     text NOT NULL,
    target     text NOT NULL DEFAULT '',
    ip         text NOT NULL DEFAULT '',
    details    text NOT NULL DEFAULT '{}',
    created_at {{.Time}} NOT NULL
);
CREATE INDEX audit_events_site_id ON audit_events (site_id, id);

CREATE TABLE courses (
    id           {{.ID}},
    site_id      {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug         text NOT NULL,
    title        text NOT NULL,
    subtitle     text NOT NULL DEFAULT '',
    description  text NOT NULL DEFAULT '',
    category     text NOT NULL DEFAULT '',
    price_cents  {{.Int64}} NOT NULL DEFAULT 0,
    currency     text NOT NULL DEFAULT 'USD',
    status       text NOT NULL CHECK (status IN ('draft', 'published')),
    image_url    text NOT NULL DEFAULT '',
    published_at {{.Time}},
    created_at   {{.Time}} NOT NULL,
    updated_at   {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE lecturers (
    id         {{.ID}},
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug       text NOT NULL,
    name       text NOT NULL,
    bio        text NOT NULL DEFAULT '',
    user_id    text REFERENCES users (id) ON DELETE SET NULL,
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE course_lecturers (
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    course_id   {{.Int64}} NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    lecturer_id {{.Int64}} NOT NULL REFERENCES lecturers (id) ON DELETE CASCADE,
    position    integer NOT NULL DEFAULT 0,
    PRIMARY KEY (course_id, lecturer_id)
);

CREATE TABLE sections (
    id        {{.ID}},
    site_id   {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    course_id {{.Int64}} NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    title     text NOT NULL,
    position  integer NOT NULL DEFAULT 0
);
CREATE INDEX sections_course ON sections (course_id, position);

CREATE TABLE lectures (
    id               {{.ID}},
    site_id          {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    course_id        {{.Int64}} NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    section_id       {{.Int64}} NOT NULL REFERENCES sections (id) ON DELETE CASCADE,
    title            text NOT NULL,
    position         integer NOT NULL DEFAULT 0,
    duration_seconds integer NOT NULL DEFAULT 0,
    free_preview     boolean NOT NULL DEFAULT false,
    status           text NOT NULL CHECK (status IN ('draft', 'published'))
);
CREATE INDEX lectures_course ON lectures (course_id, position);
CREATE INDEX lectures_section ON lectures (section_id, position);

CREATE TABLE enrollments (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    course_id   {{.Int64}} NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    enrolled_at {{.Time}} NOT NULL,
    expires_at  {{.Time}},
    UNIQUE (site_id, user_id, course_id)
);
CREATE INDEX enrollments_site_course ON enrollments (site_id, course_id);

CREATE TABLE lecture_progress (
    id               {{.ID}},
    site_id          {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id          text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    lecture_id       {{.Int64}} NOT NULL REFERENCES lectures (id) ON DELETE CASCADE,
    course_id        {{.Int64}} NOT NULL REFERENCES courses (id) ON DELETE CASCADE,
    position_seconds integer NOT NULL DEFAULT 0,
    completed        boolean NOT NULL DEFAULT false,
    updated_at       {{.Time}} NOT NULL,
    UNIQUE (site_id, user_id, lecture_id)
);
CREATE INDEX lecture_progress_user_course ON lecture_progress (site_id, user_id, course_id, updated_at);

CREATE TABLE digital_products (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug        text NOT NULL,
    title       text NOT NULL,
    description text NOT NULL DEFAULT '',
    price_cents {{.Int64}} NOT NULL DEFAULT 0,
    currency    text NOT NULL DEFAULT 'USD',
    status      text NOT NULL CHECK (status IN ('draft', 'published')),
    created_at  {{.Time}} NOT NULL,
    updated_at  {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE digital_product_purchases (
    id           {{.ID}},
    site_id      {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    product_id   {{.Int64}} NOT NULL REFERENCES digital_products (id) ON DELETE CASCADE,
    order_id     {{.Int64}},
    purchased_at {{.Time}} NOT NULL
);
CREATE INDEX digital_product_purchases_site_user ON digital_product_purchases (site_id, user_id);

CREATE TABLE consulting_services (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug        text NOT NULL,
    title       text NOT NULL,
    description text NOT NULL DEFAULT '',
    price_cents {{.Int64}} NOT NULL DEFAULT 0,
    currency    text NOT NULL DEFAULT 'USD',
    sessions    integer NOT NULL DEFAULT 1,
    status      text NOT NULL CHECK (status IN ('draft', 'published')),
    created_at  {{.Time}} NOT NULL,
    updated_at  {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE consulting_purchases (
    id                {{.ID}},
    site_id           {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id           text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    service_id        {{.Int64}} NOT NULL REFERENCES consulting_services (id) ON DELETE CASCADE,
    order_id          {{.Int64}},
    sessions_included integer NOT NULL DEFAULT 1,
    sessions_used     integer NOT NULL DEFAULT 0,
    purchased_at      {{.Time}} NOT NULL
);
CREATE INDEX consulting_purchases_site_user ON consulting_purchases (site_id, user_id);

CREATE TABLE events (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug        text NOT NULL,
    title       text NOT NULL,
    description text NOT NULL DEFAULT '',
    location    text NOT NULL DEFAULT '',
    starts_at   {{.Time}} NOT NULL,
    ends_at     {{.Time}} NOT NULL,
    price_cents {{.Int64}} NOT NULL DEFAULT 0,
    currency    text NOT NULL DEFAULT 'USD',
    capacity    integer NOT NULL DEFAULT 0,
    public      boolean NOT NULL DEFAULT true,
    status      text NOT NULL CHECK (status IN ('draft', 'published')),
    created_at  {{.Time}} NOT NULL,
    updated_at  {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);
CREATE INDEX events_site_starts ON events (site_id, starts_at);

CREATE TABLE event_registrations (
    id            {{.ID}},
    site_id       {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    event_id      {{.Int64}} NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    order_id      {{.Int64}},
    registered_at {{.Time}} NOT NULL,
    UNIQUE (site_id, user_id, event_id)
);

CREATE TABLE notifications (
    id         {{.ID}},
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       text NOT NULL,
    title      text NOT NULL,
    body       text NOT NULL DEFAULT '',
    url        text NOT NULL DEFAULT '',
    created_at {{.Time}} NOT NULL,
    read_at    {{.Time}}
);
CREATE INDEX notifications_site_user ON notifications (site_id, user_id, id);

CREATE TABLE notification_subscriptions (
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    topic      text NOT NULL,
    channel    text NOT NULL,
    enabled    boolean NOT NULL DEFAULT true,
    updated_at {{.Time}} NOT NULL,
    PRIMARY KEY (site_id, user_id, topic, channel)
);

CREATE TABLE membership_plans (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    slug        text NOT NULL,
    title       text NOT NULL,
    description text NOT NULL DEFAULT '',
    price_cents {{.Int64}} NOT NULL DEFAULT 0,
    currency    text NOT NULL DEFAULT 'USD',
    interval    text NOT NULL CHECK (interval IN ('month', 'year')),
    status      text NOT NULL CHECK (status IN ('draft', 'published')),
    created_at  {{.Time}} NOT NULL,
    updated_at  {{.Time}} NOT NULL,
    UNIQUE (site_id, slug)
);

CREATE TABLE orders (
    id            {{.ID}},
    site_id       {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    number        text NOT NULL,
    user_id       text NOT NULL REFERENCES users (id),
    total_cents   {{.Int64}} NOT NULL DEFAULT 0,
    currency      text NOT NULL DEFAULT 'USD',
    coupon_code   text NOT NULL DEFAULT '',
    status        text NOT NULL,
    refund_status text NOT NULL DEFAULT 'none',
    created_at    {{.Time}} NOT NULL,
    UNIQUE (site_id, number)
);
CREATE INDEX orders_site_created ON orders (site_id, created_at);

CREATE TABLE order_items (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    order_id    {{.Int64}} NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    kind        text NOT NULL,
    item_id     {{.Int64}} NOT NULL,
    title       text NOT NULL,
    price_cents {{.Int64}} NOT NULL DEFAULT 0
);
CREATE INDEX order_items_order ON order_items (order_id);
