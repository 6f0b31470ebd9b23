//! EXPLAIN: a plan shown the way PostgreSQL 15's explain.c shows one.
//!
//! Tusk's plan nodes map onto PostgreSQL's vocabulary (Seq Scan, Index
//! Scan, Hash Join, HashAggregate, Sort, ...), so that people and tools
//! that read PostgreSQL plans read Tusk's. Where the trees differ in shape
//! the output follows PostgreSQL's conventions rather than Tusk's
//! internals: a projection is not a node of its own, a filter over a node
//! is printed as that node's `Filter:`, the build side of a hash join sits
//! under a `Hash` node, and the conditions an index scan answers through
//! its key range are its `Index Cond` and not repeated as a filter.
//!
//! Plan expressions refer to their input row by position; they are printed
//! with the names of what each position holds, worked out bottom-up from
//! the leaves (whose range table names the planner keeps in `Label`s).
//!
//! Costs come from a deliberately small model (PostgreSQL's default cost
//! constants over row counts Tusk can see): Tusk's planner does not choose
//! by cost, so the numbers are for orientation. EXPLAIN ANALYZE runs the
//! statement with every node instrumented and reports actual rows, loops
//! and times as PostgreSQL does.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use pg_query::protobuf as pb;
use pg_query::NodeEnum;
use tusk_types::{oid, sqlstate, Datum, PgError, PgResult, SqlType};

use super::{def_elem_value, UtilityResult};
use crate::catalog::{DbCatalog, Relation};
use crate::executor::{ExecCx, NodeStats, StmtState};
use crate::expr::{Expr, SubPlan};
use crate::functions::ruleutils::{Deparser, PlanLabel, PlanRefs};
use crate::functions::{quote_ident, Env};
use crate::parser::ParsedStatement;
use crate::plan::{KeyRange, Label, ModifyKind, OutputColumn, Plan, PlannedQuery, ScanMethod, SortKey};
use crate::query::{JoinKind, SetOpKind};
use crate::session::SqlSession;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Yaml,
    Xml,
}

#[derive(Clone, Debug)]
struct Options {
    analyze: bool,
    verbose: bool,
    costs: bool,
    timing: bool,
    summary: bool,
    format: Format,
}

fn parse_options(opts: &[pb::Node], sql: &str) -> PgResult<Options> {
    let mut o = Options { analyze: false, verbose: false, costs: true, timing: true, summary: false, format: Format::Text };
    let mut timing_set = None;
    let mut summary_set = None;
    for n in opts {
        let Some(NodeEnum::DefElem(de)) = &n.node else { continue };
        let value = def_elem_value(de);
        let boolean = |name: &str| -> PgResult<bool> {
            match value.as_deref().map(|v| v.to_ascii_lowercase()) {
                None => Ok(true),
                Some(v) => match v.as_str() {
                    "true" | "on" | "1" | "yes" => Ok(true),
                    "false" | "off" | "0" | "no" => Ok(false),
                    _ => Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("{name} requires a Boolean value"))
                        .with_position(crate::analyzer::pos(de.location))),
                },
            }
        };
        match de.defname.as_str() {
            "analyze" => o.analyze = boolean("analyze")?,
            "verbose" => o.verbose = boolean("verbose")?,
            "costs" => o.costs = boolean("costs")?,
            "timing" => timing_set = Some(boolean("timing")?),
            "summary" => summary_set = Some(boolean("summary")?),
            // Tusk has no shared buffers or WAL records to count, and no
            // non-default planner settings to list.
            "buffers" | "wal" | "settings" => {
                boolean(&de.defname)?;
            }
            "format" => {
                o.format = match value.as_deref() {
                    Some("text") => Format::Text,
                    Some("json") => Format::Json,
                    Some("yaml") => Format::Yaml,
                    Some("xml") => Format::Xml,
                    other => {
                        return Err(PgError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("unrecognized value for EXPLAIN option \"format\": \"{}\"", other.unwrap_or("")),
                        )
                        .with_position(crate::analyzer::pos(de.location)))
                    }
                }
            }
            other => {
                let _ = sql;
                return Err(PgError::new(sqlstate::SYNTAX_ERROR, format!("unrecognized EXPLAIN option \"{other}\""))
                    .with_position(crate::analyzer::pos(de.location)));
            }
        }
    }
    if timing_set == Some(true) && !o.analyze {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "EXPLAIN option TIMING requires ANALYZE"));
    }
    o.timing = timing_set.unwrap_or(o.analyze);
    o.summary = summary_set.unwrap_or(o.analyze);
    Ok(o)
}

/// The one column EXPLAIN returns.
pub fn result_column() -> OutputColumn {
    OutputColumn { name: "QUERY PLAN".into(), ty: SqlType::new(oid::TEXT), origin: None }
}

/// Runs EXPLAIN.
pub fn explain(s: &SqlSession, e: &pb::ExplainStmt, sql: &str) -> PgResult<UtilityResult> {
    let opts = parse_options(&e.options, sql)?;
    let inner = e.query.as_deref().and_then(|n| n.node.clone()).ok_or_else(|| PgError::internal("EXPLAIN without a statement"))?;
    match &inner {
        NodeEnum::SelectStmt(_) | NodeEnum::InsertStmt(_) | NodeEnum::UpdateStmt(_) | NodeEnum::DeleteStmt(_) => {}
        other => return Err(PgError::unsupported(format!("EXPLAIN of {}", super::command_tag(other)))),
    }
    let stmt = ParsedStatement { node: inner, location: 0, len: sql.len() };
    let plan_start = Instant::now();
    let (planned, _) = s.plan_query(&stmt, sql, &[])?;
    let planning_secs = plan_start.elapsed().as_secs_f64();
    // PostgreSQL checks the statement's privileges even when it only
    // shows the plan (ExecutorStart runs for EXPLAIN too).
    crate::commands::grant::check_relation_privileges(s, &planned.perms)?;

    let mut stats = None;
    let mut execution_secs = 0.0;
    if opts.analyze {
        let state = StmtState { instrument: Some(Default::default()), instrument_timing: opts.timing, ..Default::default() };
        let exec_start = Instant::now();
        let mut run = s.start_query_with(planned.clone(), Vec::new(), state)?;
        run.fetch(s, 0, &mut |_| Ok(()))?;
        execution_secs = exec_start.elapsed().as_secs_f64();
        stats = run.state().instrument.as_ref().map(|m| m.borrow().clone());
    }

    let catalog = s.catalog()?;
    let root = s.with_exec(&catalog, |cx| {
        let mut ex = Explainer::new(cx, &catalog, &planned, &opts, stats.as_ref());
        ex.statement(&planned)
    })?;
    let summary = Summary {
        planning_ms: opts.summary.then_some(planning_secs * 1000.0),
        execution_ms: (opts.summary && opts.analyze).then_some(execution_secs * 1000.0),
    };
    let text = match opts.format {
        Format::Text => render_text(&root, &opts, &summary),
        Format::Json => render_json(&root, &opts, &summary),
        Format::Yaml => render_yaml(&root, &opts, &summary),
        Format::Xml => render_xml(&root, &opts, &summary),
    };
    let rows = if opts.format == Format::Text {
        text.lines().map(|l| vec![Datum::from_string(l.to_string())]).collect()
    } else {
        vec![vec![Datum::from_string(text)]]
    };
    Ok(UtilityResult { tag: "EXPLAIN".into(), rows: Some((vec![result_column()], rows)) })
}

// ------------------------------------------------------------------ the tree

/// A node as EXPLAIN shows it.
#[derive(Debug, Default)]
struct ExNode {
    /// "Node Type" (JSON) and the text header's name.
    node_type: String,
    /// The text header's name when it differs ("Hash Left Join", "HashAggregate").
    text_name: Option<String>,
    /// JSON/YAML properties placed before the costs ("Join Type", "Strategy", ...).
    props: Vec<(&'static str, String)>,
    /// Relation the node scans or modifies, with index and direction.
    relation: Option<Target>,
    est: Estimate,
    actual: Option<NodeStats>,
    /// ("Filter", "(a > 1)"), ("Sort Key", ...) in order.
    details: Vec<Detail>,
    children: Vec<(Relationship, ExNode)>,
}

#[derive(Debug)]
struct Target {
    /// For text: "t", "generate_series", "\"*VALUES*\"".
    object: String,
    /// JSON "Relation Name" / "Function Name" / "CTE Name" key.
    object_key: &'static str,
    alias: String,
    index: Option<String>,
    backward: bool,
}

#[derive(Debug)]
enum Detail {
    Text(&'static str, String),
    List(&'static str, Vec<String>),
    Count(&'static str, u64),
    /// EXPLAIN ANALYZE of a sort: method, "Memory" or "Disk", kB.
    Sort(String, String, u64),
    /// A line of its own in the text format (the tables an UPDATE or
    /// DELETE of an inheritance tree reaches: "Update on c p_2").
    Line(String),
}

/// Adds what a node reported about its run (`Node::explain_info`) to its
/// details, where PostgreSQL prints each.
fn add_info(n: &mut ExNode, a: &NodeStats) {
    // Counts are per loop, as PostgreSQL averages them.
    let loops = a.loops.max(1) as f64;
    let info = &a.info;
    for (k, v) in info {
        match *k {
            "Rows Removed by Filter" => {
                let Some(i) = n.details.iter().position(|d| matches!(d, Detail::Text("Filter", _))) else { continue };
                let total: f64 = v.parse().unwrap_or(0.0);
                n.details.insert(i + 1, Detail::Count(k, (total / loops).round() as u64));
            }
            "Sort Method" => {
                let mut parts = v.split('|');
                let (m, t, kb) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or("0"));
                n.details.push(Detail::Sort(m.into(), t.into(), kb.parse().unwrap_or(0)));
            }
            _ => n.details.push(Detail::Text(k, v.clone())),
        }
    }
}

#[derive(Debug, Clone)]
enum Relationship {
    Outer,
    Inner,
    Member,
    SubPlan(String),
}

impl Relationship {
    fn name(&self) -> &'static str {
        match self {
            Relationship::Outer => "Outer",
            Relationship::Inner => "Inner",
            Relationship::Member => "Member",
            Relationship::SubPlan(_) => "SubPlan",
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Estimate {
    startup: f64,
    total: f64,
    rows: f64,
    width: i64,
}

// PostgreSQL's default cost constants.
const SEQ_PAGE_COST: f64 = 1.0;
const RANDOM_PAGE_COST: f64 = 4.0;
const CPU_TUPLE_COST: f64 = 0.01;
const CPU_INDEX_TUPLE_COST: f64 = 0.005;
const CPU_OPERATOR_COST: f64 = 0.0025;
const PAGE_SIZE: f64 = 8192.0;
/// PostgreSQL's guess at the number of groups when it knows nothing.
const DEFAULT_NUM_GROUPS: f64 = 200.0;
/// Tables are counted up to this many rows for the estimates.
const COUNT_CAP: usize = 100_000;

struct Summary {
    planning_ms: Option<f64>,
    execution_ms: Option<f64>,
}

struct Explainer<'a, 'c> {
    cx: &'a ExecCx<'c>,
    catalog: &'a DbCatalog,
    stats: Option<&'a HashMap<usize, NodeStats>>,
    /// Whether column references are qualified: the plan reads more than
    /// one range table entry (PostgreSQL's useprefix; VERBOSE qualifies scan conditions too).
    prefix: bool,
    verbose: bool,
    next_subplan: usize,
    row_counts: HashMap<u32, f64>,
}

impl<'a, 'c> Explainer<'a, 'c> {
    fn new(cx: &'a ExecCx<'c>, catalog: &'a DbCatalog, planned: &PlannedQuery, opts: &'a Options, stats: Option<&'a HashMap<usize, NodeStats>>) -> Self {
        let mut leaves = 0;
        count_leaves(&planned.plan, &mut leaves);
        for (_, p) in &planned.pre_modify {
            count_leaves(p, &mut leaves);
        }
        Explainer { cx, catalog, stats, prefix: leaves > 1 || planned.range_table_entries > 1, verbose: opts.verbose, next_subplan: 1, row_counts: HashMap::new() }
    }

    fn statement(&mut self, planned: &PlannedQuery) -> PgResult<ExNode> {
        let (mut root, _) = self.node(&planned.plan, &[])?;
        // Data-modifying WITH queries run before the statement; PostgreSQL
        // shows them as CTE subplans of the top node.
        for (i, (_, p)) in planned.pre_modify.iter().enumerate() {
            let (n, _) = self.node(p, &[])?;
            root.children.push((Relationship::SubPlan(format!("CTE {}", i + 1)), n));
        }
        Ok(root)
    }

    fn env(&self) -> &'a dyn Env {
        self.cx.env
    }

    /// Prints `e` over the given input and outer names; subplans it calls
    /// are numbered and returned for the caller to attach.
    fn deparse(&mut self, e: &Expr, input: &[PlanLabel], outer: &[PlanLabel], subplans: &mut Vec<(usize, SubPlan)>) -> String {
        let mut d = Deparser::new(self.env(), false);
        d.plan_refs = Some(PlanRefs { columns: input.to_vec(), outer: outer.to_vec(), subplans: Vec::new(), next_subplan: self.next_subplan });
        let settings = self.cx.env.settings().clone();
        let cx = self.cx;
        d.expr(&e.clone().rewrite(&mut |x| fold_constants(x, &settings, cx)), false);
        let refs = d.plan_refs.take().expect("plan_refs");
        self.next_subplan = refs.next_subplan;
        subplans.extend(refs.subplans);
        d.buf
    }

    fn qualify(&self, refname: &str, col: &str) -> PlanLabel {
        if self.prefix {
            PlanLabel::column(format!("{}.{}", quote_ident(refname), quote_ident(col)))
        } else {
            PlanLabel::column(quote_ident(col))
        }
    }

    fn leaf_labels(&self, label: &Label) -> Vec<PlanLabel> {
        label.columns.iter().map(|c| self.qualify(&label.refname, c)).collect()
    }

    /// Attaches the subplans a node's expressions called, as PostgreSQL
    /// lists them under the node.
    fn attach_subplans(&mut self, node: &mut ExNode, subplans: Vec<(usize, SubPlan)>, input: &[PlanLabel], outer: &[PlanLabel]) -> PgResult<()> {
        for (n, sp) in subplans {
            let mut ignored = Vec::new();
            let args: Vec<PlanLabel> = sp.args.iter().map(|a| PlanLabel::column(self.deparse(a, input, outer, &mut ignored))).collect();
            let (child, _) = self.node(&sp.plan, &args)?;
            node.children.push((Relationship::SubPlan(format!("SubPlan {n}")), child));
        }
        Ok(())
    }

    fn actual(&self, plan: &Plan) -> Option<NodeStats> {
        let stats = self.stats?;
        Some(stats.get(&(plan as *const Plan as usize)).cloned().unwrap_or_default())
    }

    /// One plan node: what EXPLAIN shows, and the names of its output columns.
    fn node(&mut self, plan: &Plan, outer: &[PlanLabel]) -> PgResult<(ExNode, Vec<PlanLabel>)> {
        crate::stack::check()?;
        let mut subplans = Vec::new();
        let (mut node, labels, input_labels) = match plan {
            Plan::Result { exprs, filter } => {
                let mut n = named("Result");
                if let Some(f) = filter {
                    let t = self.deparse(f, &[], outer, &mut subplans);
                    n.details.push(Detail::Text("One-Time Filter", t));
                }
                let labels = exprs.iter().map(|e| self.output_label(e, &[], outer, &mut subplans)).collect();
                n.est = Estimate { startup: 0.0, total: 0.01, rows: 1.0, width: width_of_exprs(exprs) };
                (n, labels, Vec::new())
            }
            Plan::Scan { rel, method, filter, reverse, with_key, system, label, .. } => {
                // The row key and system columns follow the table's columns.
                let mut full = (**label).clone();
                if *with_key {
                    full.columns.push("ctid".into());
                }
                if *system {
                    full.columns.extend(crate::expr::SystemColumn::ALL.iter().map(|sc| sc.name().to_string()));
                }
                let labels = self.leaf_labels(&full);
                let (n, _) = self.scan(rel, method, filter.as_ref(), *reverse, &full, outer, &mut subplans)?;
                (n, labels.clone(), labels)
            }
            Plan::Values { rows, label, .. } => {
                let mut n = named("Values Scan");
                n.relation = Some(Target { object: quote_ident(&label.refname), object_key: "", alias: label.refname.clone(), index: None, backward: false });
                for r in rows {
                    for e in r {
                        self.deparse(e, &[], outer, &mut subplans);
                    }
                }
                let nrows = rows.len() as f64;
                n.est = Estimate { startup: 0.0, total: nrows * CPU_OPERATOR_COST * rows.first().map_or(1, |r| r.len()) as f64, rows: nrows, width: rows.first().map_or(0, |r| width_of_exprs(r)) };
                let labels = self.leaf_labels(label);
                (n, labels.clone(), labels)
            }
            Plan::Function { call, label, .. } => {
                let mut n = named("Function Scan");
                // VERBOSE: the function's schema, and the call itself.
                let fname = match call {
                    Expr::Func { func, .. } => match self.catalog.proc(func.oid).and_then(|p| self.catalog.namespaces.get(&p.namespace)) {
                        Some(ns) if self.verbose => format!("{}.{}", quote_ident(&ns.name), quote_ident(&func.name)),
                        _ => func.name.to_string(),
                    },
                    _ => label.refname.clone(),
                };
                let call_text = self.deparse(call, &[], outer, &mut subplans);
                if self.verbose {
                    n.details.push(Detail::Text("Function Call", call_text));
                }
                n.relation = Some(Target { object: fname, object_key: "Function Name", alias: label.refname.clone(), index: None, backward: false });
                let rows = function_rows(call);
                n.est = Estimate { startup: 0.0, total: rows * CPU_TUPLE_COST, rows, width: width_of(call.ty()) };
                let labels = self.leaf_labels(label);
                (n, labels.clone(), labels)
            }
            Plan::NamedTuplestore { name, label } => {
                let mut n = named("Named Tuplestore Scan");
                n.relation = Some(Target { object: quote_ident(name), object_key: "Tuplestore Name", alias: label.refname.clone(), index: None, backward: false });
                n.est = Estimate { startup: 0.0, total: 10.0 * CPU_TUPLE_COST, rows: 10.0, width: 4 * label.columns.len() as i64 };
                let labels = self.leaf_labels(label);
                (n, labels.clone(), labels)
            }
            Plan::WorkTable { label, .. } => {
                let mut n = named("WorkTable Scan");
                n.relation = Some(Target { object: quote_ident(&label.refname), object_key: "CTE Name", alias: label.refname.clone(), index: None, backward: false });
                n.est = Estimate { startup: 0.0, total: 10.0 * CPU_TUPLE_COST, rows: 10.0, width: 4 * label.columns.len() as i64 };
                let labels = self.leaf_labels(label);
                (n, labels.clone(), labels)
            }
            Plan::Filter { input, predicate } => {
                let (mut child, labels) = self.node(input, outer)?;
                // The condition is evaluated in the child: its outputs are
                // plain names there.
                let bare: Vec<PlanLabel> = match &**input {
                    // A scan's own conditions name its columns unqualified.
                    Plan::Values { label, .. } | Plan::Function { label, .. } | Plan::WorkTable { label, .. } | Plan::NamedTuplestore { label, .. } if !self.verbose => unqualified(label),
                    _ => labels.iter().map(|l| PlanLabel::column(l.text.clone())).collect(),
                };
                let t = self.deparse(predicate, &bare, outer, &mut subplans);
                let sel = selectivity(predicate);
                if child.details.iter().any(|d| matches!(d, Detail::Text("Filter", _))) {
                    let mut n = named("Result");
                    n.details.push(Detail::Text("Filter", t));
                    if let Some(a) = self.actual(plan) {
                        add_info(&mut n, &a);
                    }
                    n.est = child.est;
                    n.est.rows = clamp_rows(child.est.rows * sel);
                    n.children.push((Relationship::Outer, child));
                    n.actual = self.actual(plan);
                    self.attach_subplans(&mut n, subplans, &labels, outer)?;
                    return Ok((n, labels));
                }
                child.details.push(Detail::Text("Filter", t));
                if let Some(a) = self.actual(plan) {
                    add_info(&mut child, &a);
                }
                child.est.total += child.est.rows * CPU_OPERATOR_COST;
                child.est.rows = clamp_rows(child.est.rows * sel);
                // The filter's node reports the rows that passed it.
                if let Some(a) = self.actual(plan) {
                    if let Some(c) = child.actual.as_mut() {
                        c.rows = a.rows;
                    }
                }
                self.attach_subplans(&mut child, subplans, &labels, outer)?;
                return Ok((child, labels));
            }
            Plan::Project { input, exprs } => {
                let (mut child, in_labels) = self.node(input, outer)?;
                let labels: Vec<PlanLabel> = exprs.iter().map(|e| self.output_label(e, &in_labels, outer, &mut subplans)).collect();
                child.est.width = width_of_exprs(exprs);
                if self.verbose {
                    set_output(&mut child, &labels);
                }
                self.attach_subplans(&mut child, subplans, &in_labels, outer)?;
                return Ok((child, labels));
            }
            Plan::ProjectSet { input, exprs, .. } => {
                let (child, in_labels) = self.node(input, outer)?;
                let labels: Vec<PlanLabel> = exprs.iter().map(|e| self.output_label(e, &in_labels, outer, &mut subplans)).collect();
                let mut n = named("ProjectSet");
                n.est = child.est;
                n.est.rows = clamp_rows(child.est.rows * 10.0);
                n.est.total += n.est.rows * CPU_TUPLE_COST;
                n.est.width = width_of_exprs(exprs);
                n.children.push((Relationship::Outer, child));
                (n, labels, in_labels)
            }
            Plan::NestedLoop { left, right, kind, predicate, .. } => {
                let (l, ll) = self.node(left, outer)?;
                let (r, rl) = self.node(right, outer)?;
                let left_len = ll.len();
                let mut labels = ll;
                labels.extend(rl);
                let mut n = named("Nested Loop");
                n.text_name = Some(join_name("Nested Loop", *kind));
                n.props.push(("Join Type", join_type(*kind).into()));
                if let Some(p) = predicate {
                    let t = self.deparse(p, &labels, outer, &mut subplans);
                    n.details.push(Detail::Text("Join Filter", t));
                }
                let rows = join_rows(*kind, l.est.rows, r.est.rows, predicate.as_ref().map_or(1.0, selectivity));
                n.est = Estimate {
                    startup: l.est.startup + r.est.startup,
                    total: l.est.total + l.est.rows * (r.est.total - r.est.startup).max(r.est.rows * CPU_OPERATOR_COST) + rows * CPU_TUPLE_COST,
                    rows,
                    width: l.est.width + r.est.width,
                };
                n.children.push((Relationship::Outer, l));
                n.children.push((Relationship::Inner, r));
                (n, join_output(*kind, &labels, left_len), labels)
            }
            Plan::LateralLoop { left, right, args, kind, predicate, .. } => {
                let (l, ll) = self.node(left, outer)?;
                let arg_labels: Vec<PlanLabel> = args.iter().map(|a| PlanLabel::column(self.deparse(a, &ll, outer, &mut subplans))).collect();
                let (r, rl) = self.node(right, &arg_labels)?;
                let left_len = ll.len();
                let mut labels = ll;
                labels.extend(rl);
                let mut n = named("Nested Loop");
                n.text_name = Some(join_name("Nested Loop", *kind));
                n.props.push(("Join Type", join_type(*kind).into()));
                if let Some(p) = predicate {
                    let t = self.deparse(p, &labels, outer, &mut subplans);
                    n.details.push(Detail::Text("Join Filter", t));
                }
                let rows = clamp_rows(l.est.rows * r.est.rows);
                n.est = Estimate { startup: l.est.startup + r.est.startup, total: l.est.total + l.est.rows * r.est.total, rows, width: l.est.width + r.est.width };
                n.children.push((Relationship::Outer, l));
                n.children.push((Relationship::Inner, r));
                (n, join_output(*kind, &labels, left_len), labels)
            }
            Plan::HashJoin { left, right, kind, left_keys, right_keys, predicate, .. } => {
                let (l, ll) = self.node(left, outer)?;
                let (r, rl) = self.node(right, outer)?;
                let mut conds = Vec::new();
                for (a, b) in left_keys.iter().zip(right_keys) {
                    let a = self.deparse(a, &ll, outer, &mut subplans);
                    let b = self.deparse(b, &rl, outer, &mut subplans);
                    conds.push(format!("({a} = {b})"));
                }
                let left_len = ll.len();
                let mut labels = ll;
                labels.extend(rl);
                let mut n = named("Hash Join");
                n.text_name = Some(join_name("Hash", *kind));
                n.props.push(("Join Type", join_type(*kind).into()));
                n.details.push(Detail::Text("Hash Cond", and_text(conds)));
                if let Some(p) = predicate {
                    let t = self.deparse(p, &labels, outer, &mut subplans);
                    n.details.push(Detail::Text("Join Filter", t));
                }
                let rows = join_rows(*kind, l.est.rows, r.est.rows, 1.0 / l.est.rows.max(r.est.rows).max(1.0));
                let mut hash = named("Hash");
                hash.est = Estimate { startup: r.est.total, total: r.est.total, rows: r.est.rows, width: r.est.width };
                hash.actual = self.actual(right).map(|mut a| {
                    a.startup_secs = a.total_secs;
                    a.rows = self.actual(right).map_or(0, |x| x.rows);
                    a
                });
                n.est = Estimate {
                    startup: r.est.total + r.est.rows * CPU_OPERATOR_COST,
                    total: l.est.total + r.est.total + (l.est.rows + r.est.rows) * CPU_OPERATOR_COST + rows * CPU_TUPLE_COST,
                    rows,
                    width: l.est.width + r.est.width,
                };
                hash.children.push((Relationship::Outer, r));
                n.children.push((Relationship::Outer, l));
                n.children.push((Relationship::Inner, hash));
                (n, join_output(*kind, &labels, left_len), labels)
            }
            Plan::Agg { input, group, aggs } => {
                let (child, in_labels) = self.node(input, outer)?;
                let mut labels = Vec::new();
                let mut keys = Vec::new();
                for g in group {
                    let l = self.output_label(g, &in_labels, outer, &mut subplans);
                    keys.push(if l.is_column { l.text.clone() } else { format!("({})", l.text) });
                    labels.push(l);
                }
                for a in aggs {
                    labels.push(self.output_label(&Expr::Agg(Box::new(a.clone())), &in_labels, outer, &mut subplans));
                }
                let mut n = named("Aggregate");
                if group.is_empty() {
                    n.props.push(("Strategy", "Plain".into()));
                } else {
                    n.text_name = Some("HashAggregate".into());
                    n.props.push(("Strategy", "Hashed".into()));
                }
                n.props.push(("Partial Mode", "Simple".into()));
                if !keys.is_empty() {
                    n.details.push(Detail::List("Group Key", keys));
                }
                let rows = if group.is_empty() { 1.0 } else { child.est.rows.min(DEFAULT_NUM_GROUPS) };
                let cost = child.est.rows * CPU_OPERATOR_COST * (group.len() + aggs.len()).max(1) as f64;
                n.est = Estimate {
                    startup: child.est.total + cost,
                    total: child.est.total + cost + rows * CPU_TUPLE_COST,
                    rows: clamp_rows(rows),
                    width: labels.len() as i64 * 8,
                };
                n.children.push((Relationship::Outer, child));
                (n, labels, in_labels)
            }
            Plan::WindowAgg { input, funcs, .. } => {
                let (child, in_labels) = self.node(input, outer)?;
                let mut labels = in_labels.clone();
                for w in funcs {
                    labels.push(self.output_label(&Expr::Window(Box::new(w.clone())), &in_labels, outer, &mut subplans));
                }
                let mut n = named("WindowAgg");
                n.est = child.est;
                n.est.total += child.est.rows * CPU_OPERATOR_COST * funcs.len() as f64;
                n.est.width += 8 * funcs.len() as i64;
                n.children.push((Relationship::Outer, child));
                (n, labels, in_labels)
            }
            Plan::Sort { input, keys } => {
                let (child, labels) = self.node(input, outer)?;
                let mut n = named("Sort");
                let ks = self.sort_keys(keys, &labels, outer, &mut subplans);
                n.details.push(Detail::List("Sort Key", ks));
                let rows = child.est.rows.max(2.0);
                let sort = 2.0 * CPU_OPERATOR_COST * rows * rows.log2();
                n.est = Estimate { startup: child.est.total + sort, total: child.est.total + sort + child.est.rows * CPU_OPERATOR_COST, rows: child.est.rows, width: child.est.width };
                n.children.push((Relationship::Outer, child));
                (n, labels.clone(), labels)
            }
            Plan::Limit { input, limit, offset, .. } => {
                let (child, labels) = self.node(input, outer)?;
                let mut n = named("Limit");
                for e in limit.iter().chain(offset.iter()) {
                    self.deparse(e, &labels, outer, &mut subplans);
                }
                let count = match limit {
                    Some(Expr::Const(d, _)) => d.as_i64().map(|v| v as f64),
                    _ => None,
                };
                let rows = count.map_or(child.est.rows * 0.1, |c| c.min(child.est.rows));
                let frac = if child.est.rows > 0.0 { (rows / child.est.rows).min(1.0) } else { 1.0 };
                n.est = Estimate { startup: child.est.startup, total: child.est.startup + (child.est.total - child.est.startup) * frac, rows: clamp_rows(rows), width: child.est.width };
                n.children.push((Relationship::Outer, child));
                (n, labels.clone(), labels)
            }
            Plan::Distinct { input, on } => {
                let sorted = matches!(**input, Plan::Sort { .. });
                let (child, labels) = self.node(input, outer)?;
                let mut n;
                if sorted {
                    // DISTINCT ON: the first row of each group of sorted input.
                    n = named("Unique");
                } else {
                    n = named("Aggregate");
                    n.text_name = Some("HashAggregate".into());
                    n.props.push(("Strategy", "Hashed".into()));
                    n.props.push(("Partial Mode", "Simple".into()));
                    let cols: Vec<usize> = on.clone().unwrap_or_else(|| (0..labels.len()).collect());
                    let keys = cols.iter().filter_map(|&c| labels.get(c)).map(|l| if l.is_column { l.text.clone() } else { format!("({})", l.text) }).collect();
                    n.details.push(Detail::List("Group Key", keys));
                }
                n.est = child.est;
                n.est.rows = clamp_rows(child.est.rows.min(DEFAULT_NUM_GROUPS));
                n.est.total += child.est.rows * CPU_OPERATOR_COST;
                n.children.push((Relationship::Outer, child));
                (n, labels.clone(), labels)
            }
            Plan::SetOp { kind, all, left, right } => {
                let (l, ll) = self.node(left, outer)?;
                let (r, _) = self.node(right, outer)?;
                let command = match (kind, all) {
                    (SetOpKind::Union, false) => "Union",
                    (SetOpKind::Union, true) => "Union All",
                    (SetOpKind::Intersect, false) => "Intersect",
                    (SetOpKind::Intersect, true) => "Intersect All",
                    (SetOpKind::Except, false) => "Except",
                    (SetOpKind::Except, true) => "Except All",
                };
                let mut n = named("SetOp");
                n.text_name = Some(format!("HashSetOp {command}"));
                n.props.push(("Strategy", "Hashed".into()));
                n.props.push(("Command", command.into()));
                n.est = Estimate {
                    startup: l.est.total + r.est.total,
                    total: l.est.total + r.est.total + (l.est.rows + r.est.rows) * CPU_OPERATOR_COST,
                    rows: clamp_rows(l.est.rows.max(r.est.rows)),
                    width: l.est.width,
                };
                n.children.push((Relationship::Outer, l));
                n.children.push((Relationship::Inner, r));
                (n, ll.clone(), ll)
            }
            Plan::Append { inputs, label } => {
                let mut n = named("Append");
                let mut labels = None;
                for p in inputs {
                    let (c, l) = self.node(p, outer)?;
                    n.est.startup = if labels.is_none() { c.est.startup } else { n.est.startup };
                    n.est.total += c.est.total;
                    n.est.rows += c.est.rows;
                    n.est.width = n.est.width.max(c.est.width);
                    labels.get_or_insert(l);
                    n.children.push((Relationship::Member, c));
                }
                // An inherited table's rows are named after the parent's.
                let labels = match label {
                    Some(l) => self.leaf_labels(l),
                    None => labels.unwrap_or_default(),
                };
                (n, labels.clone(), labels)
            }
            Plan::RecursiveUnion { base, recursive, .. } => {
                let (b, bl) = self.node(base, outer)?;
                let (r, _) = self.node(recursive, outer)?;
                let mut n = named("Recursive Union");
                n.est = Estimate { startup: b.est.startup, total: b.est.total + 10.0 * r.est.total, rows: clamp_rows(b.est.rows + 10.0 * r.est.rows), width: b.est.width };
                n.children.push((Relationship::Outer, b));
                n.children.push((Relationship::Inner, r));
                (n, bl.clone(), bl)
            }
            Plan::Materialize { input } => {
                let (child, labels) = self.node(input, outer)?;
                let mut n = named("Materialize");
                n.est = child.est;
                n.est.total += 2.0 * CPU_OPERATOR_COST * child.est.rows;
                n.children.push((Relationship::Outer, child));
                (n, labels.clone(), labels)
            }
            Plan::Modify { kind, rel, input, on_conflict, returning, inherited, .. } => {
                let (child, in_labels) = self.node(input, outer)?;
                let (verb, op) = match kind {
                    ModifyKind::Insert => ("Insert", "Insert"),
                    ModifyKind::Update => ("Update", "Update"),
                    ModifyKind::Delete => ("Delete", "Delete"),
                };
                let mut n = named("ModifyTable");
                n.text_name = Some(verb.into());
                n.props.push(("Operation", op.into()));
                n.relation = Some(Target { object: self.relation_text(rel), object_key: "Relation Name", alias: rel.name.clone(), index: None, backward: false });
                if let Some(oc) = on_conflict {
                    n.details.push(Detail::Text("Conflict Resolution", if oc.do_update { "UPDATE" } else { "NOTHING" }.into()));
                    let arbiters: Vec<String> = match oc.arbiter {
                        Some(i) => self.catalog.relation(i).map(|r| vec![r.name.clone()]).unwrap_or_default(),
                        None => self.catalog.indexes_of(rel).filter(|i| i.index.as_ref().is_some_and(|x| x.unique)).map(|i| i.name.clone()).collect(),
                    };
                    n.details.push(Detail::List("Conflict Arbiter Indexes", arbiters));
                }
                // Each table of an inheritance tree, as its scan names it.
                for (i, m) in inherited.iter().enumerate() {
                    n.details.push(Detail::Line(format!("{verb} on {} {}_{}", self.relation_text(&m.rel), quote_ident(&rel.name), i + 1)));
                }
                let labels: Vec<PlanLabel> = returning.iter().map(|e| self.output_label(e, &in_labels, outer, &mut subplans)).collect();
                n.est = Estimate { startup: child.est.startup, total: child.est.total + child.est.rows * CPU_TUPLE_COST, rows: 0.0, width: width_of_exprs(returning) };
                n.children.push((Relationship::Outer, child));
                (n, labels, in_labels)
            }
            Plan::LockRows { input, .. } => {
                let (child, labels) = self.node(input, outer)?;
                let mut n = named("LockRows");
                n.est = child.est;
                n.est.total += child.est.rows * CPU_TUPLE_COST;
                n.children.push((Relationship::Outer, child));
                (n, labels.clone(), labels)
            }
        };
        node.actual = self.actual(plan);
        if let Some(a) = node.actual.clone() {
            add_info(&mut node, &a);
            // A Bitmap Heap Scan's index scan runs when it does.
            if node.node_type == "Bitmap Heap Scan" {
                for (_, c) in &mut node.children {
                    c.actual = Some(a.clone());
                }
            }
        }
        if self.verbose {
            set_output(&mut node, &labels);
        }
        self.attach_subplans(&mut node, subplans, &input_labels, outer)?;
        Ok((node, labels))
    }

    /// The name of an output column computed by `e` over the input.
    fn output_label(&mut self, e: &Expr, input: &[PlanLabel], outer: &[PlanLabel], subplans: &mut Vec<(usize, SubPlan)>) -> PlanLabel {
        match e {
            Expr::Column(i, _) => input.get(*i).cloned().unwrap_or_else(|| PlanLabel::column("?column?".into())),
            _ => PlanLabel::expr(self.deparse(e, input, outer, subplans)),
        }
    }

    fn sort_keys(&mut self, keys: &[SortKey], labels: &[PlanLabel], outer: &[PlanLabel], subplans: &mut Vec<(usize, SubPlan)>) -> Vec<String> {
        keys.iter()
            .map(|k| {
                let l = self.output_label(&k.expr, labels, outer, subplans);
                let mut s = if l.is_column { l.text } else { format!("({})", l.text) };
                if k.descending {
                    s.push_str(" DESC");
                    if !k.nulls_first {
                        s.push_str(" NULLS LAST");
                    }
                } else if k.nulls_first {
                    s.push_str(" NULLS FIRST");
                }
                s
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn scan(
        &mut self,
        rel: &Arc<Relation>,
        method: &ScanMethod,
        filter: Option<&Expr>,
        reverse: bool,
        label: &Label,
        outer: &[PlanLabel],
        subplans: &mut Vec<(usize, SubPlan)>,
    ) -> PgResult<(ExNode, ())> {
        let table_rows = self.table_rows(rel);
        let width = rel.live_columns().map(|(_, c)| width_of(SqlType::new(c.type_oid))).sum::<i64>();
        let pages = (table_rows * (width as f64 + 24.0) / PAGE_SIZE).ceil().max(1.0);
        // PostgreSQL qualifies a scan's own conditions only in VERBOSE.
        let bare: Vec<PlanLabel> = if self.verbose { qualified(label) } else { unqualified(label) };
        let object = self.relation_text(rel);
        let target = |index: Option<String>, backward: bool| Target {
            object: object.clone(),
            object_key: "Relation Name",
            alias: label.refname.clone(),
            index,
            backward,
        };
        let mut n;
        let mut index_conds = Vec::new();
        let mut recheck_conds = Vec::new();
        let mut est_rows;
        match method {
            ScanMethod::Gin { index, conds } => {
                n = named("Bitmap Heap Scan");
                n.relation = Some(target(None, false));
                recheck_conds = conds.iter().map(|c| self.deparse(&c.qual, &bare, outer, subplans)).collect();
                n.details.push(Detail::Text("Recheck Cond", and_text(recheck_conds.clone())));
                est_rows = (table_rows * 0.01).max(1.0);
                let mut child = named("Bitmap Index Scan");
                child.relation = Some(Target { object: quote_ident(&index.name), object_key: "Index Name", alias: String::new(), index: None, backward: false });
                // The index condition has the indexed column on the left
                // (a commuted `value <@ col` reads `col @> value`).
                let mut index_texts = Vec::with_capacity(conds.len());
                for (c, text) in conds.iter().zip(&recheck_conds) {
                    match &c.qual {
                        Expr::Func { args, .. } if args.len() == 2 && c.commuted => {
                            let col = self.deparse(&args[1], &bare, outer, subplans);
                            let value = self.deparse(&args[0], &bare, outer, subplans);
                            index_texts.push(format!("({col} {} {value})", c.op.operator_name()));
                        }
                        _ => index_texts.push(text.clone()),
                    }
                }
                child.details.push(Detail::Text("Index Cond", and_text(index_texts)));
                child.est = Estimate { startup: 0.0, total: 12.0 * recheck_conds.len() as f64, rows: clamp_rows(est_rows), width: 0 };
                n.children.push((Relationship::Outer, child));
            }
            ScanMethod::Full if reverse => {
                n = named("Index Scan");
                n.relation = Some(target(self.primary_index_name(rel), true));
                est_rows = table_rows;
            }
            ScanMethod::Full => {
                n = named("Seq Scan");
                n.relation = Some(target(None, false));
                est_rows = table_rows;
            }
            ScanMethod::PrimaryKey(range) | ScanMethod::Index { range, .. } => {
                let (index_name, cols, unique) = match method {
                    ScanMethod::Index { index, .. } => (Some(index.name.clone()), index_key_columns(index), index.index.as_ref().is_some_and(|i| i.unique)),
                    _ => {
                        let pk = rel.primary_key().map(|c| c.columns.clone()).unwrap_or_default();
                        (self.primary_index_name(rel), pk, true)
                    }
                };
                n = named("Index Scan");
                n.relation = Some(target(index_name, reverse));
                let keys = self.key_labels(rel, method, &cols, &bare, outer, subplans);
                index_conds = self.range_conds(&keys, range, &bare, outer, subplans);
                est_rows = if unique && range.eq.len() == cols.len() && range.lower.is_none() && range.upper.is_none() {
                    1.0
                } else if !range.eq.is_empty() {
                    (table_rows * 0.005).max(1.0)
                } else {
                    (table_rows / 3.0).max(1.0)
                };
            }
            ScanMethod::KeyList { index, values } => {
                let (index_name, cols) = match index {
                    Some(i) => (Some(i.name.clone()), index_key_columns(i)),
                    None => (self.primary_index_name(rel), rel.primary_key().map(|c| c.columns.clone()).unwrap_or_default()),
                };
                n = named("Index Scan");
                n.relation = Some(target(index_name, false));
                let col = self.key_labels(rel, method, &cols, &bare, outer, subplans).into_iter().next().unwrap_or_default();
                let v = self.deparse(values, &bare, outer, subplans);
                index_conds.push(format!("({col} = ANY ({v}))"));
                est_rows = match values {
                    Expr::Const(Datum::Array(a), _) => a.elements.len() as f64,
                    Expr::Array { elements, .. } => elements.len() as f64,
                    _ => 10.0,
                };
            }
        }
        let is_index = !matches!(method, ScanMethod::Full) || reverse;
        if !index_conds.is_empty() {
            n.details.push(Detail::Text("Index Cond", and_text(index_conds.clone())));
        }
        if let Some(f) = filter {
            // Conditions the key range answers are not repeated.
            let mut rest = Vec::new();
            for c in conjuncts(f) {
                let t = self.deparse(c, &bare, outer, subplans);
                if !index_conds.contains(&t) && !recheck_conds.contains(&t) {
                    rest.push((t, c));
                }
            }
            if !rest.is_empty() {
                let sel: f64 = rest.iter().map(|(_, c)| selectivity(c)).product();
                est_rows *= sel;
                n.details.push(Detail::Text("Filter", and_text(rest.into_iter().map(|(t, _)| t).collect())));
            }
        }
        let est_rows = clamp_rows(est_rows);
        n.est = if is_index {
            let fetched = est_rows.max(1.0);
            Estimate {
                startup: 0.15 + 0.14 * (table_rows.max(2.0).log2() / 8.0).min(1.0),
                total: 8.15 + fetched * (RANDOM_PAGE_COST * 0.1 + CPU_INDEX_TUPLE_COST + CPU_TUPLE_COST),
                rows: est_rows,
                width,
            }
        } else {
            let quals = filter.map_or(0, |f| conjuncts(f).len()) as f64;
            Estimate { startup: 0.0, total: pages * SEQ_PAGE_COST + table_rows * (CPU_TUPLE_COST + quals * CPU_OPERATOR_COST), rows: est_rows, width }
        };
        Ok((n, ()))
    }

    /// A relation's name in a node's header: schema-qualified in VERBOSE.
    fn relation_text(&self, rel: &Relation) -> String {
        match self.catalog.namespaces.get(&rel.namespace) {
            Some(ns) if self.verbose => format!("{}.{}", quote_ident(&ns.name), quote_ident(&rel.name)),
            _ => quote_ident(&rel.name),
        }
    }

    fn primary_index_name(&self, rel: &Relation) -> Option<String> {
        self.catalog.indexes_of(rel).find(|i| i.index.as_ref().is_some_and(|x| x.clustered || x.primary)).map(|i| i.name.clone())
    }

    /// A table column's name by attribute number, as the scan's labels print it.
    fn column_label(&self, rel: &Relation, attnum: i16, labels: &[PlanLabel]) -> String {
        let pos = rel.live_columns().position(|(a, _)| a == attnum);
        pos.and_then(|p| labels.get(p)).map(|l| l.text.clone()).unwrap_or_else(|| "?column?".into())
    }

    /// How an Index Cond names each key of the scan's index: a column's
    /// label, or an expression key deparsed over the scan's columns.
    fn key_labels(&mut self, rel: &Relation, method: &ScanMethod, cols: &[i16], labels: &[PlanLabel], outer: &[PlanLabel], subplans: &mut Vec<(usize, SubPlan)>) -> Vec<String> {
        let index = match method {
            ScanMethod::Index { index, .. } | ScanMethod::KeyList { index: Some(index), .. } => Some(index.oid),
            _ => None,
        };
        let exprs = if cols.contains(&0) { crate::planner::expression_keys(self.catalog, rel) } else { Vec::new() };
        let mut out = Vec::with_capacity(cols.len());
        for (i, &a) in cols.iter().enumerate() {
            match exprs.iter().find(|k| a == 0 && Some(k.index) == index && k.key == i) {
                Some(k) => {
                    let e = k.expr.clone();
                    out.push(self.deparse(&e, labels, outer, subplans));
                }
                None => out.push(self.column_label(rel, a, labels)),
            }
        }
        out
    }

    fn range_conds(&mut self, keys: &[String], range: &KeyRange, labels: &[PlanLabel], outer: &[PlanLabel], subplans: &mut Vec<(usize, SubPlan)>) -> Vec<String> {
        let mut out = Vec::new();
        for (i, v) in range.eq.iter().enumerate() {
            let Some(c) = keys.get(i) else { break };
            let v = self.deparse(v, labels, outer, subplans);
            out.push(format!("({c} = {v})"));
        }
        if let Some(c) = keys.get(range.eq.len()) {
            if let Some((v, incl)) = &range.lower {
                let v = self.deparse(v, labels, outer, subplans);
                out.push(format!("({c} {} {v})", if *incl { ">=" } else { ">" }));
            }
            if let Some((v, incl)) = &range.upper {
                let v = self.deparse(v, labels, outer, subplans);
                out.push(format!("({c} {} {v})", if *incl { "<=" } else { "<" }));
            }
        }
        out
    }

    /// Rows in a table, counted up to COUNT_CAP (Tusk keeps no statistics yet).
    fn table_rows(&mut self, rel: &Relation) -> f64 {
        if let Some(&n) = self.row_counts.get(&rel.oid) {
            return n;
        }
        let lower = tusk_storage::keys::storage_prefix(rel.storage_id);
        let upper = tusk_storage::keys::prefix_end(&lower);
        let mut count = 0usize;
        let txn = self.cx.txn;
        if let Some(mut stream) = txn.scan_stream(&lower, &upper, false) {
            while count < COUNT_CAP {
                match stream.next_batch(1024, &mut |_, _| Ok(())) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => count += k,
                }
            }
        } else if let Ok(kvs) = txn.scan_latest(&lower, &upper, false, 10_000) {
            // An estimate: newest rows, and no SIREAD lock (EXPLAIN reads no data in PostgreSQL).
            count = kvs.len();
        }
        let n = count as f64;
        self.row_counts.insert(rel.oid, n);
        n
    }
}

/// VERBOSE: the node's output columns, first among its details.
fn set_output(n: &mut ExNode, labels: &[PlanLabel]) {
    let out = Detail::List("Output", labels.iter().map(|l| l.text.clone()).collect());
    match n.details.iter().position(|d| matches!(d, Detail::List("Output", _))) {
        Some(i) => n.details[i] = out,
        None => n.details.insert(0, out),
    }
}

fn qualified(label: &Label) -> Vec<PlanLabel> {
    label.columns.iter().map(|c| PlanLabel::column(format!("{}.{}", quote_ident(&label.refname), quote_ident(c)))).collect()
}

fn unqualified(label: &Label) -> Vec<PlanLabel> {
    label.columns.iter().map(|c| PlanLabel::column(quote_ident(c))).collect()
}

fn named(node_type: &str) -> ExNode {
    ExNode { node_type: node_type.into(), ..Default::default() }
}

fn count_leaves(plan: &Plan, n: &mut usize) {
    match plan {
        Plan::Scan { .. } | Plan::Values { .. } | Plan::Function { .. } | Plan::WorkTable { .. } | Plan::NamedTuplestore { .. } => *n += 1,
        _ => {}
    }
    plan_children(plan, &mut |c| count_leaves(c, n));
    plan_exprs(plan, &mut |e| {
        e.walk(&mut |x| {
            if let Expr::SubPlan(sp) = x {
                count_leaves(&sp.plan, n);
            }
        })
    });
}

fn plan_children(plan: &Plan, f: &mut dyn FnMut(&Plan)) {
    match plan {
        Plan::Result { .. } | Plan::Scan { .. } | Plan::Values { .. } | Plan::Function { .. } | Plan::WorkTable { .. } | Plan::NamedTuplestore { .. } => {}
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::ProjectSet { input, .. }
        | Plan::Agg { input, .. }
        | Plan::WindowAgg { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::Distinct { input, .. }
        | Plan::Materialize { input }
        | Plan::Modify { input, .. }
        | Plan::LockRows { input, .. } => f(input),
        Plan::NestedLoop { left, right, .. } | Plan::HashJoin { left, right, .. } | Plan::SetOp { left, right, .. } => {
            f(left);
            f(right);
        }
        Plan::LateralLoop { left, right, .. } => {
            f(left);
            f(right);
        }
        Plan::RecursiveUnion { base, recursive, .. } => {
            f(base);
            f(recursive);
        }
        Plan::Append { inputs, .. } => inputs.iter().for_each(f),
    }
}

/// The expressions a node evaluates itself (for finding its subplans).
fn plan_exprs(plan: &Plan, f: &mut dyn FnMut(&Expr)) {
    match plan {
        Plan::Result { exprs, filter } => {
            exprs.iter().for_each(&mut *f);
            filter.iter().for_each(f);
        }
        Plan::Scan { filter, .. } => filter.iter().for_each(f),
        Plan::Values { rows, .. } => rows.iter().flatten().for_each(f),
        Plan::Function { call, .. } => f(call),
        Plan::Filter { predicate, .. } => f(predicate),
        Plan::Project { exprs, .. } | Plan::ProjectSet { exprs, .. } => exprs.iter().for_each(f),
        Plan::NestedLoop { predicate, .. } => predicate.iter().for_each(f),
        Plan::LateralLoop { args, predicate, .. } => {
            args.iter().for_each(&mut *f);
            predicate.iter().for_each(f);
        }
        Plan::HashJoin { left_keys, right_keys, predicate, .. } => {
            left_keys.iter().chain(right_keys).for_each(&mut *f);
            predicate.iter().for_each(f);
        }
        Plan::Agg { group, .. } => group.iter().for_each(f),
        Plan::Sort { keys, .. } => keys.iter().for_each(|k| f(&k.expr)),
        Plan::Modify { returning, .. } => returning.iter().for_each(f),
        _ => {}
    }
}

/// Constants as PostgreSQL's planner folds them before EXPLAIN prints
/// them: casts of constants, and arrays of constants.
fn fold_constants(e: Expr, settings: &crate::settings::Settings, cx: &ExecCx) -> Expr {
    match e {
        Expr::Func { ref func, ref args, ty } if func.volatility == 'i' && !args.is_empty() && args.iter().all(|a| matches!(a, Expr::Const(..))) => {
            match crate::executor::eval(&e, &[], cx) {
                Ok(v) => Expr::Const(v, ty),
                Err(_) => e,
            }
        }
        Expr::Cast { arg, spec } => match *arg {
            Expr::Const(d, from) => match crate::functions::cast::cast_datum(d.clone(), from, spec.to, spec.explicit, settings) {
                Ok(v) => Expr::Const(v, spec.to),
                Err(_) => Expr::Cast { arg: Box::new(Expr::Const(d, from)), spec },
            },
            other => Expr::Cast { arg: Box::new(other), spec },
        },
        other => fold_const_array(&other),
    }
}

/// `ARRAY[1, 2, 3]` of constants as the constant PostgreSQL folds it to.
fn fold_const_array(e: &Expr) -> Expr {
    if let Expr::Array { elem, elements, ty } = e {
        if elements.iter().all(|x| matches!(x, Expr::Const(..))) {
            let vals = elements.iter().map(|x| if let Expr::Const(d, _) = x { d.clone() } else { Datum::Null }).collect();
            return Expr::Const(Datum::Array(Arc::new(tusk_types::array::Array::from_vec(elem.oid, vals))), *ty);
        }
    }
    e.clone()
}

fn index_key_columns(index: &Relation) -> Vec<i16> {
    index.index.as_ref().map(|i| i.keys.iter().map(|k| k.attnum).collect()).unwrap_or_default()
}

fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Bool { op: crate::expr::BoolOp::And, args } => args.iter().flat_map(conjuncts).collect(),
        other => vec![other],
    }
}

/// One condition, or several ANDed as PostgreSQL prints a qual list.
fn and_text(conds: Vec<String>) -> String {
    if conds.len() == 1 {
        conds.into_iter().next().unwrap_or_default()
    } else {
        format!("({})", conds.join(" AND "))
    }
}

fn join_type(kind: JoinKind) -> &'static str {
    match kind {
        JoinKind::Inner => "Inner",
        JoinKind::Left => "Left",
        JoinKind::Right => "Right",
        JoinKind::Full => "Full",
        JoinKind::Semi => "Semi",
        JoinKind::Anti => "Anti",
    }
}

/// A join's output columns: a semi or anti join returns its left rows only.
fn join_output(kind: JoinKind, labels: &[PlanLabel], left_len: usize) -> Vec<PlanLabel> {
    match kind {
        JoinKind::Semi | JoinKind::Anti => labels[..left_len].to_vec(),
        _ => labels.to_vec(),
    }
}

fn join_name(base: &str, kind: JoinKind) -> String {
    match kind {
        JoinKind::Inner if base == "Nested Loop" => base.to_string(),
        JoinKind::Inner => format!("{base} Join"),
        k => format!("{base} {} Join", join_type(k)),
    }
}

fn join_rows(kind: JoinKind, l: f64, r: f64, sel: f64) -> f64 {
    let inner = l * r * sel;
    clamp_rows(match kind {
        JoinKind::Inner => inner,
        JoinKind::Left => inner.max(l),
        JoinKind::Right => inner.max(r),
        JoinKind::Full => inner.max(l + r),
        JoinKind::Semi => l * 0.5,
        JoinKind::Anti => l * 0.5,
    })
}

/// PostgreSQL's default selectivities when it has no statistics.
fn selectivity(e: &Expr) -> f64 {
    match e {
        Expr::Bool { op: crate::expr::BoolOp::And, args } => args.iter().map(selectivity).product(),
        Expr::Bool { op: crate::expr::BoolOp::Or, args } => 1.0 - args.iter().map(|a| 1.0 - selectivity(a)).product::<f64>(),
        Expr::Func { func, .. } => match crate::catalog::builtins().operator_name_of_proc(func.oid) {
            Some("=") => 0.005,
            Some("<" | "<=" | ">" | ">=") => 1.0 / 3.0,
            Some("<>") => 0.995,
            _ => 0.5,
        },
        Expr::NullTest { is_null, .. } => {
            if *is_null {
                0.005
            } else {
                0.995
            }
        }
        _ => 0.5,
    }
}

fn clamp_rows(r: f64) -> f64 {
    if r.is_nan() || r < 1.0 {
        1.0
    } else {
        r.round()
    }
}

fn function_rows(call: &Expr) -> f64 {
    if let Expr::Func { func, args, .. } = call {
        if &*func.name == "generate_series" {
            if let (Some(Expr::Const(a, _)), Some(Expr::Const(b, _))) = (args.first(), args.get(1)) {
                if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
                    return ((b - a + 1).max(0) as f64).max(1.0);
                }
            }
        }
    }
    1000.0
}

/// PostgreSQL's width guesses: a fixed-size type's length, 32 for others.
fn width_of(ty: SqlType) -> i64 {
    match ty.oid {
        oid::BOOL | oid::CHAR => 1,
        oid::INT2 => 2,
        oid::INT4 | oid::FLOAT4 | oid::DATE | oid::OID => 4,
        oid::INT8 | oid::FLOAT8 | oid::TIME | oid::TIMESTAMP | oid::TIMESTAMPTZ => 8,
        oid::INTERVAL | oid::UUID => 16,
        _ => 32,
    }
}

fn width_of_exprs(exprs: &[Expr]) -> i64 {
    exprs.iter().map(|e| width_of(e.ty())).sum()
}

// ------------------------------------------------------------------ output

fn fmt_cost(v: f64) -> String {
    format!("{v:.2}")
}

fn fmt_ms(secs: f64) -> String {
    format!("{:.3}", secs * 1000.0)
}

fn per_loop(a: &NodeStats) -> (f64, f64, f64) {
    let loops = a.loops.max(1) as f64;
    (a.startup_secs / loops, a.total_secs / loops, (a.rows as f64 / loops).round())
}

fn render_text(root: &ExNode, opts: &Options, summary: &Summary) -> String {
    let mut out = String::new();
    text_node(root, None, 0, opts, &mut out);
    if let Some(ms) = summary.planning_ms {
        let _ = writeln!(out, "Planning Time: {ms:.3} ms");
    }
    if let Some(ms) = summary.execution_ms {
        let _ = writeln!(out, "Execution Time: {ms:.3} ms");
    }
    out
}

fn header_name(n: &ExNode) -> String {
    let mut s = n.text_name.clone().unwrap_or_else(|| n.node_type.clone());
    if let Some(t) = &n.relation {
        if t.backward {
            s.push_str(" Backward");
        }
        if let Some(i) = &t.index {
            let _ = write!(s, " using {}", quote_ident(i));
        }
        let _ = write!(s, " on {}", t.object);
        let unquoted = t.object.rsplit('.').next().unwrap_or("").trim_matches('"');
        if t.alias != unquoted && !t.alias.is_empty() {
            let _ = write!(s, " {}", quote_ident(&t.alias));
        }
    }
    s
}

/// ExplainNode's text layout: `indent` counts pairs of spaces.
fn text_node(n: &ExNode, plan_name: Option<&str>, mut indent: usize, opts: &Options, out: &mut String) {
    let pad = |i: usize| " ".repeat(i * 2);
    if let Some(name) = plan_name {
        let _ = writeln!(out, "{}{name}", pad(indent));
        indent += 1;
    }
    let mut line = String::new();
    if indent > 0 {
        line.push_str(&pad(indent));
        line.push_str("->  ");
        indent += 2;
    }
    line.push_str(&header_name(n));
    if opts.costs {
        let _ = write!(line, "  (cost={}..{} rows={} width={})", fmt_cost(n.est.startup), fmt_cost(n.est.total), n.est.rows as i64, n.est.width);
    }
    if opts.analyze {
        match &n.actual {
            Some(a) if a.loops > 0 => {
                let (s, t, rows) = per_loop(a);
                if opts.timing {
                    let _ = write!(line, " (actual time={}..{} rows={} loops={})", fmt_ms(s), fmt_ms(t), rows as i64, a.loops);
                } else {
                    let _ = write!(line, " (actual rows={} loops={})", rows as i64, a.loops);
                }
            }
            _ => line.push_str(" (never executed)"),
        }
    }
    let _ = writeln!(out, "{line}");
    indent += 1;
    for d in &n.details {
        match d {
            Detail::Text(k, v) => {
                let _ = writeln!(out, "{}{k}: {v}", pad(indent));
            }
            Detail::List(k, v) => {
                let _ = writeln!(out, "{}{k}: {}", pad(indent), v.join(", "));
            }
            Detail::Count(k, v) => {
                let _ = writeln!(out, "{}{k}: {v}", pad(indent));
            }
            Detail::Sort(m, t, kb) => {
                let _ = writeln!(out, "{}Sort Method: {m}  {t}: {kb}kB", pad(indent));
            }
            Detail::Line(l) => {
                let _ = writeln!(out, "{}{l}", pad(indent));
            }
        }
    }
    for (rel, c) in &n.children {
        match rel {
            Relationship::SubPlan(name) => text_node(c, Some(name), indent, opts, out),
            _ => text_node(c, None, indent, opts, out),
        }
    }
}

/// A value in the structured formats.
enum Val {
    Str(String),
    Num(String),
    Bool(bool),
    List(Vec<String>),
    Plans(Vec<Vec<(String, Val)>>),
}

fn structured(n: &ExNode, rel: Option<&Relationship>, opts: &Options) -> Vec<(String, Val)> {
    let mut p: Vec<(String, Val)> = Vec::new();
    p.push(("Node Type".into(), Val::Str(n.node_type.clone())));
    for (k, v) in n.props.iter().filter(|(k, _)| *k == "Strategy" || *k == "Partial Mode" || *k == "Operation" || *k == "Command") {
        p.push((k.to_string(), Val::Str(v.clone())));
    }
    if let Some(r) = rel {
        p.push(("Parent Relationship".into(), Val::Str(r.name().into())));
        if let Relationship::SubPlan(name) = r {
            p.push(("Subplan Name".into(), Val::Str(name.clone())));
        }
    }
    p.push(("Parallel Aware".into(), Val::Bool(false)));
    p.push(("Async Capable".into(), Val::Bool(false)));
    for (k, v) in n.props.iter().filter(|(k, _)| *k == "Join Type") {
        p.push((k.to_string(), Val::Str(v.clone())));
    }
    if let Some(t) = &n.relation {
        if n.node_type == "Index Scan" {
            p.push(("Scan Direction".into(), Val::Str(if t.backward { "Backward" } else { "Forward" }.into())));
            if let Some(i) = &t.index {
                p.push(("Index Name".into(), Val::Str(i.clone())));
            }
        }
        if !t.object_key.is_empty() {
            p.push((t.object_key.into(), Val::Str(t.object.rsplit('.').next().unwrap_or("").trim_matches('"').to_string())));
        }
        if t.object_key != "Index Name" {
            p.push(("Alias".into(), Val::Str(t.alias.clone())));
        }
    }
    if opts.costs {
        p.push(("Startup Cost".into(), Val::Num(fmt_cost(n.est.startup))));
        p.push(("Total Cost".into(), Val::Num(fmt_cost(n.est.total))));
        p.push(("Plan Rows".into(), Val::Num((n.est.rows as i64).to_string())));
        p.push(("Plan Width".into(), Val::Num(n.est.width.to_string())));
    }
    if opts.analyze {
        let a = n.actual.clone().unwrap_or_default();
        let (s, t, rows) = per_loop(&a);
        if opts.timing {
            p.push(("Actual Startup Time".into(), Val::Num(fmt_ms(s))));
            p.push(("Actual Total Time".into(), Val::Num(fmt_ms(t))));
        }
        p.push(("Actual Rows".into(), Val::Num((rows as i64).to_string())));
        p.push(("Actual Loops".into(), Val::Num(a.loops.to_string())));
    }
    for d in &n.details {
        match d {
            Detail::Text(k, v) => p.push((k.to_string(), Val::Str(v.clone()))),
            Detail::List(k, v) => p.push((k.to_string(), Val::List(v.clone()))),
            Detail::Count(k, v) => p.push((k.to_string(), Val::Num(v.to_string()))),
            Detail::Sort(m, t, kb) => {
                p.push(("Sort Method".into(), Val::Str(m.clone())));
                p.push(("Sort Space Used".into(), Val::Num(kb.to_string())));
                p.push(("Sort Space Type".into(), Val::Str(t.clone())));
            }
            Detail::Line(_) => {}
        }
    }
    if !n.children.is_empty() {
        p.push(("Plans".into(), Val::Plans(n.children.iter().map(|(r, c)| structured(c, Some(r), opts)).collect())));
    }
    p
}

fn top_level(root: &ExNode, opts: &Options, summary: &Summary) -> Vec<(String, Val)> {
    let mut top = vec![("Plan".to_string(), Val::Plans(vec![structured(root, None, opts)]))];
    if let Some(ms) = summary.planning_ms {
        top.push(("Planning Time".into(), Val::Num(format!("{ms:.3}"))));
    }
    if opts.analyze {
        top.push(("Triggers".into(), Val::List(Vec::new())));
    }
    if let Some(ms) = summary.execution_ms {
        top.push(("Execution Time".into(), Val::Num(format!("{ms:.3}"))));
    }
    top
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn render_json(root: &ExNode, opts: &Options, summary: &Summary) -> String {
    fn object(props: &[(String, Val)], indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        out.push_str("{\n");
        for (i, (k, v)) in props.iter().enumerate() {
            let _ = write!(out, "{pad}  {}: ", json_str(k));
            match v {
                Val::Str(s) => out.push_str(&json_str(s)),
                Val::Num(n) => out.push_str(n),
                Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Val::List(items) if items.is_empty() => {
                    let _ = write!(out, "[\n{pad}  ]");
                }
                Val::List(items) => {
                    out.push('[');
                    out.push_str(&items.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(", "));
                    out.push(']');
                }
                Val::Plans(plans) if k == "Plan" => {
                    object(&plans[0], indent + 2, out);
                }
                Val::Plans(plans) => {
                    out.push_str("[\n");
                    for (j, p) in plans.iter().enumerate() {
                        let _ = write!(out, "{pad}    ");
                        object(p, indent + 4, out);
                        out.push_str(if j + 1 < plans.len() { ",\n" } else { "\n" });
                    }
                    let _ = write!(out, "{pad}  ]");
                }
            }
            out.push_str(if i + 1 < props.len() { ",\n" } else { "\n" });
        }
        let _ = write!(out, "{pad}}}");
    }
    let mut out = String::from("[\n  ");
    object(&top_level(root, opts, summary), 2, &mut out);
    out.push_str("\n]");
    out
}

fn render_yaml(root: &ExNode, opts: &Options, summary: &Summary) -> String {
    fn mapping(props: &[(String, Val)], indent: usize, first_inline: bool, out: &mut String) {
        let pad = " ".repeat(indent);
        for (i, (k, v)) in props.iter().enumerate() {
            if !(i == 0 && first_inline) {
                out.push_str(&pad);
            }
            let _ = write!(out, "{k}: ");
            match v {
                // PostgreSQL quotes every string in YAML as it does in JSON.
                Val::Str(s) => {
                    let _ = writeln!(out, "{}", json_str(s));
                }
                Val::Num(n) => {
                    let _ = writeln!(out, "{n}");
                }
                Val::Bool(b) => {
                    let _ = writeln!(out, "{b}");
                }
                Val::List(items) if items.is_empty() => {
                    out.push_str("\n");
                }
                Val::List(items) => {
                    out.push('\n');
                    for it in items {
                        let _ = writeln!(out, "{pad}  - {}", json_str(it));
                    }
                }
                Val::Plans(plans) if k == "Plan" => {
                    out.push('\n');
                    mapping(&plans[0], indent + 2, false, out);
                }
                Val::Plans(plans) => {
                    out.push('\n');
                    for p in plans {
                        let _ = write!(out, "{pad}  - ");
                        mapping(p, indent + 4, true, out);
                    }
                }
            }
        }
    }
    let mut out = String::from("- ");
    mapping(&top_level(root, opts, summary), 2, true, &mut out);
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

fn render_xml(root: &ExNode, opts: &Options, summary: &Summary) -> String {
    fn tag(k: &str) -> String {
        k.replace(' ', "-")
    }
    fn esc(s: &str) -> String {
        s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
    }
    fn element(props: &[(String, Val)], indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        for (k, v) in props {
            let t = tag(k);
            match v {
                Val::Str(s) => {
                    let _ = writeln!(out, "{pad}<{t}>{}</{t}>", esc(s));
                }
                Val::Num(n) => {
                    let _ = writeln!(out, "{pad}<{t}>{n}</{t}>");
                }
                Val::Bool(b) => {
                    let _ = writeln!(out, "{pad}<{t}>{b}</{t}>");
                }
                Val::List(items) if items.is_empty() => {
                    let _ = writeln!(out, "{pad}<{t}>");
                    let _ = writeln!(out, "{pad}</{t}>");
                }
                Val::List(items) => {
                    let _ = writeln!(out, "{pad}<{t}>");
                    for it in items {
                        let _ = writeln!(out, "{pad}  <Item>{}</Item>", esc(it));
                    }
                    let _ = writeln!(out, "{pad}</{t}>");
                }
                Val::Plans(plans) if k == "Plan" => {
                    let _ = writeln!(out, "{pad}<Plan>");
                    element(&plans[0], indent + 2, out);
                    let _ = writeln!(out, "{pad}</Plan>");
                }
                Val::Plans(plans) => {
                    let _ = writeln!(out, "{pad}<Plans>");
                    for p in plans {
                        let _ = writeln!(out, "{pad}  <Plan>");
                        element(p, indent + 4, out);
                        let _ = writeln!(out, "{pad}  </Plan>");
                    }
                    let _ = writeln!(out, "{pad}</Plans>");
                }
            }
        }
    }
    let mut out = String::from("<explain xmlns=\"http://www.postgresql.org/2009/explain\">\n  <Query>\n");
    element(&top_level(root, opts, summary), 4, &mut out);
    out.push_str("  </Query>\n</explain>");
    out
}
