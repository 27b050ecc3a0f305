//! The one `Report` type, apart from its assembly: `model` is the plain data (what the
//! analyses and the views import), `build` assembles it from what was measured, `tagged` gives its statements their tags, `note` the
//! typed caveats it carries. The views and the I/O layer read `report::Report` and the
//! like through the re-export of `model`; the core's analyses import `model`.

pub mod build;
pub mod model;
mod tagged;

pub use build::{Context, load_invalid_reasons, window_counts};
pub use model::*;

/// The tags of `report`'s statements from their texts alone, for the views' tests.
#[cfg(any(test, feature = "fixtures"))]
pub fn tagged_for_tests(report: &mut Report) {
    tagged::attach(report, None);
}

/// Its tests, and the hand-built values they share with the binary's tests (the feature
/// `fixtures`, which only the binary's dev-dependency turns on).
#[cfg(any(test, feature = "fixtures"))]
pub mod tests;
