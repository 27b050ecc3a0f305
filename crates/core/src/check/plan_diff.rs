//! Plan gates: a statement whose plan shape (node types, indexes, relations; see
//! `crate::plan::shape`) differs from the baseline's, and whether a sequential scan took
//! the place of an index, the change `fail_on_plan_change` fails. Pure; no I/O.

use serde::{Deserialize, Serialize};

/// Nodes that read a table through an index: the node types a sequential scan may
/// replace when an index is dropped or no longer chosen.
const INDEX_READS: [&str; 3] = [
    "Index Scan using ",
    "Index Only Scan using ",
    "Bitmap Heap Scan",
];

/// One statement whose plan changed against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanChange {
    pub query: String,
    /// The baseline's plan shape, one node per entry, in plan order.
    pub baseline_plan: Vec<String>,
    /// This run's plan shape.
    pub plan: Vec<String>,
    /// The nodes of the baseline's plan that this one lacks (all of them when only the
    /// order changed).
    pub before: Vec<String>,
    /// The nodes of this plan that the baseline's lacked.
    pub after: Vec<String>,
    /// A sequential scan of a table replaced a read of it through an index.
    pub index_replaced: bool,
}

impl PlanChange {
    /// `Index Scan using orders_customer_idx on public.orders → Seq Scan on public.orders`.
    pub fn summary(&self) -> String {
        format!("{} → {}", self.before.join(", "), self.after.join(", "))
    }
}

/// The change of one statement's plan from `old` to `new`; none when the shapes are the
/// same. `statement_diff` calls it for each statement that has a plan in both runs.
pub fn compare(query: &str, old: &[String], new: &[String]) -> Option<PlanChange> {
    if old == new {
        return None;
    }
    let mut before = minus(old, new);
    let mut after = minus(new, old);
    if before.is_empty() && after.is_empty() {
        before = old.to_vec();
        after = new.to_vec();
    }
    let index_replaced = after.iter().any(|node| {
        let Some(table) = node.strip_prefix("Seq Scan on ") else {
            return false;
        };
        before.iter().any(|old| {
            INDEX_READS.iter().any(|read| old.starts_with(read))
                && old.ends_with(&format!(" on {table}"))
        })
    });
    Some(PlanChange {
        query: query.to_string(),
        baseline_plan: old.to_vec(),
        plan: new.to_vec(),
        before,
        after,
        index_replaced,
    })
}

/// The entries of `a` left after taking out one occurrence of each entry of `b`.
fn minus(a: &[String], b: &[String]) -> Vec<String> {
    let mut left: Vec<&String> = b.iter().collect();
    let mut out = Vec::new();
    for node in a {
        match left.iter().position(|l| *l == node) {
            Some(i) => {
                left.remove(i);
            }
            None => out.push(node.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each current statement against the baseline's of the same text, when both have a
    /// shape: what `statement_diff::diff` does.
    fn changes(
        baseline: &[(&str, Option<Vec<String>>)],
        current: &[(&str, Option<Vec<String>>)],
    ) -> Vec<PlanChange> {
        (current.iter())
            .filter_map(|(query, new)| {
                let old = baseline.iter().find(|(q, _)| q == query)?.1.as_ref()?;
                compare(query, old, new.as_ref()?)
            })
            .collect()
    }

    fn s<'a>(query: &'a str, shape: Option<&[&str]>) -> (&'a str, Option<Vec<String>>) {
        let shape = shape.map(|nodes| nodes.iter().map(|n| n.to_string()).collect());
        (query, shape)
    }

    const FILTER: &str = "SELECT id FROM orders WHERE customer_ref = $1";
    const PAGE: &str = "SELECT id FROM orders ORDER BY created_at DESC LIMIT $1";

    #[test]
    fn a_dropped_index_is_a_scan_that_replaced_an_index() {
        let baseline = [
            s(
                FILTER,
                Some(&[
                    "Bitmap Heap Scan on public.orders",
                    "Bitmap Index Scan on orders_customer_idx",
                ]),
            ),
            s(
                PAGE,
                Some(&[
                    "Limit",
                    "Index Scan using orders_created_idx on public.orders",
                ]),
            ),
        ];
        let current = [
            s(FILTER, Some(&["Seq Scan on public.orders"])),
            s(PAGE, Some(&["Limit", "Sort", "Seq Scan on public.orders"])),
        ];
        let all = changes(&baseline, &current);
        assert_eq!(all.len(), 2);
        assert_eq!(
            all[0].summary(),
            "Bitmap Heap Scan on public.orders, Bitmap Index Scan on orders_customer_idx → \
             Seq Scan on public.orders"
        );
        assert!(all[0].index_replaced);
        assert_eq!(
            all[1].summary(),
            "Index Scan using orders_created_idx on public.orders → Sort, Seq Scan on \
             public.orders"
        );
        assert!(all[1].index_replaced);
        assert_eq!(all[1].baseline_plan.len(), 2);
        assert_eq!(all[1].plan.len(), 3);
        // The other way round is a change, but no index was replaced.
        let back = changes(&current, &baseline);
        assert_eq!(back.len(), 2);
        assert!(back.iter().all(|c| !c.index_replaced));
    }

    #[test]
    fn same_shapes_missing_plans_and_other_tables_are_no_gate() {
        let seq = Some(&["Seq Scan on public.orders"][..]);
        assert!(changes(&[s(FILTER, seq)], &[s(FILTER, seq)]).is_empty());
        // A plan in one run only is not compared.
        assert!(changes(&[s(FILTER, None)], &[s(FILTER, seq)]).is_empty());
        assert!(changes(&[s(FILTER, seq)], &[s(FILTER, None)]).is_empty());
        assert!(changes(&[], &[s(FILTER, seq)]).is_empty());
        // A scan of another table than the index read is a change, not a replacement.
        let other = changes(
            &[s(
                FILTER,
                Some(&["Index Scan using items_pkey on public.items"]),
            )],
            &[s(FILTER, seq)],
        );
        assert!(!other[0].index_replaced);
        // Only the order changed: both shapes are shown whole.
        let join = changes(
            &[s(
                PAGE,
                Some(&["Hash Join", "Seq Scan on a", "Seq Scan on b"]),
            )],
            &[s(
                PAGE,
                Some(&["Hash Join", "Seq Scan on b", "Seq Scan on a"]),
            )],
        );
        assert_eq!(
            join[0].summary(),
            "Hash Join, Seq Scan on a, Seq Scan on b → Hash Join, Seq Scan on b, Seq Scan on a"
        );
        assert!(!join[0].index_replaced);
    }
}
