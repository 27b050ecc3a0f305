//! A selection of the figure table's figures as JSON: each figure of the selection under
//! its key, in the table's order. The headline figures, the survey's shares, the one-offs'
//! spread and the rare work's cost are such selections, so a figure is declared only in
//! the table.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::figure::{Figure, PerFigure};

/// Which figures a [`Keyed`] shows, and which of them always have a value (the others may
/// be null: those of pg_stat_statements, which may not be installed).
pub trait Selection {
    fn shows(figure: Figure) -> bool;
    /// By default, the figures of `pg_stat_database`.
    fn always(figure: Figure) -> bool {
        figure.spec().database
    }
}

/// The figures the unauthenticated baseline compares.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Compared;

impl Selection for Compared {
    fn shows(figure: Figure) -> bool {
        figure.spec().baseline
    }
}

/// The figures of which the survey gives each route a share: any may be null.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Shared;

impl Selection for Shared {
    fn shows(figure: Figure) -> bool {
        figure.spec().shared
    }
    fn always(_: Figure) -> bool {
        false
    }
}

/// The headline figures of the app's rare work: those compared or shared.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Headline;

impl Selection for Headline {
    fn shows(figure: Figure) -> bool {
        Compared::shows(figure) || Shared::shows(figure)
    }
}

/// A value of each figure, of which JSON carries the ones `S` shows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Keyed<T, S>(pub PerFigure<T>, PhantomData<S>);

impl<T: Copy, S: Selection> Keyed<T, S> {
    pub fn new(values: PerFigure<T>) -> Keyed<T, S> {
        Keyed(values, PhantomData)
    }

    /// Each figure's value from `value`, for the figures `S` shows.
    pub fn from_fn(mut value: impl FnMut(Figure) -> Option<T>) -> Keyed<T, S> {
        Keyed::new(PerFigure::from_fn(|f| S::shows(f).then(|| value(f))?))
    }

    /// The figures `S` shows, with their values.
    pub fn shown(&self) -> impl Iterator<Item = (Figure, Option<T>)> + '_ {
        (Figure::ALL.into_iter().filter(|f| S::shows(*f))).map(|f| (f, self.0.get(f)))
    }
}

impl<T, S> Deref for Keyed<T, S> {
    type Target = PerFigure<T>;
    fn deref(&self) -> &PerFigure<T> {
        &self.0
    }
}

impl<T, S> DerefMut for Keyed<T, S> {
    fn deref_mut(&mut self) -> &mut PerFigure<T> {
        &mut self.0
    }
}

impl<T: Copy + Serialize, S: Selection> Serialize for Keyed<T, S> {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (figure, value) in self.shown() {
            map.serialize_entry(figure.key(), &value)?;
        }
        map.end()
    }
}

impl<'de, T: Copy + DeserializeOwned, S: Selection> Deserialize<'de> for Keyed<T, S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut read = BTreeMap::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut value = |f: Figure| match read.remove(f.key()) {
            Some(v) => serde_json::from_value::<Option<T>>(v).map_err(serde::de::Error::custom),
            None => Ok(None),
        };
        let mut values = PerFigure::from_fn(|_| None);
        for figure in Figure::ALL.into_iter().filter(|f| S::shows(*f)) {
            values.set(figure, value(figure)?);
        }
        Ok(Keyed::new(values))
    }
}

impl<T: JsonSchema, S: Selection> JsonSchema for Keyed<T, S> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Keyed_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let shown = || Figure::ALL.into_iter().filter(|f| S::shows(*f));
        let mut properties = serde_json::Map::new();
        for figure in shown() {
            let mut schema = match S::always(figure) {
                true => generator.subschema_for::<T>(),
                false => generator.subschema_for::<Option<T>>(),
            };
            schema.insert("description".into(), figure.spec().meaning.into());
            properties.insert(figure.key().into(), schema.to_value());
        }
        let required: Vec<&str> = shown().map(Figure::key).collect();
        json_schema!({ "type": "object", "properties": properties, "required": required })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> PerFigure<f64> {
        PerFigure::from_fn(|f| (f != Figure::Statements).then_some(f as u8 as f64 + 0.5))
    }

    #[test]
    fn json_carries_the_selection_in_table_order_and_reads_back() {
        let compared = Keyed::<f64, Compared>::new(values());
        let json = serde_json::to_string(&compared).unwrap();
        assert_eq!(
            json,
            r#"{"transactions":0.5,"statements":null,"rows_read":2.5}"#
        );
        let back: Keyed<f64, Compared> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Keyed::from_fn(|f| compared.get(f)));
        let shared = serde_json::to_string(&Keyed::<f64, Shared>::new(values())).unwrap();
        assert_eq!(
            shared,
            r#"{"statements":null,"rows_read":2.5,"rows_returned":3.5}"#
        );
    }

    #[test]
    fn the_schema_requires_every_key_and_lets_statement_figures_be_null() {
        let schema = schemars::schema_for!(Keyed<f64, Headline>).to_value();
        let keys: Vec<&str> = (schema["required"].as_array().unwrap().iter())
            .map(|k| k.as_str().unwrap())
            .collect();
        assert_eq!(
            keys,
            ["transactions", "statements", "rows_read", "rows_returned"]
        );
        assert_eq!(schema["properties"]["transactions"]["type"], "number");
        assert_eq!(
            schema["properties"]["statements"]["type"],
            serde_json::json!(["number", "null"])
        );
    }
}
