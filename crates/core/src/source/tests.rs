//! Each stack's fixture tree under tests/fixtures/source, read from disk as `--source`
//! reads it, and the tables and lines it must map.

use std::path::{Path, PathBuf};

use super::{CodeLocation, Origin, SourceMap};

fn fixture(stack: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/source")
        .join(stack)
}

/// (table, model, file, line) of every declaration of the stack's fixture.
fn declared(stack: &str) -> Vec<(String, String, String, u32)> {
    let map = SourceMap::scan(&fixture(stack)).unwrap();
    let mut out: Vec<_> = (map.models.iter())
        .map(|m| (m.table.clone(), m.model.clone(), m.uri.clone(), m.line))
        .collect();
    out.sort();
    out
}

fn row(table: &str, model: &str, uri: &str, line: u32) -> (String, String, String, u32) {
    (table.into(), model.into(), uri.into(), line)
}

#[test]
fn rails_models_map_by_convention_and_by_table_name() {
    assert_eq!(
        declared("rails"),
        vec![
            row(
                "custom_values",
                "CustomValue",
                "app/models/custom_value.rb",
                1
            ),
            row(
                "issue_statuses",
                "IssueStatus",
                "app/models/issue_status.rb",
                1
            ),
            row("issues", "Issue", "app/models/issue.rb", 2),
            row("small", "Small", "app/models/small.rb", 2),
        ],
        "the abstract base, the concern, vendor/ and node_modules/ declare nothing"
    );
}

#[test]
fn django_models_map_by_db_table_or_app_label() {
    assert_eq!(
        declared("django"),
        vec![
            row("accounts_profile", "Profile", "accounts/models.py", 4),
            row(
                "custom_values",
                "CustomValue",
                "tracker/models/issue.py",
                15
            ),
            row("tracker_issue", "Issue", "tracker/models/issue.py", 11),
        ],
        "an abstract model has no table"
    );
}

#[test]
fn sqlalchemy_classes_map_by_tablename() {
    assert_eq!(
        declared("sqlalchemy"),
        vec![
            row("custom_values", "CustomValue", "app/models.py", 13),
            row("issues", "Issue", "app/models.py", 8),
        ]
    );
}

#[test]
fn typeorm_entities_map_by_their_name_or_class() {
    assert_eq!(
        declared("typeorm"),
        vec![
            row("custom_values", "CustomValue", "src/entity/Issue.ts", 10),
            row("issue_status", "IssueStatus", "src/entity/Issue.ts", 16),
            row("issues", "Issue", "src/entity/Issue.ts", 4),
        ]
    );
}

#[test]
fn sequelize_models_map_by_table_name_or_define() {
    assert_eq!(
        declared("sequelize"),
        vec![
            row("custom_values", "CustomValue", "models/issue.js", 14),
            row("issues", "Issue", "models/issue.js", 8),
            row("projects", "Project", "models/issue.js", 4),
        ]
    );
}

#[test]
fn prisma_models_map_by_map_or_name() {
    assert_eq!(
        declared("prisma"),
        vec![
            row("custom_values", "CustomValue", "prisma/schema.prisma", 13),
            row("issues", "Issue", "prisma/schema.prisma", 6),
            row("user", "User", "prisma/schema.prisma", 19),
        ]
    );
}

#[test]
fn laravel_models_map_by_table_or_convention() {
    assert_eq!(
        declared("laravel"),
        vec![
            row("custom_values", "CustomValue", "app/Models/Issue.php", 12),
            row("issues", "Issue", "app/Models/Issue.php", 7),
        ]
    );
}

#[test]
fn jpa_entities_map_by_table_or_class() {
    let java = "src/main/java/com/example/model";
    assert_eq!(
        declared("jpa"),
        vec![
            row(
                "custom_value",
                "CustomValue",
                &format!("{java}/CustomValue.java"),
                6
            ),
            row("issues", "Issue", &format!("{java}/Issue.java"), 8),
        ]
    );
}

#[test]
fn a_finding_is_located_at_its_literal_sql_then_at_its_model() {
    let map = SourceMap::scan(&fixture("rails")).unwrap();
    let found = map.locate(
        &["public.small".to_string()],
        Some("SELECT label FROM small WHERE id = $1"),
    );
    assert_eq!(
        found,
        vec![
            CodeLocation {
                uri: "app/controllers/labels_controller.rb".into(),
                line: 6,
                origin: Origin::LiteralSql {
                    fragment: "select label from small where id".into()
                },
            },
            CodeLocation {
                uri: "app/models/small.rb".into(),
                line: 2,
                origin: Origin::Model {
                    table: "small".into(),
                    model: "Small".into()
                },
            },
        ]
    );
    assert_eq!(
        found[1].line_text(),
        "app/models/small.rb:2, the model of `small` (Small)"
    );
    assert!(map.locate(&["public.unknown".into()], None).is_empty());
}

#[test]
fn a_missing_directory_is_an_error() {
    let err = SourceMap::scan(&fixture("no-such-stack")).unwrap_err();
    assert!(err.to_string().ends_with("is not a directory"), "{err}");
}
