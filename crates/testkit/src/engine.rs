//! The running script: picks the rule that answers a request (first match with uses left),
//! keeps rule use counts and the tool-call ids this server emitted, and caches instant-mode
//! frames.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::api::Api;
use crate::plan::{self, Pacing, Plan, RenderCtx};
use crate::request::{Delivery, ParsedRequest};
use crate::scenario::{Fault, Match, Reply, Scenario};
use crate::wire::{self, Frame};

/// Default text of one instant-mode delta.
const INSTANT_TOKEN: &str = "tok ";

/// What to answer one request with.
pub(crate) struct Decision {
    pub fault: Fault,
    pub plan: Plan,
    /// Pre-rendered frames (instant mode, SSE delivery).
    pub cached: Option<Arc<[Frame]>>,
}

type InstantKey = (Api, String, bool);

/// A scenario in play.
pub(crate) struct Script {
    scenario: Scenario,
    uses: Mutex<Vec<u32>>,
    emitted: Mutex<HashMap<String, String>>,
    seq: AtomicU64,
    instant_frames: Mutex<HashMap<InstantKey, Arc<[Frame]>>>,
}

/// Locks `mutex`, ignoring poisoning: the guarded data stays consistent across a panic here.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn unix_now() -> u64 {
    pincer_base::time::now_secs().unsigned_abs()
}

impl Script {
    pub fn new(scenario: Scenario) -> Self {
        let rules = scenario.rules.len();
        Self {
            scenario,
            uses: Mutex::new(vec![0; rules]),
            emitted: Mutex::new(HashMap::new()),
            seq: AtomicU64::new(1),
            instant_frames: Mutex::new(HashMap::new()),
        }
    }

    /// Re-chunking size for response bodies.
    pub fn byte_chunk(&self) -> Option<usize> {
        self.scenario.byte_chunk
    }

    /// Chooses and prepares the answer to `req`.
    pub fn decide(&self, req: &ParsedRequest) -> Decision {
        let ctx = RenderCtx {
            model: req.model.clone(),
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            created: unix_now(),
            include_usage: req.include_usage,
        };
        let chosen = self.take_rule(req);
        let fault = chosen
            .as_ref()
            .and_then(|(_, fault)| fault.clone())
            .unwrap_or_default();
        let reply = chosen
            .and_then(|(reply, _)| reply)
            .or_else(|| self.scenario.default.clone());
        let plan = match (reply, &self.scenario.instant) {
            (Some(reply), _) => self.plan(&reply, req, ctx),
            (None, Some(instant)) => {
                let token = instant.token.as_deref().unwrap_or(INSTANT_TOKEN);
                let plan = plan::instant(instant.tokens, token, ctx);
                let cached =
                    (req.delivery == Delivery::Sse).then(|| self.instant_cached(req, &plan));
                return Decision {
                    fault,
                    plan,
                    cached,
                };
            }
            (None, None) => {
                let echo = format!("mock: {}", req.last_user.as_deref().unwrap_or_default());
                self.plan(&Reply::text(echo), req, ctx)
            }
        };
        Decision {
            fault,
            plan,
            cached: None,
        }
    }

    fn plan(&self, reply: &Reply, req: &ParsedRequest, ctx: RenderCtx) -> Plan {
        let pacing = Pacing {
            chunk_size: self.scenario.chunk_size,
            delay_ms: self.scenario.delay_ms,
        };
        let plan = plan::build(reply, pacing, req.api, ctx, req.body_bytes);
        let mut emitted = lock(&self.emitted);
        for call in &plan.calls {
            emitted.insert(call.id.clone(), call.name.clone());
        }
        plan
    }

    fn instant_cached(&self, req: &ParsedRequest, plan: &Plan) -> Arc<[Frame]> {
        let key = (req.api, req.model.clone(), req.include_usage);
        let mut cache = lock(&self.instant_frames);
        cache
            .entry(key)
            .or_insert_with(|| wire::frames(req.api, plan).into())
            .clone()
    }

    /// Finds the first matching rule with uses left, counts the use, and returns its reply and
    /// fault.
    fn take_rule(&self, req: &ParsedRequest) -> Option<(Option<Reply>, Option<Fault>)> {
        let mut uses = lock(&self.uses);
        for (index, rule) in self.scenario.rules.iter().enumerate() {
            let used = uses.get(index).copied().unwrap_or(0);
            if rule.times.is_some_and(|times| used >= times) {
                continue;
            }
            if self.matches(&rule.when, req) {
                if let Some(count) = uses.get_mut(index) {
                    *count += 1;
                }
                return Some((rule.reply.clone(), rule.fault.clone()));
            }
        }
        None
    }

    fn matches(&self, when: &Match, req: &ParsedRequest) -> bool {
        if when.api.is_some_and(|api| api != req.api) {
            return false;
        }
        if when.model.as_ref().is_some_and(|model| *model != req.model) {
            return false;
        }
        if when.last_user.is_some() || when.last_user_contains.is_some() {
            let text = match (&req.tool_result, &req.last_user) {
                (None, Some(text)) => text,
                _ => return false,
            };
            if when.last_user.as_ref().is_some_and(|want| want != text) {
                return false;
            }
            if when
                .last_user_contains
                .as_ref()
                .is_some_and(|needle| !text.contains(needle.as_str()))
            {
                return false;
            }
        }
        if when.tool_result.is_some() || when.tool_result_id.is_some() {
            let Some(result) = &req.tool_result else {
                return false;
            };
            if let Some(want) = &when.tool_result_id
                && result.call_id.as_ref() != Some(want)
            {
                return false;
            }
            if let Some(want) = &when.tool_result {
                let name = result.name.clone().or_else(|| {
                    let id = result.call_id.as_ref()?;
                    req.call_names
                        .get(id)
                        .cloned()
                        .or_else(|| lock(&self.emitted).get(id).cloned())
                });
                if name.as_ref() != Some(want) {
                    return false;
                }
            }
        }
        true
    }
}
