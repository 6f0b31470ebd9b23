//! Waiting for the client or a notification. A session that LISTENs must
//! pass notifications on while it sits idle, not only when its client next
//! sends a command (PostgreSQL's ProcessNotifyInterrupt runs while the
//! backend reads a command): drivers' listeners wait on the socket without
//! querying. The idle session therefore polls two descriptors, its client
//! socket and the reading end of a socket pair whose writing end the
//! notifier writes one byte to when a notification arrives. Sessions that
//! never listen create no pair and block in their read as before.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use tusk_sql::commands::notify::Wakeup;

/// What ended a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Woken {
    /// The client sent something (or closed the connection).
    Client,
    /// A notification arrived.
    Notification,
}

/// The session's end of the wake-up pair.
pub(crate) struct NotifyWait {
    wake: UnixStream,
}

impl NotifyWait {
    /// A new pair: the waiting end, and the wake-up the notifier calls.
    pub(crate) fn new() -> io::Result<(NotifyWait, Wakeup)> {
        let (wait, signal) = UnixStream::pair()?;
        wait.set_nonblocking(true)?;
        signal.set_nonblocking(true)?;
        let signal = Arc::new(signal);
        let wakeup: Wakeup = Arc::new(move || {
            // A full buffer means a wake-up is pending already.
            let _ = (&*signal).write(&[1]);
        });
        Ok((NotifyWait { wake: wait }, wakeup))
    }

    /// Blocks until the client socket is readable or a notification
    /// arrives (a notification wins when both are ready, so that it is
    /// sent before the client's next command runs).
    pub(crate) fn wait(&self, client: RawFd) -> io::Result<Woken> {
        let mut fds = [
            libc::pollfd { fd: client, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.wake.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        loop {
            // SAFETY: two valid pollfds we own for the duration of the
            // call; both descriptors stay open while `self` and the
            // caller's socket live.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if fds[1].revents != 0 {
                self.drain();
                return Ok(Woken::Notification);
            }
            if fds[0].revents != 0 {
                return Ok(Woken::Client);
            }
        }
    }

    /// Empties the pair: every byte in it is answered by one look at the inbox.
    fn drain(&self) {
        let mut buf = [0u8; 64];
        while let Ok(n) = (&self.wake).read(&mut buf) {
            if n < buf.len() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wakeup_ends_the_wait_and_the_client_does_too() {
        let (w, wakeup) = NotifyWait::new().unwrap();
        let (client, mut peer) = UnixStream::pair().unwrap();
        wakeup();
        wakeup();
        assert_eq!(w.wait(client.as_raw_fd()).unwrap(), Woken::Notification);
        peer.write_all(b"Q").unwrap();
        assert_eq!(w.wait(client.as_raw_fd()).unwrap(), Woken::Client);
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            wakeup();
        });
        let (idle, _idle_peer) = UnixStream::pair().unwrap();
        assert_eq!(w.wait(idle.as_raw_fd()).unwrap(), Woken::Notification);
        t.join().unwrap();
    }
}
