//! A route's replay held to its log: which credential the route sent (named by its entry,
//! never by its value), the statuses its sample was logged with, what the replayed
//! statuses mean against them, and the audit's reasons reworded for a logged route. Pure.

use std::collections::BTreeMap;

use serde::Serialize;

use super::routes::{Grouping, REJECTIONS, Skipped, UrlCount, statuses_text};
use crate::report::model::invalid::{Code, Invalid};

/// Statuses a log may hold for real traffic with a real cost: replayed as logged, they
/// do not make the route not valid.
pub const EXPECTED_MISSES: [u16; 2] = [404, 410];

/// The `[[survey.auth]]` entry a route sent: its place in the file (from 0) and its paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CredentialUsed {
    pub index: usize,
    pub paths: Vec<String>,
}

/// How a reason names the credential: `[[survey.auth]] #0 (/api/, /graphql/)`, or the
/// command line's when no entry matched.
pub fn credential_name(credential: Option<&CredentialUsed>) -> String {
    match credential {
        Some(c) => format!("[[survey.auth]] #{} ({})", c.index, c.paths.join(", ")),
        None => "the command line's credentials".into(),
    }
}

/// What a route's replay should see: its sample's requests by the status each URL was
/// logged with, the route's logged statuses (for the reasons), and the credential it
/// sends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expectation {
    /// Sample requests per logged status; URLs without one are not counted.
    sampled: BTreeMap<u16, u64>,
    requests: u64,
    /// The route's requests per logged status, as the log has them.
    logged: BTreeMap<u16, u64>,
    pub credential: Option<CredentialUsed>,
}

impl Expectation {
    pub fn of(
        sample: &[UrlCount],
        logged: &BTreeMap<u16, u64>,
        credential: Option<CredentialUsed>,
    ) -> Expectation {
        let mut sampled = BTreeMap::new();
        for u in sample {
            if let Some(status) = u.logged_status {
                *sampled.entry(status).or_default() += u.requests;
            }
        }
        Expectation {
            sampled,
            requests: sample.iter().map(|u| u.requests).sum(),
            logged: logged.clone(),
            credential,
        }
    }

    /// The statuses the replay expects on purpose: 404 and 410 where URLs were logged so.
    pub fn allowed(&self) -> Vec<u16> {
        (EXPECTED_MISSES.into_iter())
            .filter(|s| self.sampled.contains_key(s))
            .collect()
    }

    fn sampled_in(&self, range: std::ops::Range<u16>) -> u64 {
        (self.sampled.iter())
            .filter(|(s, _)| range.contains(s))
            .map(|(_, n)| n)
            .sum()
    }

    /// `where the log had 200 x30, 404 x10`, or `where the log has no status`.
    fn where_logged(&self) -> String {
        if self.logged.is_empty() {
            "where the log has no status".into()
        } else {
            format!("where the log had {}", statuses_text(&self.logged))
        }
    }

    /// The audit's `reasons` of a replay that answered `replayed`, held to the log: a
    /// miss (404, 410) beyond the logged ones, and a redirect where the log had a success
    /// (a login page), are added; rejections, misses and ignored credentials are reworded
    /// for a logged route.
    pub fn judge(&self, replayed: &BTreeMap<u16, u64>, reasons: Vec<Invalid>) -> Vec<Invalid> {
        let mut out: Vec<Invalid> = Vec::new();
        let mut rejected_said = false;
        for reason in reasons {
            match reason.code {
                Code::Rejected if !rejected_said => {
                    rejected_said = true;
                    out.push(self.rejected(replayed));
                }
                Code::Rejected => {}
                Code::NotFound => out.push(self.not_found(replayed, 404)),
                Code::CredentialsIgnored => out.push(self.ignored()),
                _ => out.push(reason),
            }
        }
        for code in self.allowed() {
            if replayed.get(&code).copied().unwrap_or(0) > self.sampled[&code] {
                out.push(self.not_found(replayed, code));
            }
        }
        out.extend(self.redirected(replayed));
        out
    }

    /// A route whose every probe answer was a rejection (or a server error): not measured.
    pub fn probe_rejected(&self, probed: &BTreeMap<u16, u64>) -> Invalid {
        Invalid::new(
            Code::Rejected,
            format!(
                "every probe response was {} {}, with {}: a replay would measure the \
                 rejection path, not the route; {}",
                statuses_text(probed),
                self.where_logged(),
                credential_name(self.credential.as_ref()),
                self.fix()
            ),
        )
    }

    fn fix(&self) -> &'static str {
        match self.credential {
            Some(_) => "check that entry's credential",
            None => "give this path its credential with [[survey.auth]] in pgcost.toml",
        }
    }

    fn rejected(&self, replayed: &BTreeMap<u16, u64>) -> Invalid {
        let refused: BTreeMap<u16, u64> = (replayed.iter())
            .filter(|(s, _)| REJECTIONS.contains(s))
            .map(|(s, n)| (*s, *n))
            .collect();
        Invalid::new(
            Code::Rejected,
            format!(
                "replayed {} of {} {}, with {}: these numbers measure the rejection path; {}",
                statuses_text(&refused),
                self.requests,
                self.where_logged(),
                credential_name(self.credential.as_ref()),
                self.fix()
            ),
        )
    }

    fn not_found(&self, replayed: &BTreeMap<u16, u64>, code: u16) -> Invalid {
        let seen = replayed.get(&code).copied().unwrap_or(0);
        let sampled = self.sampled.get(&code).copied().unwrap_or(0);
        let message = if self.logged.is_empty() {
            format!(
                "{seen} of {} responses were {code} where the log has no status: the log's \
                 URLs are not found in this database (deleted ids, another tenant's?); replay \
                 against a copy of the data the log was written on, or survey a log with \
                 statuses, whose logged 404s are replayed as real traffic",
                self.requests
            )
        } else {
            format!(
                "{seen} of {} responses were {code} {} ({sampled} of the sample logged \
                 {code}): URLs logged as found are not found in this database; replay against \
                 a copy of the data the log was written on",
                self.requests,
                self.where_logged()
            )
        };
        Invalid::new(Code::NotFound, message)
    }

    fn ignored(&self) -> Invalid {
        Invalid::new(
            Code::CredentialsIgnored,
            format!(
                "the app answered the same without {}: they are ignored on this route (a page \
                 that wants another credential, served as anonymous?); give this path its own \
                 credential with [[survey.auth]], or set allow_anonymous_equal for a public page",
                credential_name(self.credential.as_ref())
            ),
        )
    }

    /// Redirects beyond the logged ones where the log had a success: a login page.
    fn redirected(&self, replayed: &BTreeMap<u16, u64>) -> Option<Invalid> {
        let redirects: BTreeMap<u16, u64> = (replayed.iter())
            .filter(|(s, _)| (300..400).contains(*s))
            .map(|(s, n)| (*s, *n))
            .collect();
        let extra = redirects.values().sum::<u64>();
        if self.sampled_in(200..300) == 0 || extra <= self.sampled_in(300..400) {
            return None;
        }
        Some(Invalid::new(
            Code::Rejected,
            format!(
                "replayed {} of {} {}, with {}: a login redirect? these numbers measure the \
                 redirect, not the page; {}",
                statuses_text(&redirects),
                self.requests,
                self.where_logged(),
                credential_name(self.credential.as_ref()),
                self.fix()
            ),
        ))
    }
}

/// Moves the routes whose every logged request was a rejection to `skipped`: the log's
/// own answer, not replayed, not ranked, and no reason for the survey to fail.
pub fn set_aside_rejected(grouping: &mut Grouping) {
    let routes = std::mem::take(&mut grouping.routes);
    for route in routes {
        match route.rejected_in_log() {
            Some(statuses) => grouping.skipped.push(Skipped {
                requests: route.requests(),
                reason: format!(
                    "rejected in the log too ({statuses}): not replayed; the log's own \
                     answer, with no cost of the route to measure"
                ),
                method: route.method,
                route: route.template,
            }),
            None => grouping.routes.push(route),
        }
    }
}

/// The statuses of a report's load, keyed by their text there, as numbers.
pub fn statuses(by_text: &BTreeMap<String, u64>) -> BTreeMap<u16, u64> {
    (by_text.iter())
        .filter_map(|(s, n)| Some((s.parse().ok()?, *n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(list: &[(&str, u64, Option<u16>)]) -> Vec<UrlCount> {
        (list.iter())
            .map(|(url, requests, logged_status)| UrlCount {
                url: url.to_string(),
                requests: *requests,
                body: None,
                logged_status: *logged_status,
            })
            .collect()
    }

    fn replayed(list: &[(u16, u64)]) -> BTreeMap<u16, u64> {
        list.iter().copied().collect()
    }

    /// The expectation of `list`, logged as sampled.
    fn expect(
        list: &[(&str, u64, Option<u16>)],
        credential: Option<CredentialUsed>,
    ) -> Expectation {
        let sample = sample(list);
        let mut logged = BTreeMap::new();
        for u in &sample {
            if let Some(status) = u.logged_status {
                *logged.entry(status).or_default() += u.requests;
            }
        }
        Expectation::of(&sample, &logged, credential)
    }

    fn api() -> Option<CredentialUsed> {
        Some(CredentialUsed {
            index: 0,
            paths: vec!["/api/".into(), "/graphql/".into()],
        })
    }

    #[test]
    fn logged_misses_are_expected_and_only_the_extra_ones_count() {
        let e = expect(
            &[
                ("/d/1", 30, Some(200)),
                ("/d/9", 10, Some(404)),
                ("/d/2", 5, None),
            ],
            None,
        );
        assert_eq!(e.allowed(), [404]);
        assert!(
            e.judge(&replayed(&[(200, 35), (404, 10)]), vec![])
                .is_empty()
        );
        // A URL logged found and now missing: 15 against the 10 logged.
        let reasons = e.judge(&replayed(&[(200, 30), (404, 15)]), vec![]);
        assert_eq!(reasons.len(), 1);
        assert_eq!(reasons[0].code, Code::NotFound);
        assert!(
            reasons[0]
                .message
                .starts_with("15 of 45 responses were 404 where the log had 200 x30, 404 x10"),
            "{}",
            reasons[0].message
        );
        // The reason quotes the log's counts, not the sample's.
        let log = replayed(&[(200, 3), (404, 1)]);
        let sample = sample(&[("/d/1", 30, Some(200)), ("/d/9", 10, Some(404))]);
        let reasons = Expectation::of(&sample, &log, None).judge(&replayed(&[(404, 40)]), vec![]);
        assert!(
            reasons[0]
                .message
                .starts_with("40 of 40 responses were 404 where the log had 200 x3, 404 x1 (10 of"),
            "{}",
            reasons[0].message
        );
        let none = expect(&[("/x", 4, None)], None);
        assert!(none.allowed().is_empty());
    }

    #[test]
    fn a_rejection_names_both_statuses_and_the_credential() {
        let e = expect(&[("/api/x", 40, Some(200))], api());
        let audit = vec![Invalid::new(
            Code::Rejected,
            "40 of 40 responses were 403: ...",
        )];
        let reasons = e.judge(&replayed(&[(403, 40)]), audit);
        assert_eq!(reasons.len(), 1);
        assert_eq!(
            reasons[0].message,
            "replayed 403 x40 of 40 where the log had 200 x40, with [[survey.auth]] #0 \
             (/api/, /graphql/): these numbers measure the rejection path; check that \
             entry's credential"
        );
        let default = expect(&[("/p", 2, Some(200))], None);
        let probe = default.probe_rejected(&replayed(&[(401, 2)]));
        assert!(
            probe
                .message
                .contains("401 x2 where the log had 200 x2, with the command line's credentials")
                && probe.message.contains("[[survey.auth]]"),
            "{}",
            probe.message
        );
    }

    #[test]
    fn a_redirect_where_the_log_had_a_success_is_a_login_page() {
        let e = expect(&[("/ui/", 8, Some(200))], None);
        let reasons = e.judge(&replayed(&[(302, 8)]), vec![]);
        assert_eq!(reasons[0].code, Code::Rejected);
        assert!(
            reasons[0]
                .message
                .starts_with("replayed 302 x8 of 8 where the log had 200 x8"),
            "{}",
            reasons[0].message
        );
        // Redirects the log had too, and logs without a status, keep today's rule.
        let logged = expect(&[("/a", 4, Some(200)), ("/b", 4, Some(302))], None);
        assert!(
            logged
                .judge(&replayed(&[(200, 4), (302, 4)]), vec![])
                .is_empty()
        );
        let unknown = expect(&[("/a", 8, None)], None);
        assert!(unknown.judge(&replayed(&[(302, 8)]), vec![]).is_empty());
    }

    #[test]
    fn the_audits_other_reasons_are_kept_and_ignored_credentials_reworded() {
        let e = expect(&[("/ui/", 8, None)], api());
        let kept = Invalid::new(Code::SettleTimeout, "settling timed out");
        let ignored = Invalid::new(Code::CredentialsIgnored, "... (an unknown key ...)");
        let reasons = e.judge(&replayed(&[(200, 8)]), vec![kept.clone(), ignored]);
        assert_eq!(reasons[0], kept);
        assert_eq!(reasons[1].code, Code::CredentialsIgnored);
        assert!(
            reasons[1]
                .message
                .starts_with("the app answered the same without [[survey.auth]] #0"),
            "{}",
            reasons[1].message
        );
        let not_found = Invalid::new(Code::NotFound, "8 of 8 ... check --url");
        let reasons = e.judge(&replayed(&[(404, 8)]), vec![not_found]);
        assert!(
            !reasons[0].message.contains("--url"),
            "{}",
            reasons[0].message
        );
        assert!(
            reasons[0]
                .message
                .starts_with("8 of 8 responses were 404 where the log has no status")
        );
        assert_eq!(
            statuses(&[("200".to_string(), 3), ("x".to_string(), 1)].into()),
            replayed(&[(200, 3)])
        );
    }
}
