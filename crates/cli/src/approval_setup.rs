//! `tools.exec.ask` for an agent's `exec`: the policy from the configuration and the port it
//! asks through. The port is [`App::exec_approver`], a slot the gateway binds as it starts
//! (`pincer_gateway::server::approvals::bind_exec_approvals`). Without a gateway
//! (`pincer ask`, `pincer chat` on its own) nobody can be asked: a command that needs an
//! approval is denied with a message that says so.

use std::sync::Arc;
use std::time::Duration;

use pincer_config::{ExecAskName, ToolsConfig};
use pincer_team::PortSlot;
use pincer_tools::exec::approval::{
    ApprovalFuture, ApprovalRequest, AskMode, DEFAULT_APPROVAL_TIMEOUT, ExecApproval, ExecApprover,
    Outcome,
};
use pincer_tools::exec::approvals_file::ApprovalsStore;

use crate::app::App;

/// The approval policy of an agent whose tools section is `section` (`None`: never asks).
pub fn exec_approval(app: &App, section: &ToolsConfig) -> Option<ExecApproval> {
    let exec = section.exec.as_ref()?;
    let ask = match exec.ask? {
        ExecAskName::Off => return None,
        ExecAskName::OnMiss => AskMode::OnMiss,
        ExecAskName::Always => AskMode::Always,
    };
    let timeout = exec
        .approval_timeout_ms
        .map_or(DEFAULT_APPROVAL_TIMEOUT, Duration::from_millis);
    Some(ExecApproval {
        ask,
        timeout,
        store: ApprovalsStore::in_home(&app.home),
        approver: Arc::new(SlotApprover {
            slot: app.exec_approver.clone(),
        }),
    })
}

/// Asks through the gateway once it is bound; before (or without) one, denies.
struct SlotApprover {
    slot: PortSlot<dyn ExecApprover>,
}

impl ExecApprover for SlotApprover {
    fn request(&self, request: ApprovalRequest) -> ApprovalFuture<'_> {
        match self.slot.get() {
            Some(port) => Box::pin(async move { port.request(request).await }),
            None => Box::pin(async {
                Outcome::Unavailable(
                    "nobody can approve it here: approvals are answered through the gateway \
                     (`pincer gateway run`, then exec.approval.resolve, the web chat or \
                     /approve in the session's chat)"
                        .to_owned(),
                )
            }),
        }
    }
}
