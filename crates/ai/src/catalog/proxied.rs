//! Proxy providers in the models configuration (`api: "proxy"`): pi's `streamProxy` made
//! selectable. A provider such as
//! `relay: {api: "proxy", baseUrl: "https://genai.example.com", apiKey: "RELAY_TOKEN",
//! models: [{id: "anthropic/claude-sonnet-4-5"}]}` offers `relay/anthropic/claude-sonnet-4-5`:
//! each model's id names the model it stands for (`provider/id`, built in or configured
//! by a provider that is not a proxy), whose details it takes unless it sets its own; its
//! turns go to the proxy's `/api/stream` with the provider's key as the bearer token, and
//! the proxy is sent the model it stands for, as pi's `streamProxy` sends it.

use std::collections::BTreeMap;
use std::sync::Arc;

use pincer_base::Secret;

use super::{CatalogError, CustomModel, ModelRegistry, merge_headers};
use crate::model::{Model, apis};
use crate::registry::ApiProvider;

impl ModelRegistry {
    /// The model `custom` of the proxy provider `provider`, recording what it stands for.
    pub(super) fn proxied_model(
        &mut self,
        provider: &str,
        base_url: Option<&str>,
        headers: Option<&BTreeMap<String, Secret>>,
        custom: CustomModel,
    ) -> Result<Model, CatalogError> {
        let err = |message: String| CatalogError::Provider {
            provider: provider.to_owned(),
            message,
        };
        let upstream = custom
            .id
            .split_once('/')
            .and_then(|(p, id)| self.find(p, id))
            .filter(|m| m.api != apis::PROXY)
            .cloned()
            .ok_or_else(|| {
                err(format!(
                    "proxied model \"{}\" must name the model it stands for as provider/id, \
                     a built-in model or one of a provider that is not a proxy (e.g. \
                     anthropic/claude-sonnet-4-5)",
                    custom.id
                ))
            })?;
        let Some(base_url) = custom.base_url.or_else(|| base_url.map(str::to_owned)) else {
            return Err(err(format!(
                "model \"{}\" needs a \"baseUrl\" (the proxy's address)",
                custom.id
            )));
        };
        let model = Model {
            name: custom.name.unwrap_or_else(|| upstream.name.clone()),
            id: custom.id,
            api: apis::PROXY.to_owned(),
            provider: provider.to_owned(),
            base_url,
            reasoning: custom.reasoning.unwrap_or(upstream.reasoning),
            input: custom.input.unwrap_or_else(|| upstream.input.clone()),
            cost: custom.cost.unwrap_or_else(|| upstream.cost.clone()),
            context_window: custom.context_window.unwrap_or(upstream.context_window),
            max_tokens: custom.max_tokens.unwrap_or(upstream.max_tokens),
            headers: merge_headers(headers, custom.headers),
            compat: custom.compat.or_else(|| upstream.compat.clone()),
        };
        self.proxied.insert(model.reference(), upstream);
        Ok(model)
    }

    /// The model a proxied model stands for (`None` for a model that is not proxied).
    pub fn upstream(&self, model: &Model) -> Option<&Model> {
        self.proxied.get(&model.reference())
    }

    /// The implementation of the `proxy` API for this registry's proxied models, to
    /// register on the client that streams them ([`crate::ApiRegistry::register`]); `None`
    /// when the configuration has no proxy provider.
    pub fn proxy_api(&self) -> Option<Arc<dyn ApiProvider>> {
        (!self.proxied.is_empty()).then(|| {
            Arc::new(crate::providers::proxy::ConfiguredProxy::new(
                self.proxied.clone(),
            )) as Arc<dyn ApiProvider>
        })
    }
}
