//! The size of the page a response holds: the items of a JSON body, counted once per burst
//! (the first 2xx response), so that the findings can compare it with the rows fetched.

use serde_json::Value;

/// The items of a JSON body: the length of a top-level array, or of the largest array among
/// the values of a top-level object (`{"data": [...], "meta": {...}}`). `None` when the body
/// is not JSON or holds no such array.
pub fn count(body: &[u8]) -> Option<u64> {
    match serde_json::from_slice::<Value>(body).ok()? {
        Value::Array(items) => Some(items.len() as u64),
        Value::Object(fields) => fields
            .values()
            .filter_map(|v| v.as_array().map(|a| a.len() as u64))
            .max(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_of_an_array_or_of_the_largest_array_of_an_object() {
        assert_eq!(count(b" [1, 2, 3] "), Some(3));
        assert_eq!(count(b"[]"), Some(0));
        assert_eq!(
            count(br#"{"data": [{"id": 1}, {"id": 2}], "tags": [1, 2, 3, 4], "total": 9}"#),
            Some(4)
        );
        assert_eq!(
            count(br#"{"user": {"runs": [1, 2]}}"#),
            None,
            "top level only"
        );
        assert_eq!(count(br#"{"total": 9}"#), None);
        assert_eq!(count(b"42"), None);
        assert_eq!(count(b"<html>[1, 2]</html>"), None);
        assert_eq!(count(b"[1, 2"), None, "cut short");
    }
}
