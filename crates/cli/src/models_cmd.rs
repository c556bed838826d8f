//! `pincer models`: every model the registry knows (the built-in catalog, the config's
//! custom providers, the offline stub), marking the one `pincer ask` would use.

use std::process::ExitCode;

use anyhow::Result;
use pincer_turns::model_select::{ModelRequest, SelectionContext, select_model};
use serde_json::json;

use crate::app::App;
use crate::cli::ModelsArgs;

pub fn run(app: &App, args: ModelsArgs) -> Result<ExitCode> {
    let registry = app.registry()?;
    let custom = app.custom_providers();
    let profiles = crate::credentials::profile_providers(app)?;
    let agent_id = app.agent_id(None)?;
    let request = ModelRequest {
        agent: app.agent_entry(&agent_id).and_then(|a| a.model.as_ref()),
        defaults: app.config.agents.defaults.model.as_ref(),
        ..ModelRequest::default()
    };
    let cx = SelectionContext {
        registry: &registry,
        env: app.env.as_ref(),
        custom_providers: &custom,
        profile_providers: &profiles,
    };
    let chosen = select_model(&request, &cx)?.primary.reference();
    let models: Vec<_> = registry
        .models()
        .iter()
        .filter(|m| args.provider.as_deref().is_none_or(|p| m.provider == p))
        .collect();
    if args.json {
        let list: Vec<_> = models
            .iter()
            .map(|m| {
                json!({
                    "model": m.reference(), "name": m.name, "api": m.api,
                    "contextWindow": m.context_window, "maxTokens": m.max_tokens,
                    "default": m.reference() == chosen,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    if models.is_empty() {
        eprintln!(
            "no models for provider {:?}; known providers: {}",
            args.provider.unwrap_or_default(),
            registry.providers().join(", ")
        );
        return Ok(ExitCode::from(1));
    }
    for m in models {
        let mark = if m.reference() == chosen { "*" } else { " " };
        println!(
            "{mark} {:<50} {:>9} ctx  {}",
            m.reference(),
            m.context_window,
            m.name
        );
    }
    println!("\n* the model `pincer ask` uses now (--model provider/model changes it)");
    Ok(ExitCode::SUCCESS)
}
