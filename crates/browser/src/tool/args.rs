//! The `browser` tool's parameters: one flat object with an `action` and the optional
//! fields each action reads (OpenClaw's shape; provider validators take a flat object more
//! reliably than a union). The doc comments are what the model reads.

use serde::Deserialize;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Whether the browser runs.
    Status,
    /// Start the browser (other actions start it too).
    Start,
    /// End the browser; every session's tabs are closed.
    Stop,
    /// Open `url` in a new tab of this session and focus it.
    Open,
    /// List this session's tabs.
    Tabs,
    /// Focus the tab `targetId`.
    Focus,
    /// Close the tab `targetId` (default: the focused tab).
    Close,
    /// Load `url` in the tab (default: the focused tab).
    Navigate,
    /// The page as an outline of roles, names and element refs (e12) to act on.
    Snapshot,
    /// Click, type, press, hover, select or fill the element `ref` from the latest snapshot.
    Act,
    /// A PNG of the page (or of the element `ref`), saved in the workspace and shown to you.
    Screenshot,
    /// The page as a PDF saved in the workspace.
    Pdf,
    /// Recent console messages and errors of the tab.
    Console,
    /// Run JavaScript `expression` in the page (only when enabled in the configuration).
    Evaluate,
}

/// The kind of `act`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ActKind {
    /// Click the element (a real mouse click at its center).
    Click,
    /// Focus the element and type `text` (then Enter when `submit` is true).
    Type,
    /// Press `key` (Enter, Tab, Escape, Backspace, ArrowDown, a letter, Control+A), on the
    /// element `ref` when given, else on whatever has focus.
    Press,
    /// Move the mouse over the element.
    Hover,
    /// Choose `values` (option values or labels) in a select element.
    Select,
    /// Set the element's value to `text` at once (input and change events fire).
    Fill,
}

/// Arguments of `browser`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrowserArgs {
    /// status, start, stop, open, tabs, focus, close, navigate, snapshot, act, screenshot,
    /// pdf, console or evaluate.
    pub action: Action,
    /// The URL for open and navigate (http or https).
    #[serde(default, alias = "targetUrl")]
    pub url: Option<String>,
    /// The tab, as listed by tabs or returned by open; omit for the focused tab.
    #[serde(default)]
    pub target_id: Option<String>,
    /// snapshot: the most characters of outline to return (default 20000).
    #[serde(default)]
    pub max_chars: Option<usize>,
    /// act, screenshot: the element ref from the latest snapshot (e.g. "e12").
    #[serde(default, rename = "ref")]
    pub element: Option<String>,
    /// act: what to do with the element.
    #[serde(default)]
    pub kind: Option<ActKind>,
    /// act type/fill: the text.
    #[serde(default)]
    pub text: Option<String>,
    /// act press: the key, e.g. "Enter", "Tab", "Escape", "ArrowDown", "a", "Control+A".
    #[serde(default)]
    pub key: Option<String>,
    /// act select: the option values (or visible labels) to choose.
    #[serde(default)]
    pub values: Option<Vec<String>>,
    /// act type: press Enter after typing.
    #[serde(default)]
    pub submit: Option<bool>,
    /// screenshot: the whole page, not just what is in view.
    #[serde(default)]
    pub full_page: Option<bool>,
    /// evaluate: a JavaScript expression; its value is returned as JSON.
    #[serde(default)]
    pub expression: Option<String>,
}

impl BrowserArgs {
    /// `url`, or an error saying the action needs one.
    pub fn required_url(&self) -> Result<&str, String> {
        self.url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .ok_or_else(|| "give url: the http(s) address to load".to_owned())
    }
}
