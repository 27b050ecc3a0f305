//! Per-request values in the URL, the headers and the body: `{{seq}}`, `{{run}}`,
//! `{{uuid}}`, `{{rand LO HI}}`, `{{now}}` and `{{data.COLUMN}}` (a row of `--data` each
//! request). A text is parsed once into parts; each request renders them into bytes.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// One part of a template.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(Vec<u8>),
    /// 1, 2, 3 … over the whole run, warm-up and probe included.
    Seq,
    /// The run's id.
    Run,
    Uuid,
    /// A whole number from `lo` to `hi`, both included.
    Rand(i64, i64),
    /// The time of the request, RFC 3339 in UTC.
    Now,
    /// The column of `--data`'s row.
    Data(usize),
}

/// Where a template's values land: the request target takes them percent-encoded, a header
/// without line breaks, the body as they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Context {
    Target,
    Header,
    Body,
}

/// A text with its placeholders, parsed once.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
    context: Context,
}

/// The rows of `--data`: a CSV file with a header, or JSON lines of objects.
#[derive(Debug, Clone, PartialEq)]
pub struct DataSet {
    pub path: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// What varies from one request to the next: its number in the run.
#[derive(Debug, Clone, Copy)]
pub struct Turn {
    pub seq: u64,
}

/// The run's requests so far: `{{seq}}` never repeats within one pgcost process.
static SEQ: AtomicU64 = AtomicU64::new(0);

/// The run's id: 8 hex digits, new for each pgcost process.
static RUN: LazyLock<String> =
    LazyLock::new(|| uuid::Uuid::new_v4().simple().to_string()[..8].into());

impl Turn {
    /// The next request of the run.
    pub fn next() -> Turn {
        Turn {
            seq: SEQ.fetch_add(1, Ordering::Relaxed) + 1,
        }
    }
}

/// Bytes a value is percent-encoded in a request target: those that would end or split it.
const IN_TARGET: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'&')
    .add(b'+')
    .add(b'/')
    .add(b'?')
    .add(b'<')
    .add(b'>');

impl Template {
    /// Parses `text`; `data` is `--data`'s set, where the text may name its columns. The
    /// error names the placeholder that is unknown or the column the file lacks.
    pub fn parse(
        text: &[u8],
        context: Context,
        data: Option<&DataSet>,
    ) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = find(rest, b"{{") {
            let Some(end) = find(&rest[start + 2..], b"}}") else {
                break;
            };
            push_text(&mut parts, &rest[..start]);
            // A URL writes the spaces between a placeholder's words as `%20`.
            let inside = String::from_utf8_lossy(&rest[start + 2..start + 2 + end]);
            parts.push(placeholder(inside.replace("%20", " ").trim(), data)?);
            rest = &rest[start + 2 + end + 2..];
        }
        push_text(&mut parts, rest);
        Ok(Template { parts, context })
    }

    /// The text of a request target as the URL parser left it: placeholders in a path are
    /// percent-encoded (`%7B%7Bseq%7D%7D`), and are read back as written.
    pub fn parse_target(target: &str, data: Option<&DataSet>) -> Result<Template, String> {
        let unescaped = placeholders_unescaped(target);
        Template::parse(unescaped.as_bytes(), Context::Target, data)
    }

    /// True when the text has no placeholder.
    pub fn is_fixed(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }

    /// The text with each placeholder's value for request `turn`, appended to `out`. Only
    /// a `--data` value needs escaping: the others are digits, hex, `-`, `:` and `.`.
    pub fn render(&self, turn: Turn, data: Option<&DataSet>, out: &mut Vec<u8>) {
        for part in &self.parts {
            match part {
                Part::Text(text) => out.extend_from_slice(text),
                Part::Seq => write_number(out, turn.seq as i64),
                Part::Run => out.extend_from_slice(RUN.as_bytes()),
                Part::Uuid => {
                    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
                    // From fastrand, not the OS: no system call per request.
                    let random = fastrand::u128(..).to_le_bytes();
                    let uuid = uuid::Builder::from_random_bytes(random)
                        .into_uuid()
                        .hyphenated();
                    out.extend_from_slice(uuid.encode_lower(&mut text).as_bytes());
                }
                Part::Rand(lo, hi) => write_number(out, fastrand::i64(*lo..=*hi)),
                Part::Now => {
                    let now = time::OffsetDateTime::now_utc();
                    let _ = now.format_into(out, &time::format_description::well_known::Rfc3339);
                }
                Part::Data(column) => {
                    let Some(d) = data.filter(|d| !d.rows.is_empty()) else {
                        continue;
                    };
                    let value = &d.rows[((turn.seq - 1) % d.rows.len() as u64) as usize][*column];
                    self.escaped(value, out);
                }
            }
        }
    }

    /// `value` as the context takes it: percent-encoded in a target, without line breaks in
    /// a header, as it is in a body.
    fn escaped(&self, value: &str, out: &mut Vec<u8>) {
        match self.context {
            Context::Target => {
                out.extend(utf8_percent_encode(value, IN_TARGET).flat_map(str::bytes))
            }
            Context::Header => out.extend(
                value
                    .bytes()
                    .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
            ),
            Context::Body => out.extend_from_slice(value.as_bytes()),
        }
    }
}

/// `n` in decimal, without an allocation.
fn write_number(out: &mut Vec<u8>, n: i64) {
    use std::io::Write;
    let _ = write!(out, "{n}");
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn push_text(parts: &mut Vec<Part>, text: &[u8]) {
    if !text.is_empty() {
        parts.push(Part::Text(text.to_vec()));
    }
}

/// One placeholder's part, from the words between its braces.
fn placeholder(inside: &str, data: Option<&DataSet>) -> Result<Part, String> {
    let words: Vec<&str> = inside.split_whitespace().collect();
    Ok(match words.as_slice() {
        ["seq"] => Part::Seq,
        ["run"] => Part::Run,
        ["uuid"] => Part::Uuid,
        ["now"] => Part::Now,
        ["rand", lo, hi] => {
            let bound = |w: &str| {
                w.parse::<i64>()
                    .map_err(|_| format!("{{{{{inside}}}}}: {w:?} is not a whole number"))
            };
            let (lo, hi) = (bound(lo)?, bound(hi)?);
            if lo > hi {
                return Err(format!("{{{{{inside}}}}}: {lo} is greater than {hi}"));
            }
            Part::Rand(lo, hi)
        }
        [word] if word.starts_with("data.") => {
            let column = &word["data.".len()..];
            let Some(data) = data else {
                return Err(format!(
                    "{{{{{inside}}}}} needs --data FILE, a CSV or JSON-lines file with that column"
                ));
            };
            match data.columns.iter().position(|c| c == column) {
                Some(i) => Part::Data(i),
                None => {
                    return Err(format!(
                        "{{{{{inside}}}}}: {} has no column {column:?} (it has {})",
                        data.path,
                        data.columns.join(", ")
                    ));
                }
            }
        }
        _ => {
            return Err(format!(
                "unknown placeholder {{{{{inside}}}}}: use {{{{seq}}}}, {{{{run}}}}, {{{{uuid}}}}, \
                 {{{{rand LO HI}}}}, {{{{now}}}} or {{{{data.COLUMN}}}}"
            ));
        }
    })
}

/// `%7B%7B` and `%7D%7D`, as the URL parser writes braces in a path, back to `{{` and `}}`.
fn placeholders_unescaped(target: &str) -> String {
    target.replace("%7B%7B", "{{").replace("%7D%7D", "}}")
}

impl DataSet {
    /// Reads `path`: JSON lines when it ends in `.jsonl` or `.ndjson` or its first character
    /// is `{`, a CSV file with a header otherwise.
    pub fn read(path: &Path) -> Result<Arc<DataSet>, String> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
        let json = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "ndjson")
        ) || text.trim_start().starts_with('{');
        let (columns, rows) = match json {
            true => json_lines(&text).map_err(|e| format!("{name}: {e}"))?,
            false => csv_rows(&text).map_err(|e| format!("{name}: {e}"))?,
        };
        if rows.is_empty() {
            return Err(format!("{name} has no row"));
        }
        Ok(Arc::new(DataSet {
            path: name,
            columns,
            rows,
        }))
    }
}

type Rows = (Vec<String>, Vec<Vec<String>>);

fn csv_rows(text: &str) -> Result<Rows, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let columns: Vec<String> = (reader.headers().map_err(|e| e.to_string())?.iter())
        .map(str::to_string)
        .collect();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| e.to_string())?;
        rows.push(record.iter().map(str::to_string).collect());
    }
    Ok((columns, rows))
}

/// Each line an object; the columns are the keys of the first, and a string is taken as
/// it is, any other value as its JSON.
fn json_lines(text: &str) -> Result<Rows, String> {
    let mut columns: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
            .map_err(|e| format!("line {}: not a JSON object: {e}", i + 1))?;
        if columns.is_empty() {
            columns = object.keys().cloned().collect();
        }
        let cell = |c: &String| match object.get(c) {
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(other) => Ok(other.to_string()),
            None => Err(format!("line {}: no key {c:?}", i + 1)),
        };
        rows.push(columns.iter().map(cell).collect::<Result<Vec<_>, _>>()?);
    }
    Ok((columns, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(template: &Template, seq: u64, data: Option<&DataSet>) -> String {
        let mut out = Vec::new();
        template.render(Turn { seq }, data, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn data() -> DataSet {
        DataSet {
            path: "ids.csv".into(),
            columns: vec!["id".into(), "name".into()],
            rows: vec![
                vec!["7".into(), "a b".into()],
                vec!["9".into(), "c/d".into()],
            ],
        }
    }

    #[test]
    fn each_placeholder_takes_its_value() {
        let body = br#"{"n":"x-{{run}}-{{seq}}","r":{{ rand 3 3 }},"id":{{data.id}},"at":"{{now}}","u":"{{uuid}}"}"#;
        let t = Template::parse(body, Context::Body, Some(&data())).unwrap();
        let one = rendered(&t, 1, Some(&data()));
        let value: serde_json::Value = serde_json::from_str(&one).unwrap();
        assert_eq!(value["n"], format!("x-{}-1", *RUN));
        assert_eq!(value["r"], 3);
        assert_eq!(value["id"], 7);
        let at = value["at"].as_str().unwrap();
        time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).unwrap();
        assert_eq!(
            uuid::Uuid::parse_str(value["u"].as_str().unwrap())
                .unwrap()
                .get_version_num(),
            4
        );
        let three = rendered(&t, 3, Some(&data()));
        assert!(
            three.contains("-3\"") && three.contains("\"id\":7"),
            "rows cycle: {three}"
        );
        assert!(rendered(&t, 2, Some(&data())).contains("\"id\":9"));
    }

    #[test]
    fn a_target_takes_its_values_percent_encoded_and_a_header_without_line_breaks() {
        let url = url::Url::parse(
            "http://h/items/%7B%7Bdata.name%7D%7D?q={{data.name}}&r={{rand%201%201}}",
        )
        .unwrap();
        let target = &url[url::Position::BeforePath..];
        let t = Template::parse_target(target, Some(&data())).unwrap();
        assert_eq!(rendered(&t, 2, Some(&data())), "/items/c%2Fd?q=c%2Fd&r=1");
        let header =
            Template::parse(b"X-Name: {{data.name}}\r\n", Context::Header, Some(&data())).unwrap();
        let lines = DataSet {
            rows: vec![vec!["1".into(), "a\r\nb".into()]],
            ..data()
        };
        assert_eq!(rendered(&header, 1, Some(&lines)), "X-Name: a  b\r\n");
    }

    #[test]
    fn unknown_placeholders_and_missing_columns_are_named() {
        let error = |text: &str, data: Option<&DataSet>| {
            Template::parse(text.as_bytes(), Context::Body, data).unwrap_err()
        };
        assert!(error("{{sequence}}", None).contains("unknown placeholder {{sequence}}"));
        assert!(error("{{rand 5 1}}", None).contains("5 is greater than 1"));
        assert!(error("{{rand a 1}}", None).contains("\"a\" is not a whole number"));
        assert!(error("{{data.id}}", None).contains("needs --data FILE"));
        let missing = error("{{data.email}}", Some(&data()));
        assert!(
            missing.contains("ids.csv has no column \"email\" (it has id, name)"),
            "{missing}"
        );
        let fixed = Template::parse(b"{\"a\": {1}} }}", Context::Body, None).unwrap();
        assert!(fixed.is_fixed());
    }

    #[test]
    fn data_files_are_csv_with_a_header_or_json_lines() {
        let dir = std::env::temp_dir().join(format!("pgcost-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("ids.csv");
        std::fs::write(&csv, "id,name\n1,\"a, b\"\n2,c\n").unwrap();
        let set = DataSet::read(&csv).unwrap();
        assert_eq!(set.columns, ["id", "name"]);
        assert_eq!(set.rows, [vec!["1", "a, b"], vec!["2", "c"]]);
        let jsonl = dir.join("ids.jsonl");
        std::fs::write(
            &jsonl,
            "{\"id\": 1, \"name\": \"a\"}\n\n{\"id\": 2, \"name\": \"b\"}\n",
        )
        .unwrap();
        let set = DataSet::read(&jsonl).unwrap();
        assert_eq!(set.rows, [vec!["1", "a"], vec!["2", "b"]]);
        std::fs::write(&jsonl, "{\"id\": 1}\n{\"name\": 2}\n").unwrap();
        assert!(
            DataSet::read(&jsonl)
                .unwrap_err()
                .contains("line 2: no key \"id\"")
        );
        std::fs::write(&csv, "id\n").unwrap();
        assert!(DataSet::read(&csv).unwrap_err().contains("has no row"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
