//! Whether the credentials count: the app's answer to one request with them against its
//! answer to the same request without them. An app that serves an unknown key as an
//! anonymous user answers both alike, and the run would measure the anonymous path. Pure.

/// The first words of the reason a run is not valid when the credentials are ignored.
pub const IGNORED: &str = "the app answered the same without your credentials; they are \
                           being ignored (an unknown key served as anonymous?)";

use crate::report::model::invalid::{Code, Invalid};
use crate::report::model::notes;

/// One answer of the app: its status and its whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// What the comparison adds to the report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Note {
    /// Why the run is not valid: the credentials made no difference.
    pub invalid_reason: Option<Invalid>,
    /// The same answer, accepted on purpose.
    pub warning: Option<notes::Note>,
}

/// Compares the answer `with` the credentials to the one `without` them. The same
/// successful status (2xx or 3xx) and an identical body mean the credentials are ignored,
/// unless `allow_equal` (`--allow-anonymous-equal`, for an endpoint that really is public).
/// The same rejection or error either way is the burst's to report, by its status.
pub fn judge(with: &Answer, without: &Answer, allow_equal: bool) -> Note {
    if with != without || !(200..400).contains(&with.status) {
        return Note::default();
    }
    let seen = format!(
        "both requests got {} and the same {}-byte body",
        with.status,
        with.body.len()
    );
    if allow_equal {
        Note {
            invalid_reason: None,
            warning: Some(notes::Note::AnonymousAnswerAccepted {
                status: with.status,
                body_bytes: with.body.len(),
            }),
        }
    } else {
        Note {
            invalid_reason: Some(Invalid::new(
                Code::CredentialsIgnored,
                format!(
                    "{IGNORED}: {seen}; check the key or token, or pass --allow-anonymous-equal \
                 (allow_anonymous_equal = true in pgcost.toml) for an endpoint that really is \
                 public"
                ),
            )),
            warning: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn the_same_answer_without_credentials_is_not_valid() {
        let note = judge(&answer(200, "[]"), &answer(200, "[]"), false);
        let reason = note.invalid_reason.unwrap();
        assert_eq!(reason.code, Code::CredentialsIgnored);
        let reason = reason.message;
        assert!(reason.starts_with(IGNORED), "{reason}");
        assert!(
            reason.contains("both requests got 200 and the same 2-byte body"),
            "{reason}"
        );
        assert_eq!(note.warning, None);
    }

    #[test]
    fn allowing_it_leaves_a_warning() {
        let note = judge(&answer(200, "[]"), &answer(200, "[]"), true);
        assert_eq!(note.invalid_reason, None);
        let warning = note.warning.unwrap();
        assert_eq!(
            warning.message(),
            "the app answered the same without your credentials (both requests got 200 and \
             the same 2-byte body), accepted by --allow-anonymous-equal as a public endpoint"
        );
    }

    #[test]
    fn a_different_status_or_body_means_the_credentials_count() {
        for without in [answer(401, "[]"), answer(200, "[ ]"), answer(302, "")] {
            assert_eq!(judge(&answer(200, "[]"), &without, false), Note::default());
        }
    }
}
