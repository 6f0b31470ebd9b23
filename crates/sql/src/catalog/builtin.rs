//! PostgreSQL 15's built-in catalog rows: types, functions, operators,
//! casts and aggregates, recorded from a real PostgreSQL 15 by
//! `scripts/gen-builtin-catalog.sh` into the TSV files beside this one.
//!
//! The analyzer resolves every function call, operator and cast over these
//! rows exactly as PostgreSQL does, so a call gets the same overload, result
//! type and OID. Whether Tusk can *run* the chosen function is a separate
//! question answered by `functions::lookup` (by the function's `prosrc`).

use std::collections::HashMap;
use std::sync::OnceLock;

use tusk_types::Oid;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeInfo {
    pub oid: Oid,
    pub name: String,
    pub len: i16,
    pub byval: bool,
    /// b = base, p = pseudo, c = composite, r = range, m = multirange.
    pub typtype: char,
    pub category: char,
    pub preferred: bool,
    pub delim: char,
    pub elem: Oid,
    pub array: Oid,
    pub input: Oid,
    pub output: Oid,
    pub receive: Oid,
    pub send: Oid,
    pub align: char,
    pub storage: char,
    pub collation: Oid,
}

#[derive(Debug, Clone)]
pub struct ProcInfo {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    /// f = function, a = aggregate, w = window, p = procedure.
    pub kind: char,
    pub retset: bool,
    /// i = immutable, s = stable, v = volatile.
    pub volatility: char,
    pub strict: bool,
    pub rettype: Oid,
    pub argtypes: Vec<Oid>,
    pub variadic: Oid,
    pub src: String,
    pub nargdefaults: usize,
    pub allargtypes: Vec<Oid>,
    pub argmodes: Vec<char>,
    pub argnames: Vec<String>,
    pub parallel: char,
    pub cost: f32,
    pub rows: f32,
    /// The defaults of the last `nargdefaults` input arguments, as SQL
    /// expression text (`pg_get_expr(proargdefaults, 0)`), comma-separated.
    pub arg_defaults: String,
}

impl ProcInfo {
    /// Whether CALL passes more arguments than proargtypes lists: a
    /// procedure with OUT parameters.
    pub fn has_call_form(&self) -> bool {
        self.kind == 'p' && self.argmodes.contains(&'o')
    }

    /// The procedure as CALL matches it: OUT parameters take a place in
    /// the argument list (FuncnameGetCandidates' include_out_arguments).
    pub fn call_form(&self) -> ProcInfo {
        let argtypes = self.allargtypes.iter().zip(&self.argmodes).filter(|(_, m)| matches!(m, 'i' | 'b' | 'v' | 'o')).map(|(t, _)| *t).collect();
        ProcInfo { argtypes, ..self.clone() }
    }
}

#[derive(Debug, Clone)]
pub struct OperatorInfo {
    pub oid: Oid,
    pub name: String,
    /// b = binary (infix), l = prefix.
    pub kind: char,
    pub left: Oid,
    pub right: Oid,
    pub result: Oid,
    pub proc: Oid,
    pub commutator: Oid,
    pub negator: Oid,
}

#[derive(Debug, Clone, Copy)]
pub struct CastInfo {
    pub source: Oid,
    pub target: Oid,
    /// The conversion function, or 0 for binary-coercible / I/O casts.
    pub func: Oid,
    /// e = explicit only, a = assignment, i = implicit.
    pub context: char,
    /// f = function, i = I/O conversion, b = binary coercible.
    pub method: char,
}

#[derive(Debug, Clone)]
pub struct AggregateInfo {
    pub oid: Oid,
    pub kind: char,
    pub transtype: Oid,
    pub initval: Option<String>,
    /// The rest of the pg_aggregate row, in the form user-defined
    /// aggregates take (for the pg_aggregate view).
    pub row: Option<super::operator::Aggregate>,
}

/// An operator class (pg_opclass): how an index access method orders or
/// hashes values of `intype`.
#[derive(Debug, Clone)]
pub struct OpclassInfo {
    pub oid: Oid,
    /// The access method (pg_am): 403 btree, 405 hash, ...
    pub method: Oid,
    pub name: String,
    pub family: Oid,
    pub intype: Oid,
    pub default: bool,
    pub keytype: Oid,
}

/// pg_am OIDs of the index access methods Tusk builds.
pub const BTREE_AM: Oid = 403;
pub const HASH_AM: Oid = 405;

#[derive(Debug, Default)]
pub struct Builtins {
    pub types: HashMap<Oid, TypeInfo>,
    pub type_by_name: HashMap<String, Oid>,
    pub procs: HashMap<Oid, ProcInfo>,
    pub procs_by_name: HashMap<String, Vec<Oid>>,
    pub operators: HashMap<Oid, OperatorInfo>,
    pub operators_by_name: HashMap<String, Vec<Oid>>,
    pub casts: HashMap<(Oid, Oid), CastInfo>,
    pub aggregates: HashMap<Oid, AggregateInfo>,
    /// The operator each function implements (for planning: which calls are
    /// `=`, `<`, ... comparisons, and their commutators).
    pub operator_by_proc: HashMap<Oid, Oid>,
    /// pg_opclass, in OID order.
    pub opclasses: Vec<OpclassInfo>,
}

static BUILTINS: OnceLock<Builtins> = OnceLock::new();

/// The built-in catalog, parsed once per process.
pub fn builtins() -> &'static Builtins {
    BUILTINS.get_or_init(Builtins::load)
}

fn oids(s: &str) -> Vec<Oid> {
    s.split_whitespace().filter_map(|t| t.parse().ok()).collect()
}

fn flag(s: &str) -> bool {
    s == "t"
}

fn ch(s: &str) -> char {
    s.chars().next().unwrap_or(' ')
}

fn num<T: std::str::FromStr + Default>(s: &str) -> T {
    s.parse().unwrap_or_default()
}

impl Builtins {
    fn load() -> Builtins {
        let mut b = Builtins::default();
        for line in include_str!("builtin/pg_type.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 17 {
                continue;
            }
            let t = TypeInfo {
                oid: num(f[0]),
                name: f[1].to_string(),
                len: num(f[2]),
                byval: flag(f[3]),
                typtype: ch(f[4]),
                category: ch(f[5]),
                preferred: flag(f[6]),
                delim: ch(f[7]),
                elem: num(f[8]),
                array: num(f[9]),
                input: num(f[10]),
                output: num(f[11]),
                receive: num(f[12]),
                send: num(f[13]),
                align: ch(f[14]),
                storage: ch(f[15]),
                collation: num(f[16]),
            };
            b.type_by_name.insert(t.name.clone(), t.oid);
            b.types.insert(t.oid, t);
        }
        for line in include_str!("builtin/pg_proc.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 18 {
                continue;
            }
            let p = ProcInfo {
                oid: num(f[0]),
                name: f[1].to_string(),
                namespace: num(f[2]),
                kind: ch(f[3]),
                retset: flag(f[4]),
                volatility: ch(f[5]),
                strict: flag(f[6]),
                rettype: num(f[7]),
                argtypes: oids(f[8]),
                variadic: num(f[9]),
                src: f[10].to_string(),
                nargdefaults: num(f[11]),
                allargtypes: oids(f[12]),
                argmodes: f[13].split_whitespace().map(ch).collect(),
                // Space-separated, an unnamed parameter as an empty name.
                argnames: if f[14].is_empty() { Vec::new() } else { f[14].split(' ').map(str::to_string).collect() },
                parallel: ch(f[15]),
                cost: num(f[16]),
                rows: num(f[17]),
                arg_defaults: f.get(18).map(|s| s.to_string()).unwrap_or_default(),
            };
            b.procs_by_name.entry(p.name.clone()).or_default().push(p.oid);
            b.procs.insert(p.oid, p);
        }
        for line in include_str!("builtin/pg_operator.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 9 {
                continue;
            }
            let o = OperatorInfo {
                oid: num(f[0]),
                name: f[1].to_string(),
                kind: ch(f[2]),
                left: num(f[3]),
                right: num(f[4]),
                result: num(f[5]),
                proc: num(f[6]),
                commutator: num(f[7]),
                negator: num(f[8]),
            };
            b.operators_by_name.entry(o.name.clone()).or_default().push(o.oid);
            b.operator_by_proc.entry(o.proc).or_insert(o.oid);
            b.operators.insert(o.oid, o);
        }
        for line in include_str!("builtin/pg_cast.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 5 {
                continue;
            }
            let c = CastInfo {
                source: num(f[0]),
                target: num(f[1]),
                func: num(f[2]),
                context: ch(f[3]),
                method: ch(f[4]),
            };
            b.casts.insert((c.source, c.target), c);
        }
        for line in include_str!("builtin/pg_aggregate.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 4 {
                continue;
            }
            let opt = |v: &str| if v == "\\N" { None } else { Some(v.to_string()) };
            let row = (f.len() >= 22).then(|| super::operator::Aggregate {
                fnoid: num(f[0]),
                kind: ch(f[1]),
                num_direct_args: f[4].parse().unwrap_or(0),
                transfn: num(f[5]),
                finalfn: num(f[6]),
                combinefn: num(f[7]),
                serialfn: num(f[8]),
                deserialfn: num(f[9]),
                mtransfn: num(f[10]),
                minvtransfn: num(f[11]),
                mfinalfn: num(f[12]),
                finalextra: f[13] == "t",
                mfinalextra: f[14] == "t",
                finalmodify: ch(f[15]),
                mfinalmodify: ch(f[16]),
                sortop: num(f[17]),
                transtype: num(f[2]),
                transspace: f[18].parse().unwrap_or(0),
                mtranstype: num(f[19]),
                mtransspace: f[20].parse().unwrap_or(0),
                initval: opt(f[3]),
                minitval: opt(f[21]),
            });
            let a = AggregateInfo { oid: num(f[0]), kind: ch(f[1]), transtype: num(f[2]), initval: opt(f[3]), row };
            b.aggregates.insert(a.oid, a);
        }
        for line in include_str!("builtin/pg_opclass.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 9 {
                continue;
            }
            b.opclasses.push(OpclassInfo {
                oid: num(f[0]),
                method: num(f[1]),
                name: f[2].to_string(),
                family: num(f[5]),
                intype: num(f[6]),
                default: flag(f[7]),
                keytype: num(f[8]),
            });
        }
        b
    }

    /// The access method's OID (pg_am) for an index method name.
    pub fn index_am_oid(method: &str) -> Oid {
        match method {
            "hash" => HASH_AM,
            "gist" => 783,
            "gin" => 2742,
            "spgist" => 4000,
            "brin" => 3580,
            _ => BTREE_AM,
        }
    }

    /// IsBinaryCoercible: whether a value of `src` can be used as a `target`
    /// without conversion (the same type, a polymorphic type it fits, or a
    /// binary-compatible implicit cast).
    pub fn is_binary_coercible(&self, src: Oid, target: Oid) -> bool {
        use tusk_types::oid;
        if src == target || matches!(target, oid::ANY | oid::ANYELEMENT | oid::ANYCOMPATIBLE) {
            return true;
        }
        let typtype = self.types.get(&src).map(|t| t.typtype).unwrap_or('b');
        match target {
            oid::ANYARRAY | oid::ANYCOMPATIBLEARRAY => return self.element_of(src) != 0,
            oid::ANYNONARRAY | oid::ANYCOMPATIBLENONARRAY => return self.element_of(src) == 0,
            oid::ANYRANGE | oid::ANYCOMPATIBLERANGE => return typtype == 'r',
            // anymultirange, anycompatiblemultirange
            4537 | 4538 => return typtype == 'm',
            oid::RECORD => return typtype == 'c',
            oid::ANYENUM => return typtype == 'e',
            _ => {}
        }
        matches!(self.cast(src, target), Some(c) if c.method == 'b' && c.context == 'i')
    }

    /// GetDefaultOpClass: the default operator class of access method `am`
    /// for keys of type `ty` — the one for exactly that type, else the one
    /// class the type is binary-coercible to (one whose input type is its
    /// category's preferred type first); 0 when there is none.
    pub fn default_opclass(&self, am: Oid, ty: Oid) -> Oid {
        let category = self.category(ty);
        let preferred = |t: Oid| self.types.get(&t).map(|i| i.category == category && i.preferred).unwrap_or(false);
        let (mut exact, mut compatible, mut compatible_preferred) = (0, 0, 0);
        let mut result = 0;
        for c in self.opclasses.iter().filter(|c| c.method == am && c.default) {
            if c.intype == ty {
                exact += 1;
                result = c.oid;
            } else if exact == 0 && self.is_binary_coercible(ty, c.intype) {
                if preferred(c.intype) {
                    compatible_preferred += 1;
                    result = c.oid;
                } else if compatible_preferred == 0 {
                    compatible += 1;
                    result = c.oid;
                }
            }
        }
        if exact == 1 || compatible_preferred == 1 || (compatible_preferred == 0 && compatible == 1) {
            result
        } else {
            0
        }
    }

    /// An operator class of access method `am` by name.
    pub fn opclass_by_name(&self, am: Oid, name: &str) -> Option<&OpclassInfo> {
        self.opclasses.iter().find(|c| c.method == am && c.name == name)
    }

    pub fn opclass(&self, oid: Oid) -> Option<&OpclassInfo> {
        self.opclasses.iter().find(|c| c.oid == oid)
    }

    /// A type's pg_type row: a built-in's, or a user type's from the
    /// catalog this thread works with (see `types`).
    pub fn type_info(&self, oid: Oid) -> Option<&TypeInfo> {
        self.types.get(&oid).or_else(|| super::types::user_type_info(oid))
    }

    pub fn type_name(&self, oid: Oid) -> &str {
        self.type_info(oid).map(|t| t.name.as_str()).unwrap_or("???")
    }

    pub fn category(&self, oid: Oid) -> char {
        self.type_info(oid).map(|t| t.category).unwrap_or('U')
    }

    pub fn is_preferred(&self, oid: Oid) -> bool {
        self.type_info(oid).map(|t| t.preferred).unwrap_or(false)
    }

    pub fn array_of(&self, elem: Oid) -> Oid {
        self.type_info(elem).map(|t| t.array).unwrap_or(0)
    }

    /// The element type of an array type (0 if `oid` is not an array).
    pub fn element_of(&self, oid: Oid) -> Oid {
        match self.type_info(oid) {
            Some(t) if t.category == 'A' || (t.elem != 0 && t.len == -1) => t.elem,
            _ => 0,
        }
    }

    pub fn proc(&self, oid: Oid) -> Option<&ProcInfo> {
        self.procs.get(&oid)
    }

    /// The name of the operator a function implements, if any ("=", "<", ...).
    pub fn operator_name_of_proc(&self, proc: Oid) -> Option<&str> {
        self.operator_by_proc.get(&proc).and_then(|o| self.operators.get(o)).map(|o| o.name.as_str())
    }

    pub fn cast(&self, source: Oid, target: Oid) -> Option<&CastInfo> {
        self.casts.get(&(source, target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_postgres_rows() {
        let b = builtins();
        assert_eq!(b.type_name(23), "int4");
        assert!(b.is_preferred(701));
        assert_eq!(b.element_of(1007), 23);
        let plus: Vec<_> = b.operators_by_name["+"].iter().map(|o| &b.operators[o]).collect();
        assert!(plus.iter().any(|o| o.left == 23 && o.right == 23 && o.result == 23));
        assert_eq!(b.cast(23, 20).unwrap().context, 'i');
        assert!(b.procs_by_name["generate_series"].len() >= 6);
    }

    #[test]
    fn default_operator_classes() {
        let b = builtins();
        let name = |am, ty| b.opclass(b.default_opclass(am, ty)).map(|c| c.name.as_str()).unwrap_or("");
        assert_eq!(name(BTREE_AM, 23), "int4_ops");
        // varchar has no class of its own: text's, by binary coercion.
        assert_eq!(name(BTREE_AM, 1043), "text_ops");
        assert_eq!(name(HASH_AM, 1043), "text_ops");
        assert_eq!(name(BTREE_AM, 1007), "array_ops");
        assert_eq!(name(BTREE_AM, 3904), "range_ops");
        assert_eq!(b.default_opclass(BTREE_AM, 114), 0, "json has no btree class");
    }
}
