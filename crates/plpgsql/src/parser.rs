//! The PL/pgSQL grammar (pl_gram.y) and compiler (pl_comp.c) in one pass:
//! statements are parsed by recursive descent over the core lexer's
//! tokens, SQL fragments are cut out of the source as text (checked for
//! syntax with the SQL parser, run later through the SPI), declarations
//! get their types through the SPI, and names are entered into the
//! block-structured namespace as PostgreSQL's plpgsql_ns_* do.

use std::rc::Rc;

use tusk_sql::procedural::{Spi, VariableConflict};
use tusk_types::{oid, PgError, PgResult, SqlType};

use crate::ast::*;
use crate::lexer::{char_pos, tokenize, Tok, Token};

/// What the compiler needs to know about the function besides its body.
pub struct FuncSpec<'a> {
    /// Compiling for CREATE FUNCTION's validator: only then do the
    /// compile-time extra checks (shadowed_variables) run, as in pl_comp.c.
    pub for_validator: bool,
    /// A DO block: RETURN in it is a void function's.
    pub is_inline: bool,
    /// "PL/pgSQL function f(integer)".
    pub context_name: String,
    /// The outer label (the function's name); "inline_code_block" for DO.
    pub name: String,
    pub params: &'a [(String, SqlType, char)],
    pub ret_type: SqlType,
    pub retset: bool,
    pub is_procedure: bool,
    pub is_trigger: bool,
}

pub struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    spi: &'a dyn Spi,
    vars: Vec<Var>,
    scopes: Vec<Scope>,
    cur: usize,
    /// Labels of the enclosing blocks and loops (None = unlabelled loop), for EXIT checks.
    labels: Vec<(Option<String>, bool)>,
    line_starts: Vec<usize>,
    /// What RETURN may carry (make_return_stmt's cases).
    ret: ReturnKind,
    /// shadowed_variables: Some(true) an error, Some(false) a warning.
    shadow_check: Option<bool>,
}

#[derive(Clone, Copy, PartialEq)]
enum ReturnKind {
    Set,
    Procedure,
    Void,
    OutParams,
    Value,
}

fn is_reserved(word: &str) -> bool {
    // PL/pgSQL's reserved words (pl_reserved_kwlist.h), which may not name variables.
    matches!(
        word,
        "all" | "begin" | "by" | "case" | "declare" | "else" | "end" | "execute" | "for" | "foreach" | "from" | "if" | "in" | "into"
            | "loop" | "not" | "null" | "or" | "strict" | "then" | "to" | "using" | "when" | "while"
    )
}

fn unreserved_ok(word: &str) -> bool {
    !is_reserved(word)
}

pub fn compile(src: &str, spec: &FuncSpec, spi: &dyn Spi) -> PgResult<Function> {
    let toks = tokenize(src)?;
    let mut line_starts = vec![0];
    for (i, b) in src.bytes().enumerate() {
        if b == b'\n' {
            line_starts.push(i + 1);
        }
    }
    let ret = if spec.retset {
        ReturnKind::Set
    } else if spec.is_procedure && !spec.is_inline {
        ReturnKind::Procedure
    } else if spec.ret_type.oid == oid::VOID || spec.is_inline {
        ReturnKind::Void
    } else if spec.params.iter().any(|p| matches!(p.2, 'o' | 'b' | 't')) {
        ReturnKind::OutParams
    } else {
        ReturnKind::Value
    };
    let shadow_check = if spec.for_validator { crate::extra_check_level(spi, crate::XCHECK_SHADOWVAR) } else { None };
    let mut p = Parser { src, toks, pos: 0, spi, vars: Vec::new(), scopes: Vec::new(), cur: 0, labels: Vec::new(), line_starts, ret, shadow_check };
    compile_function(&mut p, spec, spi).map_err(|e| {
        // An error with a position is shown at it; others say where the
        // compiler was (plpgsql_compile_error_callback).
        if e.position.is_some() || e.context.is_some() {
            return e;
        }
        let line = p.toks.get(p.pos.saturating_sub(1)).map_or(1, |t| p.lineno_at(t.start));
        e.with_context(format!("compilation of PL/pgSQL function \"{}\" near line {line}", spec.name))
    })
}

fn compile_function(p: &mut Parser, spec: &FuncSpec, spi: &dyn Spi) -> PgResult<Function> {
    p.scopes.push(Scope { parent: None, label: Some(spec.name.clone()), items: Vec::new() });
    // Parameters: named ones under their names and as $n, unnamed as $n.
    let mut in_params = Vec::new();
    let mut out_params = Vec::new();
    let mut n = 0;
    for (name, ty, mode) in spec.params {
        let fields = spi.composite_fields(*ty).map(Rc::new);
        let kind = if fields.is_some() || ty.oid == oid::RECORD { VarKind::Record } else { VarKind::Scalar };
        let label = if name.is_empty() { format!("${}", n + 1) } else { name.clone() };
        let slot = p.add_var(Var { name: label, ty: *ty, kind, is_const: false, not_null: false, default: None, fields, lineno: 0 });
        if matches!(mode, 'i' | 'b' | 'v') {
            n += 1;
            in_params.push(slot);
            if !name.is_empty() {
                p.scopes[0].items.push((format!("${n}"), slot));
            }
        }
        if matches!(mode, 'o' | 'b' | 't') {
            out_params.push(slot);
        }
    }
    let found_var = p.add_var(Var { name: "found".into(), ty: SqlType::new(oid::BOOL), kind: VarKind::Scalar, is_const: false, not_null: false, default: None, fields: None, lineno: 0 });
    let mut new_var = None;
    let mut old_var = None;
    let mut tg_vars = Vec::new();
    if spec.is_trigger {
        let rec = |name: &str| Var { name: name.into(), ty: SqlType::new(oid::RECORD), kind: VarKind::Record, is_const: false, not_null: false, default: None, fields: None, lineno: 0 };
        new_var = Some(p.add_var(rec("new")));
        old_var = Some(p.add_var(rec("old")));
        let text = SqlType::new(oid::TEXT);
        for (name, ty) in [
            ("tg_name", SqlType::new(oid::NAME)),
            ("tg_when", text),
            ("tg_level", text),
            ("tg_op", text),
            ("tg_relid", SqlType::new(oid::OID)),
            ("tg_relname", SqlType::new(oid::NAME)),
            ("tg_table_name", SqlType::new(oid::NAME)),
            ("tg_table_schema", SqlType::new(oid::NAME)),
            ("tg_nargs", SqlType::new(oid::INT4)),
            ("tg_argv", SqlType::new(oid::TEXT_ARRAY)),
        ] {
            tg_vars.push(p.add_var(Var { name: name.into(), ty, kind: VarKind::Scalar, is_const: false, not_null: false, default: None, fields: None, lineno: 0 }));
        }
    }
    // compiler options
    let mut conflict = VariableConflict::Error;
    let mut print_strict_params = matches!(spi.setting("plpgsql.print_strict_params").as_deref().map(str::to_ascii_lowercase).as_deref(), Some("on" | "true" | "yes" | "1"));
    while p.peek_op("#") {
        p.pos += 1;
        let opt = p.ident_word()?;
        match opt.as_str() {
            "variable_conflict" => {
                let v = p.ident_word()?;
                conflict = match v.as_str() {
                    "error" => VariableConflict::Error,
                    "use_variable" => VariableConflict::UseVariable,
                    "use_column" => VariableConflict::UseColumn,
                    _ => return Err(p.syntax_error_here_prev()),
                };
            }
            "print_strict_params" => {
                let v = p.ident_word()?;
                print_strict_params = v == "on" || v == "true";
            }
            "option" => {
                p.ident_word()?;
            }
            _ => return Err(p.syntax_error_here_prev()),
        }
    }
    let body = p.parse_block_stmt(None)?;
    if p.peek_op(";") {
        p.pos += 1;
    }
    if p.pos < p.toks.len() {
        return Err(p.syntax_error_here());
    }
    let StmtKind::Block(body) = body.kind else { unreachable!() };
    Ok(Function {
        context_name: spec.context_name.clone(),
        vars: std::mem::take(&mut p.vars),
        scopes: std::mem::take(&mut p.scopes),
        in_params,
        out_params,
        found_var,
        body,
        conflict,
        ret_type: spec.ret_type,
        retset: spec.retset,
        is_procedure: spec.is_procedure,
        is_trigger: spec.is_trigger,
        new_var,
        old_var,
        tg_vars,
        print_strict_params,
    })
}

impl<'a> Parser<'a> {
    // ------------------------------------------------------------ namespace

    fn add_var(&mut self, var: Var) -> usize {
        let slot = self.vars.len();
        self.scopes[self.cur].items.push((var.name.clone(), slot));
        self.vars.push(var);
        slot
    }

    fn push_scope(&mut self, label: Option<String>) {
        let parent = self.cur;
        self.scopes.push(Scope { parent: Some(parent), label, items: Vec::new() });
        self.cur = self.scopes.len() - 1;
    }

    fn pop_scope(&mut self) {
        self.cur = self.scopes[self.cur].parent.unwrap_or(0);
    }

    fn ns(&self) -> NsRef {
        NsRef { scope: self.cur, visible: self.scopes[self.cur].items.len() }
    }

    /// A variable by one name, innermost first.
    fn lookup(&self, name: &str) -> Option<usize> {
        lookup_names(&self.scopes, self.ns(), &[name]).map(|(s, _)| s)
    }

    // ------------------------------------------------------------ tokens

    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }
    fn peek_kw(&self, kw: &str) -> bool {
        self.peek().is_some_and(|t| t.is_kw(kw))
    }
    fn peek_op(&self, op: &str) -> bool {
        self.peek().is_some_and(|t| t.is_op(op))
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.peek_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if self.peek_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_kw(&mut self, kw: &str) -> PgResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.syntax_error_here())
        }
    }
    fn expect_op(&mut self, op: &str) -> PgResult<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(self.syntax_error_here())
        }
    }
    fn ident_word(&mut self) -> PgResult<String> {
        match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Ident { name, .. }) => {
                self.pos += 1;
                Ok(name)
            }
            _ => Err(self.syntax_error_here()),
        }
    }

    fn lineno_at(&self, byte: usize) -> u32 {
        match self.line_starts.binary_search(&byte) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }
    fn lineno(&self) -> u32 {
        let at = self.peek().map(|t| t.start).unwrap_or(self.src.len());
        self.lineno_at(at)
    }

    fn syntax_error_at(&self, i: usize) -> PgError {
        match self.toks.get(i) {
            Some(t) => PgError::syntax(format!("syntax error at or near \"{}\"", &self.src[t.start..t.end])).with_position(Some(char_pos(self.src, t.start))),
            None => PgError::syntax("syntax error at end of input").with_position(Some(char_pos(self.src, self.src.len()))),
        }
    }
    fn syntax_error_here(&self) -> PgError {
        if self.pos >= self.toks.len() {
            return self.error_here("unexpected end of function definition");
        }
        self.syntax_error_at(self.pos)
    }
    fn syntax_error_here_prev(&self) -> PgError {
        self.syntax_error_at(self.pos.saturating_sub(1))
    }
    fn error_here(&self, msg: &str) -> PgError {
        let at = self.peek().map(|t| t.start).unwrap_or(self.src.len());
        PgError::syntax(msg.to_string()).with_position(Some(char_pos(self.src, at)))
    }
    /// plpgsql_yyerror: the message with the token it stopped at.
    fn yyerror(&self, msg: &str) -> PgError {
        match self.toks.get(self.pos) {
            Some(t) => PgError::syntax(format!("{msg} at or near \"{}\"", &self.src[t.start..t.end])).with_position(Some(char_pos(self.src, t.start))),
            None => PgError::syntax(format!("{msg} at end of input")).with_position(Some(char_pos(self.src, self.src.len()))),
        }
    }

    /// The shadowed_variables extra check on a new declaration's name.
    fn check_shadow(&self, name: &str, at: usize) -> PgResult<()> {
        let Some(is_error) = self.shadow_check else { return Ok(()) };
        if self.lookup(name).is_none() {
            return Ok(());
        }
        let e = PgError::new(tusk_types::sqlstate::DUPLICATE_ALIAS, format!("variable \"{name}\" shadows a previously defined variable"))
            .with_position(Some(char_pos(self.src, self.toks[at].start)));
        if is_error {
            return Err(e);
        }
        let mut e = crate::body_error(e, self.src);
        e.severity = tusk_types::Severity::Warning;
        self.spi.notice(e);
        Ok(())
    }

    fn error_at_tok(&self, i: usize, msg: &str) -> PgError {
        let at = self.toks.get(i).map(|t| t.start).unwrap_or(self.src.len());
        PgError::syntax(msg.to_string()).with_position(Some(char_pos(self.src, at)))
    }

    // ------------------------------------------------------------ SQL fragments

    /// Reads an SQL fragment up to (not including) one of the terminators
    /// at parenthesis depth 0. Returns the fragment's token range.
    fn read_until(&mut self, kws: &[&str], ops: &[&str], expected: &str, is_expr: bool) -> PgResult<(usize, usize)> {
        let start = self.pos;
        let mut depth = 0i32;
        loop {
            let Some(t) = self.peek() else {
                if depth != 0 {
                    return Err(self.yyerror("mismatched parentheses"));
                }
                return Err(self.error_here(&if is_expr {
                    format!("missing \"{expected}\" at end of SQL expression")
                } else {
                    format!("missing \"{expected}\" at end of SQL statement")
                }));
            };
            if depth == 0 && (kws.iter().any(|k| t.is_kw(k)) || ops.iter().any(|o| t.is_op(o))) {
                break;
            }
            if t.is_op(";") {
                if depth != 0 {
                    return Err(self.yyerror("mismatched parentheses"));
                }
                return Err(self.error_here(&if is_expr {
                    format!("missing \"{expected}\" at end of SQL expression")
                } else {
                    format!("missing \"{expected}\" at end of SQL statement")
                }));
            }
            if t.is_op("(") || t.is_op("[") {
                depth += 1;
            } else if t.is_op(")") || t.is_op("]") {
                depth -= 1;
                if depth < 0 {
                    return Err(self.yyerror("mismatched parentheses"));
                }
            }
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.yyerror(if is_expr { "missing expression" } else { "missing SQL statement" }));
        }
        Ok((start, self.pos))
    }

    fn text_of(&self, from: usize, to: usize) -> &'a str {
        if from >= to {
            return "";
        }
        &self.src[self.toks[from].start..self.toks[to - 1].end]
    }

    /// Makes an expression of tokens [from, to), checking its syntax.
    fn make_expr(&self, from: usize, to: usize, is_query: bool) -> PgResult<Expr> {
        let text = self.text_of(from, to).to_string();
        let start = self.toks[from].start;
        self.check_sql(&text, start, is_query)?;
        Ok(Expr { text, ns: self.ns(), is_query, plan: Default::default() })
    }

    /// check_sql_expr: a syntax error in an SQL fragment is reported at its
    /// place in the body.
    fn check_sql(&self, text: &str, start: usize, is_query: bool) -> PgResult<()> {
        let (sql, prefix) = if is_query { (text.to_string(), 0) } else { (format!("SELECT {text}"), 7) };
        match tusk_sql::parser::parse(&sql) {
            Ok(_) => Ok(()),
            Err(e) if e.code == tusk_types::sqlstate::SYNTAX_ERROR => {
                let mut e = e;
                if let Some(p) = e.position {
                    // p is a character offset into `sql`
                    let char_in_text = (p as usize).saturating_sub(1 + prefix);
                    let byte_in_text = text.char_indices().nth(char_in_text).map(|(b, _)| b).unwrap_or(text.len());
                    e.position = Some(char_pos(self.src, start + byte_in_text));
                }
                Err(e)
            }
            Err(_) => Ok(()),
        }
    }

    fn read_expr(&mut self, kws: &[&str], ops: &[&str], expected: &str) -> PgResult<Expr> {
        let (a, b) = self.read_until(kws, ops, expected, true)?;
        self.make_expr(a, b, false)
    }

    /// An expression ending with `;` (consumed).
    fn read_expr_semi(&mut self) -> PgResult<Expr> {
        let e = self.read_expr(&[], &[";"], ";")?;
        self.expect_op(";")?;
        Ok(e)
    }

    // ------------------------------------------------------------ blocks

    fn parse_label(&mut self) -> PgResult<Option<String>> {
        if self.eat_op("<<") {
            let name = self.ident_word()?;
            self.expect_op(">>")?;
            return Ok(Some(name));
        }
        Ok(None)
    }

    fn check_end_label(&mut self, label: &Option<String>) -> PgResult<()> {
        if let Some(Tok::Ident { name, .. }) = self.peek().map(|t| t.tok.clone()) {
            let at = self.pos;
            self.pos += 1;
            match label {
                None => return Err(self.error_at_tok(at, &format!("end label \"{name}\" specified for unlabeled block"))),
                Some(l) if *l != name => return Err(self.error_at_tok(at, &format!("end label \"{name}\" differs from block's label \"{l}\""))),
                _ => {}
            }
        }
        Ok(())
    }

    fn parse_block_stmt(&mut self, label: Option<String>) -> PgResult<Stmt> {
        let label = match label {
            Some(l) => Some(l),
            None => self.parse_label()?,
        };
        self.push_scope(label.clone());
        self.labels.push((label.clone(), false));
        let mut decls = Vec::new();
        let mut lineno = self.lineno();
        if self.eat_kw("declare") {
            loop {
                if self.peek_kw("begin") {
                    break;
                }
                if self.eat_kw("declare") {
                    continue;
                }
                if self.peek_op("<<") {
                    return Err(self.error_here("block label must be placed before DECLARE, not after"));
                }
                if self.peek().is_none() {
                    return Err(self.syntax_error_here());
                }
                if let Some(slot) = self.parse_decl()? {
                    decls.push(slot);
                }
            }
        }
        if self.peek_kw("begin") {
            lineno = self.lineno();
        }
        self.expect_kw("begin")?;
        let body = self.parse_stmts()?;
        let mut handlers = None;
        let mut sqlstate_var = None;
        let mut sqlerrm_var = None;
        if self.eat_kw("exception") {
            // the handlers see SQLSTATE and SQLERRM in a level of their own
            self.push_scope(None);
            let text = SqlType::new(oid::TEXT);
            let mk = |name: &str| Var { name: name.into(), ty: text, kind: VarKind::Scalar, is_const: false, not_null: false, default: None, fields: None, lineno: 0 };
            sqlstate_var = Some(self.add_var(mk("sqlstate")));
            sqlerrm_var = Some(self.add_var(mk("sqlerrm")));
            let mut hs = Vec::new();
            while self.peek_kw("when") {
                let hline = self.lineno();
                self.pos += 1;
                let mut conds = Vec::new();
                loop {
                    if self.eat_kw("sqlstate") {
                        let t = self.peek().cloned().ok_or_else(|| self.syntax_error_here())?;
                        if t.tok != Tok::Str {
                            return Err(self.syntax_error_here());
                        }
                        self.pos += 1;
                        let code = unquote(&self.src[t.start..t.end]);
                        if code.len() != 5 || !code.bytes().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()) {
                            return Err(PgError::syntax("invalid SQLSTATE code").with_position(Some(char_pos(self.src, t.start))));
                        }
                        conds.push(format!("sqlstate:{code}"));
                    } else {
                        let at = self.pos;
                        let name = self.ident_word()?;
                        if name != "others" && crate::conditions::lookup(&name).is_none() {
                            return Err(PgError::new(tusk_types::sqlstate::UNDEFINED_OBJECT, format!("unrecognized exception condition \"{name}\""))
                                .with_position(Some(char_pos(self.src, self.toks[at].start))));
                        }
                        conds.push(name);
                    }
                    if !self.eat_kw("or") {
                        break;
                    }
                }
                self.expect_kw("then")?;
                let body = self.parse_stmts()?;
                hs.push(ExceptionHandler { conditions: conds, body, lineno: hline });
            }
            if hs.is_empty() {
                return Err(self.syntax_error_here());
            }
            self.pop_scope();
            handlers = Some(hs);
        }
        self.expect_kw("end")?;
        self.check_end_label(&label)?;
        self.pop_scope();
        self.labels.pop();
        Ok(Stmt { lineno, kind: StmtKind::Block(Block { label, decls, body, handlers, sqlstate_var, sqlerrm_var }) })
    }

    /// One declaration; None for an alias (which makes no variable).
    fn parse_decl(&mut self) -> PgResult<Option<usize>> {
        let lineno = self.lineno();
        let name_at = self.pos;
        let name = match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Ident { name, quoted }) if quoted || unreserved_ok(&name) => {
                self.pos += 1;
                name
            }
            _ => return Err(self.syntax_error_here()),
        };
        if self.scopes[self.cur].items.iter().any(|(n, _)| *n == name) {
            return Err(self.error_at_tok(name_at, "duplicate declaration"));
        }
        self.check_shadow(&name, name_at)?;
        if self.eat_kw("alias") {
            self.expect_kw("for")?;
            let target = match self.peek().map(|t| t.tok.clone()) {
                Some(Tok::Param(n)) => format!("${n}"),
                Some(Tok::Ident { name, .. }) => name,
                _ => return Err(self.syntax_error_here()),
            };
            let at = self.pos;
            self.pos += 1;
            let mut names = vec![target];
            while self.eat_op(".") {
                names.push(self.ident_word()?);
            }
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let slot = match lookup_names(&self.scopes, self.ns(), &refs) {
                Some((slot, used)) if used == refs.len() => slot,
                _ => return Err(self.error_at_tok(at, &format!("variable \"{}\" does not exist", names.join(".")))),
            };
            self.expect_op(";")?;
            self.scopes[self.cur].items.push((name, slot));
            return Ok(None);
        }
        // cursor declarations
        let save = self.pos;
        let mut scroll = None;
        if self.eat_kw("no") {
            if self.eat_kw("scroll") {
                scroll = Some(false);
            }
        } else if self.eat_kw("scroll") {
            scroll = Some(true);
        }
        if self.eat_kw("cursor") {
            return self.parse_cursor_decl(name, scroll, lineno).map(Some);
        }
        self.pos = save;
        let is_const = self.eat_kw("constant");
        let (ty, kind, fields) = self.parse_datatype(&[";", ":=", "="], &["default", "not", "collate"])?;
        if self.eat_kw("collate") {
            self.ident_word()?;
            while self.eat_op(".") {
                self.ident_word()?;
            }
        }
        let mut not_null = false;
        if self.eat_kw("not") {
            self.expect_kw("null")?;
            not_null = true;
        }
        let mut default = None;
        if self.eat_op(":=") || self.eat_op("=") || self.eat_kw("default") {
            default = Some(self.read_expr_semi()?);
        } else {
            self.expect_op(";")?;
        }
        if not_null && default.is_none() {
            return Err(PgError::syntax(format!("variable \"{name}\" must have a default value, since it's declared NOT NULL"))
                .with_position(Some(char_pos(self.src, self.toks[name_at].start))));
        }
        let kind = if ty.oid == oid::REFCURSOR { VarKind::Cursor { query: None, args: Vec::new(), scroll: None } } else { kind };
        // the default is evaluated in the scope before the variable exists
        let slot = self.add_var(Var { name, ty, kind, is_const, not_null, default, fields, lineno });
        Ok(Some(slot))
    }

    fn parse_cursor_decl(&mut self, name: String, scroll: Option<bool>, lineno: u32) -> PgResult<usize> {
        let mut args = Vec::new();
        // the arguments live in a namespace level of their own, seen by the query
        let outer = self.cur;
        self.push_scope(None);
        if self.eat_op("(") {
            loop {
                let an_at = self.pos;
                let an = self.ident_word()?;
                self.check_shadow(&an, an_at)?;
                let (ty, kind, fields) = self.parse_datatype(&[",", ")"], &[])?;
                let slot = self.vars.len();
                self.vars.push(Var { name: an.clone(), ty, kind, is_const: false, not_null: false, default: None, fields, lineno });
                self.scopes[self.cur].items.push((an, slot));
                args.push(slot);
                if self.eat_op(")") {
                    break;
                }
                self.expect_op(",")?;
            }
        }
        if !self.eat_kw("for") && !self.eat_kw("is") {
            return Err(self.syntax_error_here());
        }
        let (a, b) = self.read_until(&[], &[";"], ";", false)?;
        let query = self.make_expr(a, b, true)?;
        self.expect_op(";")?;
        self.cur = outer;
        let slot = self.add_var(Var {
            name,
            ty: SqlType::new(oid::REFCURSOR),
            kind: VarKind::Cursor { query: Some(query), args, scroll },
            is_const: false,
            not_null: false,
            default: None,
            fields: None,
            lineno,
        });
        Ok(slot)
    }

    /// A declared type: `%TYPE`, `%ROWTYPE`, or a type name for the SPI.
    fn parse_datatype(&mut self, stop_ops: &[&str], stop_kws: &[&str]) -> PgResult<(SqlType, VarKind, Option<Rc<Vec<(String, SqlType)>>>)> {
        let start = self.pos;
        let mut depth = 0;
        while let Some(t) = self.peek() {
            if depth == 0 && (stop_ops.iter().any(|o| t.is_op(o)) || stop_kws.iter().any(|k| t.is_kw(k))) {
                break;
            }
            if t.is_op("(") {
                depth += 1;
            } else if t.is_op(")") {
                depth -= 1;
            }
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.syntax_error_here());
        }
        let toks = &self.toks[start..self.pos];
        let pos = Some(char_pos(self.src, toks[0].start));
        // name(.name)* % type|rowtype [ [] ]
        if let Some(pct) = toks.iter().position(|t| t.is_op("%")) {
            let mut names = Vec::new();
            for (i, t) in toks[..pct].iter().enumerate() {
                if i % 2 == 1 {
                    if !t.is_op(".") {
                        return Err(self.syntax_error_at(start + i));
                    }
                    continue;
                }
                match &t.tok {
                    Tok::Ident { name, .. } => names.push(name.clone()),
                    _ => return Err(self.syntax_error_at(start + i)),
                }
            }
            let which = toks.get(pct + 1).and_then(|t| if let Tok::Ident { name, quoted: false } = &t.tok { Some(name.as_str()) } else { None });
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let is_array = toks.len() > pct + 2;
            let (ty, kind, fields) = match which {
                Some("type") => {
                    let found = lookup_names(&self.scopes, self.ns(), &refs);
                    match found {
                        Some((slot, used)) if used == refs.len() => {
                            let v = &self.vars[slot];
                            let kind = if matches!(v.kind, VarKind::Record) { VarKind::Record } else { VarKind::Scalar };
                            (v.ty, kind, v.fields.clone())
                        }
                        Some((slot, used)) if used + 1 == refs.len() && matches!(self.vars[slot].kind, VarKind::Record) => {
                            let f = self.vars[slot].fields.as_ref().and_then(|f| f.iter().find(|(n, _)| n == refs[used]).map(|x| x.1));
                            match f {
                                Some(t) => (t, VarKind::Scalar, None),
                                None => return Err(PgError::new(tusk_types::sqlstate::UNDEFINED_OBJECT, format!("type \"{}%TYPE\" does not exist", names.join("."))).with_position(pos)),
                            }
                        }
                        _ => {
                            if refs.len() < 2 {
                                return Err(PgError::syntax(format!("variable \"{}\" does not exist", names.join("."))).with_position(pos));
                            }
                            let t = self.spi.column_type(&refs[..refs.len() - 1], refs[refs.len() - 1]).map_err(|e| e.with_position(pos))?;
                            let fields = self.spi.composite_fields(t).map(Rc::new);
                            let kind = if fields.is_some() { VarKind::Record } else { VarKind::Scalar };
                            (t, kind, fields)
                        }
                    }
                }
                Some("rowtype") => {
                    let (t, cols) = self.spi.relation_row_type(&refs).map_err(|e| e.with_position(pos))?;
                    (t, VarKind::Record, Some(Rc::new(cols)))
                }
                _ => return Err(self.syntax_error_at(start + pct + 1)),
            };
            if is_array {
                let t = self.spi.parse_type(&format!("{}[]", self.spi.type_name(ty))).map_err(|e| e.with_position(pos))?;
                return Ok((t, VarKind::Scalar, None));
            }
            return Ok((ty, kind, fields));
        }
        let text = self.text_of(start, self.pos);
        let ty = self.spi.parse_type(text).map_err(|e| e.with_position(pos))?;
        if ty.oid == oid::RECORD {
            return Ok((ty, VarKind::Record, None));
        }
        let fields = self.spi.composite_fields(ty).map(Rc::new);
        let kind = if fields.is_some() { VarKind::Record } else { VarKind::Scalar };
        Ok((ty, kind, fields))
    }

    // ------------------------------------------------------------ statements

    fn at_stmts_end(&self) -> bool {
        match self.peek() {
            None => true,
            Some(t) => ["end", "else", "elsif", "elseif", "when", "exception"].iter().any(|k| t.is_kw(k)),
        }
    }

    fn parse_stmts(&mut self) -> PgResult<Vec<Stmt>> {
        let mut out = Vec::new();
        while !self.at_stmts_end() {
            if self.eat_op(";") {
                continue;
            }
            out.push(self.parse_stmt()?);
        }
        Ok(out)
    }

    fn parse_stmt(&mut self) -> PgResult<Stmt> {
        let lineno = self.lineno();
        let label = self.parse_label()?;
        let t = self.peek().cloned().ok_or_else(|| self.syntax_error_here())?;
        let word = match &t.tok {
            Tok::Ident { name, quoted: false } => name.as_str(),
            Tok::Ident { .. } => "",
            _ => return Err(self.syntax_error_here()),
        };
        let lineno = if label.is_some() { self.lineno() } else { lineno };
        if label.is_some() && !matches!(word, "begin" | "declare" | "loop" | "while" | "for" | "foreach") {
            return Err(self.syntax_error_here());
        }
        let kind = match word {
            "begin" | "declare" => return self.parse_block_stmt(label).map(|mut s| {
                s.lineno = s.lineno.max(lineno);
                s
            }).and_then(|s| {
                self.expect_op(";")?;
                Ok(s)
            }),
            "if" => self.parse_if()?,
            "case" => self.parse_case()?,
            "loop" => {
                self.pos += 1;
                let body = self.parse_loop_body(&label)?;
                StmtKind::Loop { label, body }
            }
            "while" => {
                self.pos += 1;
                let cond = self.read_expr(&["loop"], &[], "LOOP")?;
                self.pos += 1;
                let body = self.parse_loop_body(&label)?;
                StmtKind::While { label, cond, body }
            }
            "for" => self.parse_for(label)?,
            "foreach" => self.parse_foreach(label)?,
            "exit" | "continue" => self.parse_exit(word == "exit")?,
            "return" => self.parse_return()?,
            "raise" => self.parse_raise()?,
            "assert" => {
                self.pos += 1;
                let cond = self.read_expr(&[], &[",", ";"], ";")?;
                let message = if self.eat_op(",") { Some(self.read_expr(&[], &[";"], ";")?) } else { None };
                self.expect_op(";")?;
                StmtKind::Assert { cond, message }
            }
            "execute" => self.parse_dynexecute()?,
            "perform" => {
                self.pos += 1;
                let e = self.read_expr_semi()?;
                StmtKind::Perform(e)
            }
            "call" | "do" => {
                let (a, b) = self.read_until(&[], &[";"], ";", false)?;
                let sql = self.make_expr(a, b, true)?;
                self.pos += 1;
                StmtKind::Call { sql, target: None }
            }
            "get" => self.parse_getdiag()?,
            "open" => self.parse_open()?,
            "fetch" | "move" => self.parse_fetch(word == "move")?,
            "close" => {
                self.pos += 1;
                let var = self.cursor_var()?;
                self.expect_op(";")?;
                StmtKind::Close(var)
            }
            "null" => {
                self.pos += 1;
                self.expect_op(";")?;
                StmtKind::Null
            }
            "commit" | "rollback" => {
                self.pos += 1;
                let mut chain = false;
                if self.eat_kw("and") {
                    chain = !self.eat_kw("no");
                    self.expect_kw("chain")?;
                }
                self.expect_op(";")?;
                if word == "commit" {
                    StmtKind::Commit { chain }
                } else {
                    StmtKind::Rollback { chain }
                }
            }
            _ => {
                if let Some(k) = self.try_assignment()? {
                    k
                } else {
                    self.parse_execsql()?
                }
            }
        };
        Ok(Stmt { lineno, kind })
    }

    /// `var [.field] [[subscript]] := expr;`, or None if the statement is not an assignment.
    fn try_assignment(&mut self) -> PgResult<Option<StmtKind>> {
        let start = self.pos;
        let mut names = Vec::new();
        let mut i = self.pos;
        loop {
            match self.toks.get(i).map(|t| &t.tok) {
                Some(Tok::Ident { name, .. }) => names.push(name.clone()),
                Some(Tok::Param(n)) if names.is_empty() => names.push(format!("${n}")),
                _ => break,
            }
            i += 1;
            if self.toks.get(i).is_some_and(|t| t.is_op(".")) && matches!(self.toks.get(i + 1).map(|t| &t.tok), Some(Tok::Ident { .. })) {
                i += 1;
                continue;
            }
            break;
        }
        let next = self.toks.get(i);
        let assign_like = next.is_some_and(|t| t.is_op(":=") || t.is_op("=") || t.is_op("["));
        if names.is_empty() || !assign_like {
            if names.len() > 1 {
                // a dotted word not followed by := is SQL
            }
            return Ok(None);
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (slot, used) = match lookup_names(&self.scopes, self.ns(), &refs) {
            Some(x) => x,
            None => {
                if names.len() == 1 && is_sql_keyword(&names[0]) {
                    return Ok(None);
                }
                return Err(self.error_at_tok(start, &format!("\"{}\" is not a known variable", names.join("."))));
            }
        };
        let target = if used == refs.len() {
            TargetItem::Var(slot)
        } else if used + 1 == refs.len() && matches!(self.vars[slot].kind, VarKind::Record) {
            TargetItem::Field(slot, refs[used].to_string())
        } else {
            return Err(self.error_at_tok(start, &format!("\"{}\" is not a known variable", names.join("."))));
        };
        if self.vars[slot].is_const {
            return Err(PgError::syntax(format!("variable \"{}\" is declared CONSTANT", names[..used].join(".")))
                .with_position(Some(char_pos(self.src, self.toks[start].start))));
        }
        self.pos = i;
        let mut subs = Vec::new();
        while self.eat_op("[") {
            let e = self.read_expr(&[], &["]"], "]")?;
            self.expect_op("]")?;
            subs.push(e);
        }
        let target = if subs.is_empty() {
            target
        } else {
            match target {
                TargetItem::Var(s) => TargetItem::Element(s, subs),
                _ => return Err(PgError::unsupported("assignment to a subscripted record field")),
            }
        };
        if !self.eat_op(":=") && !self.eat_op("=") {
            return Err(self.syntax_error_here());
        }
        let text_start = self.toks[start].start;
        let expr = self.read_expr_semi()?;
        let end = self.toks[self.pos - 2].end;
        let text = self.src[text_start..end].to_string();
        Ok(Some(StmtKind::Assign { target, expr, text }))
    }

    fn parse_loop_body(&mut self, label: &Option<String>) -> PgResult<Vec<Stmt>> {
        self.labels.push((label.clone(), true));
        let body = self.parse_stmts()?;
        self.labels.pop();
        self.expect_kw("end")?;
        self.expect_kw("loop")?;
        self.check_end_label(label)?;
        self.expect_op(";")?;
        Ok(body)
    }

    fn parse_if(&mut self) -> PgResult<StmtKind> {
        self.pos += 1;
        let mut branches = Vec::new();
        let cond = self.read_expr(&["then"], &[], "THEN")?;
        self.pos += 1;
        let body = self.parse_stmts()?;
        branches.push((cond, body));
        let mut else_body = None;
        loop {
            if self.eat_kw("elsif") || self.eat_kw("elseif") {
                let cond = self.read_expr(&["then"], &[], "THEN")?;
                self.pos += 1;
                let body = self.parse_stmts()?;
                branches.push((cond, body));
            } else if self.eat_kw("else") {
                else_body = Some(self.parse_stmts()?);
            } else {
                break;
            }
        }
        self.expect_kw("end")?;
        self.expect_kw("if")?;
        self.expect_op(";")?;
        Ok(StmtKind::If { branches, else_body })
    }

    fn parse_case(&mut self) -> PgResult<StmtKind> {
        self.pos += 1;
        let mut test = None;
        if !self.peek_kw("when") {
            let e = self.read_expr(&["when"], &[], "WHEN")?;
            // the test value is held in a hidden variable the WHEN expressions compare with
            let slot = self.vars.len();
            let name = format!("__case__variable_{slot}__");
            self.add_var(Var { name, ty: SqlType::new(oid::UNKNOWN), kind: VarKind::Scalar, is_const: false, not_null: false, default: None, fields: None, lineno: 0 });
            test = Some((e, slot));
        }
        let mut whens = Vec::new();
        while self.eat_kw("when") {
            let (a, b) = self.read_until(&["then"], &[], "THEN", true)?;
            let mut e = self.make_expr(a, b, false)?;
            if let Some((_, slot)) = &test {
                // "$n IN (list)": the WHEN list compared with the test value
                e.text = format!("__case__variable_{}__ IN ({})", slot, e.text);
            }
            self.pos += 1;
            let body = self.parse_stmts()?;
            whens.push((e, body));
        }
        if whens.is_empty() {
            return Err(self.syntax_error_here());
        }
        let else_body = if self.eat_kw("else") { Some(self.parse_stmts()?) } else { None };
        self.expect_kw("end")?;
        self.expect_kw("case")?;
        self.expect_op(";")?;
        Ok(StmtKind::Case { test, whens, else_body })
    }

    /// The targets of FOR/INTO/FETCH: a record or row variable, or a list of scalars.
    fn parse_target_list(&mut self) -> PgResult<Target> {
        let mut items = Vec::new();
        loop {
            let at = self.pos;
            let mut names = vec![match self.peek().map(|t| t.tok.clone()) {
                Some(Tok::Ident { name, .. }) => name,
                Some(Tok::Param(n)) => format!("${n}"),
                _ => return Err(self.syntax_error_here()),
            }];
            self.pos += 1;
            while self.peek_op(".") && matches!(self.toks.get(self.pos + 1).map(|t| &t.tok), Some(Tok::Ident { .. })) {
                self.pos += 1;
                names.push(self.ident_word()?);
            }
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            match lookup_names(&self.scopes, self.ns(), &refs) {
                Some((slot, used)) if used == refs.len() => items.push(TargetItem::Var(slot)),
                Some((slot, used)) if used + 1 == refs.len() && matches!(self.vars[slot].kind, VarKind::Record) => {
                    items.push(TargetItem::Field(slot, refs[used].to_string()))
                }
                _ => return Err(self.error_at_tok(at, &format!("\"{}\" is not a known variable", names.join(".")))),
            }
            if let Some(TargetItem::Var(s)) = items.last() {
                if self.vars[*s].is_const {
                    return Err(PgError::syntax(format!("variable \"{}\" is declared CONSTANT", names.join(".")))
                        .with_position(Some(char_pos(self.src, self.toks[at].start))));
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        if items.len() > 1 {
            for it in &items {
                if let TargetItem::Var(s) = it {
                    if matches!(self.vars[*s].kind, VarKind::Record) {
                        return Err(PgError::syntax(format!("\"{}\" is not a scalar variable", self.vars[*s].name)));
                    }
                }
            }
        }
        Ok(Target { items })
    }

    fn parse_for(&mut self, label: Option<String>) -> PgResult<StmtKind> {
        self.pos += 1;
        // Is the loop variable an integer one? Look for ".." before LOOP.
        let var_at = self.pos;
        let mut i = self.pos;
        while i < self.toks.len() && !self.toks[i].is_kw("in") {
            i += 1;
        }
        let mut depth = 0;
        let mut j = i + 1;
        let mut dots = false;
        while j < self.toks.len() {
            let t = &self.toks[j];
            if t.is_op("(") || t.is_op("[") {
                depth += 1;
            } else if t.is_op(")") || t.is_op("]") {
                depth -= 1;
            } else if depth == 0 && t.is_kw("loop") {
                break;
            } else if depth == 0 && t.is_op("..") {
                dots = true;
                break;
            }
            j += 1;
        }
        if dots {
            let name = match self.peek().map(|t| t.tok.clone()) {
                Some(Tok::Ident { name, .. }) => name,
                _ => return Err(self.syntax_error_here()),
            };
            self.pos += 1;
            self.expect_kw("in")?;
            let reverse = self.eat_kw("reverse");
            let lower = self.read_expr(&[], &[".."], "..")?;
            self.pos += 1;
            let upper = self.read_expr(&["loop", "by"], &[], "LOOP")?;
            let step = if self.eat_kw("by") { Some(self.read_expr(&["loop"], &[], "LOOP")?) } else { None };
            self.expect_kw("loop")?;
            self.push_scope(label.clone());
            let var = self.add_var(Var { name, ty: SqlType::new(oid::INT4), kind: VarKind::Scalar, is_const: false, not_null: false, default: None, fields: None, lineno: 0 });
            let body = self.parse_loop_body(&label)?;
            self.pop_scope();
            return Ok(StmtKind::ForInt { label, var, lower, upper, step, reverse, body });
        }
        // a bound cursor: FOR rec IN cursor [(args)] LOOP
        if i + 1 < self.toks.len() {
            if let Tok::Ident { name, .. } = &self.toks[i + 1].tok {
                if let Some(slot) = self.lookup(name) {
                    if let VarKind::Cursor { query, .. } = &self.vars[slot].kind {
                        if query.is_none() {
                            return Err(self.error_at_tok(i + 1, "cursor FOR loop must use a bound cursor variable"));
                        }
                        let rec_name = match &self.toks[var_at].tok {
                            Tok::Ident { name, .. } => name.clone(),
                            _ => return Err(self.syntax_error_here()),
                        };
                        if i != var_at + 1 {
                            return Err(self.error_at_tok(var_at, "cursor FOR loop must have only one target variable"));
                        }
                        self.pos = i + 2;
                        let args = self.parse_cursor_args(slot)?;
                        self.expect_kw("loop")?;
                        self.push_scope(label.clone());
                        let rec = self.add_var(Var { name: rec_name, ty: SqlType::new(oid::RECORD), kind: VarKind::Record, is_const: false, not_null: false, default: None, fields: None, lineno: 0 });
                        let body = self.parse_loop_body(&label)?;
                        self.pop_scope();
                        return Ok(StmtKind::ForQuery { label, target: Target { items: vec![TargetItem::Var(rec)] }, source: QuerySource::Cursor { var: slot, args }, body });
                    }
                }
            }
        }
        // FOR target IN query / EXECUTE expr [USING ...]
        let target = self.parse_target_list()?;
        self.expect_kw("in")?;
        let source = if self.eat_kw("execute") {
            let query = self.read_expr(&["loop", "using"], &[], "LOOP")?;
            let params = self.parse_using(&["loop"])?;
            QuerySource::Dynamic { query, params }
        } else {
            let (a, b) = self.read_until(&["loop"], &[], "LOOP", false)?;
            QuerySource::Static(self.make_expr(a, b, true)?)
        };
        self.expect_kw("loop")?;
        self.push_scope(label.clone());
        let body = self.parse_loop_body(&label)?;
        self.pop_scope();
        Ok(StmtKind::ForQuery { label, target, source, body })
    }

    fn parse_using(&mut self, terms: &[&str]) -> PgResult<Vec<Expr>> {
        let mut params = Vec::new();
        if self.eat_kw("using") {
            loop {
                let mut ops = vec![","];
                let kws: Vec<&str> = terms.iter().filter(|t| t.chars().all(|c| c.is_ascii_alphabetic())).copied().collect();
                for t in terms {
                    if !t.chars().all(|c| c.is_ascii_alphabetic()) {
                        ops.push(t);
                    }
                }
                params.push(self.read_expr(&kws, &ops, terms[0])?);
                if !self.eat_op(",") {
                    break;
                }
            }
        }
        Ok(params)
    }

    fn parse_cursor_args(&mut self, cursor: usize) -> PgResult<Vec<Expr>> {
        let nargs = match &self.vars[cursor].kind {
            VarKind::Cursor { args, .. } => args.clone(),
            _ => Vec::new(),
        };
        let mut out = Vec::new();
        if nargs.is_empty() {
            if self.peek_op("(") {
                return Err(self.error_here(&format!("cursor \"{}\" has no arguments", self.vars[cursor].name)));
            }
            return Ok(out);
        }
        if !self.eat_op("(") {
            return Err(self.error_here(&format!("cursor \"{}\" has arguments", self.vars[cursor].name)));
        }
        let mut vals: Vec<Option<Expr>> = vec![None; nargs.len()];
        for k in 0..nargs.len() {
            // named notation: argname := value
            let arg_at = self.pos;
            let mut idx = k;
            if let (Some(Tok::Ident { name, .. }), Some(t2)) = (self.peek().map(|t| t.tok.clone()), self.toks.get(self.pos + 1)) {
                if t2.is_op(":=") || t2.is_op("=>") {
                    idx = nargs.iter().position(|s| self.vars[*s].name == name).ok_or_else(|| {
                        self.error_here(&format!("cursor \"{}\" has no argument named \"{}\"", self.vars[cursor].name, name))
                    })?;
                    self.pos += 2;
                }
            }
            let last = k + 1 == nargs.len();
            let e = self.read_expr(&[], &[",", ")"], "\",\" or \")")?;
            let closed = self.peek_op(")");
            if closed && !last {
                return Err(self.error_here(&format!("not enough arguments for cursor \"{}\"", self.vars[cursor].name)));
            }
            if !closed && last {
                return Err(self.error_here(&format!("too many arguments for cursor \"{}\"", self.vars[cursor].name)));
            }
            self.pos += 1;
            if vals[idx].is_some() {
                return Err(self.error_at_tok(arg_at, &format!("value for parameter \"{}\" of cursor \"{}\" specified more than once", self.vars[nargs[idx]].name, self.vars[cursor].name)));
            }
            vals[idx] = Some(e);
        }
        for v in vals {
            out.push(v.ok_or_else(|| self.error_here("not enough arguments for cursor"))?);
        }
        Ok(out)
    }

    fn parse_foreach(&mut self, label: Option<String>) -> PgResult<StmtKind> {
        self.pos += 1;
        let target = self.parse_target_list()?;
        let mut slice = 0;
        if self.eat_kw("slice") {
            let t = self.peek().cloned().ok_or_else(|| self.syntax_error_here())?;
            if t.tok != Tok::Number {
                return Err(self.syntax_error_here());
            }
            slice = self.src[t.start..t.end].parse().map_err(|_| self.syntax_error_here())?;
            self.pos += 1;
        }
        self.expect_kw("in")?;
        self.expect_kw("array")?;
        let expr = self.read_expr(&["loop"], &[], "LOOP")?;
        self.pos += 1;
        self.push_scope(label.clone());
        let body = self.parse_loop_body(&label)?;
        self.pop_scope();
        Ok(StmtKind::Foreach { label, target, slice, expr, body })
    }

    fn parse_exit(&mut self, is_exit: bool) -> PgResult<StmtKind> {
        let at = self.pos;
        self.pos += 1;
        let mut label = None;
        if let Some(Tok::Ident { name, .. }) = self.peek().map(|t| t.tok.clone()) {
            if name != "when" {
                self.pos += 1;
                label = Some(name);
            }
        }
        let what = if is_exit { "EXIT" } else { "CONTINUE" };
        match &label {
            Some(l) => match self.labels.iter().rev().find(|(n, _)| n.as_deref() == Some(l.as_str())) {
                None => return Err(self.error_at_tok(at + 1, &format!("there is no label \"{l}\" attached to any block or loop enclosing this statement"))),
                Some((_, false)) if !is_exit => {
                    return Err(self.error_at_tok(at + 1, &format!("block label \"{l}\" cannot be used in CONTINUE")))
                }
                _ => {}
            },
            None => {
                if !self.labels.iter().any(|(_, is_loop)| *is_loop) {
                    return Err(self.error_at_tok(at, &format!("{what} cannot be used outside a loop, unless it has a label")));
                }
            }
        }
        let cond = if self.eat_kw("when") { Some(self.read_expr(&[], &[";"], ";")?) } else { None };
        self.expect_op(";")?;
        Ok(StmtKind::Exit { is_exit, label, cond })
    }

    fn parse_return(&mut self) -> PgResult<StmtKind> {
        self.pos += 1;
        if self.eat_kw("next") {
            if self.eat_op(";") {
                return Ok(StmtKind::ReturnNext(None));
            }
            return Ok(StmtKind::ReturnNext(Some(self.read_expr_semi()?)));
        }
        if self.eat_kw("query") {
            if self.eat_kw("execute") {
                let query = self.read_expr(&["using"], &[";"], ";")?;
                let params = self.parse_using(&[";"])?;
                self.expect_op(";")?;
                return Ok(StmtKind::ReturnQuery(QuerySource::Dynamic { query, params }));
            }
            let (a, b) = self.read_until(&[], &[";"], ";", false)?;
            let e = self.make_expr(a, b, true)?;
            self.pos += 1;
            return Ok(StmtKind::ReturnQuery(QuerySource::Static(e)));
        }
        // make_return_stmt: only an ordinary function's RETURN has a value
        let with_value = |p: &Parser, code: &'static str, msg: &str| -> PgError {
            PgError::new(code, msg.to_string()).with_position(Some(char_pos(p.src, p.toks[p.pos].start)))
        };
        if self.ret != ReturnKind::Value {
            if self.eat_op(";") {
                return Ok(StmtKind::Return(None));
            }
            if self.pos >= self.toks.len() {
                return Err(self.syntax_error_here());
            }
            use tusk_types::sqlstate::{DATATYPE_MISMATCH, SYNTAX_ERROR};
            return Err(match self.ret {
                ReturnKind::Set => with_value(self, DATATYPE_MISMATCH, "RETURN cannot have a parameter in function returning set").with_hint("Use RETURN NEXT or RETURN QUERY."),
                ReturnKind::Procedure => with_value(self, SYNTAX_ERROR, "RETURN cannot have a parameter in a procedure"),
                ReturnKind::Void => with_value(self, DATATYPE_MISMATCH, "RETURN cannot have a parameter in function returning void"),
                _ => with_value(self, DATATYPE_MISMATCH, "RETURN cannot have a parameter in function with OUT parameters"),
            });
        }
        Ok(StmtKind::Return(Some(self.read_expr_semi()?)))
    }

    fn parse_raise(&mut self) -> PgResult<StmtKind> {
        self.pos += 1;
        let mut level = RaiseLevel::Exception;
        let mut condname = None;
        let mut message = None;
        let mut params = Vec::new();
        let mut options = Vec::new();
        if self.eat_op(";") {
            return Ok(StmtKind::Raise { level, condname: None, message: None, params, options });
        }
        for (kw, l) in [
            ("exception", RaiseLevel::Exception),
            ("warning", RaiseLevel::Warning),
            ("notice", RaiseLevel::Notice),
            ("info", RaiseLevel::Info),
            ("log", RaiseLevel::Log),
            ("debug", RaiseLevel::Debug),
        ] {
            if self.eat_kw(kw) {
                level = l;
                break;
            }
        }
        let t = self.peek().cloned().ok_or_else(|| self.syntax_error_here())?;
        if t.tok == Tok::Str {
            let text = &self.src[t.start..t.end];
            if !text.starts_with('\'') && !text.starts_with("E'") && !text.starts_with("e'") && !text.starts_with('$') {
                return Err(self.syntax_error_here());
            }
            self.pos += 1;
            let msg = string_value(text);
            let nplaceholders = count_placeholders(&msg);
            message = Some(msg);
            while self.eat_op(",") {
                params.push(self.read_expr(&["using"], &[",", ";"], ";")?);
            }
            if params.len() > nplaceholders {
                return Err(PgError::syntax("too many parameters specified for RAISE"));
            }
            if params.len() < nplaceholders {
                return Err(PgError::syntax("too few parameters specified for RAISE"));
            }
        } else if !t.is_kw("using") {
            if self.eat_kw("sqlstate") {
                let s = self.peek().cloned().ok_or_else(|| self.syntax_error_here())?;
                if s.tok != Tok::Str {
                    return Err(self.syntax_error_here());
                }
                self.pos += 1;
                let code = unquote(&self.src[s.start..s.end]);
                if code.len() != 5 || !code.bytes().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()) {
                    return Err(PgError::syntax("invalid SQLSTATE code").with_position(Some(char_pos(self.src, s.start))));
                }
                condname = Some(format!("sqlstate:{code}"));
            } else {
                let at = self.pos;
                let name = self.ident_word()?;
                if crate::conditions::lookup(&name).is_none() {
                    return Err(PgError::new(tusk_types::sqlstate::UNDEFINED_OBJECT, format!("unrecognized exception condition \"{name}\""))
                        .with_position(Some(char_pos(self.src, self.toks[at].start))));
                }
                condname = Some(name);
            }
        }
        if self.eat_kw("using") {
            loop {
                let at = self.pos;
                let name = self.ident_word()?;
                let opt = match name.as_str() {
                    "errcode" => RaiseOption::Errcode,
                    "message" => RaiseOption::Message,
                    "detail" => RaiseOption::Detail,
                    "hint" => RaiseOption::Hint,
                    "column" => RaiseOption::Column,
                    "constraint" => RaiseOption::Constraint,
                    "datatype" => RaiseOption::Datatype,
                    "table" => RaiseOption::Table,
                    "schema" => RaiseOption::Schema,
                    _ => return Err(self.error_at_tok(at, &format!("unrecognized RAISE statement option \"{name}\""))),
                };
                if !self.eat_op("=") && !self.eat_op(":=") {
                    return Err(self.syntax_error_here());
                }
                let e = self.read_expr(&[], &[",", ";"], ";")?;
                options.push((opt, e));
                if !self.eat_op(",") {
                    break;
                }
            }
        }
        self.expect_op(";")?;
        if message.is_none() && condname.is_none() && options.is_empty() {
            return Err(self.syntax_error_here_prev());
        }
        Ok(StmtKind::Raise { level, condname, message, params, options })
    }

    fn parse_dynexecute(&mut self) -> PgResult<StmtKind> {
        self.pos += 1;
        let query = self.read_expr(&["into", "using"], &[";"], ";")?;
        let mut into = None;
        let mut params = Vec::new();
        loop {
            if self.eat_kw("into") {
                if into.is_some() {
                    return Err(self.error_here("INTO specified more than once"));
                }
                let strict = self.eat_kw("strict");
                into = Some((self.parse_target_list()?, strict));
            } else if self.peek_kw("using") {
                if !params.is_empty() {
                    return Err(self.error_here("USING specified more than once"));
                }
                params = self.parse_using(&[";", "into"])?;
            } else {
                break;
            }
        }
        self.expect_op(";")?;
        Ok(StmtKind::DynExecute { query, into, params })
    }

    fn parse_getdiag(&mut self) -> PgResult<StmtKind> {
        self.pos += 1;
        let mut stacked = false;
        if self.eat_kw("stacked") {
            stacked = true;
        } else {
            self.eat_kw("current");
        }
        self.expect_kw("diagnostics")?;
        let mut items = Vec::new();
        loop {
            let t = self.parse_target_list_one()?;
            if !self.eat_op("=") && !self.eat_op(":=") {
                return Err(self.syntax_error_here());
            }
            let at = self.pos;
            let kind_word = self.ident_word()?;
            let kind = match kind_word.as_str() {
                "row_count" => DiagKind::RowCount,
                "pg_context" => DiagKind::PgContext,
                "returned_sqlstate" => DiagKind::ReturnedSqlstate,
                "message_text" => DiagKind::MessageText,
                "pg_exception_detail" => DiagKind::PgExceptionDetail,
                "pg_exception_hint" => DiagKind::PgExceptionHint,
                "pg_exception_context" => DiagKind::PgExceptionContext,
                "column_name" => DiagKind::ColumnName,
                "constraint_name" => DiagKind::ConstraintName,
                "pg_datatype_name" => DiagKind::PgDatatypeName,
                "table_name" => DiagKind::TableName,
                "schema_name" => DiagKind::SchemaName,
                _ => return Err(self.error_at_tok(at, "unrecognized GET DIAGNOSTICS item")),
            };
            let current_only = matches!(kind, DiagKind::RowCount);
            let stacked_only = !matches!(kind, DiagKind::RowCount | DiagKind::PgContext);
            if stacked && current_only {
                return Err(self.error_at_tok(at, &format!("diagnostics item {} is not allowed in GET STACKED DIAGNOSTICS", kind_word.to_uppercase())));
            }
            if !stacked && stacked_only {
                return Err(self.error_at_tok(at, &format!("diagnostics item {} is not allowed in GET CURRENT DIAGNOSTICS", kind_word.to_uppercase())));
            }
            items.push((t, kind));
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(";")?;
        Ok(StmtKind::GetDiag { stacked, items })
    }

    fn parse_target_list_one(&mut self) -> PgResult<TargetItem> {
        let at = self.pos;
        let t = self.parse_target_list_single()?;
        if let TargetItem::Var(s) = &t {
            if matches!(self.vars[*s].kind, VarKind::Record) {
                return Err(self.error_at_tok(at, &format!("\"{}\" is not a scalar variable", self.vars[*s].name)));
            }
        }
        Ok(t)
    }

    fn parse_target_list_single(&mut self) -> PgResult<TargetItem> {
        let at = self.pos;
        let name = match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Ident { name, .. }) => name,
            Some(Tok::Param(n)) => format!("${n}"),
            _ => return Err(self.syntax_error_here()),
        };
        self.pos += 1;
        let mut names = vec![name];
        while self.peek_op(".") {
            self.pos += 1;
            names.push(self.ident_word()?);
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        match lookup_names(&self.scopes, self.ns(), &refs) {
            Some((slot, used)) if used == refs.len() => Ok(TargetItem::Var(slot)),
            Some((slot, used)) if used + 1 == refs.len() => Ok(TargetItem::Field(slot, refs[used].to_string())),
            _ => Err(self.error_at_tok(at, &format!("\"{}\" is not a known variable", names.join(".")))),
        }
    }

    fn cursor_var(&mut self) -> PgResult<usize> {
        let at = self.pos;
        let name = match self.peek().map(|t| t.tok.clone()) {
            Some(Tok::Ident { name, .. }) => name,
            Some(Tok::Param(n)) => format!("${n}"),
            _ => return Err(self.syntax_error_here()),
        };
        self.pos += 1;
        match self.lookup(&name) {
            Some(s) if self.vars[s].ty.oid == oid::REFCURSOR => Ok(s),
            Some(_) => Err(self.error_at_tok(at, "cursor variable must be a simple variable")),
            None => Err(self.error_at_tok(at, &format!("\"{name}\" is not a known variable"))),
        }
    }

    fn parse_open(&mut self) -> PgResult<StmtKind> {
        self.pos += 1;
        let at = self.pos;
        let var = self.cursor_var()?;
        let bound = matches!(&self.vars[var].kind, VarKind::Cursor { query: Some(_), .. });
        if bound {
            let args = self.parse_cursor_args(var)?;
            self.expect_op(";")?;
            return Ok(StmtKind::Open { var, source: if args.is_empty() { None } else { Some(QuerySource::Cursor { var, args }) }, scroll: None });
        }
        let mut scroll = None;
        if self.eat_kw("no") {
            self.expect_kw("scroll")?;
            scroll = Some(false);
        } else if self.eat_kw("scroll") {
            scroll = Some(true);
        }
        if !self.eat_kw("for") {
            return Err(self.error_at_tok(at + 1, "syntax error, expected \"FOR\""));
        }
        if self.eat_kw("execute") {
            let query = self.read_expr(&["using"], &[";"], ";")?;
            let params = self.parse_using(&[";"])?;
            self.expect_op(";")?;
            return Ok(StmtKind::Open { var, source: Some(QuerySource::Dynamic { query, params }), scroll });
        }
        let (a, b) = self.read_until(&[], &[";"], ";", false)?;
        let e = self.make_expr(a, b, true)?;
        self.pos += 1;
        Ok(StmtKind::Open { var, source: Some(QuerySource::Static(e)), scroll })
    }

    fn parse_fetch(&mut self, is_move: bool) -> PgResult<StmtKind> {
        self.pos += 1;
        let count_expr = |p: &mut Parser| -> PgResult<Expr> { p.read_expr(&["from", "in"], &[";"], "FROM or IN") };
        let mut direction = FetchSpec::Next;
        let mut need_from = true;
        if self.eat_kw("next") {
        } else if self.eat_kw("prior") {
            direction = FetchSpec::Prior;
        } else if self.eat_kw("first") {
            direction = FetchSpec::First;
        } else if self.eat_kw("last") {
            direction = FetchSpec::Last;
        } else if self.eat_kw("absolute") {
            direction = FetchSpec::Absolute(count_expr(self)?);
        } else if self.eat_kw("relative") {
            direction = FetchSpec::Relative(count_expr(self)?);
        } else if self.eat_kw("all") {
            direction = FetchSpec::ForwardAll;
        } else if self.eat_kw("forward") || self.peek_kw("backward") {
            let back = self.eat_kw("backward");
            if self.eat_kw("all") {
                direction = if back { FetchSpec::BackwardAll } else { FetchSpec::ForwardAll };
            } else if self.peek_kw("from") || self.peek_kw("in") || self.toks.get(self.pos + 1).is_some_and(|t| t.is_op(";")) {
                direction = if back { FetchSpec::Backward(None) } else { FetchSpec::Forward(None) };
            } else {
                let e = count_expr(self)?;
                direction = if back { FetchSpec::Backward(Some(e)) } else { FetchSpec::Forward(Some(e)) };
            }
        } else if matches!(self.peek().map(|t| &t.tok), Some(Tok::Number)) || self.peek_op("-") {
            direction = FetchSpec::Forward(Some(count_expr(self)?));
        } else {
            need_from = false;
        }
        if need_from && !self.eat_kw("from") && !self.eat_kw("in") {
            // the cursor may follow a direction directly
        } else if !need_from {
            let _ = self.eat_kw("from") || self.eat_kw("in");
        }
        let var = self.cursor_var()?;
        let mut target = None;
        if !is_move {
            self.expect_kw("into")?;
            target = Some(self.parse_target_list()?);
            if matches!(direction, FetchSpec::ForwardAll | FetchSpec::BackwardAll) || matches!(&direction, FetchSpec::Forward(Some(_)) | FetchSpec::Backward(Some(_)) if false) {
                return Err(PgError::syntax("FETCH statement cannot return multiple rows"));
            }
        }
        self.expect_op(";")?;
        Ok(StmtKind::Fetch { var, direction, target, is_move })
    }

    fn parse_execsql(&mut self) -> PgResult<StmtKind> {
        let start = self.pos;
        let first = self.peek().cloned().ok_or_else(|| self.syntax_error_here())?;
        let first_word = match &first.tok {
            Tok::Ident { name, quoted: false } => name.clone(),
            _ => String::new(),
        };
        if !is_sql_keyword(&first_word) {
            return Err(self.syntax_error_here());
        }
        let mut into: Option<(Target, bool)> = None;
        let mut into_range = None;
        let mut depth = 0;
        let mut prev_word = String::new();
        loop {
            let Some(t) = self.peek().cloned() else {
                return Err(self.error_here("unexpected end of function definition"));
            };
            if t.is_op(";") && depth == 0 {
                break;
            }
            if t.is_op("(") {
                depth += 1;
            } else if t.is_op(")") {
                depth -= 1;
            }
            if t.is_kw("into") && prev_word != "insert" && prev_word != "merge" && first_word != "import" {
                if into.is_some() {
                    return Err(self.error_here("INTO specified more than once"));
                }
                let into_start = self.pos;
                self.pos += 1;
                let strict = self.eat_kw("strict");
                let target = self.parse_target_list()?;
                into_range = Some((into_start, self.pos));
                into = Some((target, strict));
                prev_word.clear();
                continue;
            }
            prev_word = match &t.tok {
                Tok::Ident { name, quoted: false } => name.clone(),
                _ => String::new(),
            };
            self.pos += 1;
        }
        let end = self.pos;
        self.pos += 1;
        let text = match into_range {
            Some((a, b)) => {
                // the INTO clause is blanked out, keeping positions
                let s = self.toks[start].start;
                let e = self.toks[end - 1].end;
                let ia = self.toks[a].start;
                let ib = if b < self.toks.len() { self.toks[b].start } else { e };
                let mut t = String::new();
                t.push_str(&self.src[s..ia]);
                t.push_str(&" ".repeat(ib - ia));
                if ib < e {
                    t.push_str(&self.src[ib..e]);
                }
                t.trim_end().to_string()
            }
            None => self.text_of(start, end).to_string(),
        };
        self.check_sql(&text, self.toks[start].start, true)?;
        let sql = Expr { text, ns: self.ns(), is_query: true, plan: Default::default() };
        Ok(StmtKind::ExecSql { sql, into })
    }
}

/// Words that start SQL statements PL/pgSQL passes to the SQL engine.
fn is_sql_keyword(w: &str) -> bool {
    matches!(
        w,
        "select" | "insert" | "update" | "delete" | "with" | "values" | "table" | "merge" | "create" | "drop" | "alter" | "truncate"
            | "grant" | "revoke" | "lock" | "set" | "reset" | "show" | "analyze" | "analyse" | "vacuum" | "notify" | "listen" | "unlisten"
            | "comment" | "refresh" | "reindex" | "cluster" | "copy" | "explain" | "discard" | "declare" | "savepoint" | "release"
            | "prepare" | "deallocate" | "import" | "security" | "checkpoint" | "load" | "reassign" | "abort" | "start"
    )
}

/// plpgsql_ns_lookup: the variable a dotted name refers to and how many
/// of its parts that took (the rest select fields of a record).
pub fn lookup_names(scopes: &[Scope], at: NsRef, names: &[&str]) -> Option<(usize, usize)> {
    let mut scope = Some(at.scope);
    let mut visible = at.visible;
    while let Some(s) = scope {
        let sc = &scopes[s];
        let items = &sc.items[..visible.min(sc.items.len())];
        // a variable of this level named by the first part
        if let Some((_, slot)) = items.iter().rev().find(|(n, _)| n == names[0]) {
            return Some((*slot, 1));
        }
        // the level's label qualifying the next part
        if names.len() >= 2 && sc.label.as_deref() == Some(names[0]) {
            if let Some((_, slot)) = items.iter().rev().find(|(n, _)| n == names[1]) {
                return Some((*slot, 2));
            }
        }
        scope = sc.parent;
        visible = usize::MAX;
    }
    None
}

/// The text of a string literal token.
pub fn string_value(tok: &str) -> String {
    if let Some(rest) = tok.strip_prefix('$') {
        let tag_end = rest.find('$').unwrap_or(0);
        let tag_len = tag_end + 2;
        return tok[tag_len..tok.len() - tag_len].to_string();
    }
    if tok.starts_with("E'") || tok.starts_with("e'") {
        let inner = &tok[2..tok.len() - 1];
        let mut out = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some('b') => out.push('\u{8}'),
                    Some('f') => out.push('\u{c}'),
                    Some(o) => out.push(o),
                    None => {}
                }
            } else if c == '\'' {
                chars.next();
                out.push('\'');
            } else {
                out.push(c);
            }
        }
        return out;
    }
    unquote(tok)
}

fn unquote(tok: &str) -> String {
    let t = tok.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    if t.len() >= 2 && t.starts_with('\'') {
        t[1..t.len() - 1].replace("''", "'")
    } else {
        t.to_string()
    }
}

fn count_placeholders(msg: &str) -> usize {
    let b = msg.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if b.get(i + 1) == Some(&b'%') {
                i += 2;
                continue;
            }
            n += 1;
        }
        i += 1;
    }
    n
}
