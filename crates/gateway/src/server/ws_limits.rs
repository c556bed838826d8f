//! Caps on WebSocket connections that have not passed `connect` yet: at most
//! [`PreauthLimits::per_peer`] from one peer and [`PreauthLimits::total`] in all. A
//! connection holds a [`PendingSlot`] from its upgrade until `connect` succeeds or it ends;
//! one over a cap is refused at once. With the read budget (`preauth_io.rs`) and the
//! handshake timeout this bounds what strangers can make the gateway hold.
//!
//! IPv6 peers are counted per /64, the block one subscriber usually gets, so a peer cannot
//! pass the cap by rotating addresses inside it.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};

/// Unauthenticated connections allowed from one peer.
pub const MAX_PREAUTH_PER_PEER: usize = 16;
/// Unauthenticated connections allowed in all.
pub const MAX_PREAUTH_TOTAL: usize = 128;

/// The two caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreauthLimits {
    pub per_peer: usize,
    pub total: usize,
}

impl Default for PreauthLimits {
    fn default() -> Self {
        Self {
            per_peer: MAX_PREAUTH_PER_PEER,
            total: MAX_PREAUTH_TOTAL,
        }
    }
}

/// Why a connection was refused; its `Display` is the close reason the client sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("too many unauthenticated connections from this address; send connect first")]
    PerPeer,
    #[error("too many unauthenticated connections; try again later")]
    Total,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_peer: HashMap<IpAddr, usize>,
}

/// The pending connections of one server.
#[derive(Debug)]
pub struct PendingConnections {
    limits: PreauthLimits,
    counts: Arc<Mutex<Counts>>,
}

impl PendingConnections {
    pub fn new(limits: PreauthLimits) -> Self {
        Self {
            limits,
            counts: Arc::default(),
        }
    }

    /// Counts a new connection from `ip`, or says why it may not be opened.
    pub fn admit(&self, ip: IpAddr) -> Result<PendingSlot, Refused> {
        let peer = peer_key(ip);
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let from_peer = counts.per_peer.get(&peer).copied().unwrap_or(0);
        if from_peer >= self.limits.per_peer {
            return Err(Refused::PerPeer);
        }
        if counts.total >= self.limits.total {
            return Err(Refused::Total);
        }
        counts.total += 1;
        counts.per_peer.insert(peer, from_peer + 1);
        Ok(PendingSlot {
            counts: Arc::clone(&self.counts),
            peer,
        })
    }

    /// Connections counted now.
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.counts.lock().unwrap_or_else(|e| e.into_inner()).total
    }
}

/// One pending connection's place; dropped, it frees it.
#[derive(Debug)]
pub struct PendingSlot {
    counts: Arc<Mutex<Counts>>,
    peer: IpAddr,
}

impl Drop for PendingSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.total = counts.total.saturating_sub(1);
        if let Some(n) = counts.per_peer.get_mut(&self.peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.per_peer.remove(&self.peer);
            }
        }
    }
}

/// What a peer is counted as: its IPv4 address (also when written as IPv4-mapped IPv6), or
/// its IPv6 /64.
fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn one_peer_is_capped_and_others_are_not() {
        let pending = PendingConnections::new(PreauthLimits {
            per_peer: 2,
            total: 10,
        });
        let a1 = pending.admit(ip("10.0.0.1")).unwrap();
        let _a2 = pending.admit(ip("10.0.0.1")).unwrap();
        assert_eq!(pending.admit(ip("10.0.0.1")).unwrap_err(), Refused::PerPeer);
        let _b = pending.admit(ip("10.0.0.2")).unwrap();
        assert_eq!(pending.pending(), 3);
        drop(a1);
        assert_eq!(pending.pending(), 2);
        let _a3 = pending.admit(ip("10.0.0.1")).unwrap();
    }

    #[test]
    fn the_total_is_capped() {
        let pending = PendingConnections::new(PreauthLimits {
            per_peer: 5,
            total: 3,
        });
        let slots: Vec<_> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
            .iter()
            .map(|a| pending.admit(ip(a)).unwrap())
            .collect();
        assert_eq!(pending.admit(ip("10.0.0.4")).unwrap_err(), Refused::Total);
        drop(slots);
        assert_eq!(pending.pending(), 0);
        assert!(pending.admit(ip("10.0.0.4")).is_ok());
    }

    #[test]
    fn ipv6_peers_count_per_64_and_mapped_ipv4_as_ipv4() {
        let pending = PendingConnections::new(PreauthLimits {
            per_peer: 1,
            total: 10,
        });
        let _a = pending.admit(ip("2001:db8:1:2::1")).unwrap();
        assert_eq!(
            pending.admit(ip("2001:db8:1:2:ffff::9")).unwrap_err(),
            Refused::PerPeer
        );
        let _b = pending.admit(ip("2001:db8:1:3::1")).unwrap();
        let _c = pending.admit(ip("192.0.2.7")).unwrap();
        assert_eq!(
            pending.admit(ip("::ffff:192.0.2.7")).unwrap_err(),
            Refused::PerPeer
        );
    }

    #[test]
    fn refusals_say_what_to_do() {
        assert_eq!(
            Refused::PerPeer.to_string(),
            "too many unauthenticated connections from this address; send connect first"
        );
        // A close reason must fit in a control frame (123 bytes).
        assert!(Refused::PerPeer.to_string().len() <= 123);
        assert!(Refused::Total.to_string().len() <= 123);
    }
}
