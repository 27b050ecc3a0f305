//! Fetching plans: the generic plan Postgres would use for each statement that needs one,
//! over a connection to the target database as the role of `--db`, after the last measured
//! window has closed. Every statement is only EXPLAINed, never run (no ANALYZE), in a
//! read-only transaction that is rolled back, under a 2 s `statement_timeout`.
//!
//! - PostgreSQL 16+: `EXPLAIN (GENERIC_PLAN)`.
//! - 13 to 15: `PREPARE`, then `EXPLAIN EXECUTE` with one NULL per parameter under
//!   `plan_cache_mode = force_generic_plan`.
//!
//! A statement with parameters gets a custom plan as well, as its first executions (and
//! `plan_cache_mode = auto` while the generic plan costs more) ran it: `EXPLAIN EXECUTE`
//! under `force_custom_plan` with representative values, the measured rows per call for a
//! `LIMIT $n`, 0 for an `OFFSET $n`, and the most common value in `pg_stats` of the column
//! a condition of the generic plan compares `$n` with. It is kept where its shape differs.
//!
//! The statements are the app's, so the SQL that explains them is assembled from the
//! templates in `sql/plan_*.sql` by substituting the statement text (and the fixed EXPLAIN
//! options and NULL arguments): EXPLAIN takes no statement as a bind parameter. The text is
//! first PREPAREd over the extended protocol, which refuses more than one statement.

use std::collections::BTreeMap;

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, SimpleQueryMessage};

use crate::error::describe_pg;
use crate::postgres::conninfo::DbTarget;
use crate::postgres::views;
use pgcost_core::plan::{self, Plans, StatementPlan, Wanted};
use pgcost_core::report::model::notes::Note;

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
const COMMON_VALUE: &str = include_str!("../../sql/plan_common_value.sql");
const CUSTOM: &str = include_str!("../../sql/plan_custom.sql");
const GENERIC: &str = include_str!("../../sql/plan_generic.sql");
const SAVEPOINT: &str = include_str!("../../sql/plan_savepoint.sql");
const ROLLBACK_SAVEPOINT: &str = include_str!("../../sql/plan_rollback_savepoint.sql");

/// `EXPLAIN`'s options: the text for people, the JSON for `pgcost_core::plan` (the shape of
/// every plan, and the index proposals).
const TEXT: &str = "FORMAT TEXT";
const JSON: &str = "FORMAT JSON, VERBOSE";

/// What the plans of one database may use besides the statements.
pub struct Settings<'a> {
    pub server_version_num: i32,
    /// Table sizes in pages by `schema.table`, to tell a big table's scan from a small one's.
    pub pages: &'a BTreeMap<String, i64>,
    /// Live rows by `schema.table`: the rows a whole-table scan reads.
    pub rows: &'a BTreeMap<String, i64>,
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
    plans.fetched = true;
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

/// How a plan is asked for: generic, or custom with these arguments (`('1', '25')`).
#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Generic,
    Custom(String),
}

/// One explained plan: how it was asked for, its text and its JSON read.
struct Explained {
    mode: Mode,
    text: String,
    root: plan::Node,
}

/// The text plan, and from the JSON plan its shape, what the findings read and the index
/// proposal, checked with hypopg when it is installed; the custom plan's as well, where
/// one was explained and differs.
async fn explain_both(
    client: &Client,
    wanted: &Wanted,
    settings: &Settings<'_>,
    hypopg: bool,
) -> Result<StatementPlan, tokio_postgres::Error> {
    let text = explain(client, &wanted.query, TEXT, settings, &Mode::Generic).await?;
    let json = explain(client, &wanted.query, JSON, settings, &Mode::Generic).await?;
    let Ok(root) = plan::parse(&json) else {
        return Ok(StatementPlan {
            text,
            index: None,
            shape: Vec::new(),
            ran: Default::default(),
        });
    };
    let shape = plan::shape(&root);
    let mut explained = vec![Explained {
        mode: Mode::Generic,
        text,
        root,
    }];
    if let Some(custom) = custom_or_none(client, wanted, settings, &explained[0].root).await?
        && plan::shape(&custom.root) != shape
    {
        explained.push(custom);
    }
    let mut index = None;
    if wanted.propose_index {
        let candidates = candidates(&explained, settings);
        index = match hypopg {
            true => first_used(client, &wanted.query, candidates, settings).await,
            false => candidates.into_iter().next().map(|(_, _, c)| c),
        };
    }
    Ok(StatementPlan {
        text: shown(&explained),
        index,
        shape,
        ran: ran(&explained),
    })
}

/// The plans' texts as shown: the generic one, then the custom one with its values.
fn shown(explained: &[Explained]) -> String {
    let mut text = explained[0].text.clone();
    for custom in &explained[1..] {
        if let Mode::Custom(arguments) = &custom.mode {
            text.push_str(&format!(
                "\n\nCustom plan (plan_cache_mode = force_custom_plan, EXECUTE with \
                 {arguments}):\n{}",
                custom.text
            ));
        }
    }
    text
}

/// What the findings read of the plans: a table is per row or sequentially scanned when
/// either plan says so (which of them ran is not known).
fn ran(explained: &[Explained]) -> pgcost_core::findings::RanPlan {
    let mut ran = pgcost_core::findings::RanPlan::default();
    for one in explained.iter().map(|e| plan::ran(&e.root)) {
        for (all, more) in [
            (&mut ran.per_row_tables, one.per_row_tables),
            (&mut ran.seq_scanned, one.seq_scanned),
            (&mut ran.loop_rescanned, one.loop_rescanned),
        ] {
            all.extend(
                more.into_iter()
                    .filter(|t| !all.contains(t))
                    .collect::<Vec<_>>(),
            );
        }
    }
    ran
}

/// The index proposals of every explained plan, the generic plan's first, each with the
/// plan it replaces a scan of and its estimated rows read.
fn candidates<'e>(
    explained: &'e [Explained],
    settings: &Settings<'_>,
) -> Vec<(&'e Explained, f64, plan::IndexProposal)> {
    let mut out: Vec<(&Explained, f64, plan::IndexProposal)> = Vec::new();
    for one in explained {
        let scans = plan::seq_scans(&one.root, settings.pages, settings.min_pages);
        let before = plan::rows_read(&one.root, settings.rows);
        for mut proposal in plan::propose_indexes(&plan::with_table_rows(scans, settings.rows)) {
            if out
                .iter()
                .any(|(_, _, p)| p.statement == proposal.statement)
            {
                continue;
            }
            proposal.estimated_rows_read_before = Some(before.round());
            out.push((one, before, proposal));
        }
    }
    out
}

/// [`custom_plan`], or none when it fails (a value that does not cast to its parameter's
/// type): the generic plan is kept. `Err` only when the transaction cannot be recovered.
async fn custom_or_none(
    client: &Client,
    wanted: &Wanted,
    settings: &Settings<'_>,
    generic: &plan::Node,
) -> Result<Option<Explained>, tokio_postgres::Error> {
    client.batch_execute(SAVEPOINT).await?;
    match custom_plan(client, wanted, settings, generic).await {
        Ok(custom) => Ok(custom),
        Err(_) => {
            // The failure may have left the statement prepared, which a rollback keeps.
            client.batch_execute(ROLLBACK_SAVEPOINT).await?;
            let _ = client.batch_execute(DEALLOCATE).await;
            client.batch_execute(ROLLBACK_SAVEPOINT).await?;
            Ok(None)
        }
    }
}

/// The custom plan of a statement with parameters, when some parameter has a
/// representative value (see the module's documentation); `None` otherwise.
async fn custom_plan(
    client: &Client,
    wanted: &Wanted,
    settings: &Settings<'_>,
    generic: &plan::Node,
) -> Result<Option<Explained>, tokio_postgres::Error> {
    if !wanted.query.contains('$') {
        return Ok(None);
    }
    client
        .execute(PREPARE.replace("{statement}", &wanted.query).as_str(), &[])
        .await?;
    let count: i32 = client.query_one(PARAMETERS, &[]).await?.get(0);
    client.batch_execute(DEALLOCATE).await?;
    let mut values = Vec::new();
    for parameter in plan::parameters(&wanted.query, generic, count.max(0) as usize) {
        values.push(match parameter {
            plan::Parameter::Limit => Some(format!("{}", wanted.rows_per_call.round().max(1.0))),
            plan::Parameter::Offset => Some("0".to_string()),
            plan::Parameter::Column { table, column } => {
                common_value(client, &table, &column).await?
            }
            plan::Parameter::Unknown => None,
        });
    }
    if values.iter().all(Option::is_none) {
        return Ok(None);
    }
    let arguments = values
        .iter()
        .map(|v| v.as_deref().map_or("NULL".to_string(), literal))
        .collect::<Vec<_>>()
        .join(", ");
    let mode = Mode::Custom(format!("({arguments})"));
    let text = explain(client, &wanted.query, TEXT, settings, &mode).await?;
    let json = explain(client, &wanted.query, JSON, settings, &mode).await?;
    Ok(plan::parse(&json)
        .ok()
        .map(|root| Explained { mode, text, root }))
}

/// The most common value of `schema.table`'s `column`, from `pg_stats`.
async fn common_value(
    client: &Client,
    table: &str,
    column: &str,
) -> Result<Option<String>, tokio_postgres::Error> {
    let (schema, name) = table.split_once('.').unwrap_or(("public", table));
    let row = client
        .query_opt(COMMON_VALUE, &[&schema, &name, &column])
        .await?;
    let values: Option<String> = row.and_then(|r| r.get(0));
    Ok(values.as_deref().and_then(plan::first_element))
}

/// A string literal of `value`, which EXECUTE casts to the parameter's type.
fn literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// The first candidate the planner would use once hypopg makes it exist, with the plan it
/// would run and its estimated rows read; none when it would use none of them. A plan that
/// cannot be read leaves that candidate unverified, and a failure ends the transaction, so
/// the search stops at either.
async fn first_used(
    client: &Client,
    query: &str,
    candidates: Vec<(&Explained, f64, plan::IndexProposal)>,
    settings: &Settings<'_>,
) -> Option<plan::IndexProposal> {
    for (i, (explained, _, mut candidate)) in candidates.into_iter().enumerate() {
        // A hypothetical index the planner ignored must not sway the next candidate.
        if i > 0 && client.batch_execute(HYPOPG_RESET).await.is_err() {
            return None;
        }
        match verify(client, query, &mut candidate, settings, &explained.mode).await {
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

/// Whether the planner would use `proposal` once hypopg makes it exist for this backend,
/// in the plan of `mode`; None when the plan cannot be read. Where it would, the proposal
/// gets that plan and its estimated rows read.
async fn verify(
    client: &Client,
    query: &str,
    proposal: &mut plan::IndexProposal,
    settings: &Settings<'_>,
    mode: &Mode,
) -> Result<Option<bool>, tokio_postgres::Error> {
    let row = client
        .query_one(HYPOPG_CREATE, &[&proposal.hypothetical()])
        .await?;
    let name: String = row.get(0);
    let json = explain(client, query, JSON, settings, mode).await?;
    let Ok(root) = plan::parse(&json) else {
        return Ok(None);
    };
    if !plan::uses_index(&root, &name) {
        return Ok(Some(false));
    }
    proposal.estimated_rows_read_after = Some(plan::rows_read(&root, settings.rows).round());
    proposal.plan_with_index = Some(explain(client, query, TEXT, settings, mode).await?);
    Ok(Some(true))
}

/// One plan of `query` in the format `options` names, as EXPLAIN prints it: the generic
/// one, or the custom one for `mode`'s arguments.
async fn explain(
    client: &Client,
    query: &str,
    options: &str,
    settings: &Settings<'_>,
    mode: &Mode,
) -> Result<String, tokio_postgres::Error> {
    client
        .execute(PREPARE.replace("{statement}", query).as_str(), &[])
        .await?;
    let prepared = settings.server_version_num < 160000 || *mode != Mode::Generic;
    let sql = match mode {
        Mode::Generic if !prepared => {
            client.batch_execute(DEALLOCATE).await?;
            EXPLAIN_GENERIC
                .replace("{options}", options)
                .replace("{statement}", query)
        }
        Mode::Generic => {
            let parameters: i32 = client.query_one(PARAMETERS, &[]).await?.get(0);
            let arguments = match parameters {
                0 => String::new(),
                n => format!("({})", vec!["NULL"; n as usize].join(", ")),
            };
            EXPLAIN_EXECUTE
                .replace("{options}", options)
                .replace("{arguments}", &arguments)
        }
        Mode::Custom(arguments) => {
            client.batch_execute(CUSTOM).await?;
            EXPLAIN_EXECUTE
                .replace("{options}", options)
                .replace("{arguments}", arguments)
        }
    };
    let messages = client.simple_query(&sql).await?;
    if prepared {
        client.batch_execute(DEALLOCATE).await?;
    }
    if matches!(mode, Mode::Custom(_)) {
        client.batch_execute(GENERIC).await?;
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
