//! Reading `--production-stats`: a CSV or JSON export of production's
//! `pg_stat_statements`, or one read-only SELECT of a server's, into the rows that
//! `cost/survey/production` maps onto the routes.

use std::path::Path;

use crate::error::{Error, Result, describe_pg};
use crate::postgres::conninfo::{self, EnvLookup};
use crate::postgres::views;
use pgcost_core::survey::production::{ProductionRow, ProductionStats};

const SQL_PRODUCTION_STATEMENTS: &str = include_str!("../../sql/production_statements.sql");

/// The columns every export must have.
const REQUIRED: [&str; 3] = ["queryid", "query", "calls"];

const HINT: &str = "--production-stats takes a CSV with a header row or a JSON array of objects \
     with queryid, query, calls (rows, total_exec_time or total_time, shared_blks_hit optional), \
     e.g. psql --csv -c 'SELECT queryid, query, calls, rows, total_exec_time, shared_blks_hit \
     FROM pg_stat_statements' > prod.csv; or a postgres:// URL";

/// One record of the export: a column's value, `Some(None)` when it is null or empty,
/// `None` when the column is absent.
type Field<'a> = &'a dyn Fn(&str) -> Option<Option<String>>;

/// The production statements `source` names: a postgres:// URL is read from that
/// server, anything else is a file.
pub async fn read(source: &str, env: EnvLookup<'_>) -> Result<ProductionStats> {
    if source.starts_with("postgres://") || source.starts_with("postgresql://") {
        from_server(source, env).await
    } else {
        from_file(Path::new(source))
    }
}

/// One SELECT of the server's pg_stat_statements, the connected database's entries.
async fn from_server(url: &str, env: EnvLookup<'_>) -> Result<ProductionStats> {
    let target = conninfo::resolve(Some(url), env)?;
    let client = views::connect(&target).await?;
    let source = target.redacted();
    let rows = (client.query(SQL_PRODUCTION_STATEMENTS, &[]).await).map_err(|e| {
        let (message, hint) = describe_pg(&e);
        Error::database(format!(
            "--production-stats: cannot read pg_stat_statements of {source}: {message}"
        ))
        .with_hint(hint.unwrap_or_else(|| {
            "run CREATE EXTENSION pg_stat_statements in that database; a role with \
             pg_read_all_stats sees every role's statements"
                .into()
        }))
    })?;
    let mut objects = Vec::with_capacity(rows.len());
    for row in rows {
        let text: String = row.get(0);
        let value = serde_json::from_str(&text).map_err(|e| Error::usage(e.to_string()))?;
        objects.push(value);
    }
    let parsed = from_objects(&source, &objects)?;
    Ok(ProductionStats {
        source,
        rows: parsed,
    })
}

/// A CSV with a header row, or a JSON array of objects (a text that opens with `[`).
fn from_file(path: &Path) -> Result<ProductionStats> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("--production-stats: cannot read {name}: {e}")).with_hint(HINT)
    })?;
    let rows = if text.trim_start().starts_with('[') {
        let objects: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| {
            Error::usage(format!("{name}: not a JSON array of objects: {e}")).with_hint(HINT)
        })?;
        from_objects(&name, &objects)?
    } else {
        from_csv(&name, &text)?
    };
    if rows.is_empty() {
        return Err(Error::usage(format!("{name}: no statement in the export")).with_hint(HINT));
    }
    Ok(ProductionStats { source: name, rows })
}

fn from_csv(name: &str, text: &str) -> Result<Vec<ProductionRow>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let malformed = |e: csv::Error| Error::usage(format!("{name}: {e}")).with_hint(HINT);
    let header: Vec<String> = (reader.headers().map_err(malformed)?.iter())
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    if let Some(missing) = REQUIRED.iter().find(|c| !header.iter().any(|h| h == *c)) {
        return Err(Error::usage(format!(
            "{name}: row 1 (the header) has no column `{missing}`"
        ))
        .with_hint(HINT));
    }
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(malformed)?;
        let field = |column: &str| {
            let at = header.iter().position(|h| h == column)?;
            Some(record.get(at).map(str::to_string).filter(|v| !v.is_empty()))
        };
        let line = record.position().map_or(i as u64 + 2, |p| p.line());
        rows.push(row_of(
            &field,
            &format!("{name}: row {} (line {line})", i + 1),
        )?);
    }
    Ok(rows)
}

fn from_objects(name: &str, objects: &[serde_json::Value]) -> Result<Vec<ProductionRow>> {
    let mut rows = Vec::with_capacity(objects.len());
    for (i, object) in objects.iter().enumerate() {
        let at = format!("{name}: row {}", i + 1);
        let Some(object) = object.as_object() else {
            return Err(Error::usage(format!("{at}: not a JSON object")).with_hint(HINT));
        };
        let field = |column: &str| {
            object.get(column).map(|v| match v {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) if s.is_empty() => None,
                serde_json::Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            })
        };
        rows.push(row_of(&field, &at)?);
    }
    Ok(rows)
}

/// One statement from its fields; `at` names the file and row in an error.
fn row_of(field: Field, at: &str) -> Result<ProductionRow> {
    let bad = |column: &str, why: String| {
        Error::usage(format!("{at}, column `{column}`: {why}")).with_hint(HINT)
    };
    let value = |column: &str| -> Result<Option<String>> {
        match field(column) {
            Some(v) => Ok(v),
            None if REQUIRED.contains(&column) => Err(bad(column, "missing".into())),
            None => Ok(None),
        }
    };
    let number = |column: &str| -> Result<Option<u64>> {
        (value(column)?.map(|v| v.trim().parse::<u64>().map_err(|_| v)))
            .transpose()
            .map_err(|v| bad(column, format!("{v:?} is not a count")))
    };
    let queryid = value("queryid")?;
    if let Some(id) = &queryid
        && id.trim().parse::<i64>().is_err()
    {
        return Err(bad("queryid", format!("{id:?} is not a 64-bit integer")));
    }
    let time_column = if field("total_exec_time").is_some() {
        "total_exec_time"
    } else {
        "total_time"
    };
    let total_exec_time_ms = (value(time_column)?.map(|v| v.trim().parse::<f64>().map_err(|_| v)))
        .transpose()
        .map_err(|v| bad(time_column, format!("{v:?} is not a time in ms")))?;
    Ok(ProductionRow {
        queryid: queryid.map(|id| id.trim().to_string()),
        query: value("query")?.ok_or_else(|| bad("query", "empty".into()))?,
        calls: number("calls")?.ok_or_else(|| bad("calls", "empty".into()))?,
        rows: number("rows")?,
        total_exec_time_ms,
        shared_blks_hit: number("shared_blks_hit")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_json_exports_read_alike() {
        let csv = "queryid,query,calls,rows,total_time,shared_blks_hit\n\
                   -42,\"SELECT a,\nb FROM t\",12,24,1.5,7\n\
                   ,<insufficient privilege>,3,,,\n";
        let rows = from_csv("prod.csv", csv).unwrap();
        let json: Vec<serde_json::Value> = serde_json::from_str(
            r#"[{"queryid": -42, "query": "SELECT a,\nb FROM t", "calls": 12, "rows": 24,
                 "total_time": 1.5, "shared_blks_hit": 7, "userid": 10},
                {"queryid": null, "query": "<insufficient privilege>", "calls": 3}]"#,
        )
        .unwrap();
        assert_eq!(from_objects("prod.json", &json).unwrap(), rows);
        assert_eq!(
            rows[0],
            ProductionRow {
                queryid: Some("-42".into()),
                query: "SELECT a,\nb FROM t".into(),
                calls: 12,
                rows: Some(24),
                total_exec_time_ms: Some(1.5),
                shared_blks_hit: Some(7),
            }
        );
        assert_eq!((rows[1].queryid.as_ref(), rows[1].rows), (None, None));
    }

    #[test]
    fn a_bad_row_names_the_file_row_and_column() {
        let error = |csv: &str| from_csv("prod.csv", csv).unwrap_err().message;
        assert_eq!(
            error("queryid,query\n1,SELECT 1\n"),
            "prod.csv: row 1 (the header) has no column `calls`"
        );
        assert_eq!(
            error("queryid,query,calls\n1,SELECT 1,2\n2,SELECT 2,many\n"),
            "prod.csv: row 2 (line 3), column `calls`: \"many\" is not a count"
        );
        let json: Vec<serde_json::Value> =
            serde_json::from_str(r#"[{"queryid": "x1", "query": "q", "calls": 1}]"#).unwrap();
        assert_eq!(
            from_objects("prod.json", &json).unwrap_err().message,
            "prod.json: row 1, column `queryid`: \"x1\" is not a 64-bit integer"
        );
        let json: Vec<serde_json::Value> =
            serde_json::from_str(r#"[{"queryid": 1, "query": "q"}]"#).unwrap();
        assert_eq!(
            from_objects("prod.json", &json).unwrap_err().message,
            "prod.json: row 1, column `calls`: missing"
        );
    }
}
