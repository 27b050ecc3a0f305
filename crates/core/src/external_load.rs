//! The request count of a load that another tool made (`pgcost measure`): where the count
//! comes from (`--requests N` or `--count-from KIND:PATH`), and the parsers of each
//! tool's own result file, which read how many requests it sent and how many failed.
//! Pure: the caller reads the file.

use std::path::PathBuf;

use serde_json::Value;

/// A load tool whose result file pgcost reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Tool {
    Autocannon,
    Locust,
    K6,
    Oha,
}

impl Tool {
    pub const ALL: [Tool; 4] = [Tool::Autocannon, Tool::Locust, Tool::K6, Tool::Oha];

    /// The tool's name, as `--count-from` and `load.source` spell it.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The option that makes the tool write the file pgcost reads.
    pub fn writes_with(self) -> &'static str {
        match self {
            Tool::Autocannon => "autocannon --json > FILE",
            Tool::Locust => "locust --csv PREFIX (read PREFIX_stats.csv)",
            Tool::K6 => "k6 run --summary-export FILE",
            Tool::Oha => "oha --output-format json > FILE (older oha: --json)",
        }
    }
}

/// Where the request count of a `pgcost measure` run comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CountSource {
    /// `--requests N`.
    Given(u64),
    /// `--count-from KIND:PATH`: the tool's own result file, read after the command.
    Tool(Tool, PathBuf),
}

impl CountSource {
    /// `load.source` in the report: `given`, or the tool's name.
    pub fn name(&self) -> &'static str {
        match self {
            CountSource::Given(_) => "given",
            CountSource::Tool(tool, _) => tool.name(),
        }
    }
}

/// What a tool's result file says about its load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCount {
    /// Requests sent (each got a response or failed).
    pub requests: u64,
    /// Requests the tool counted as failed: errors, timeouts, non-2xx responses.
    pub failed: u64,
}

/// Parses `KIND:PATH` of `--count-from`.
pub fn parse_count_from(text: &str) -> Result<(Tool, PathBuf), String> {
    let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
    let Some((kind, path)) = text.split_once(':') else {
        return Err(format!(
            "--count-from takes KIND:PATH, e.g. locust:run_stats.csv (KIND is one of {})",
            names.join(", ")
        ));
    };
    let tool = Tool::ALL
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(kind))
        .ok_or_else(|| {
            format!(
                "--count-from: unknown load tool {kind:?} (one of {})",
                names.join(", ")
            )
        })?;
    if path.is_empty() {
        return Err(format!("--count-from {text}: the path is empty"));
    }
    Ok((tool, PathBuf::from(path)))
}

/// Reads the count from `text`, the content of `tool`'s result file.
pub fn parse(tool: Tool, text: &str) -> Result<ToolCount, String> {
    match tool {
        Tool::Autocannon => autocannon(&json(text)?),
        Tool::Locust => locust(text),
        Tool::K6 => k6(&json(text)?),
        Tool::Oha => oha(&json(text)?),
    }
}

fn json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("not a JSON document: {e}"))
}

/// A non-negative integer at `pointer`; `required` makes a missing one an error.
fn count_at(doc: &Value, pointer: &str, required: bool) -> Result<u64, String> {
    match doc.pointer(pointer) {
        None | Some(Value::Null) if !required => Ok(0),
        None | Some(Value::Null) => Err(format!("no {pointer} in the file")),
        Some(value) => value
            .as_u64()
            .or_else(|| {
                value
                    .as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
            .ok_or_else(|| format!("{pointer} is not a count: {value}")),
    }
}

/// autocannon `--json` (the result object of its README, "API" → `autocannon(opts, cb)`):
/// `requests.total` responses, plus `errors` (which include `timeouts`) that never got one;
/// failed are those errors and the `non2xx` responses.
fn autocannon(doc: &Value) -> Result<ToolCount, String> {
    let responses = count_at(doc, "/requests/total", true)?;
    let errors = count_at(doc, "/errors", false)?;
    let non2xx = count_at(doc, "/non2xx", false)?;
    Ok(ToolCount {
        requests: responses + errors,
        failed: errors + non2xx,
    })
}

/// k6 `--summary-export` (docs: k6 "Results output" → "End of test" → summary export):
/// `metrics.http_reqs.count`; `metrics.http_req_failed` is a rate metric whose `passes`
/// counts the true values, that is the failed requests (grafana/k6#2386).
fn k6(doc: &Value) -> Result<ToolCount, String> {
    let requests = count_at(doc, "/metrics/http_reqs/count", true)?;
    let failed = count_at(doc, "/metrics/http_req_failed/passes", false)?;
    Ok(ToolCount { requests, failed })
}

/// oha `--output-format json` (older versions: `--json`; the schema is `schema.json` in
/// hatoo/oha): responses per status in `statusCodeDistribution`, requests without a
/// response per error in `errorDistribution`.
fn oha(doc: &Value) -> Result<ToolCount, String> {
    let statuses = doc
        .get("statusCodeDistribution")
        .and_then(Value::as_object)
        .ok_or("no statusCodeDistribution in the file")?;
    let mut requests = 0;
    let mut failed = 0;
    for (code, count) in statuses {
        let count = count_at(count, "", true)?;
        requests += count;
        if !code.starts_with('2') {
            failed += count;
        }
    }
    if let Some(errors) = doc.get("errorDistribution").and_then(Value::as_object) {
        for count in errors.values() {
            let count = count_at(count, "", true)?;
            requests += count;
            failed += count;
        }
    }
    Ok(ToolCount { requests, failed })
}

/// Locust `--csv PREFIX`, the file PREFIX_stats.csv (docs: Locust "Retrieve test
/// statistics in CSV format"): the `Aggregated` row's `Request Count` and `Failure Count`.
fn locust(text: &str) -> Result<ToolCount, String> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| format!("the header: {e}"))?
        .clone();
    if header.is_empty() {
        return Err("the file is empty".into());
    }
    let column = |name: &str| {
        (header.iter())
            .position(|h| h == name)
            .ok_or_else(|| format!("no {name:?} column in the header"))
    };
    let (name, requests, failures) = (
        column("Name")?,
        column("Request Count")?,
        column("Failure Count")?,
    );
    let row = (reader.records())
        .filter_map(Result::ok)
        .find(|row| row.get(name) == Some("Aggregated"))
        .ok_or("no Aggregated row (is this the _stats.csv file?)")?;
    let number = |i: usize, what: &str| {
        (row.get(i).map(str::trim))
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| format!("the Aggregated row's {what} is not a count"))
    };
    Ok(ToolCount {
        requests: number(requests, "Request Count")?,
        failed: number(failures, "Failure Count")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> String {
        let path = format!("{}/../../tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn each_tool_file_gives_its_count_and_failures() {
        let cases = [
            (Tool::Autocannon, "autocannon.json", 250, 0),
            (Tool::Autocannon, "autocannon_failed.json", 105, 7),
            (Tool::Locust, "locust_stats.csv", 120, 0),
            (Tool::Locust, "locust_failed_stats.csv", 60, 4),
            (Tool::K6, "k6_summary.json", 300, 0),
            (Tool::K6, "k6_failed_summary.json", 50, 5),
            (Tool::Oha, "oha.json", 200, 0),
            (Tool::Oha, "oha_failed.json", 200, 13),
        ];
        for (tool, file, requests, failed) in cases {
            let count = parse(tool, &sample(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(count, ToolCount { requests, failed }, "{file}");
        }
    }

    #[test]
    fn a_wrong_file_says_what_is_missing() {
        let err = parse(Tool::K6, &sample("oha.json")).unwrap_err();
        assert_eq!(err, "no /metrics/http_reqs/count in the file");
        let err = parse(Tool::Locust, "Type,Name\nGET,/x\n").unwrap_err();
        assert_eq!(err, "no \"Request Count\" column in the header");
        let err = parse(Tool::Oha, "Summary:").unwrap_err();
        assert!(err.starts_with("not a JSON document"), "{err}");
        let err = parse(Tool::Autocannon, r#"{"requests":{"total":-1}}"#).unwrap_err();
        assert_eq!(err, "/requests/total is not a count: -1");
    }

    #[test]
    fn count_from_names_a_tool_and_a_path() {
        assert_eq!(
            parse_count_from("locust:out/run_stats.csv"),
            Ok((Tool::Locust, PathBuf::from("out/run_stats.csv")))
        );
        assert_eq!(
            parse_count_from("K6:c:/x.json"),
            Ok((Tool::K6, PathBuf::from("c:/x.json")))
        );
        assert!(
            parse_count_from("wrk:x")
                .unwrap_err()
                .contains("unknown load tool")
        );
        assert!(
            parse_count_from("x.json")
                .unwrap_err()
                .contains("KIND:PATH")
        );
        assert!(parse_count_from("oha:").unwrap_err().contains("empty"));
    }

    #[test]
    fn locust_names_may_hold_commas_and_quotes() {
        let text = "Type,Name,Request Count,Failure Count\r\n\
                    GET,\"/a,b \"\"c\"\"\",3,0\r\n\
                    ,Aggregated,3,1\r\n";
        assert_eq!(
            locust(text),
            Ok(ToolCount {
                requests: 3,
                failed: 1
            })
        );
        assert_eq!(locust(""), Err("the file is empty".to_string()));
    }
}
