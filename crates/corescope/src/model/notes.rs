//! A list of typed findings or warnings that older files can still fill with
//! sentences: a `String` read (version 1), or an object of a kind this build does
//! not know, becomes the type's `note`, an [`OldText`] no code can make otherwise.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::Deref;

/// A list of `T` (a [`super::Finding`] or [`super::Warning`]). `push` takes anything
/// that converts into `T`: a `Finding` still takes a sentence where no typed variant
/// exists yet; a `Warning` takes only a `Warning`.
#[derive(Debug, Clone, PartialEq)]
pub struct Notes<T>(pub Vec<T>);

impl<T> Default for Notes<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> Notes<T> {
    /// Append one entry.
    pub fn push(&mut self, item: impl Into<T>) {
        self.0.push(item.into());
    }

    /// Append every entry.
    pub fn extend<U: Into<T>>(&mut self, items: impl IntoIterator<Item = U>) {
        self.0.extend(items.into_iter().map(Into::into));
    }

    /// Whether an entry equals `x` (a sentence compares with a `note`).
    pub fn contains<U: ?Sized>(&self, x: &U) -> bool
    where
        T: PartialEq<U>,
    {
        self.0.iter().any(|t| t == x)
    }

    /// Append unless an equal entry is already there.
    pub fn push_unique(&mut self, item: impl Into<T>)
    where
        T: PartialEq,
    {
        let item = item.into();
        if !self.0.contains(&item) {
            self.0.push(item);
        }
    }

    /// Mutable access to the entries.
    pub fn as_mut_vec(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T> Deref for Notes<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> From<Vec<T>> for Notes<T> {
    fn from(v: Vec<T>) -> Self {
        Self(v)
    }
}

impl<'a, T> IntoIterator for &'a Notes<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T> IntoIterator for Notes<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<T: Serialize> Serialize for Notes<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// The text of a note read from an older run file (a version 1 sentence, or a kind
/// a later build wrote, as its JSON). Only reading a file makes one: code that
/// raises a warning names its kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OldText(String);

impl OldText {
    /// The text as read.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An old note's text, for tests of how old run files read.
    #[cfg(test)]
    pub(crate) fn for_test(text: &str) -> Self {
        Self(text.into())
    }
}

impl std::fmt::Display for OldText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for OldText {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

/// A type whose lists read older files: what an old sentence becomes.
pub trait FromOldText {
    /// The entry a sentence of an older file (or an unknown kind's JSON) reads as.
    fn from_old_text(text: OldText) -> Self;
}

/// One entry as found in a file: a sentence (version 1) or a typed object.
#[derive(Deserialize)]
#[serde(untagged)]
enum Entry<T> {
    Sentence(String),
    Typed(T),
    /// An object of a kind this build does not know (a newer file): kept as its JSON text.
    Unknown(serde_json::Value),
}

impl<'de, T: DeserializeOwned + FromOldText> Deserialize<'de> for Notes<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let entries: Vec<Entry<T>> = Vec::deserialize(d)?;
        Ok(Self(
            entries
                .into_iter()
                .map(|e| match e {
                    Entry::Sentence(s) => T::from_old_text(OldText(s)),
                    Entry::Typed(t) => t,
                    Entry::Unknown(v) => T::from_old_text(OldText(v.to_string())),
                })
                .collect(),
        ))
    }
}
