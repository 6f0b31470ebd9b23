//! Window function calls (parse_agg.c's transformWindowFuncCall and
//! parse_clause.c's transformWindowDefinitions): `f(args) OVER (...)`,
//! named windows of the WINDOW clause, and frame clauses.
//!
//! A window function runs after grouping and HAVING, over the query's
//! result rows split into partitions; so it may read aggregates and grouped
//! columns but is refused wherever rows are still being chosen (WHERE,
//! GROUP BY, HAVING, JOIN conditions, ...) and inside aggregates.

use pg_query::protobuf::{self as pb, Node};
use pg_query::NodeEnum;
use tusk_types::oid;
use tusk_types::{sqlstate, PgError, PgResult, SqlType};

use super::coerce::CoercionContext;
use super::expr::{display_type, expr_location};
use super::{pos, Analyzer};
use crate::expr::{AggCall, Expr, FrameBound, FrameExclusion, FrameMode, WindowCall, WindowFrame, WindowFuncKind};

// PostgreSQL's FRAMEOPTION_* bits (nodes/parsenodes.h), as the grammar sets them.
const NONDEFAULT: i32 = 0x00001;
const RANGE: i32 = 0x00002;
const ROWS: i32 = 0x00004;
const GROUPS: i32 = 0x00008;
const START_UNBOUNDED_PRECEDING: i32 = 0x00020;
const END_UNBOUNDED_FOLLOWING: i32 = 0x00100;
const START_CURRENT_ROW: i32 = 0x00200;
const END_CURRENT_ROW: i32 = 0x00400;
const START_OFFSET_PRECEDING: i32 = 0x00800;
const END_OFFSET_PRECEDING: i32 = 0x01000;
const START_OFFSET_FOLLOWING: i32 = 0x02000;
const END_OFFSET_FOLLOWING: i32 = 0x04000;
const EXCLUDE_CURRENT_ROW: i32 = 0x08000;
const EXCLUDE_GROUP: i32 = 0x10000;
const EXCLUDE_TIES: i32 = 0x20000;
const DEFAULTS: i32 = RANGE | START_UNBOUNDED_PRECEDING | END_CURRENT_ROW;

/// A window specification with references to named windows resolved,
/// still as raw parse nodes.
struct RawWindow {
    partition: Vec<Node>,
    order: Vec<Node>,
    frame_options: i32,
    start_offset: Option<Box<Node>>,
    end_offset: Option<Box<Node>>,
}

fn windowing_error(msg: impl Into<String>, location: i32) -> PgError {
    PgError::new(sqlstate::WINDOWING_ERROR, msg).with_position(pos(location))
}

/// The non-aggregate window function a built-in name stands for.
pub(crate) fn window_func_kind(name: &str) -> Option<WindowFuncKind> {
    Some(match name {
        "row_number" => WindowFuncKind::RowNumber,
        "rank" => WindowFuncKind::Rank,
        "dense_rank" => WindowFuncKind::DenseRank,
        "percent_rank" => WindowFuncKind::PercentRank,
        "cume_dist" => WindowFuncKind::CumeDist,
        "ntile" => WindowFuncKind::Ntile,
        "lag" => WindowFuncKind::Lag,
        "lead" => WindowFuncKind::Lead,
        "first_value" => WindowFuncKind::FirstValue,
        "last_value" => WindowFuncKind::LastValue,
        "nth_value" => WindowFuncKind::NthValue,
        _ => return None,
    })
}

impl<'a> Analyzer<'a> {
    /// Refuses a window function call where none may appear; called before
    /// its arguments are analyzed (which it marks as inside a window call).
    pub(crate) fn check_window_allowed(&self, location: i32) -> PgResult<()> {
        let level = self.level_ref();
        if level.in_agg {
            return Err(PgError::new(sqlstate::GROUPING_ERROR, "aggregate function calls cannot contain window function calls")
                .with_position(pos(location)));
        }
        if level.in_window {
            return Err(windowing_error("window function calls cannot be nested", location));
        }
        if let Some(clause) = level.window_forbidden.or(level.agg_forbidden) {
            return Err(windowing_error(format!("window functions are not allowed in {clause}"), location));
        }
        Ok(())
    }

    /// Registers the WINDOW clause's named windows for OVER clauses to use.
    pub(crate) fn transform_window_clause(&mut self, defs: &[Node]) -> PgResult<()> {
        let mut named: Vec<pb::WindowDef> = Vec::new();
        for d in defs {
            let Some(NodeEnum::WindowDef(w)) = &d.node else { return Err(PgError::internal("WINDOW clause item")) };
            if named.iter().any(|x| x.name == w.name) {
                return Err(windowing_error(format!("window \"{}\" is already defined", w.name), w.location));
            }
            // A definition may build on an earlier one; check that now, as
            // PostgreSQL does even for windows no OVER clause uses.
            self.level().windows = named.clone();
            self.resolve_window(&pb::WindowDef { name: String::new(), ..(**w).clone() })?;
            named.push((**w).clone());
        }
        self.level().windows = named;
        Ok(())
    }

    /// OVER w, OVER (w ...), or OVER (...), down to one specification.
    fn resolve_window(&self, over: &pb::WindowDef) -> PgResult<RawWindow> {
        let find = |name: &str| -> PgResult<&pb::WindowDef> {
            self.level_ref().windows.iter().find(|w| w.name == name).ok_or_else(|| {
                PgError::new(sqlstate::UNDEFINED_OBJECT, format!("window \"{name}\" does not exist")).with_position(pos(over.location))
            })
        };
        let own = |w: &pb::WindowDef| RawWindow {
            partition: w.partition_clause.clone(),
            order: w.order_clause.clone(),
            frame_options: w.frame_options,
            start_offset: w.start_offset.clone(),
            end_offset: w.end_offset.clone(),
        };
        // `OVER w` names a window of the WINDOW clause, frame included.
        // (Definitions of the WINDOW clause come here with `name` cleared.)
        if !over.name.is_empty() {
            let base = find(&over.name)?;
            return self.resolve_window(&pb::WindowDef { name: String::new(), ..base.clone() });
        }
        if over.refname.is_empty() {
            return Ok(own(over));
        }
        let base_def = find(&over.refname)?;
        let base = self.resolve_window(&pb::WindowDef { name: String::new(), ..base_def.clone() })?;
        if !over.partition_clause.is_empty() {
            return Err(windowing_error(format!("cannot override PARTITION BY clause of window \"{}\"", over.refname), over.location));
        }
        if !over.order_clause.is_empty() && !base.order.is_empty() {
            return Err(windowing_error(format!("cannot override ORDER BY clause of window \"{}\"", over.refname), over.location));
        }
        if base.frame_options != DEFAULTS {
            let mut e = windowing_error(format!("cannot copy window \"{}\" because it has a frame clause", over.refname), over.location);
            if over.order_clause.is_empty() && over.frame_options == DEFAULTS {
                e = e.with_hint("Omit the parentheses in this OVER clause.");
            }
            return Err(e);
        }
        Ok(RawWindow {
            partition: base.partition,
            order: if over.order_clause.is_empty() { base.order } else { over.order_clause.clone() },
            frame_options: over.frame_options,
            start_offset: over.start_offset.clone(),
            end_offset: over.end_offset.clone(),
        })
    }

    /// Builds the window call once the function is resolved: `kind` for
    /// true window functions, `agg` for aggregates used as window functions.
    pub(crate) fn transform_window_call(
        &mut self,
        f: &pb::FuncCall,
        name: &str,
        kind: Option<WindowFuncKind>,
        agg: Option<AggCall>,
        args: Vec<Expr>,
        ty: SqlType,
    ) -> PgResult<Expr> {
        let over = f.over.as_deref().ok_or_else(|| PgError::internal("window call without OVER"))?;
        if f.agg_distinct {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "DISTINCT is not implemented for window functions").with_position(pos(f.location)));
        }
        if agg.as_ref().is_some_and(|a| a.args.is_empty()) && !f.agg_star {
            return Err(PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("{name}(*) must be used to call a parameterless aggregate function"))
                .with_position(pos(f.location)));
        }
        if !f.agg_order.is_empty() {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "aggregate ORDER BY is not implemented for window functions").with_position(pos(f.location)));
        }
        if agg.is_none() && f.agg_filter.is_some() {
            return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, "FILTER is not implemented for non-aggregate window functions").with_position(pos(f.location)));
        }
        let raw = self.resolve_window(over)?;
        // The definition's expressions may use aggregates (they run after
        // grouping) but no window functions.
        let saved = self.level().window_forbidden.replace("window definitions");
        let spec = self.transform_window_spec(&raw, over.location);
        self.level().window_forbidden = saved;
        let (partition_by, order_by, frame) = spec?;
        self.level().has_windows = true;
        let kind = match (kind, agg) {
            (Some(k), _) => k,
            (None, Some(a)) => WindowFuncKind::Agg(Box::new(a)),
            (None, None) => return Err(PgError::internal("window call of neither kind")),
        };
        let args = if matches!(kind, WindowFuncKind::Agg(_)) { Vec::new() } else { args };
        Ok(Expr::Window(Box::new(WindowCall { kind, args, partition_by, order_by, frame, ty })))
    }

    #[allow(clippy::type_complexity)]
    fn transform_window_spec(&mut self, raw: &RawWindow, location: i32) -> PgResult<(Vec<Expr>, Vec<(Expr, bool, bool)>, WindowFrame)> {
        let mut partition_by = Vec::with_capacity(raw.partition.len());
        for p in &raw.partition {
            let e = self.transform_expr(p)?;
            let e = self.resolve_unknown(e)?;
            if !partition_by.contains(&e) {
                partition_by.push(e);
            }
        }
        let mut order_by = Vec::with_capacity(raw.order.len());
        let mut order_locations = Vec::with_capacity(raw.order.len());
        for o in &raw.order {
            let Some(NodeEnum::SortBy(sb)) = &o.node else { return Err(PgError::internal("window ORDER BY item")) };
            let node = sb.node.as_deref().ok_or_else(|| PgError::internal("window ORDER BY expression"))?;
            let e = self.transform_expr(node)?;
            let e = self.resolve_unknown(e)?;
            if sb.use_op.len() > 0 {
                return Err(PgError::unsupported("ORDER BY ... USING in window definitions").with_position(pos(sb.location)));
            }
            let desc = sb.sortby_dir == 3;
            let nulls_first = match sb.sortby_nulls {
                2 => true,
                3 => false,
                _ => desc,
            };
            order_locations.push(expr_location(node));
            order_by.push((e, desc, nulls_first));
        }
        let frame = self.transform_frame(raw, &order_by, location)?;
        Ok((partition_by, order_by, frame))
    }

    fn transform_frame(&mut self, raw: &RawWindow, order_by: &[(Expr, bool, bool)], location: i32) -> PgResult<WindowFrame> {
        let opts = raw.frame_options;
        if opts & NONDEFAULT == 0 {
            return Ok(WindowFrame::default_frame());
        }
        let mode = if opts & ROWS != 0 {
            FrameMode::Rows
        } else if opts & GROUPS != 0 {
            FrameMode::Groups
        } else {
            FrameMode::Range
        };
        let has_offset = opts & (START_OFFSET_PRECEDING | START_OFFSET_FOLLOWING | END_OFFSET_PRECEDING | END_OFFSET_FOLLOWING) != 0;
        if mode == FrameMode::Range && has_offset && order_by.len() != 1 {
            return Err(windowing_error("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column", location));
        }
        if mode == FrameMode::Groups && order_by.is_empty() {
            return Err(windowing_error("GROUPS mode requires an ORDER BY clause", location));
        }
        let start = if opts & START_UNBOUNDED_PRECEDING != 0 {
            FrameBound::UnboundedPreceding
        } else if opts & START_CURRENT_ROW != 0 {
            FrameBound::CurrentRow
        } else if opts & START_OFFSET_PRECEDING != 0 {
            FrameBound::Preceding(self.frame_offset(mode, raw.start_offset.as_deref(), order_by)?)
        } else if opts & START_OFFSET_FOLLOWING != 0 {
            FrameBound::Following(self.frame_offset(mode, raw.start_offset.as_deref(), order_by)?)
        } else {
            return Err(PgError::internal("frame without a start"));
        };
        let end = if opts & END_UNBOUNDED_FOLLOWING != 0 {
            FrameBound::UnboundedFollowing
        } else if opts & END_CURRENT_ROW != 0 {
            FrameBound::CurrentRow
        } else if opts & END_OFFSET_PRECEDING != 0 {
            FrameBound::Preceding(self.frame_offset(mode, raw.end_offset.as_deref(), order_by)?)
        } else if opts & END_OFFSET_FOLLOWING != 0 {
            FrameBound::Following(self.frame_offset(mode, raw.end_offset.as_deref(), order_by)?)
        } else {
            return Err(PgError::internal("frame without an end"));
        };
        let exclusion = if opts & EXCLUDE_CURRENT_ROW != 0 {
            FrameExclusion::CurrentRow
        } else if opts & EXCLUDE_GROUP != 0 {
            FrameExclusion::Group
        } else if opts & EXCLUDE_TIES != 0 {
            FrameExclusion::Ties
        } else {
            FrameExclusion::NoOthers
        };
        Ok(WindowFrame { mode, start, end, exclusion })
    }

    /// A frame offset: a bigint row or group count for ROWS and GROUPS; for
    /// RANGE, a distance of the type the ORDER BY column's in_range support
    /// takes (the column's own numeric type, or interval for date/time).
    fn frame_offset(&mut self, mode: FrameMode, node: Option<&Node>, order_by: &[(Expr, bool, bool)]) -> PgResult<Expr> {
        let node = node.ok_or_else(|| PgError::internal("frame offset"))?;
        let location = expr_location(node);
        let e = self.transform_expr(node)?;
        let what = match mode {
            FrameMode::Rows => "ROWS",
            FrameMode::Groups => "GROUPS",
            FrameMode::Range => "RANGE",
        };
        if e.any(&mut |x| matches!(x, Expr::Var(_))) {
            return Err(PgError::new(sqlstate::INVALID_COLUMN_REFERENCE, format!("argument of {what} must not contain variables"))
                .with_position(pos(location)));
        }
        let target = match mode {
            FrameMode::Rows | FrameMode::Groups => SqlType::new(oid::INT8),
            FrameMode::Range => {
                let col = order_by[0].0.ty();
                match col.oid {
                    oid::INT2 | oid::INT4 | oid::INT8 => SqlType::new(oid::INT8),
                    oid::FLOAT4 | oid::FLOAT8 => SqlType::new(oid::FLOAT8),
                    oid::NUMERIC => SqlType::new(oid::NUMERIC),
                    oid::DATE | oid::TIMESTAMP | oid::TIMESTAMPTZ | oid::TIME | oid::TIMETZ | oid::INTERVAL => SqlType::new(oid::INTERVAL),
                    _ => {
                        return Err(PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, format!(
                            "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {}",
                            display_type(self.b, col)
                        ))
                        .with_position(pos(location)))
                    }
                }
            }
        };
        let ty = e.ty();
        match self.try_coerce(e, target, CoercionContext::Implicit, location)? {
            Ok(e) => Ok(e),
            Err(_) => Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("argument of {what} must be type {}, not type {}", display_type(self.b, target), display_type(self.b, ty)),
            )
            .with_position(pos(location))),
        }
    }
}
