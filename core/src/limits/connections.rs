//! Open connections per client address, so one client cannot hold every
//! connection slot (`max_connections`) and lock everyone else out. Counted
//! by `client::key` (an IPv6 client by its /64). A trusted proxy is not
//! counted: all of its clients arrive from its address, and it keeps its
//! own per-client limits.
//!
//! The per-address cap alone let four addresses hold all 1,024 slots with
//! slow bodies. So the last eighth of the slots is a reserve: once only
//! that many are free, an address holding `RESERVE_PER_ADDRESS` or more
//! gets no further connection, and a newcomer (a probe, a visitor) still
//! gets in. It takes as many addresses as the reserve has slots to fill it.

use super::client;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Connections an address may hold once only the reserve is free.
pub const RESERVE_PER_ADDRESS: usize = 2;

/// The slots of `max_connections` kept for addresses holding few.
pub fn reserve_of(max_connections: usize) -> usize {
    max_connections / 8
}

pub struct PerAddress {
    max: usize,
    reserve: usize,
    open: Mutex<HashMap<String, usize>>,
}

/// One open connection of an address; dropping it gives the place back.
pub struct Held {
    gate: Arc<PerAddress>,
    key: String,
}

impl PerAddress {
    /// `max` per address; `reserve` slots kept for addresses holding few.
    pub fn new(max: usize, reserve: usize) -> Arc<PerAddress> {
        Arc::new(PerAddress {
            max,
            reserve,
            open: Mutex::default(),
        })
    }

    /// A place for one more connection from `peer`, or `None` when it has
    /// `max` open already, or when only the reserve is left (`free`: the
    /// slots still free besides this connection's) and it holds its share
    /// of that.
    pub fn enter(self: &Arc<Self>, peer: IpAddr, free: usize) -> Option<Held> {
        let key = client::key(peer);
        let mut open = self.open.lock().expect("connections");
        let count = open.get(&key).copied().unwrap_or(0);
        let in_reserve = free < self.reserve;
        if count >= self.max || (in_reserve && count >= RESERVE_PER_ADDRESS) {
            return None;
        }
        let count = open.entry(key.clone()).or_default();
        *count += 1;
        Some(Held {
            gate: self.clone(),
            key,
        })
    }

    /// Addresses with a connection open (an entry goes with its last one).
    #[cfg(test)]
    fn addresses(&self) -> usize {
        self.open.lock().expect("connections").len()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.gate.open.lock().expect("connections");
        if let Some(count) = open.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plenty of slots free: the reserve plays no part.
    const FREE: usize = usize::MAX;

    fn a(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn each_address_gets_its_own_places_back() {
        let gate = PerAddress::new(2, 0);
        let first = gate.enter(a("10.0.0.1"), FREE).unwrap();
        let _second = gate.enter(a("10.0.0.1"), FREE).unwrap();
        assert!(gate.enter(a("10.0.0.1"), FREE).is_none());
        assert!(
            gate.enter(a("::ffff:10.0.0.1"), FREE).is_none(),
            "the same client"
        );
        let _other = gate.enter(a("10.0.0.2"), FREE).unwrap();
        drop(first);
        assert!(gate.enter(a("10.0.0.1"), FREE).is_some());
        // An IPv6 client is its /64.
        let _v6 = gate.enter(a("2001:db8::1"), FREE).unwrap();
        let _v6b = gate.enter(a("2001:db8::2"), FREE).unwrap();
        assert!(gate.enter(a("2001:db8::ffff:3"), FREE).is_none());
        assert!(gate.enter(a("2001:db8:0:1::1"), FREE).is_some());
    }

    #[test]
    fn the_reserve_goes_only_to_addresses_holding_few() {
        let reserve = reserve_of(64);
        assert_eq!(reserve, 8);
        let gate = PerAddress::new(16, reserve);
        let _heavy: Vec<_> = (0..5)
            .map(|_| gate.enter(a("10.0.0.1"), reserve).unwrap())
            .collect();
        // Only the reserve left: the heavy address is refused, a new one
        // gets its share and no more.
        assert!(gate.enter(a("10.0.0.1"), reserve - 1).is_none());
        let _new: Vec<_> = (0..RESERVE_PER_ADDRESS)
            .map(|_| gate.enter(a("10.0.0.2"), 1).unwrap())
            .collect();
        assert!(gate.enter(a("10.0.0.2"), 1).is_none());
        assert!(gate.enter(a("10.0.0.3"), 0).is_some());
    }

    #[test]
    fn an_address_leaves_the_map_with_its_last_connection() {
        let gate = PerAddress::new(4, 0);
        let held: Vec<_> = (0..3)
            .map(|_| gate.enter(a("10.0.0.9"), FREE).unwrap())
            .collect();
        assert_eq!(gate.addresses(), 1);
        drop(held);
        assert_eq!(gate.addresses(), 0);
    }
}
