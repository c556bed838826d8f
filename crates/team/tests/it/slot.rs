//! `PortSlot`: the first binding wins and every clone sees it.

use std::sync::Arc;

use pincer_team::PortSlot;

trait Greeter: Send + Sync {
    fn greet(&self) -> String;
}

struct Named(&'static str);

impl Greeter for Named {
    fn greet(&self) -> String {
        format!("hello from {}", self.0)
    }
}

#[test]
fn a_slot_is_empty_until_bound_and_clones_share_the_first_binding() {
    let slot: PortSlot<dyn Greeter> = PortSlot::new();
    let clone = slot.clone();
    assert!(clone.get().is_none());
    assert!(slot.bind(Arc::new(Named("gateway"))));
    assert!(!slot.bind(Arc::new(Named("second"))));
    assert_eq!(
        clone.get().map(|g| g.greet()).as_deref(),
        Some("hello from gateway")
    );
}
