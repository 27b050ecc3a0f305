//! Fetching plans: the generic plan Postgres would use for each statement that needs one,
//! over a connection to the target database as the role of `--db`, after the last measured
//! window has closed. Every statement is only EXPLAINed, never run (no ANALYZE), in a
//! read-only transaction that is rolled back, under a 2 s `statement_timeout`.
//!
//! - PostgreSQL 16+: `EXPLAIN (GENERIC_PLAN)`.
//! - 13 to 15: `PREPARE`, then `EXPLAIN EXECUTE` with one NULL per parameter under
//!   `plan_cache_mode = force_generic_plan`.
//!
//! The statements are the app's, so the SQL that explains them is assembled from the
//! templates in `sql/plan_*.sql` by substituting the statement text (and the fixed EXPLAIN
//! options and NULL arguments): EXPLAIN takes no statement as a bind parameter. The text is
//! first PREPAREd over the extended protocol, which refuses more than one statement.

use std::collections::BTreeMap;

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, SimpleQueryMessage};

use crate::cost::notes::Note;
use crate::cost::plan::{self, Plans, StatementPlan, Wanted};
use crate::error::describe_pg;
use crate::postgres::conninfo::DbTarget;
use crate::postgres::views;

const BEGIN: &str = include_str!("../../sql/plan_begin.sql");
const END: &str = include_str!("../../sql/plan_end.sql");
const PREPARE: &str = include_str!("../../sql/plan_prepare.sql");
const PARAMETERS: &str = include_str!("../../sql/plan_parameters.sql");
const EXPLAIN_EXECUTE: &str = include_str!("../../sql/plan_explain_execute.sql");
const EXPLAIN_GENERIC: &str = include_str!("../../sql/plan_explain_generic.sql");
const DEALLOCATE: &str = include_str!("../../sql/plan_deallocate.sql");
const HYPOPG: &str = include_str!("../../sql/plan_hypopg.sql");
const HYPOPG_CREATE: &str = include_str!("../../sql/plan_hypopg_create.sql");
const HYPOPG_RESET: &str = include_str!("../../sql/plan_hypopg_reset.sql");

/// `EXPLAIN`'s options: the text for people, the JSON for `cost::plan` (the shape of
/// every plan, and the index proposals).
const TEXT: &str = "FORMAT TEXT";
const JSON: &str = "FORMAT JSON, VERBOSE";

/// What the plans of one database may use besides the statements.
pub struct Settings<'a> {
    pub server_version_num: i32,
    /// Table sizes in pages by `schema.table`, to tell a big table's scan from a small one's.
    pub pages: &'a BTreeMap<String, i64>,
    /// Tables below this many pages are never named (the `seq_scan_min_pages` threshold).
    pub min_pages: i64,
}

/// Fetches the plan of every `wanted` statement. Never fails: a statement that cannot be
/// explained (a truncated text, a parameter of unknown type) has no plan, and a role that
/// may not read the tables, or a connection that fails, skips the plans with one note.
pub async fn fetch(db: &DbTarget, wanted: &[Wanted], settings: &Settings<'_>) -> Plans {
    let mut plans = Plans::default();
    if wanted.is_empty() {
        return plans;
    }
    let client = match views::connect(db).await {
        Ok(client) => client,
        Err(err) => {
            plans
                .notes
                .push(Note::PlansSkippedConnection { error: err.message });
            return plans;
        }
    };
    let hypopg = match client.query_one(HYPOPG, &[]).await {
        Ok(row) => row.get::<_, bool>(0),
        Err(_) => false,
    };
    for statement in wanted {
        match fetch_one(&client, statement, settings, hypopg).await {
            Ok(Some(plan)) => {
                plans.by_query.insert(statement.query.clone(), plan);
            }
            Ok(None) => {}
            Err(denied) => {
                plans.notes.push(denied_note(db, &denied, settings));
                break;
            }
        }
    }
    plans
}

/// The one note for a role that may not read the tables, naming the GRANT that fixes it.
fn denied_note(db: &DbTarget, err: &tokio_postgres::Error, settings: &Settings<'_>) -> Note {
    Note::PlansSkippedPrivilege {
        role: db.config.get_user().unwrap_or("<role>").to_string(),
        error: describe_pg(err).0,
        pg_read_all_data: settings.server_version_num >= 140000,
    }
}

/// One statement's plan in its own rolled-back transaction. `Err` only for a missing
/// privilege; any other failure means no plan for this statement.
async fn fetch_one(
    client: &Client,
    wanted: &Wanted,
    settings: &Settings<'_>,
    hypopg: bool,
) -> Result<Option<StatementPlan>, tokio_postgres::Error> {
    if client.batch_execute(BEGIN).await.is_err() {
        return Ok(None);
    }
    let result = explain_both(client, wanted, settings, hypopg).await;
    // Prepared statements and hypothetical indexes outlive the rollback.
    let _ = client.batch_execute(END).await;
    let _ = client.batch_execute(DEALLOCATE).await;
    if hypopg && wanted.propose_index {
        let _ = client.batch_execute(HYPOPG_RESET).await;
    }
    match result {
        Ok(plan) => Ok(Some(plan)),
        Err(err) if err.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) => Err(err),
        Err(_) => Ok(None),
    }
}

/// The text plan, and from the JSON plan its shape and the index proposal, checked with
/// hypopg when it is installed.
async fn explain_both(
    client: &Client,
    wanted: &Wanted,
    settings: &Settings<'_>,
    hypopg: bool,
) -> Result<StatementPlan, tokio_postgres::Error> {
    let text = explain(client, &wanted.query, TEXT, settings).await?;
    let json = explain(client, &wanted.query, JSON, settings).await?;
    let Ok(root) = plan::parse(&json) else {
        return Ok(StatementPlan {
            text,
            index: None,
            shape: Vec::new(),
        });
    };
    let mut index = None;
    if wanted.propose_index {
        let scans = plan::seq_scans(&root, settings.pages, settings.min_pages);
        let candidates = plan::propose_indexes(&scans);
        index = match hypopg {
            true => first_used(client, &wanted.query, candidates, settings).await,
            false => candidates.into_iter().next(),
        };
    }
    Ok(StatementPlan {
        text,
        index,
        shape: plan::shape(&root),
    })
}

/// The first candidate the planner would use once hypopg makes it exist; none when it
/// would use none of them. A plan that cannot be read leaves that candidate unverified,
/// and a failure ends the transaction, so the search stops at either.
async fn first_used(
    client: &Client,
    query: &str,
    candidates: Vec<plan::IndexProposal>,
    settings: &Settings<'_>,
) -> Option<plan::IndexProposal> {
    for (i, mut candidate) in candidates.into_iter().enumerate() {
        // A hypothetical index the planner ignored must not sway the next candidate.
        if i > 0 && client.batch_execute(HYPOPG_RESET).await.is_err() {
            return None;
        }
        match verify(client, query, &candidate, settings).await {
            Ok(Some(false)) => continue,
            Ok(verified) => {
                candidate.verified = verified;
                return Some(candidate);
            }
            Err(_) => return Some(candidate),
        }
    }
    None
}

/// Whether the planner would use `proposal` once hypopg makes it exist for this backend;
/// None when the plan cannot be read.
async fn verify(
    client: &Client,
    query: &str,
    proposal: &plan::IndexProposal,
    settings: &Settings<'_>,
) -> Result<Option<bool>, tokio_postgres::Error> {
    let row = client
        .query_one(HYPOPG_CREATE, &[&proposal.hypothetical()])
        .await?;
    let name: String = row.get(0);
    let json = explain(client, query, JSON, settings).await?;
    Ok(plan::parse(&json)
        .ok()
        .map(|root| plan::uses_index(&root, &name)))
}

/// One generic plan of `query` in the format `options` names, as EXPLAIN prints it.
async fn explain(
    client: &Client,
    query: &str,
    options: &str,
    settings: &Settings<'_>,
) -> Result<String, tokio_postgres::Error> {
    client
        .execute(PREPARE.replace("{statement}", query).as_str(), &[])
        .await?;
    let sql = if settings.server_version_num >= 160000 {
        client.batch_execute(DEALLOCATE).await?;
        EXPLAIN_GENERIC
            .replace("{options}", options)
            .replace("{statement}", query)
    } else {
        let parameters: i32 = client.query_one(PARAMETERS, &[]).await?.get(0);
        let arguments = match parameters {
            0 => String::new(),
            n => format!("({})", vec!["NULL"; n as usize].join(", ")),
        };
        EXPLAIN_EXECUTE
            .replace("{options}", options)
            .replace("{arguments}", &arguments)
    };
    let messages = client.simple_query(&sql).await?;
    if settings.server_version_num < 160000 {
        client.batch_execute(DEALLOCATE).await?;
    }
    let lines: Vec<String> = messages
        .into_iter()
        .filter_map(|message| match message {
            SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
            _ => None,
        })
        .collect();
    Ok(lines.join("\n"))
}
