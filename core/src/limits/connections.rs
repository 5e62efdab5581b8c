//! Open connections per client address, so one client cannot hold every
//! connection slot (`max_connections`) and lock everyone else out. Counted
//! by `client::key` (an IPv6 client by its /64). A trusted proxy is not
//! counted: all of its clients arrive from its address, and it keeps its
//! own per-client limits.

use super::client;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

pub struct PerAddress {
    max: usize,
    open: Mutex<HashMap<String, usize>>,
}

/// One open connection of an address; dropping it gives the place back.
pub struct Held {
    gate: Arc<PerAddress>,
    key: String,
}

impl PerAddress {
    pub fn new(max: usize) -> Arc<PerAddress> {
        Arc::new(PerAddress {
            max,
            open: Mutex::default(),
        })
    }

    /// A place for one more connection from `peer`, or `None` when it has
    /// `max` open already.
    pub fn enter(self: &Arc<Self>, peer: IpAddr) -> Option<Held> {
        let key = client::key(peer);
        let mut open = self.open.lock().expect("connections");
        let count = open.entry(key.clone()).or_default();
        if *count >= self.max {
            return None;
        }
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
    use super::PerAddress;

    #[test]
    fn each_address_gets_its_own_places_back() {
        let gate = PerAddress::new(2);
        let a = |s: &str| s.parse().unwrap();
        let first = gate.enter(a("10.0.0.1")).unwrap();
        let _second = gate.enter(a("10.0.0.1")).unwrap();
        assert!(gate.enter(a("10.0.0.1")).is_none());
        assert!(
            gate.enter(a("::ffff:10.0.0.1")).is_none(),
            "the same client"
        );
        let _other = gate.enter(a("10.0.0.2")).unwrap();
        drop(first);
        assert!(gate.enter(a("10.0.0.1")).is_some());
        // An IPv6 client is its /64.
        let _v6 = gate.enter(a("2001:db8::1")).unwrap();
        let _v6b = gate.enter(a("2001:db8::2")).unwrap();
        assert!(gate.enter(a("2001:db8::ffff:3")).is_none());
        assert!(gate.enter(a("2001:db8:0:1::1")).is_some());
    }

    #[test]
    fn an_address_leaves_the_map_with_its_last_connection() {
        let gate = PerAddress::new(4);
        let held: Vec<_> = (0..3)
            .map(|_| gate.enter("10.0.0.9".parse().unwrap()).unwrap())
            .collect();
        assert_eq!(gate.addresses(), 1);
        drop(held);
        assert_eq!(gate.addresses(), 0);
    }
}
