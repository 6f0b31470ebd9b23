//! Text search over JSON documents: to_tsvector(json/jsonb), which reads
//! a document's string values, and json(b)_to_tsvector, whose filter
//! chooses among strings, numbers, booleans and keys (PostgreSQL's
//! to_tsany.c and jsonfuncs.c iterate_json(b)_values). Each value is
//! parsed on its own; positions run on across values with a gap of one
//! after every value that gave words, so that a phrase never spans two
//! values.

use tusk_types::json::{parse, JsonKind, JsonTree};
use tusk_types::jsonb::Jsonb;
use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::tsearch::{cfg_arg, default_config, normalize, text_lexemes, tsvector_datum, Config, Lexeme, MAX_POS};
use super::{plain, FnCtx, Registry};

/// Which values of a document are read (jsonb_index_flags).
#[derive(Clone, Copy, Default)]
struct ValueKinds {
    strings: bool,
    numerics: bool,
    booleans: bool,
    keys: bool,
}

const STRINGS_ONLY: ValueKinds = ValueKinds { strings: true, numerics: false, booleans: false, keys: false };

fn flag_error(msg: String) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg).with_hint("Possible values are: \"string\", \"numeric\", \"boolean\", \"key\", and \"all\".")
}

/// parse_jsonb_index_flags: the filter argument, a string or an array of
/// strings.
fn value_kinds(filter: &Jsonb) -> PgResult<ValueKinds> {
    let items: Vec<&Jsonb> = match filter {
        Jsonb::Array(items) => items.iter().collect(),
        Jsonb::Object(_) => return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "wrong flag type, only arrays and scalars are allowed")),
        scalar => vec![scalar],
    };
    let mut kinds = ValueKinds::default();
    for item in items {
        let Jsonb::String(s) = item else { return Err(flag_error("flag array element is not a string".into())) };
        match s.to_ascii_lowercase().as_str() {
            "all" => kinds = ValueKinds { strings: true, numerics: true, booleans: true, keys: true },
            "key" => kinds.keys = true,
            "string" => kinds.strings = true,
            "numeric" => kinds.numerics = true,
            "boolean" => kinds.booleans = true,
            _ => return Err(flag_error(format!("wrong flag in flag array: \"{s}\""))),
        }
    }
    Ok(kinds)
}

/// The words of a document, positions running on across its values.
struct DocumentWords {
    cfg: Config,
    pos: u32,
    words: Vec<Lexeme>,
}

impl DocumentWords {
    /// add_to_tsvector: one value's words.
    fn add(&mut self, text: &str) {
        let before = self.words.len();
        let mut last = 0u16;
        for (word, p) in text_lexemes(self.cfg, text) {
            last = p;
            if let Some(word) = word {
                let pos = (self.pos + p as u32).min(MAX_POS as u32) as u16;
                self.words.push(Lexeme { word, pos: vec![pos] });
            }
        }
        self.pos += last as u32;
        if self.words.len() > before {
            self.pos += 1;
        }
    }

    fn jsonb(&mut self, j: &Jsonb, kinds: ValueKinds) {
        match j {
            Jsonb::Null => {}
            Jsonb::Bool(b) => {
                if kinds.booleans {
                    self.add(if *b { "true" } else { "false" })
                }
            }
            Jsonb::Number(n) => {
                if kinds.numerics {
                    self.add(&n.to_string())
                }
            }
            Jsonb::String(s) => {
                if kinds.strings {
                    self.add(s)
                }
            }
            Jsonb::Array(items) => items.iter().for_each(|i| self.jsonb(i, kinds)),
            Jsonb::Object(members) => {
                for (k, v) in members {
                    if kinds.keys {
                        self.add(k);
                    }
                    self.jsonb(v, kinds);
                }
            }
        }
    }

    fn json(&mut self, src: &str, t: &JsonTree, kinds: ValueKinds) {
        match &t.kind {
            JsonKind::Null => {}
            JsonKind::Bool(b) => {
                if kinds.booleans {
                    self.add(if *b { "true" } else { "false" })
                }
            }
            JsonKind::Number => {
                if kinds.numerics {
                    self.add(t.text(src))
                }
            }
            JsonKind::String(s) => {
                if kinds.strings {
                    self.add(s)
                }
            }
            JsonKind::Array(items) => items.iter().for_each(|i| self.json(src, i, kinds)),
            JsonKind::Object(members) => {
                for (k, v) in members {
                    if kinds.keys {
                        self.add(k);
                    }
                    self.json(src, v, kinds);
                }
            }
        }
    }
}

/// The words of a json or jsonb document.
fn document_tsvector(cfg: Config, doc: &Datum, kinds: ValueKinds) -> PgResult<Datum> {
    let mut words = DocumentWords { cfg, pos: 0, words: Vec::new() };
    match doc {
        Datum::Jsonb(j) => words.jsonb(j, kinds),
        d => {
            let src = d.as_str().unwrap_or("");
            let t = parse(src, true)?;
            words.json(src, &t, kinds);
        }
    }
    Ok(tsvector_datum(&normalize(words.words)))
}

/// to_tsvector([config,] json/jsonb): the string values.
fn json_string_to_tsvector(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (cfg, doc) = if a.len() > 1 { (cfg_arg(a, c)?, &a[1]) } else { (default_config(c)?, &a[0]) };
    document_tsvector(cfg, doc, STRINGS_ONLY)
}

/// json(b)_to_tsvector([config,] document, filter).
fn json_to_tsvector(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let (cfg, doc, filter) = if a.len() > 2 { (cfg_arg(a, c)?, &a[1], &a[2]) } else { (default_config(c)?, &a[0], &a[1]) };
    let filter = match filter {
        Datum::Jsonb(j) => j.clone(),
        _ => return Err(PgError::internal("jsonb filter expected")),
    };
    document_tsvector(cfg, doc, value_kinds(&filter)?)
}

pub(super) fn register(r: &mut Registry) {
    plain(
        r,
        &["jsonb_string_to_tsvector", "json_string_to_tsvector", "jsonb_string_to_tsvector_byid", "json_string_to_tsvector_byid"],
        json_string_to_tsvector,
    );
    plain(r, &["jsonb_to_tsvector", "jsonb_to_tsvector_byid", "json_to_tsvector", "json_to_tsvector_byid"], json_to_tsvector);
}
