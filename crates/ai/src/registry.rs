//! The API registry: which implementation streams which wire API. Built-ins are registered
//! at construction; more can be registered (and removed by source) at run time, as pi's
//! `registerApiProvider` / `unregisterApiProviders` allow.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::event::AssistantStream;
use crate::model::Model;
use crate::options::StreamOptions;
use crate::types::Context;

/// Something that can stream a reply for a model of one wire API.
pub trait ApiProvider: Send + Sync {
    /// The API name models refer to (`model.api`).
    fn api(&self) -> &str;

    /// Start streaming. `options.api_key` already holds the resolved key, if any.
    /// Must not block; failures are reported as the stream's `error` event.
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream;
}

struct Entry {
    provider: Arc<dyn ApiProvider>,
    source: Option<String>,
}

/// Maps API names to implementations.
#[derive(Default)]
pub struct ApiRegistry {
    entries: RwLock<HashMap<String, Entry>>,
}

impl std::fmt::Debug for ApiRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiRegistry")
            .field("apis", &self.apis())
            .finish()
    }
}

impl ApiRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry with every built-in API, sharing one HTTP client.
    pub fn with_builtins(client: impl Into<crate::client::LazyHttpClient>) -> Self {
        let registry = Self::new();
        for provider in crate::providers::builtins(client) {
            registry.register(provider, None);
        }
        registry
    }

    /// Register (or replace) the implementation of `provider.api()`. `source` tags it so
    /// [`ApiRegistry::unregister_source`] can remove everything one extension added.
    pub fn register(&self, provider: Arc<dyn ApiProvider>, source: Option<&str>) {
        let api = provider.api().to_owned();
        let entry = Entry {
            provider,
            source: source.map(str::to_owned),
        };
        self.write().insert(api, entry);
    }

    pub fn get(&self, api: &str) -> Option<Arc<dyn ApiProvider>> {
        self.read().get(api).map(|e| Arc::clone(&e.provider))
    }

    /// Remove every API registered with `source`.
    pub fn unregister_source(&self, source: &str) {
        self.write()
            .retain(|_, e| e.source.as_deref() != Some(source));
    }

    /// Names of all registered APIs, sorted.
    pub fn apis(&self) -> Vec<String> {
        let mut names: Vec<String> = self.read().keys().cloned().collect();
        names.sort();
        names
    }

    // A poisoned lock only means another thread panicked mid-insert of a complete entry;
    // the map itself is still consistent, so keep serving it.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Entry>> {
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Entry>> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }
}
