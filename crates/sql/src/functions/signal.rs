//! Signalling other sessions: pg_cancel_backend and pg_terminate_backend
//! (PostgreSQL 15's src/backend/storage/ipc/signalfuncs.c).
//!
//! The sessions belong to the protocol layer, which the environment asks
//! (`Env::backend_role`, `Env::signal_backend`); the permission rules are
//! PostgreSQL's and live here: only a superuser may signal a superuser's
//! session; otherwise the caller needs the privileges of the session's
//! role or of pg_signal_backend. The role a session is judged by is the
//! one it logged in as (PGPROC.roleId), whatever SET ROLE it ran since;
//! the caller is judged by its current role, as GetUserId() is.

use tusk_types::{sqlstate, Datum, PgError, PgResult};

use super::{arg_i64, plain, FnCtx, Registry};

/// pg_signal_backend's OID (pg_authid.dat).
const PG_SIGNAL_BACKEND: tusk_types::Oid = 4200;

/// Why a signal was refused (SIGNAL_BACKEND_NOSUPERUSER / NOPERMISSION).
enum Refused {
    NoSuperuser,
    NoPermission,
}

/// PostgreSQL's pg_signal_backend: Ok(true) once the session was told,
/// Ok(false) (with a WARNING) if no session has that pid.
fn signal_backend(pid: i32, terminate: bool, c: &FnCtx) -> PgResult<Result<bool, Refused>> {
    let Some(role) = c.env.backend_role(pid) else {
        // Only a warning, so that a query signalling many sessions goes on
        // when one of them ended meanwhile.
        c.env.notice(PgError::warning(format!("PID {pid} is not a PostgreSQL backend process")));
        return Ok(Ok(false));
    };
    let cat = c.env.cluster_catalog();
    let me = cat.role_by_name(&c.env.current_user()).map(|r| r.oid).unwrap_or(0);
    let target = cat.role_by_name(&role);
    if target.is_some_and(|t| t.superuser) && !cat.is_superuser(me) {
        return Ok(Err(Refused::NoSuperuser));
    }
    let db = Some(c.env.database_oid());
    let allowed = target.is_some_and(|t| cat.has_privs_of_role(me, t.oid, db)) || cat.has_privs_of_role(me, PG_SIGNAL_BACKEND, db);
    if !allowed {
        return Ok(Err(Refused::NoPermission));
    }
    // The session may have ended since it was looked up: that is no
    // failure, as a signal to a process that is exiting anyway is not.
    c.env.signal_backend(pid, terminate);
    Ok(Ok(true))
}

fn pg_cancel_backend(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let pid = arg_i64(a, 0) as i32;
    match signal_backend(pid, false, c)? {
        Ok(done) => Ok(Datum::Bool(done)),
        Err(Refused::NoSuperuser) => Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "must be a superuser to cancel superuser query")),
        Err(Refused::NoPermission) => Err(PgError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            "must be a member of the role whose query is being canceled or member of pg_signal_backend",
        )),
    }
}

/// pg_terminate_backend(pid, timeout): with a timeout (milliseconds), waits
/// until the session is gone — its transaction rolled back, its locks
/// released — and answers false with a WARNING if it is not by then.
fn pg_terminate_backend(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    let pid = arg_i64(a, 0) as i32;
    let timeout = if a.len() > 1 { arg_i64(a, 1) } else { 0 };
    if timeout < 0 {
        return Err(PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "\"timeout\" must not be negative"));
    }
    let done = match signal_backend(pid, true, c)? {
        Ok(done) => done,
        Err(Refused::NoSuperuser) => return Err(PgError::new(sqlstate::INSUFFICIENT_PRIVILEGE, "must be a superuser to terminate superuser process")),
        Err(Refused::NoPermission) => {
            return Err(PgError::new(
                sqlstate::INSUFFICIENT_PRIVILEGE,
                "must be a member of the role whose process is being terminated or member of pg_signal_backend",
            ))
        }
    };
    if !done || timeout == 0 {
        return Ok(Datum::Bool(done));
    }
    Ok(Datum::Bool(wait_until_termination(pid, timeout, c)?))
}

/// PostgreSQL's pg_wait_until_termination: polls every 100 ms at most,
/// and the waiting statement can itself be canceled.
fn wait_until_termination(pid: i32, timeout_ms: i64, c: &FnCtx) -> PgResult<bool> {
    let mut remaining = timeout_ms;
    loop {
        if c.env.backend_role(pid).is_none() {
            return Ok(true);
        }
        c.env.check_interrupts()?;
        let step = remaining.min(100);
        c.env.sleep(step as f64 / 1000.0)?;
        remaining -= step;
        if remaining <= 0 {
            break;
        }
    }
    if c.env.backend_role(pid).is_none() {
        return Ok(true);
    }
    let unit = if timeout_ms == 1 { "millisecond" } else { "milliseconds" };
    c.env.notice(PgError::warning(format!("backend with PID {pid} did not terminate within {timeout_ms} {unit}")));
    Ok(false)
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["pg_cancel_backend"], pg_cancel_backend);
    plain(r, &["pg_terminate_backend"], pg_terminate_backend);
}
