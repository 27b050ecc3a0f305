//! How the user spelled each option, for the errors of its validation: a flag names itself
//! (`--settle-timeout`), a value pgcost.toml put into a group is named by its key
//! (`[defaults] settle_timeout`). And the groups as clap fills them from an empty command
//! line, so that what pgcost.toml leaves out takes the flag's default.

use std::collections::BTreeMap;

use clap::{Args, FromArgMatches};

/// The name of each option in its errors, by clap id; an id not recorded is a flag.
#[derive(Debug, Clone, Default)]
pub struct Spelling {
    keys: BTreeMap<&'static str, String>,
}

impl Spelling {
    /// Every option as a flag.
    pub fn flags() -> Spelling {
        Spelling::default()
    }

    /// The option of clap id `id` came from `name` (a key of pgcost.toml).
    pub fn set(&mut self, id: &'static str, name: impl Into<String>) {
        self.keys.insert(id, name.into());
    }

    /// The option of clap id `id` as the user spelled it.
    pub fn of(&self, id: &str) -> String {
        match self.keys.get(id) {
            Some(name) => name.clone(),
            None => flag(id),
        }
    }
}

/// The long flag of clap id `id`: the field's name with `-`, the plural of a repeated
/// flag aside.
fn flag(id: &str) -> String {
    match id {
        "thresholds" => "--threshold".to_string(),
        "error_headers" => "--error-header".to_string(),
        other => format!("--{}", other.replace('_', "-")),
    }
}

/// A group of flags as clap fills it from an empty command line: every default applied.
pub fn defaults<T: Args + FromArgMatches>() -> T {
    let command = T::augment_args(clap::Command::new("defaults").no_binary_name(true));
    let matches = command.get_matches_from(std::iter::empty::<String>());
    T::from_arg_matches(&matches).expect("a group without required flags")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::{AuditArgs, LoadArgs, TargetArgs};

    #[test]
    fn a_flag_is_named_as_clap_declares_it() {
        let command = AuditArgs::augment_args(clap::Command::new("audit"));
        for id in [
            "settle_timeout",
            "timeout",
            "body_file",
            "cacert",
            "jwt_ttl",
            "thresholds",
        ] {
            let arg = (command.get_arguments())
                .find(|a| a.get_id() == id)
                .unwrap();
            let long = format!("--{}", arg.get_long().unwrap());
            assert_eq!(Spelling::flags().of(id), long);
        }
        let mut spelling = Spelling::flags();
        spelling.set("timeout", "[defaults] timeout");
        assert_eq!(spelling.of("timeout"), "[defaults] timeout");
    }

    #[test]
    fn defaults_are_the_flags_defaults() {
        use crate::flags::{DEFAULT_ADMIN_DB, DEFAULT_CONCURRENCY, DEFAULT_WARMUP};
        let load: LoadArgs = defaults();
        assert_eq!(
            (load.burst.concurrency, load.warmup),
            (DEFAULT_CONCURRENCY, DEFAULT_WARMUP)
        );
        assert_eq!(
            (load.method.as_str(), load.timeout.as_str()),
            ("GET", "30s")
        );
        assert_eq!(load.burst.count.requests, None);
        let target: TargetArgs = defaults();
        assert_eq!(target.admin_db, DEFAULT_ADMIN_DB);
        assert!(target.db.is_empty());
    }
}
