//! Batch loads keyed by the page: reads whose keys are ids the request has just read (an
//! ORM's `prefetch_related`, `includes`, TypeORM relations, knex relational loads). Their
//! rows are live data chosen by the page, so they are never a cache candidate.

use super::{Statement, sql::Access};

/// Whether `s` loads rows by keys the request has just read:
/// - its WHERE takes a list of keys (`IN ($1, …, $n)`, `= ANY($1)`);
/// - or another read of the same relations does: the same load with another number of
///   keys (ActiveRecord writes a list of one key as `= $1`);
/// - or it looks one table up by `id` alone, after a page of another table that carries
///   the foreign key to it (`<table>_id`, `<table>Id`) or selects every column (`t.*`),
///   and is not itself filtered by that key: a page `WHERE tenant_id = $1` had its tenant
///   before it ran (from the token or the session), so the tenant's lookup is no batch load.
pub(super) fn keyed_by_the_page(s: &Statement, all: &[Statement]) -> bool {
    if s.shape.keyed_by_list {
        return true;
    }
    let names = s.relation_names();
    let sibling = all.iter().any(|other| {
        other.shape.keyed_by_list
            && other.shape.access == Access::Read
            && other.query != s.query
            && other.relation_names() == names
    });
    sibling || follows_the_page(s, all)
}

/// A lookup of one table by `id` alone, after a page of another table that can hold its key.
fn follows_the_page(s: &Statement, all: &[Statement]) -> bool {
    let [key] = s.shape.keys.as_slice() else {
        return false;
    };
    if key.columns != ["id"] {
        return false;
    }
    let stem = singular(&key.relation.name.to_lowercase());
    all.iter().any(|page| {
        page.page
            && !page.is_total()
            && page.query != s.query
            && !page
                .relation_names()
                .contains(&key.relation.name.to_lowercase())
            && holds_key_to(page.query, &stem)
            && !filtered_by_key_to(page, &stem)
    })
}

/// Whether `s` looks one table up by `id` alone, and a page of the request is filtered by
/// the key to that table (`tenant_id = $1`): the tenant (or account, or workspace) that
/// scopes the page, keyed by the token or the session, looked up before it.
pub(super) fn scopes_the_page(s: &Statement, all: &[Statement]) -> bool {
    let [key] = s.shape.keys.as_slice() else {
        return false;
    };
    let stem = singular(&key.relation.name.to_lowercase());
    key.columns == ["id"]
        && (all.iter())
            .any(|page| page.page && page.query != s.query && filtered_by_key_to(page, &stem))
}

/// Whether the page's WHERE looks its rows up by the key to the table whose singular name
/// is `stem` (`tenant_id = $1`).
fn filtered_by_key_to(page: &Statement, stem: &str) -> bool {
    let bare = stem.rsplit('_').next().unwrap_or(stem);
    (page.shape.keys.iter().flat_map(|k| &k.columns)).any(|column| {
        let column = column.to_lowercase();
        [stem, bare]
            .iter()
            .any(|s| column == format!("{s}_id") || column == format!("{s}id"))
    })
}

/// Whether a statement's text selects every column of a table, or names a foreign key
/// column to the table whose singular name is `stem`.
fn holds_key_to(query: &str, stem: &str) -> bool {
    let text = query.to_lowercase().replace('"', "");
    let bare = stem.rsplit('_').next().unwrap_or(stem);
    text.contains(".*")
        || text.starts_with("select *")
        || [stem, bare]
            .iter()
            .any(|s| text.contains(&format!("{s}_id")) || text.contains(&format!("{s}id")))
}

/// A table name's singular, as ORMs name foreign keys: `categories` → `category`,
/// `milestones` → `milestone`, `dcim_rack` stays.
fn singular(name: &str) -> String {
    if let Some(stem) = name.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = name.strip_suffix("sses") {
        format!("{stem}ss")
    } else if name.ends_with('s') && !name.ends_with("ss") {
        name[..name.len() - 1].to_string()
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singulars_follow_the_orm_conventions() {
        assert_eq!(singular("categories"), "category");
        assert_eq!(singular("ho_milestones"), "ho_milestone");
        assert_eq!(singular("dcim_rack"), "dcim_rack");
        assert_eq!(singular("addresses"), "address");
        assert_eq!(singular("access"), "access");
    }

    #[test]
    fn a_page_holds_the_key_by_its_column_or_by_star() {
        assert!(holds_key_to(
            r#"SELECT "ho_issues".* FROM "ho_issues" LIMIT $1"#,
            "ho_milestone"
        ));
        assert!(holds_key_to(
            r#"SELECT "t"."id", "t"."workflowId" FROM tasks t LIMIT 20"#,
            "workflow"
        ));
        assert!(holds_key_to(
            "SELECT id, rack_id FROM dcim_device LIMIT 50",
            "dcim_rack"
        ));
        assert!(!holds_key_to(
            "SELECT id, title FROM events LIMIT 20",
            "tenant"
        ));
    }
}
