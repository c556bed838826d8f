//! [`PortSlot`]: a port bound once, later than the tools that use it. An agent's tools are
//! built by the composition root before the gateway runs; the gateway binds its side as it
//! starts, and a tool called outside a gateway (`pincer ask`) finds the slot empty and says so.

use std::sync::{Arc, OnceLock};

/// A late-bound port `P` (usually a `dyn Trait`). Clones share the binding.
pub struct PortSlot<P: ?Sized> {
    port: Arc<OnceLock<Arc<P>>>,
}

impl<P: ?Sized> Clone for PortSlot<P> {
    fn clone(&self) -> Self {
        Self {
            port: Arc::clone(&self.port),
        }
    }
}

impl<P: ?Sized> Default for PortSlot<P> {
    fn default() -> Self {
        Self {
            port: Arc::new(OnceLock::new()),
        }
    }
}

impl<P: ?Sized> std::fmt::Debug for PortSlot<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortSlot")
            .field("bound", &self.port.get().is_some())
            .finish()
    }
}

impl<P: ?Sized> PortSlot<P> {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds `port`; `false` (and `port` dropped) when the slot was already bound: the
    /// first binding wins.
    pub fn bind(&self, port: Arc<P>) -> bool {
        self.port.set(port).is_ok()
    }

    /// The bound port, if any.
    pub fn get(&self) -> Option<Arc<P>> {
        self.port.get().cloned()
    }
}
