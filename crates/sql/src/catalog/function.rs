//! User-defined functions and procedures: their pg_proc rows.
//!
//! A `Function` is what CREATE FUNCTION / CREATE PROCEDURE stored. The
//! analyzer resolves calls over built-in and user-defined rows alike, so
//! every function also has a `ProcInfo` (the form the built-in rows take),
//! derived when the catalog is built.

use serde::{Deserialize, Serialize};
use tusk_types::{oid, Oid, SqlType};

use super::builtin::ProcInfo;

/// One parameter of a function (a proallargtypes / proargmodes /
/// proargnames entry, with its default if it has one).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FunctionParam {
    /// "" when the parameter is unnamed.
    pub name: String,
    pub type_oid: Oid,
    /// 'i' in, 'o' out, 'b' inout, 'v' variadic, 't' RETURNS TABLE column.
    pub mode: char,
    /// The default expression as SQL text (pg_get_expr of proargdefaults).
    pub default: Option<String>,
}

impl FunctionParam {
    /// Whether callers pass this parameter (pg_proc.proargtypes lists it).
    pub fn is_input(&self) -> bool {
        matches!(self.mode, 'i' | 'b' | 'v')
    }

    /// Whether a call passes it: the inputs, and for a procedure its OUT
    /// parameters too, which CALL names but does not evaluate (PostgreSQL
    /// 14+; pg_proc.proargtypes still lists the inputs only).
    pub fn passed_by_call(&self, kind: char) -> bool {
        self.is_input() || (kind == 'p' && self.mode == 'o')
    }

    /// Whether it is a column of the result.
    pub fn is_output(&self) -> bool {
        matches!(self.mode, 'o' | 'b' | 't')
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Function {
    pub oid: Oid,
    pub name: String,
    pub namespace: Oid,
    pub owner: Oid,
    /// 'f' function, 'p' procedure.
    pub kind: char,
    /// pg_language.lanname: "sql", "plpgsql", "internal", "c".
    pub language: String,
    pub params: Vec<FunctionParam>,
    /// prorettype: RECORD for several OUT parameters or RETURNS TABLE,
    /// VOID for procedures without output (PostgreSQL stores VOID; a
    /// procedure with OUT parameters returns RECORD).
    pub ret_type: Oid,
    pub retset: bool,
    /// 'i' immutable, 's' stable, 'v' volatile.
    pub volatility: char,
    pub strict: bool,
    pub security_definer: bool,
    pub leakproof: bool,
    /// 's' safe, 'r' restricted, 'u' unsafe.
    pub parallel: char,
    pub cost: f32,
    pub rows: f32,
    /// prosrc: the body as written (the name of the C symbol for internal).
    pub src: String,
    /// A SQL-standard body (BEGIN ATOMIC ... END / RETURN expr) as SQL
    /// text; `src` is empty then, as PostgreSQL keeps it in prosqlbody.
    #[serde(default)]
    pub sql_body: Option<String>,
    /// The SQL-standard body was `RETURN expr` (kept as `SELECT expr`).
    #[serde(default)]
    pub sql_body_return: bool,
    /// The statements of a BEGIN ATOMIC body that were `RETURN expr`
    /// (0-based; kept as `SELECT expr` too), for printing the body back.
    #[serde(default)]
    pub sql_body_return_stmts: Vec<usize>,
    /// proconfig: SET clauses as "name=value".
    #[serde(default)]
    pub config: Vec<String>,
    /// proacl; None = the default privileges (EXECUTE for PUBLIC).
    #[serde(default)]
    pub acl: Option<Vec<super::acl::AclItem>>,
    /// What a SQL-standard body and the parameters' defaults refer to, as
    /// PostgreSQL records it in pg_depend: (relation, attnum) with attnum
    /// 0 for a whole relation (a sequence named by `nextval('s')`), and
    /// the functions they call. A body in a string refers to nothing
    /// until it runs.
    #[serde(default)]
    pub refs: Vec<(Oid, i16)>,
    #[serde(default)]
    pub function_refs: Vec<Oid>,
    /// Changes on every CREATE OR REPLACE / ALTER, so compiled forms
    /// cached by sessions are recompiled.
    #[serde(default)]
    pub version: u64,
}

impl Function {
    /// The types of the values the body receives (IN, INOUT, VARIADIC).
    pub fn input_types(&self) -> Vec<Oid> {
        self.params.iter().filter(|p| p.is_input()).map(|p| p.type_oid).collect()
    }

    /// The types a call passes (for a procedure, its OUT ones too).
    pub fn call_types(&self) -> Vec<Oid> {
        self.params.iter().filter(|p| p.passed_by_call(self.kind)).map(|p| p.type_oid).collect()
    }

    /// The result's columns for functions returning rows through OUT
    /// parameters or RETURNS TABLE.
    pub fn output_params(&self) -> Vec<&FunctionParam> {
        self.params.iter().filter(|p| p.is_output()).collect()
    }

    /// The input parameters' defaults, last ones only (PostgreSQL requires
    /// every input after one with a default to have one).
    pub fn input_defaults(&self) -> Vec<&str> {
        let inputs: Vec<&FunctionParam> = self.params.iter().filter(|p| p.is_input()).collect();
        let first = inputs.iter().position(|p| p.default.is_some()).unwrap_or(inputs.len());
        inputs[first..].iter().map(|p| p.default.as_deref().unwrap_or("NULL")).collect()
    }

    /// The pg_proc row in the form built-in functions take.
    pub fn proc_info(&self) -> ProcInfo {
        let all_same_as_inputs = self.params.iter().all(|p| p.mode == 'i');
        let variadic = match self.params.iter().find(|p| p.mode == 'v') {
            Some(p) => match p.type_oid {
                oid::ANY => oid::ANY,
                // provariadic of a polymorphic array is its element pseudo-type.
                oid::ANYARRAY => oid::ANYELEMENT,
                oid::ANYCOMPATIBLEARRAY => oid::ANYCOMPATIBLE,
                t => super::builtins().types.get(&t).map(|ti| ti.elem).unwrap_or(0),
            },
            None => 0,
        };
        let defaults = self.input_defaults();
        ProcInfo {
            oid: self.oid,
            name: self.name.clone(),
            namespace: self.namespace,
            kind: self.kind,
            retset: self.retset,
            volatility: self.volatility,
            strict: self.strict,
            rettype: self.ret_type,
            argtypes: self.input_types(),
            variadic,
            src: String::new(),
            nargdefaults: defaults.len(),
            allargtypes: if all_same_as_inputs { Vec::new() } else { self.params.iter().map(|p| p.type_oid).collect() },
            argmodes: if all_same_as_inputs { Vec::new() } else { self.params.iter().map(|p| p.mode).collect() },
            argnames: if self.params.iter().all(|p| p.name.is_empty()) { Vec::new() } else { self.params.iter().map(|p| p.name.clone()).collect() },
            parallel: self.parallel,
            cost: self.cost,
            rows: self.rows,
            arg_defaults: defaults.join(", "),
        }
    }

    /// The result type's SqlType.
    pub fn ret_sql_type(&self) -> SqlType {
        SqlType::new(self.ret_type)
    }
}
