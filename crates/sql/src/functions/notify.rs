//! The functions of LISTEN/NOTIFY: pg_notify, pg_listening_channels and
//! pg_notification_queue_usage (see `commands::notify`).

use std::sync::Arc;

use tusk_types::{Datum, PgResult};

use super::{plain, set, FnCtx, Registry, SetIter};

/// pg_notify(channel, payload): NOTIFY with computed names. Not strict: a
/// NULL channel is an empty one (refused), a NULL payload an empty one.
fn pg_notify(a: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    // The text values themselves, shared rather than copied.
    let text = |d: &Datum| -> Arc<str> {
        match d {
            Datum::Text(s) => s.clone(),
            d => d.as_str().unwrap_or("").into(),
        }
    };
    c.env.notify(text(&a[0]), text(&a[1]))?;
    Ok(Datum::text(""))
}

fn pg_listening_channels(_: &[Datum], c: &FnCtx) -> PgResult<SetIter> {
    let channels = c.env.listening_channels();
    Ok(Box::new(channels.into_iter().map(|ch| Ok(Datum::text(&ch)))))
}

fn pg_notification_queue_usage(_: &[Datum], c: &FnCtx) -> PgResult<Datum> {
    Ok(Datum::Float8(c.env.notification_queue_usage()))
}

pub(super) fn register(r: &mut Registry) {
    plain(r, &["pg_notify"], pg_notify);
    set(r, &["pg_listening_channels"], pg_listening_channels);
    plain(r, &["pg_notification_queue_usage"], pg_notification_queue_usage);
}
