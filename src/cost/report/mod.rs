//! The one `Report` type, apart from its assembly: `model` is the plain data (what the
//! analyses and the views import), `build` assembles it from what was measured, `tagged` gives its statements their tags, `note` the
//! typed caveats it carries. The paths `cost::report::Report` and the like stay as
//! re-exports for the views and the I/O layer; the analyses of `cost/` import `model`.

pub mod build;
pub mod model;
mod tagged;

pub use build::{Context, load_invalid_reasons, window_counts};
pub use model::*;

/// The tags of `report`'s statements from their texts alone, for the views' tests.
#[cfg(test)]
pub(crate) fn tagged_for_tests(report: &mut Report) {
    tagged::attach(report, None);
}

#[cfg(test)]
pub(crate) mod tests;
