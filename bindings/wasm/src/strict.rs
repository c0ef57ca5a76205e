//! Reading a JS object through serde-wasm-bindgen strictly: unknown keys refused, and an error
//! names the key that failed (`options.restored.term: invalid type: ...`).

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::cell::RefCell;
use wasm_bindgen::JsValue;

/// Deserializes `value` (through serde-wasm-bindgen); a mismatch is an `invalid_argument` error
/// whose message names the offending key, e.g. `config.heartbeatInterval: invalid type: ...`.
pub(crate) fn from_js<T: for<'de> Deserialize<'de>>(what: &str, value: JsValue) -> Result<T, JsValue> {
    let path = RefCell::new(Vec::new());
    T::deserialize(Strict { de: serde_wasm_bindgen::Deserializer::from(value), path: &path }).map_err(|e| {
        let mut message = String::from(what);
        for key in path.into_inner().iter().rev() {
            // A list position (`[1]`) follows its list's key directly; a field's key after a dot.
            if !key.starts_with('[') {
                message.push('.');
            }
            message.push_str(key);
        }
        message.push_str(": ");
        message.push_str(&String::from(js_sys::Error::from(JsValue::from(e)).message()));
        crate::invalid(&message)
    })
}

/// Reads through serde-wasm-bindgen with two changes: every struct is read as a map, so that
/// `deny_unknown_fields` sees (and refuses) keys that are not fields (`{ heartbeatIntervl: 10 }`;
/// serde-wasm-bindgen reads a struct by its field names and never sees another key), and the keys
/// of the struct being read are tracked, so that an error names the key that failed
/// (`config.heartbeatInterval`). Everything else is forwarded unchanged.
struct Strict<'p, D> {
    de: D,
    /// Keys from the innermost outwards, pushed as an error passes each struct.
    path: &'p RefCell<Vec<String>>,
}

macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method(visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<'_, D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(Fields { inner: visitor, path: self.path })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_option(Fields { inner: visitor, path: self.path })
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_seq(Fields { inner: visitor, path: self.path })
    }

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32 deserialize_f64
        deserialize_char deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_unit deserialize_map deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// The visitor of a struct (read as a map), a list, or an option holding one: hands the struct's
/// entries, the list's items or the option's content on through [`Strict`].
struct Fields<'p, V> {
    inner: V,
    path: &'p RefCell<Vec<String>>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Fields<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Entries { map, path: self.path, key: String::new() })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(Items { seq, path: self.path, index: 0 })
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Strict { de, path: self.path })
    }
}

/// A struct's entries: remembers the current key, and pushes it onto the path when its key or
/// value fails.
struct Entries<'p, A> {
    map: A,
    path: &'p RefCell<Vec<String>>,
    key: String,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Entries<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let key = &mut self.key;
        self.map
            .next_key_seed(Key { inner: seed, key })
            .inspect_err(|_| self.path.borrow_mut().push(std::mem::take(&mut self.key)))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let path = self.path;
        self.map
            .next_value_seed(Value { inner: seed, path })
            .inspect_err(|_| path.borrow_mut().push(std::mem::take(&mut self.key)))
    }
}

/// A list's items: counts them, and pushes the failing one's position (`[1]`) onto the path.
struct Items<'p, A> {
    seq: A,
    path: &'p RefCell<Vec<String>>,
    index: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Items<'_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, A::Error> {
        let (path, index) = (self.path, self.index);
        self.index += 1;
        self.seq.next_element_seed(Value { inner: seed, path }).inspect_err(|_| {
            // The position in decimal by JavaScript's Number#toString: no Rust integer formatting.
            let digits =
                js_sys::Number::from(index as f64).to_string_with_radix(10).map(String::from).unwrap_or_default();
            let mut at = String::from("[");
            at.push_str(&digits);
            at.push(']');
            path.borrow_mut().push(at);
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// A value of a struct's entry or a list's item, read through [`Strict`].
struct Value<'p, S> {
    inner: S,
    path: &'p RefCell<Vec<String>>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Value<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Strict { de, path: self.path })
    }
}

/// A struct's key: the field identifier's visitor, copying the key it reads.
struct Key<'k, T> {
    inner: T,
    key: &'k mut String,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for Key<'_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<K::Value, D::Error> {
        self.inner.deserialize(Key { inner: de, key: self.key })
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Key<'_, D> {
    type Error = D::Error;

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_identifier(Key { inner: visitor, key: self.key })
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum ignored_any
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Key<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.key.clear();
        self.key.push_str(v);
        self.inner.visit_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.key.clear();
        self.key.push_str(&v);
        self.inner.visit_string(v)
    }
}
