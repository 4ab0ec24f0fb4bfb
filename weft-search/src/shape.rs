//! One-pass serde shapes for the parts of a line whose JSON type varies (a string or parts, a
//! string or an array or an object): each is read by a visitor in the same pass as the rest of
//! the line, strings borrowed from it when they hold no escapes.
//!
//! # Rejected alternative
//! `RawValue` for the varying fields, parsed again once its first byte tells the type: every
//! large tool output is then scanned three or four times (the line, the content, the part, the
//! string), and string scanning dominates under `perf` on the generated corpus
//! (docs/notes/performance-figures.md, "Session search").

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A value that is a string, or anything else (skipped, not kept).
#[derive(Debug)]
pub enum Str<'a> {
    S(Cow<'a, str>),
    Other,
}

impl<'a> Str<'a> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Str::S(s) => Some(s),
            Str::Other => None,
        }
    }
}

/// `visit_*` for every non-string, non-container value: the value is of "another" type.
macro_rules! others {
    ($other:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

/// `visit_*` for strings: borrowed when the input allows it.
macro_rules! strings {
    ($wrap:path) => {
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok($wrap(Cow::Borrowed(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            // Room for the ids appended after it when it becomes a line's text (`record::put`).
            let mut owned = String::with_capacity(v.len() + 160);
            owned.push_str(v);
            Ok($wrap(Cow::Owned(owned)))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok($wrap(Cow::Owned(v)))
        }
    };
}

fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            strings!(Str::S);
            others!(Str::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                skip_seq(seq).map(|()| Str::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                skip_map(map).map(|()| Str::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// One part of `message.content` when it is an array.
#[derive(serde::Deserialize)]
pub(crate) struct ContentPart<'a> {
    #[serde(borrow, rename = "type")]
    pub(crate) kind: Option<Str<'a>>,
    #[serde(borrow)]
    pub(crate) text: Option<Str<'a>>,
    #[serde(borrow)]
    pub(crate) thinking: Option<Str<'a>>,
    #[serde(borrow)]
    pub(crate) name: Option<Str<'a>>,
    #[serde(borrow)]
    pub(crate) input: Option<Input<'a>>,
    #[serde(borrow)]
    pub(crate) tool_use_id: Option<Str<'a>>,
    #[serde(borrow)]
    pub(crate) content: Option<ResultContent<'a>>,
    pub(crate) is_error: Option<bool>,
}

/// `message.content`: a string, parts, or anything else.
pub enum Content<'a> {
    S(Cow<'a, str>),
    Parts(Vec<ContentPart<'a>>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            strings!(Content::S);
            others!(Content::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(4));
                while let Some(p) = seq.next_element()? {
                    parts.push(p);
                }
                Ok(Content::Parts(parts))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                skip_map(map).map(|()| Content::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A `tool_use` input: the one field ccms shows per tool, when the input is an object (the
/// last of duplicate keys wins, as in a `serde_json::Value`).
pub enum Input<'a> {
    Object {
        command: Option<Str<'a>>,
        file_path: Option<Str<'a>>,
        pattern: Option<Str<'a>>,
        description: Option<Str<'a>>,
    },
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Input<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Input<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            others!(Input::Other);
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Input::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                skip_seq(seq).map(|()| Input::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut command, mut file_path, mut pattern, mut description) = (None, None, None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let slot = match key.as_ref() {
                        "command" => &mut command,
                        "file_path" => &mut file_path,
                        "pattern" => &mut pattern,
                        "description" => &mut description,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value::<Str<'de>>()?);
                }
                Ok(Input::Object { command, file_path, pattern, description })
            }
        }
        d.deserialize_any(V)
    }
}

/// A `tool_result`'s content: a string, an array, or any other value (`null` is `None` in the
/// `Option` around it).
pub enum ResultContent<'a> {
    S(Cow<'a, str>),
    Items(Vec<Item<'a>>),
    Value,
}

impl<'de: 'a, 'a> Deserialize<'de> for ResultContent<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ResultContent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            strings!(ResultContent::S);
            others!(ResultContent::Value);
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(i) = seq.next_element()? {
                    items.push(i);
                }
                Ok(ResultContent::Items(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                skip_map(map).map(|()| ResultContent::Value)
            }
        }
        d.deserialize_any(V)
    }
}

/// An element of a `tool_result` array, as ccms's untagged enum sees it.
pub struct Item<'a> {
    object: bool,
    kind: Option<Str<'a>>,
    pub text: Option<Str<'a>>,
    /// `Some(true)` when `source` is an object with a string `type`.
    source_ok: Option<bool>,
}

impl Item<'_> {
    /// `{type: string, text: string}`.
    pub fn is_text(&self) -> bool {
        self.object && matches!(self.kind, Some(Str::S(_))) && matches!(self.text, Some(Str::S(_)))
    }

    /// `{type: string, source: {type: string}}`.
    pub fn is_image(&self) -> bool {
        self.object && matches!(self.kind, Some(Str::S(_))) && self.source_ok == Some(true)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Item<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const NOT_OBJECT: Item<'static> = Item { object: false, kind: None, text: None, source_ok: None };
        impl<'de> Visitor<'de> for V {
            type Value = Item<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            others!(NOT_OBJECT);
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(NOT_OBJECT)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                skip_seq(seq).map(|()| NOT_OBJECT)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut item = Item { object: true, kind: None, text: None, source_ok: None };
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "type" => item.kind = Some(map.next_value()?),
                        "text" => item.text = Some(map.next_value()?),
                        "source" => item.source_ok = Some(map.next_value::<Source>()?.0),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(item)
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether an image `source` is an object with a string `type`.
struct Source(bool);

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Source;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            others!(Source(false));
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Source(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                skip_seq(seq).map(|()| Source(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut ok = false;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "type" {
                        ok = matches!(map.next_value::<Str<'de>>()?, Str::S(_));
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Source(ok))
            }
        }
        d.deserialize_any(V)
    }
}
