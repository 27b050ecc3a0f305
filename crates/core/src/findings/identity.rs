//! The one rule that keeps credential checks out of caching advice: what decides who the
//! caller is, or whether they may still act, must be read live on every request.

/// Parts of a table name (split at `_`) that mark what authentication reads: sessions,
/// tokens, revocation lists, credentials, and the user or account row it loads.
const IDENTITY_TABLE_PARTS: &[&str] = &[
    "session",
    "sessions",
    "token",
    "tokens",
    "revocation",
    "revocations",
    "revoked",
    "blacklist",
    "blocklist",
    "denylist",
    "credential",
    "credentials",
    "apikey",
    "apikeys",
    "auth",
    "login",
    "logins",
    "user",
    "users",
    "account",
    "accounts",
    "identity",
    "identities",
    "principal",
    "principals",
];

/// Parts of a column or other identifier (split at `_`) that mark a credential check in
/// the statement's text, whatever table it reads: `WHERE token = $1`, `revoked_at IS
/// NULL`, `jti = $1`.
const IDENTITY_COLUMN_PARTS: &[&str] = &[
    "token",
    "revoked",
    "revocation",
    "password",
    "jti",
    "session",
    "apikey",
];

/// True when the statement decides who the caller is or whether they may still act:
/// it reads a session, token, revocation, credential, user or account table, or its text
/// names a token, revocation, password or session column. Such a read is never a cache
/// candidate: a cached answer lets a revoked session, token or user keep working until
/// the entry expires. (A user row may also be read for display; pgcost cannot tell the
/// two apart, so it leaves every read of a users table alone.)
pub(crate) fn decides_identity<'a>(tables: impl IntoIterator<Item = &'a str>, query: &str) -> bool {
    let table_hit = tables.into_iter().any(|table| {
        let bare = table.rsplit('.').next().unwrap_or(table);
        parts(bare).any(|part| IDENTITY_TABLE_PARTS.contains(&part.as_str()))
    });
    let identifiers = query
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty());
    table_hit
        || identifiers
            .flat_map(parts)
            .any(|part| IDENTITY_COLUMN_PARTS.contains(&part.as_str()))
}

/// Parts of a table name that mark what authorisation reads: the caller's permissions,
/// scopes, grants and roles.
const ACCESS_TABLE_PARTS: &[&str] = &[
    "permission",
    "permissions",
    "perm",
    "perms",
    "scope",
    "scopes",
    "grant",
    "grants",
    "role",
    "roles",
    "acl",
    "acls",
    "entitlement",
    "entitlements",
    "privilege",
    "privileges",
];

/// True when the statement is a step of authorisation: it reads a permission, scope,
/// grant or role table (relation names as written). A users table does not count: a page's
/// authors are loaded from it too.
pub(crate) fn authorises(relations: &[String]) -> bool {
    (relations.iter())
        .flat_map(|r| parts(r.rsplit('.').next().unwrap_or(r)).collect::<Vec<_>>())
        .any(|part| ACCESS_TABLE_PARTS.contains(&part.as_str()))
}

/// The lower-case parts of an identifier split at `_`: `auth_user` → `auth`, `user`.
fn parts(identifier: &str) -> impl Iterator<Item = String> + '_ {
    identifier
        .split('_')
        .filter(|part| !part.is_empty())
        .map(str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::decides_identity;

    #[test]
    fn credential_reads_are_recognised() {
        let identity = [
            (
                "public.sessions",
                "SELECT user_id FROM sessions WHERE id = $1",
            ),
            (
                "public.django_session",
                "SELECT session_data FROM django_session WHERE session_key = $1",
            ),
            (
                "public.auth_user",
                "SELECT id, username FROM auth_user WHERE id = $1",
            ),
            ("public.users", "SELECT id, email FROM users WHERE id = $1"),
            (
                "public.directus_shares",
                "SELECT id FROM directus_shares WHERE token = $1 AND status = $2",
            ),
            (
                "app.jwt_revocations",
                "SELECT 1 FROM jwt_revocations WHERE jti = $1",
            ),
            (
                "public.api_tokens",
                "SELECT scopes FROM api_tokens WHERE digest = $1",
            ),
            (
                "public.members",
                "SELECT revoked_at IS NULL FROM members WHERE id = $1",
            ),
        ];
        for (table, query) in identity {
            assert!(decides_identity([table], query), "{query}");
        }
        let reference = [
            (
                "public.currencies",
                "SELECT rate FROM currencies WHERE code = $1",
            ),
            ("public.tenants", "SELECT plan FROM tenants WHERE id = $1"),
            ("public.authors", "SELECT name FROM authors WHERE id = $1"),
            (
                "public.user_settings_view_counts",
                "SELECT n FROM counts WHERE k = $1",
            ),
        ];
        for (table, query) in &reference[..3] {
            assert!(!decides_identity([*table], query), "{query}");
        }
        // A table whose name has a `user` part is a user row.
        let (table, query) = reference[3];
        assert!(decides_identity([table], query));
    }
}
