//! A browser sign-in in progress, the part every PKCE login shares (openai-codex,
//! anthropic, google-gemini-cli): the PKCE pair, the `state`, what the CLI shows, and the
//! loopback callback listener, which stops when the login is closed or dropped.

use std::net::SocketAddr;
use std::time::Duration;

use super::OAuthError;
use super::callback::CallbackListener;
use super::codex::{LoginStart, parse_authorization_input};
use super::pkce::Pkce;
use crate::secret::Secret;

/// The shared state of a login between "open this URL" and the code exchange.
#[derive(Debug)]
pub(crate) struct PendingLogin {
    pkce: Pkce,
    state: String,
    start: LoginStart,
    listener: Option<CallbackListener>,
}

/// What the code exchange needs once the login is closed (the listener is gone).
pub(crate) struct ClosedLogin {
    pub(crate) pkce: Pkce,
    pub(crate) state: String,
    pub(crate) start: LoginStart,
}

impl PendingLogin {
    /// Binds the callback listener on `addr` at `path`. If the port is taken the login
    /// still starts, without a listener ([`LoginStart::listener_error`] says why), and the
    /// user pastes the redirect instead. The redirect URI is made from the port actually
    /// bound, then the browser URL from the challenge, `state` and that URI.
    pub(crate) async fn open(
        pkce: Pkce,
        state: String,
        addr: SocketAddr,
        path: &str,
        redirect_uri: impl FnOnce(u16) -> String,
        authorize_url: impl FnOnce(&str, &str, &str) -> String,
    ) -> Self {
        let (listener, listener_error) = match CallbackListener::bind(addr, path, &state).await {
            Ok(listener) => (Some(listener), None),
            Err(error) => (None, Some(error.to_string())),
        };
        let port = listener.as_ref().map_or(addr.port(), |l| l.addr().port());
        let redirect_uri = redirect_uri(port);
        let url = authorize_url(pkce.challenge(), &state, &redirect_uri);
        Self {
            pkce,
            state,
            start: LoginStart {
                url,
                redirect_uri,
                listening_on: listener.as_ref().map(CallbackListener::addr),
                listener_error,
            },
            listener,
        }
    }

    pub(crate) fn start(&self) -> &LoginStart {
        &self.start
    }

    /// Waits up to `timeout` for the browser's redirect. `Ok(None)`: it did not come (or
    /// there is no listener); ask the user to paste. An error: the server refused sign-in.
    pub(crate) async fn wait_for_callback(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<Secret>, OAuthError> {
        match self.listener.as_mut() {
            Some(listener) => listener.wait(timeout).await,
            None => Ok(None),
        }
    }

    /// The code in what the user pasted (`code#state`, the redirect URL, or the bare
    /// code); a `state` in it must be this login's.
    pub(crate) fn parse_pasted(&self, input: &str) -> Result<Secret, OAuthError> {
        let pasted = parse_authorization_input(input);
        if pasted.state.as_ref().is_some_and(|s| *s != self.state) {
            return Err(OAuthError::StateMismatch);
        }
        pasted.code.ok_or(OAuthError::MissingCode)
    }

    /// Stops the listener and hands over what the code exchange needs.
    pub(crate) fn close(self) -> ClosedLogin {
        let Self {
            pkce,
            state,
            start,
            listener,
        } = self;
        drop(listener);
        ClosedLogin { pkce, state, start }
    }
}
