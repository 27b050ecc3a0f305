//! GitHub's rules of the SARIF multitool (GH1001 to GH1005), applied to a SARIF log: what
//! code scanning needs of a result to show it. Written from the rules' descriptions, so
//! that the tests need no .NET tool.

use serde_json::Value;

/// GitHub's upload limits that GH1004 reviews: (JSON path of the array, most elements).
const LIMITS: &[(&str, usize)] = &[("runs", 20), ("results", 25_000), ("rules", 25_000)];
const MAX_LOCATIONS_PER_RESULT: usize = 1_000;

/// Each breach as `GHnnnn results[i]: why`.
pub fn violations(log: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let runs = log["runs"].as_array().cloned().unwrap_or_default();
    if runs.len() > LIMITS[0].1 {
        out.push(format!("GH1004 runs: {} runs", runs.len()));
    }
    for run in &runs {
        let results = run["results"].as_array().cloned().unwrap_or_default();
        let rules = run["tool"]["driver"]["rules"]
            .as_array()
            .map_or(0, Vec::len);
        if results.len() > LIMITS[1].1 || rules > LIMITS[2].1 {
            out.push(format!(
                "GH1004 run: {} results, {rules} rules",
                results.len()
            ));
        }
        for (i, result) in results.iter().enumerate() {
            out.extend(
                result_violations(result)
                    .into_iter()
                    .map(|v| format!("{v} results[{i}]")),
            );
        }
    }
    out
}

fn result_violations(result: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let locations = result["locations"].as_array().cloned().unwrap_or_default();
    if locations.len() > MAX_LOCATIONS_PER_RESULT {
        out.push("GH1004".to_string());
    }
    let physical: Vec<&Value> = (locations.iter())
        .map(|l| &l["physicalLocation"])
        .filter(|p| !p.is_null())
        .collect();
    if physical.is_empty()
        || physical
            .iter()
            .any(|p| !p["artifactLocation"]["uri"].is_string())
    {
        out.push("GH1001".to_string());
    }
    for p in &physical {
        if !p["region"]["startLine"].is_u64() {
            out.push("GH1003".to_string());
        }
        let uri = p["artifactLocation"]["uri"].as_str().unwrap_or_default();
        if !relative_or_file(uri) {
            out.push("GH1005".to_string());
        }
    }
    let flows = result["codeFlows"].as_array().cloned().unwrap_or_default();
    let inline = |flow: &Value| {
        let threads = flow["threadFlows"].as_array().cloned().unwrap_or_default();
        threads.iter().all(|t| {
            let steps = t["locations"].as_array().cloned().unwrap_or_default();
            steps.iter().all(|s| s["location"].is_object())
        })
    };
    if !flows.iter().all(inline) {
        out.push("GH1002".to_string());
    }
    out
}

/// A relative URI reference (no scheme, not rooted), or an absolute `file:` URI.
fn relative_or_file(uri: &str) -> bool {
    let scheme = uri.split_once(':').map(|(s, _)| s).filter(|s| {
        s.len() > 1
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    match scheme {
        Some(scheme) => scheme.eq_ignore_ascii_case("file"),
        None => !uri.is_empty() && !uri.starts_with('/') && !uri.contains('\\'),
    }
}
