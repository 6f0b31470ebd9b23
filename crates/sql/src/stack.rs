//! PostgreSQL's `check_stack_depth()`: the stages that recurse over a
//! statement (analysis, planning, evaluation) call `check()` as they go
//! deeper, and a statement that would exhaust the thread's stack is refused
//! with `54001 stack depth limit exceeded` instead of overflowing it (which
//! aborts the whole server).
//!
//! The limit is the thread's real stack (from `pthread_getattr_np`), less a
//! reserve for what runs between two checks, error unwinding and drop glue.
//! Counting levels (as `MAX_EXPR_DEPTH` does for expressions) cannot cover
//! every shape: a chain of WITH queries each reading the previous one nests
//! subqueries ten thousand deep without any deep expression.

use std::cell::Cell;

use tusk_types::PgResult;

thread_local! {
    /// The lowest stack address a check accepts; 0 until computed.
    static FLOOR: Cell<usize> = const { Cell::new(0) };
}

/// The least stack kept in reserve (a quarter of the stack is, if more).
const MIN_RESERVE: usize = 1 << 20;

/// Fails with PostgreSQL's 54001 once the calling thread's stack is nearly
/// used up.
#[inline]
pub fn check() -> PgResult<()> {
    let marker = 0u8;
    let here = std::hint::black_box(&marker) as *const u8 as usize;
    let floor = FLOOR.with(|f| {
        if f.get() == 0 {
            f.set(floor_of_this_thread());
        }
        f.get()
    });
    if here < floor {
        Err(crate::parser::stack_depth_error())
    } else {
        Ok(())
    }
}

/// The stack grows down from `base + size` to `base`; checks refuse the
/// last quarter (at least MIN_RESERVE). 1 (refuse nothing) when the bounds
/// are unknown.
fn floor_of_this_thread() -> usize {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread, which
    // we read and destroy; no pointer outlives the call.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return 1;
        }
        let mut base: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut base, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        if rc != 0 || base.is_null() || size == 0 {
            return 1;
        }
        let reserve = (size / 4).max(MIN_RESERVE).min(size / 2);
        base as usize + reserve
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recurse(n: usize) -> PgResult<usize> {
        check()?;
        let pad = std::hint::black_box([0u8; 512]);
        Ok(recurse(n + 1)? + pad[n % 512] as usize)
    }

    #[test]
    fn unbounded_recursion_is_refused_not_overflowed() {
        let h = std::thread::Builder::new().stack_size(4 << 20).spawn(|| recurse(0).unwrap_err().code).unwrap();
        assert_eq!(h.join().unwrap(), "54001");
    }

    #[test]
    fn shallow_calls_pass() {
        assert!(check().is_ok());
    }
}
