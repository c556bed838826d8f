//! The hand-written `ModelSelection` deserializer behaves like the untagged derive it
//! replaced for any serde format (here serde_json), and serialises back to the same shape.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_config::{ModelChain, ModelSelection};
use serde_json::json;

#[test]
fn model_selection_round_trips_through_serde_json() {
    let primary: ModelSelection = serde_json::from_value(json!("a/b")).unwrap();
    assert_eq!(primary, ModelSelection::Primary("a/b".into()));
    assert_eq!(serde_json::to_value(&primary).unwrap(), json!("a/b"));

    let text = r#"{"primary": "a/b", "fallbacks": ["c/d"]}"#;
    let chain: ModelSelection = serde_json::from_str(text).unwrap();
    assert_eq!(
        chain,
        ModelSelection::Chain(ModelChain {
            primary: "a/b".into(),
            fallbacks: vec!["c/d".into()],
        })
    );
    assert_eq!(chain.primary(), "a/b");
    assert_eq!(chain.fallbacks(), ["c/d"]);
    assert_eq!(
        serde_json::to_value(&chain).unwrap(),
        json!({"primary": "a/b", "fallbacks": ["c/d"]})
    );

    let err = serde_json::from_value::<ModelSelection>(json!({"primary": "a/b", "x": 1}));
    assert!(
        err.unwrap_err()
            .to_string()
            .starts_with("unknown field `x`")
    );
    let err = serde_json::from_value::<ModelSelection>(json!(3)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid type: integer `3`, expected a model \"provider/model\" or { primary, fallbacks }"
    );
}
