-- The demo API's schema: a small multi-tenant SaaS with groups, grants and sessions.
CREATE TABLE tenants (
    id         int PRIMARY KEY,
    slug       text NOT NULL UNIQUE,
    status     text NOT NULL DEFAULT 'active'
);
CREATE TABLE users (
    id         int PRIMARY KEY,
    email      text NOT NULL UNIQUE
);
CREATE TABLE memberships (
    tenant_id  int NOT NULL REFERENCES tenants,
    user_id    int NOT NULL REFERENCES users,
    role       text NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
CREATE TABLE groups (
    id         int PRIMARY KEY,
    tenant_id  int NOT NULL REFERENCES tenants,
    name       text NOT NULL
);
CREATE TABLE group_members (
    group_id   int NOT NULL REFERENCES groups,
    user_id    int NOT NULL REFERENCES users,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user ON group_members (user_id);
-- The catalogue of actions a grant can name.
CREATE TABLE actions (
    name       text PRIMARY KEY
);
CREATE TABLE group_grants (
    tenant_id  int NOT NULL REFERENCES tenants,
    group_id   int NOT NULL REFERENCES groups,
    action     text NOT NULL REFERENCES actions,
    PRIMARY KEY (group_id, action)
);
CREATE TABLE user_grants (
    tenant_id  int NOT NULL REFERENCES tenants,
    user_id    int NOT NULL REFERENCES users,
    action     text NOT NULL REFERENCES actions,
    PRIMARY KEY (tenant_id, user_id, action)
);
CREATE TABLE sessions (
    id         text PRIMARY KEY,
    user_id    int NOT NULL REFERENCES users,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE TABLE entitlements (
    tenant_id  int NOT NULL REFERENCES tenants,
    module     text NOT NULL,
    enabled    bool NOT NULL,
    PRIMARY KEY (tenant_id, module)
);
CREATE TABLE projects (
    id         int PRIMARY KEY,
    tenant_id  int NOT NULL REFERENCES tenants,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_tenant ON projects (tenant_id, id);
