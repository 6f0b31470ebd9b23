//! tusk_plpgsql_profile_reset(): clears the counts of the procedural
//! languages' profilers (the view `tusk_plpgsql_profile` shows them).

use tusk_types::{Datum, PgResult};

use super::{plain, FnCtx, Registry};

fn tusk_plpgsql_profile_reset(_: &[Datum], _: &FnCtx) -> PgResult<Datum> {
    for lang in crate::procedural::all_languages() {
        lang.profile_reset();
    }
    Ok(Datum::Null)
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["tusk_plpgsql_profile_reset"], tusk_plpgsql_profile_reset);
}
