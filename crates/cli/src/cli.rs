//! The command line: every command, flag and help text of `pincer` (clap derive). The
//! `ask` flags follow lainclaw's contract: boolean switches take `--x`, `--no-x` and
//! `--x=on|off|true|false|1|0`.

use clap::{ArgAction, ArgGroup, Args, Parser, Subcommand};
use pincer_config::GatewayBind;

/// Pincer: a personal AI-agent gateway. Ask an agent from the terminal, manage its
/// sessions, tools, credentials and configuration.
#[derive(Debug, Parser)]
#[command(
    name = "pincer",
    version,
    disable_version_flag = true,
    after_help = "State lives in $PINCER_HOME (default ~/.pincer). Without any API key the offline stub model answers."
)]
pub struct Cli {
    /// Print the version.
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    pub version: Option<bool>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ask the agent; the reply streams to the terminal and the conversation is remembered.
    Ask(AskArgs),
    /// Chat with the agent in the terminal: streamed replies, history, /new, /model, /think,
    /// /status, /stop, /sessions; in process, or through a gateway with --url.
    Chat(crate::chat::ChatArgs),
    /// List, describe and run tools by hand.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// List, show, reset and export sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Manage credentials (API keys, OAuth logins).
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Read and change the configuration ($PINCER_HOME/pincer.json5).
    #[command(subcommand)]
    Config(ConfigCommand),
    /// List the models Pincer knows, and which one `ask` would use.
    Models(ModelsArgs),
    /// Run the gateway daemon (foreground by default), or start, inspect and stop it.
    Gateway(GatewayArgs),
    /// Schedule jobs that make an agent act on its own (they run while the gateway runs).
    #[command(subcommand)]
    Cron(CronCommand),
    /// Approve who may message the agent on chat channels (DM pairing).
    #[command(subcommand)]
    Pairing(PairingCommand),
    /// Send a message to a chat on a running channel (through the gateway).
    #[command(subcommand)]
    Message(crate::message_cmd::MessageCommand),
    /// Index and search the agent's Markdown memory (MEMORY.md, memory/*.md).
    #[command(subcommand)]
    Memory(crate::memory_cmd::MemoryCommand),
    /// The dedicated browser of the `browser` tool: its status, or stop it.
    #[command(subcommand)]
    Browser(crate::browser_cmd::BrowserCommand),
    /// The configured MCP servers: list them, their status and tools, call a tool by hand.
    #[command(subcommand)]
    Mcp(crate::mcp_cmd::McpCommand),
    /// What the web tools, the browser and the exec sandboxes can do here, with this
    /// configuration.
    Doctor,
    /// Run as a worker speaking pi's RPC protocol (`pi --mode rpc`) on stdin/stdout.
    Rpc(RpcArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// On/off values of a switch.
pub fn parse_switch(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(format!(
            "expected on, off, true, false, 1 or 0, not {value:?}"
        )),
    }
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// What to ask. `/new` starts a new session; `tool: <name> {json}` runs a tool by hand
    /// (a question may follow on the next line). Put `--` first if it begins with `-`.
    #[arg(value_name = "INPUT", num_args = 0..)]
    pub input: Vec<String>,
    /// Provider id (its default model unless --model is given).
    #[arg(long)]
    pub provider: Option<String>,
    /// Model, `provider/model` (or a bare id with --provider).
    #[arg(long)]
    pub model: Option<String>,
    /// Auth profile to use (`pincer auth status` lists them).
    #[arg(long)]
    pub profile: Option<String>,
    /// Session key: `main`, a name, or a full `agent:…` key.
    #[arg(long, default_value = "main")]
    pub session: String,
    /// Agent id (default: the configured default agent, else `main`).
    #[arg(long)]
    pub agent: Option<String>,
    /// Start a new session under the key first (the old transcript is kept).
    #[arg(long)]
    pub new_session: bool,
    /// Remember this session in memory (--memory, --no-memory, --memory=on|off).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on",
          value_parser = parse_switch, overrides_with = "no_memory")]
    pub memory: Option<bool>,
    #[arg(long, overrides_with = "memory", hide = true)]
    pub no_memory: bool,
    /// Let the model use tools (--with-tools, --no-with-tools, --with-tools=on|off).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on",
          value_parser = parse_switch, overrides_with = "no_with_tools")]
    pub with_tools: Option<bool>,
    #[arg(long, overrides_with = "with_tools", hide = true)]
    pub no_with_tools: bool,
    /// Only these tools (comma-separated names); empty means every allowed tool.
    #[arg(long, value_delimiter = ',')]
    pub tool_allow: Vec<String>,
    /// Most tool rounds before the loop is stopped.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub tool_max_steps: u32,
    /// Print lainclaw's JSON result object instead of streaming text.
    #[arg(long)]
    pub json: bool,
    /// Begin the reply with where it came from (`[provider/model:profile]`), for tracing.
    #[arg(long)]
    pub debug: bool,
    /// Attach an image (PNG, JPEG, GIF or WebP; repeatable; `-` reads it from standard
    /// input): copied into the agent's workspace inbox and shown to a model that takes images.
    #[arg(long = "image", value_name = "PATH")]
    pub image: Vec<std::path::PathBuf>,
    /// Attach a file (repeatable; `-` reads it from standard input): copied into the agent's
    /// workspace inbox and named in the message, so the agent can read it.
    #[arg(long = "file", value_name = "PATH")]
    pub file: Vec<std::path::PathBuf>,
}

impl AskArgs {
    /// `--memory` / `--no-memory`, if either was given.
    pub fn memory_switch(&self) -> Option<bool> {
        if self.no_memory {
            Some(false)
        } else {
            self.memory
        }
    }

    /// Tools are on unless switched off.
    pub fn tools_on(&self) -> bool {
        !self.no_with_tools && self.with_tools.unwrap_or(true)
    }
}

/// Where a command finds its agent.
#[derive(Debug, Args, Clone)]
pub struct AgentArg {
    /// Agent id (default: the configured default agent, else `main`).
    #[arg(long)]
    pub agent: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Every tool the agent has, as JSON `[{name, description, inputSchema}]`.
    List(AgentArg),
    /// One tool, as JSON.
    Info {
        name: String,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Run a tool; prints the execution log as JSON. Exits 0 only if the tool succeeded.
    Invoke {
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        #[command(flatten)]
        agent: AgentArg,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Every session of the agent, newest first.
    List {
        #[command(flatten)]
        agent: AgentArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One session's index entry and transcript summary, as JSON.
    Show {
        key: String,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Start a new session under the key (the old transcript is kept).
    Reset {
        key: String,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// The session's conversation as Markdown.
    Export {
        key: String,
        #[command(flatten)]
        agent: AgentArg,
        /// Write to this file instead of standard output.
        #[arg(long, short = 'o')]
        output: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Store a credential: an API key (from standard input or a prompt), or a sign-in:
    /// openai-codex (ChatGPT), github-copilot (device code), anthropic (Claude Pro/Max,
    /// when run at a terminal or with --oauth).
    Login {
        /// Provider id, e.g. anthropic, openai, openai-codex, github-copilot.
        provider: String,
        /// Profile name (default `default`).
        #[arg(long)]
        name: Option<String>,
        /// openai-codex, anthropic: do not wait for the browser callback; paste the code
        /// instead.
        #[arg(long)]
        paste: bool,
        /// anthropic: sign in with Claude Pro/Max (OAuth) even though standard input is
        /// not a terminal (a piped standard input otherwise means an API key).
        #[arg(long)]
        oauth: bool,
        /// github-copilot: the GitHub Enterprise domain (e.g. company.ghe.com).
        #[arg(long, value_name = "DOMAIN")]
        enterprise: Option<String>,
    },
    /// The stored profiles, with masked secrets and their state.
    Status,
    /// Prefer this profile for its provider.
    Use { profile: String },
    /// Remove a profile, or every profile with --all.
    Logout {
        profile: Option<String>,
        #[arg(long, conflicts_with = "profile")]
        all: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print a value (secrets masked), or the whole file.
    Get { path: Option<String> },
    /// Set a value (JSON5 if it parses, else a string). The result is validated first.
    Set { path: String, value: String },
    /// Remove a value.
    Unset { path: String },
    /// Check the file; exits non-zero with the problems if it is invalid.
    Validate,
    /// Print the file's path.
    Path,
    /// Print the JSON schema of the configuration.
    Schema,
}

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Only this provider's models.
    #[arg(long)]
    pub provider: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `pincer gateway [run|start|status|stop|token|config|protocol]`; plain `pincer gateway` is `run`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct GatewayArgs {
    #[command(subcommand)]
    pub command: Option<GatewayCommand>,
    #[command(flatten)]
    pub run: GatewayRunArgs,
}

#[derive(Debug, Subcommand)]
pub enum GatewayCommand {
    /// Run the gateway in the foreground until Ctrl-C or SIGTERM (the default).
    Run(GatewayRunArgs),
    /// Start the gateway: detached with --daemon, else in the foreground like `run`.
    Start(GatewayStartArgs),
    /// Whether the daemon runs, as JSON (with its channels and run settings).
    Status(GatewayChannelArg),
    /// Stop the daemon (SIGTERM, then SIGKILL after 5 s); with --channel only when that is
    /// the gateway's only channel.
    Stop(GatewayChannelArg),
    /// Print the gateway token clients must present (created on first use).
    Token,
    /// Show or change the `gateway` section of the configuration (port, bind, token).
    #[command(subcommand)]
    Config(GatewayConfigCommand),
    /// Print the WebSocket protocol the gateway speaks (methods, scopes, params schemas) as JSON.
    Protocol,
}

#[derive(Debug, Subcommand)]
pub enum GatewayConfigCommand {
    /// Set the port, bind address or token the gateway starts with (checked, then saved).
    Set(Box<GatewayConfigSetArgs>),
    /// The gateway settings and whether each is the default or set in the config.
    Show {
        /// Print JSON `{channel, configPath, config: {key: {value, source}}}`.
        #[arg(long)]
        json: bool,
        /// The settings as this channel sees them (`gateway.channels.<channel>` over
        /// `gateway.default`).
        #[arg(long, value_parser = crate::gateway::run_settings::parse_channel)]
        channel: Option<String>,
    },
    /// Without --channel: the `gateway` section's settings (port, bind, token, debug and
    /// `gateway.default`), back to the defaults; with --channel only that channel's layer.
    Clear {
        #[arg(long, value_parser = crate::gateway::run_settings::parse_channel)]
        channel: Option<String>,
    },
}

/// `gateway status|stop [--channel c]`.
#[derive(Debug, Args, Clone)]
pub struct GatewayChannelArg {
    /// Only this channel of the gateway.
    #[arg(long, value_parser = crate::gateway::run_settings::parse_channel)]
    pub channel: Option<String>,
    /// Print JSON (the default for `status`).
    #[arg(long)]
    pub json: bool,
}

/// `gateway config set`. Values are taken as text and checked by the command, so a bad
/// one is reported with what to do (and exit 1), like every other configuration error.
#[derive(Debug, Args)]
pub struct GatewayConfigSetArgs {
    /// Port to listen on, 1 to 65535.
    #[arg(long)]
    pub port: Option<String>,
    /// `loopback`, `lan` or an IP address of this machine.
    #[arg(long)]
    pub bind: Option<String>,
    /// The token clients present (instead of the generated token file).
    #[arg(long)]
    pub token: Option<String>,
    /// The run settings (`gateway.default`, or with one --channel the pairing settings of
    /// `gateway.channels.<channel>`); `--debug` sets `gateway.debug`.
    #[command(flatten)]
    pub turn: crate::gateway::run_settings::TurnArgs,
}

/// Where the gateway listens and how clients authenticate. Port and bind not given here
/// come from the config's `gateway` section, else the defaults (18789, loopback).
#[derive(Debug, Args, Clone)]
pub struct ListenArgs {
    /// Port to listen on (default: gateway.port in the config, else 18789); 0 picks a
    /// free one (the real port is printed).
    #[arg(long, env = "PINCER_GATEWAY_PORT")]
    pub port: Option<u16>,
    /// Address to listen on: `loopback` (127.0.0.1), `lan` (0.0.0.0, every interface)
    /// or an IP address (default: gateway.bind in the config, else loopback).
    #[arg(long, value_parser = parse_bind)]
    pub bind: Option<GatewayBind>,
    /// `token` (clients present the gateway token) or `none` (loopback only).
    #[arg(long, value_enum, default_value_t = GatewayAuth::Token)]
    pub auth: GatewayAuth,
}

#[derive(Debug, Args, Clone)]
pub struct GatewayRunArgs {
    #[command(flatten)]
    pub listen: ListenArgs,
    /// Set by `gateway start --daemon` on the process it detaches: start a new session,
    /// log to $PINCER_HOME/logs/gateway.log, never print the token.
    #[arg(long, hide = true)]
    pub detached: bool,
    /// Serve OpenClaw's Control UI from DIR at /control/: an installed openclaw npm
    /// package's dist/control-ui (default: gateway.controlUi.root in the config).
    #[arg(long = "control-ui", value_name = "DIR")]
    pub control_ui: Option<std::path::PathBuf>,
    /// lainclaw's run settings, over the config for this run.
    #[command(flatten)]
    pub turn: crate::gateway::run_settings::TurnArgs,
}

#[derive(Debug, Args, Clone)]
pub struct GatewayStartArgs {
    #[command(flatten)]
    pub listen: ListenArgs,
    /// Detach and run in the background; `pincer gateway status|stop` manage it.
    #[arg(long)]
    pub daemon: bool,
    /// Serve OpenClaw's Control UI from DIR at /control/ (as `gateway run --control-ui`).
    #[arg(long = "control-ui", value_name = "DIR")]
    pub control_ui: Option<std::path::PathBuf>,
    /// lainclaw's run settings, over the config for this run.
    #[command(flatten)]
    pub turn: crate::gateway::run_settings::TurnArgs,
}

/// How clients authenticate to the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GatewayAuth {
    /// The shared token ($PINCER_GATEWAY_TOKEN, else gateway.auth.token in the config,
    /// else $PINCER_HOME/gateway-token).
    Token,
    /// No authentication: allowed on a loopback address only.
    None,
}

impl GatewayAuth {
    pub fn as_arg(self) -> &'static str {
        match self {
            GatewayAuth::Token => "token",
            GatewayAuth::None => "none",
        }
    }
}

/// `--bind`: the config's parser, with a message in command-line words.
fn parse_bind(value: &str) -> Result<GatewayBind, String> {
    value.parse().map_err(|_| {
        format!("expected loopback, lan or an IP address (e.g. 192.168.1.5), not {value:?}")
    })
}

/// `pincer cron …`: OpenClaw's `openclaw cron`, through the running gateway (or on
/// `$PINCER_HOME/cron` directly while it is not running).
#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// Add a job: a schedule (--at, --every or --cron) and what to do (--message for an
    /// agent turn of its own, --system-event for a note to the main session).
    Add(Box<CronAddArgs>),
    /// The jobs, with their schedule, next and last run.
    List {
        /// Include disabled jobs.
        #[arg(long)]
        all: bool,
        /// Print JSON `{jobs: [...]}`.
        #[arg(long)]
        json: bool,
    },
    /// Change a job: only the given settings change.
    Edit(Box<CronEditArgs>),
    /// Remove a job (its run history stays).
    #[command(visible_alias = "rm")]
    Remove {
        /// Job id, or a unique prefix of it.
        id: String,
        /// Print JSON `{ok, removed}`.
        #[arg(long)]
        json: bool,
    },
    /// Run a job now and wait until it finished (needs the running gateway).
    Run {
        /// Job id, or a unique prefix of it.
        id: String,
        /// Only if it is due (by default it runs whatever its schedule says).
        #[arg(long)]
        due: bool,
    },
    /// A job's past runs, oldest first.
    Runs {
        /// Job id, or a unique prefix of it.
        id: String,
        /// At most this many (the newest).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: u32,
        /// Print JSON `{entries: [...]}`.
        #[arg(long)]
        json: bool,
    },
    /// Whether cron is enabled, how many jobs there are and when the next one runs.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `cron add`: a schedule and a payload are required.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("schedule").required(true).args(["at", "every", "cron"])))]
#[command(group(ArgGroup::new("what").required(true).args(["message", "system_event"])))]
pub struct CronAddArgs {
    #[command(flatten)]
    pub job: CronJobArgs,
    /// Create it disabled.
    #[arg(long)]
    pub disabled: bool,
    /// Print the job as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cron edit <id>`: every setting optional.
#[derive(Debug, Args)]
pub struct CronEditArgs {
    /// Job id, or a unique prefix of it.
    pub id: String,
    #[command(flatten)]
    pub job: CronJobArgs,
    /// Enable the job.
    #[arg(long, conflicts_with = "disable")]
    pub enable: bool,
    /// Disable the job (it stays, but does not run).
    #[arg(long)]
    pub disable: bool,
    /// Print the job as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The settings of a job, shared by `cron add` and `cron edit`.
#[derive(Debug, Args, Clone, Default)]
pub struct CronJobArgs {
    /// The job's name (default: the start of its text).
    #[arg(long)]
    pub name: Option<String>,
    /// Once, at an ISO 8601 time (`2026-05-01T09:00:00+02:00`; without an offset UTC, or
    /// in --tz) or after a duration (`20m`, `2h`). Deleted after it ran, unless
    /// --keep-after-run.
    #[arg(long, value_name = "WHEN", conflicts_with_all = ["every", "cron"])]
    pub at: Option<String>,
    /// Repeatedly, every DUR: `30s`, `10m`, `1h`, `1h30m`, `2d`.
    #[arg(long, value_name = "DUR", conflicts_with = "cron")]
    pub every: Option<String>,
    /// On a cron expression: `0 9 * * 1-5` (5 fields, minute first; 6 with seconds).
    #[arg(long, value_name = "EXPR")]
    pub cron: Option<String>,
    /// IANA time zone of --cron (or of an --at time without offset), e.g. Europe/Berlin
    /// (default: this machine's).
    #[arg(long, value_name = "ZONE", conflicts_with = "every")]
    pub tz: Option<String>,
    /// An agent turn of its own (session `cron:<id>`) with this prompt.
    #[arg(long, value_name = "TEXT", conflicts_with = "system_event")]
    pub message: Option<String>,
    /// A system event with this text in the agent's main session, seen by its next turn.
    #[arg(long, value_name = "TEXT")]
    pub system_event: Option<String>,
    /// Where it runs: `main` (system events) or `isolated` (agent turns).
    #[arg(long, value_parser = ["main", "isolated"])]
    pub session: Option<String>,
    /// For a main-session job: wake the heartbeat `now` or wait for the `next-heartbeat`.
    #[arg(long, value_parser = ["now", "next-heartbeat"])]
    pub wake: Option<String>,
    /// The agent that runs it (default: the default agent).
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Send the reply to a channel (the default for agent turns).
    #[arg(long, conflicts_with_all = ["no_deliver", "webhook"])]
    pub announce: bool,
    /// Keep the reply in the job's session; send it nowhere.
    #[arg(long, conflicts_with_all = ["webhook", "channel", "to"])]
    pub no_deliver: bool,
    /// POST the result to this http(s) URL.
    #[arg(long, value_name = "URL", conflicts_with_all = ["channel", "to"])]
    pub webhook: Option<String>,
    /// The channel of the reply (`telegram`, …; `last`: where the user spoke last).
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Option<String>,
    /// The recipient on that channel.
    #[arg(long, value_name = "TARGET")]
    pub to: Option<String>,
    /// Delete the job after a successful run.
    #[arg(long, conflicts_with = "keep_after_run")]
    pub delete_after_run: bool,
    /// Keep the job after it ran (for --at jobs, which are deleted by default).
    #[arg(long)]
    pub keep_after_run: bool,
    /// Model of the agent turn (`provider/model`).
    #[arg(long)]
    pub model: Option<String>,
    /// Thinking level of the agent turn (`off`, `low`, `medium`, `high`, …).
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,
    /// Time limit of the agent turn, in seconds.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_seconds: Option<u64>,
}

/// `pincer pairing list|approve|revoke`: the DM pairing requests of the chat channels and
/// the approved senders (`$PINCER_HOME/credentials`).
#[derive(Debug, Subcommand)]
pub enum PairingCommand {
    /// Show the pending pairing requests (of every channel unless one is named).
    List {
        /// Only this channel's requests (`telegram`, …).
        #[arg(value_name = "CHANNEL")]
        channel: Option<String>,
        /// The channel, as a flag (the same as the argument).
        #[arg(long = "channel", value_name = "CHANNEL", conflicts_with = "channel")]
        channel_flag: Option<String>,
        /// Only the requests that reached this bot account.
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
        /// Print JSON `{channel, requests: [...]}`.
        #[arg(long)]
        json: bool,
    },
    /// Let the sender of a pending request in (by the code the bot sent them).
    #[command(allow_missing_positional = true)]
    Approve {
        /// The channel (default: the only configured one).
        #[arg(value_name = "CHANNEL")]
        channel: Option<String>,
        /// The pairing code (any case).
        #[arg(value_name = "CODE")]
        code: String,
        /// The channel, as a flag (the same as the argument).
        #[arg(long = "channel", value_name = "CHANNEL", conflicts_with = "channel")]
        channel_flag: Option<String>,
        /// Only a request that reached this bot account.
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
    },
    /// Remove an approved sender from the allow-from list.
    #[command(allow_missing_positional = true)]
    Revoke {
        /// The channel (default: the only configured one).
        #[arg(value_name = "CHANNEL")]
        channel: Option<String>,
        /// The sender id to remove (a `<channel>:` prefix is ignored).
        #[arg(value_name = "ENTRY")]
        entry: String,
        /// The channel, as a flag (the same as the argument).
        #[arg(long = "channel", value_name = "CHANNEL", conflicts_with = "channel")]
        channel_flag: Option<String>,
        /// The allow-from list of this bot account (default: the channel-wide one).
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
    },
}

/// The flags of `pincer rpc`: pi's, as pi-gateway passes them to `pi --mode rpc`.
#[derive(Debug, Clone, Args)]
pub struct RpcArgs {
    /// `rpc` (accepted so a worker command line can be pi's).
    #[arg(long)]
    pub mode: Option<String>,
    /// The agent whose configuration, workspace tools and skills the worker uses.
    #[arg(long)]
    pub agent: Option<String>,
    #[arg(long)]
    pub provider: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    /// off, minimal, low, medium, high or xhigh.
    #[arg(long)]
    pub thinking: Option<String>,
    /// Comma-separated tool names (pi's `bash` is Pincer's `exec`).
    #[arg(long)]
    pub tools: Option<String>,
    /// Replaces the system prompt.
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// Appended to the system prompt (repeatable).
    #[arg(long)]
    pub append_system_prompt: Vec<String>,
    /// pi's extension switches: Pincer has no extensions or prompt templates.
    #[arg(long)]
    pub no_extensions: bool,
    /// No skill discovery: only the `--skill` paths load (pi's `--no-skills`).
    #[arg(long)]
    pub no_skills: bool,
    #[arg(long)]
    pub no_prompt_templates: bool,
    #[arg(long)]
    pub extension: Vec<String>,
    /// One skill's directory or SKILL.md, or a directory of skills (repeatable).
    #[arg(long)]
    pub skill: Vec<String>,
    #[arg(long)]
    pub prompt_template: Vec<String>,
    /// Where session files go (default $PINCER_HOME/agents/<id>/rpc-sessions).
    #[arg(long)]
    pub session_dir: Option<std::path::PathBuf>,
    /// Resume the newest session of the session directory.
    #[arg(long = "continue", short = 'c')]
    pub continue_session: bool,
    /// Open this session file.
    #[arg(long)]
    pub session: Option<String>,
}
