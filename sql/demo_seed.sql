-- Seed data for the demo API. The demo user (id 1) administers tenant 1 and belongs to
-- five of its groups, which together hold several hundred grants.
INSERT INTO tenants (id, slug, status)
SELECT t, 'tenant-' || t, 'active' FROM generate_series(1, 3) t;

INSERT INTO users (id, email)
SELECT u, 'user' || u || '@example.com' FROM generate_series(1, 60) u;

INSERT INTO memberships (tenant_id, user_id, role)
SELECT CASE WHEN u = 1 THEN 1 ELSE 1 + (u % 3) END, u,
       CASE WHEN u = 1 THEN 'admin' ELSE 'member' END
FROM generate_series(1, 60) u;

-- 8 groups per tenant.
INSERT INTO groups (id, tenant_id, name)
SELECT g, 1 + ((g - 1) / 8), 'group ' || g FROM generate_series(1, 24) g;

-- About 100 actions: 20 resources times 5 verbs, plus the one the endpoint checks.
INSERT INTO actions (name)
SELECT r || '.' || v
FROM unnest(ARRAY['projects','tasks','files','comments','billing','members','groups',
                  'reports','webhooks','integrations','audit','settings','invoices',
                  'labels','milestones','boards','sprints','wikis','secrets','exports']) r,
     unnest(ARRAY['read','create','update','delete','admin']) v;

-- Each group of tenant 1 holds a contiguous run of 60 actions (rotated by group), so the
-- demo user's five groups hold 300 grant rows over fewer distinct actions.
INSERT INTO group_grants (tenant_id, group_id, action)
SELECT g.tenant_id, g.id, a.name
FROM groups g
JOIN (SELECT name, row_number() OVER (ORDER BY name) - 1 AS n FROM actions) a
  ON (a.n - (g.id * 7)) % 100 + CASE WHEN (a.n - (g.id * 7)) % 100 < 0 THEN 100 ELSE 0 END < 60;

INSERT INTO group_members (group_id, user_id)
SELECT g, 1 FROM generate_series(1, 5) g;
INSERT INTO group_members (group_id, user_id)
SELECT 1 + (u % 24), u FROM generate_series(2, 60) u;

INSERT INTO user_grants (tenant_id, user_id, action)
VALUES (1, 1, 'billing.admin'), (1, 1, 'exports.read'), (1, 1, 'secrets.read'),
       (1, 1, 'projects.read');

INSERT INTO entitlements (tenant_id, module, enabled)
SELECT t, m, true
FROM generate_series(1, 3) t, unnest(ARRAY['projects','billing','reports']) m;

INSERT INTO projects (id, tenant_id, name)
SELECT p, 1 + (p % 3), 'project ' || p FROM generate_series(1, 600) p;

ANALYZE;
