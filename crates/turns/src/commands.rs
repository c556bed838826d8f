//! The chat commands Pincer understands at the start of a message (`/new`, `/compact`,
//! `/status`, `/usage`, `/model`, `/think`, `/verbose`, `/activation`, `/queue`, `/stop`, `/approve`, `/help`): one table that the parser ([`parse`]), the gateway
//! (which answers them for `chat.send` and every channel) and its `commands.list` read, and
//! `pincer chat` completes, so a client is never offered a command the parser does not
//! know, nor the parser taught one the list does not show.

use pincer_store::SessionEntry;

/// What a command does when a message starts with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandAction {
    /// Start a new session under the same key; text after the command is its first message.
    NewSession,
    /// Show the session, its model, thinking level and token counts.
    Status,
    /// List the commands.
    Help,
    /// Stop the session's running reply.
    Stop,
    /// Show or set the session's model.
    Model,
    /// Show or set the session's thinking level.
    Think,
    /// Show the session's token counts and cost so far.
    Usage,
    /// Show or set the session's queue mode.
    Queue,
    /// Show or set the session's verbose level.
    Verbose,
    /// Set whether a group's session answers every message or only mentions.
    Activation,
    /// Compact the session's transcript now.
    Compact,
    /// List, inspect, message or stop the session's sub-agents.
    Subagents,
    /// Answer a pending exec approval.
    Approve,
}

/// The group a command is shown under (OpenClaw's categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandCategory {
    Session,
    Status,
    Options,
}

impl CommandCategory {
    /// The category's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Status => "status",
            Self::Options => "options",
        }
    }
}

/// One chat command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatCommand {
    /// The name, without the slash.
    pub name: &'static str,
    /// Every way to type it, with the slash; the first is the one lists show.
    pub aliases: &'static [&'static str],
    /// How it is used, for `/help`.
    pub usage: &'static str,
    pub description: &'static str,
    pub category: CommandCategory,
    /// Whether text may follow the command; when it may not, a message that goes on after
    /// it is a message for the agent, not the command.
    pub accepts_args: bool,
    pub action: CommandAction,
}

/// Every chat command, in the order lists show them.
pub const COMMANDS: &[ChatCommand] = &[
    ChatCommand {
        name: "new",
        aliases: &["/new"],
        usage: "/new [message]",
        description: "Begin a fresh session; any text after it is the new session's first message.",
        category: CommandCategory::Session,
        accepts_args: true,
        action: CommandAction::NewSession,
    },
    ChatCommand {
        name: "reset",
        aliases: &["/reset"],
        usage: "/reset [message]",
        description: "Same as /new: archive this session and begin a fresh one.",
        category: CommandCategory::Session,
        accepts_args: true,
        action: CommandAction::NewSession,
    },
    ChatCommand {
        name: "compact",
        aliases: &["/compact"],
        usage: "/compact [instructions]",
        description: "Summarise this session's older conversation now (the latest is kept as it is); text after it says what the summary should keep.",
        category: CommandCategory::Session,
        accepts_args: true,
        action: CommandAction::Compact,
    },
    ChatCommand {
        name: "status",
        aliases: &["/status"],
        usage: "/status",
        description: "Show the session, its model, thinking level and token counts.",
        category: CommandCategory::Status,
        accepts_args: false,
        action: CommandAction::Status,
    },
    ChatCommand {
        name: "usage",
        aliases: &["/usage"],
        usage: "/usage",
        description: "Show this session's token counts and cost so far.",
        category: CommandCategory::Status,
        accepts_args: false,
        action: CommandAction::Usage,
    },
    ChatCommand {
        name: "model",
        aliases: &["/model", "/models"],
        usage: "/model [provider/model|default]",
        description: "Show this session's model, or set it (`default` goes back to the agent's).",
        category: CommandCategory::Options,
        accepts_args: true,
        action: CommandAction::Model,
    },
    ChatCommand {
        name: "think",
        aliases: &["/think", "/thinking", "/t"],
        usage: "/think [off|minimal|low|medium|high|xhigh|default]",
        description: "Show this session's thinking level, or set it.",
        category: CommandCategory::Options,
        accepts_args: true,
        action: CommandAction::Think,
    },
    ChatCommand {
        name: "verbose",
        aliases: &["/verbose", "/v"],
        usage: "/verbose [on|off|default]",
        description: "Show this session's verbose level, or set it.",
        category: CommandCategory::Options,
        accepts_args: true,
        action: CommandAction::Verbose,
    },
    ChatCommand {
        name: "activation",
        aliases: &["/activation"],
        usage: "/activation mention|always",
        description: "In a group: answer only when mentioned, or every message.",
        category: CommandCategory::Options,
        accepts_args: true,
        action: CommandAction::Activation,
    },
    ChatCommand {
        name: "queue",
        aliases: &["/queue"],
        usage: "/queue [steer|followup|collect|interrupt|default]",
        description: "Show how this session takes a message while it is busy, or set it.",
        category: CommandCategory::Options,
        accepts_args: true,
        action: CommandAction::Queue,
    },
    ChatCommand {
        name: "stop",
        aliases: &["/stop", "/abort"],
        usage: "/stop",
        description: "Stop the session's running reply.",
        category: CommandCategory::Session,
        accepts_args: false,
        action: CommandAction::Stop,
    },
    ChatCommand {
        name: "subagents",
        aliases: &["/subagents"],
        usage: "/subagents [list|info|log|send|stop] [#n|all] [message]",
        description: "This session's background sub-agents: list them, show one, read its log, \
            send it a message or stop it.",
        category: CommandCategory::Session,
        accepts_args: true,
        action: CommandAction::Subagents,
    },
    ChatCommand {
        name: "approve",
        aliases: &["/approve"],
        usage: "/approve <id> allow-once|allow-always|deny",
        description: "Answer a command waiting for your approval (tools.exec.ask).",
        category: CommandCategory::Session,
        accepts_args: true,
        action: CommandAction::Approve,
    },
    ChatCommand {
        name: "help",
        aliases: &["/help", "/commands"],
        usage: "/help",
        description: "Show the chat commands.",
        category: CommandCategory::Status,
        accepts_args: false,
        action: CommandAction::Help,
    },
];

/// A value a command sets: a new value, or back to the configured default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    Value(String),
    Default,
}

/// A command a message is, with what it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/new` or `/reset`, optionally followed by a first message for the new session.
    NewSession {
        rest: Option<String>,
    },
    Status,
    Help,
    Stop,
    /// Show the model (`None`) or set it.
    Model(Option<Setting>),
    /// Show the thinking level (`None`) or set it.
    Think(Option<Setting>),
    /// Show the token counts and cost.
    Usage,
    /// Show the queue mode (`None`) or set it.
    Queue(Option<Setting>),
    /// Show the verbose level (`None`) or set it.
    Verbose(Option<Setting>),
    /// Set a group session's activation (`None`: how to use it).
    Activation(Option<Setting>),
    /// Compact the transcript, with what the summary should keep if any was given.
    Compact {
        instructions: Option<String>,
    },
    /// `/subagents` with what followed it (`list` when nothing did).
    Subagents {
        args: Option<String>,
    },
    /// `/approve` with what followed it (`<id> <decision>`).
    Approve {
        args: Option<String>,
    },
}

impl Command {
    /// Whether the command changes the session everyone in the chat shares (starts it over,
    /// stops its reply, compacts it, sets its model, thinking, verbose level or queue mode)
    /// rather than only showing something.
    /// In group chats only the channel's owners may use these.
    pub fn changes_session(&self) -> bool {
        match self {
            Self::NewSession { .. } | Self::Stop | Self::Compact { .. } | Self::Approve { .. } => {
                true
            }
            Self::Model(setting)
            | Self::Think(setting)
            | Self::Queue(setting)
            | Self::Verbose(setting)
            | Self::Activation(setting) => setting.is_some(),
            Self::Subagents { args } => args.as_deref().is_some_and(|a| {
                let verb = a.split_whitespace().next().unwrap_or_default();
                matches!(verb, "stop" | "kill" | "send" | "steer")
            }),
            Self::Status | Self::Help | Self::Usage => false,
        }
    }
}

/// The command `text` starts with (an alias followed by white space or the end, after
/// leading white space), and the rest of the text, trimmed.
pub fn parse_command(text: &str) -> Option<(&'static ChatCommand, &str)> {
    let trimmed = text.trim();
    COMMANDS.iter().find_map(|command| {
        command.aliases.iter().find_map(|alias| {
            let rest = trimmed.strip_prefix(alias)?;
            (rest.is_empty() || rest.starts_with(char::is_whitespace))
                .then(|| (command, rest.trim()))
        })
    })
}

/// The command `text` is, if it is one. A command that takes nothing but is followed by
/// text (`/status please`) is not: the message goes to the agent as written.
pub fn parse(text: &str) -> Option<Command> {
    let (command, rest) = parse_command(text)?;
    if !command.accepts_args && !rest.is_empty() {
        return None;
    }
    let arg = (!rest.is_empty()).then(|| rest.to_owned());
    let setting = || {
        arg.clone().map(|a| match a.as_str() {
            "default" | "reset" => Setting::Default,
            _ => Setting::Value(a),
        })
    };
    Some(match command.action {
        CommandAction::NewSession => Command::NewSession { rest: arg.clone() },
        CommandAction::Status => Command::Status,
        CommandAction::Help => Command::Help,
        CommandAction::Stop => Command::Stop,
        CommandAction::Model => Command::Model(setting()),
        CommandAction::Think => Command::Think(setting()),
        CommandAction::Usage => Command::Usage,
        CommandAction::Queue => Command::Queue(setting()),
        CommandAction::Verbose => Command::Verbose(setting()),
        CommandAction::Activation => Command::Activation(setting()),
        CommandAction::Compact => Command::Compact {
            instructions: arg.clone(),
        },
        CommandAction::Subagents => Command::Subagents { args: arg.clone() },
        CommandAction::Approve => Command::Approve { args: arg.clone() },
    })
}

/// `/help`'s lines: each command's usage and what it does.
pub fn help_lines() -> Vec<String> {
    COMMANDS
        .iter()
        .map(|c| format!("{:<20} {}", c.usage, c.description))
        .collect()
}

/// `/status`'s lines: the session (`entry` is `None` before its first message), the model
/// and thinking level its next turn uses, its token counts, and what runs it (`runs`).
pub fn status_lines(
    key: &str,
    entry: Option<&SessionEntry>,
    model: &str,
    thinking: &str,
    runs: &str,
) -> Vec<String> {
    let tokens = match entry {
        Some(SessionEntry {
            input_tokens: Some(input),
            output_tokens: Some(output),
            total_tokens,
            ..
        }) => {
            let total = total_tokens.unwrap_or(input + output);
            format!("{input} in, {output} out, {total} in context")
        }
        _ => "none yet".to_owned(),
    };
    vec![
        format!("session:  {key}"),
        format!(
            "id:       {}",
            entry.map_or("(starts with the first message)", |e| &e.session_id)
        ),
        format!("model:    {model}"),
        format!("thinking: {thinking}"),
        format!("tokens:   {tokens}"),
        format!("runs:     {runs}"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_showing_commands_leave_the_session_alone() {
        let changes = |text: &str| parse(text).map(|c| c.changes_session());
        for text in [
            "/new",
            "/reset hi",
            "/stop",
            "/model openai/gpt-5",
            "/think low",
            "/compact",
            "/compact keep the plan",
            "/queue collect",
            "/verbose on",
            "/approve abc allow-once",
        ] {
            assert_eq!(changes(text), Some(true), "{text}");
        }
        for text in [
            "/status", "/help", "/model", "/think", "/usage", "/queue", "/verbose",
        ] {
            assert_eq!(changes(text), Some(false), "{text}");
        }
    }

    #[test]
    fn commands_are_read_from_the_table() {
        fn name(text: &str) -> Option<(&'static str, &str)> {
            parse_command(text).map(|(c, rest)| (c.name, rest))
        }
        assert_eq!(name("/new"), Some(("new", "")));
        assert_eq!(name("  /reset  hi there "), Some(("reset", "hi there")));
        assert_eq!(name("/models x"), Some(("model", "x")));
        assert_eq!(name("/newer"), None);
        assert_eq!(name("say /new"), None);
    }

    #[test]
    fn messages_parse_into_commands_with_their_arguments() {
        let value = |v: &str| Some(Setting::Value(v.into()));
        let cases: &[(&str, Option<Command>)] = &[
            ("/new", Some(Command::NewSession { rest: None })),
            (
                "/reset hi there",
                Some(Command::NewSession {
                    rest: Some("hi there".into()),
                }),
            ),
            (" /status ", Some(Command::Status)),
            ("/status please", None),
            ("/commands", Some(Command::Help)),
            ("/abort", Some(Command::Stop)),
            ("/stop now", None),
            ("/model", Some(Command::Model(None))),
            (
                "/model  mock/backup ",
                Some(Command::Model(value("mock/backup"))),
            ),
            (
                "/model default",
                Some(Command::Model(Some(Setting::Default))),
            ),
            ("/think high", Some(Command::Think(value("high")))),
            ("/t reset", Some(Command::Think(Some(Setting::Default)))),
            ("/usage", Some(Command::Usage)),
            ("/usage now", None),
            ("/queue", Some(Command::Queue(None))),
            ("/queue collect", Some(Command::Queue(value("collect")))),
            ("/verbose on", Some(Command::Verbose(value("on")))),
            ("/v default", Some(Command::Verbose(Some(Setting::Default)))),
            ("/compact", Some(Command::Compact { instructions: None })),
            (
                "/compact  keep the plan ",
                Some(Command::Compact {
                    instructions: Some("keep the plan".into()),
                }),
            ),
            ("/compacted", None),
            ("/etc/hosts?", None),
            ("hello /new", None),
        ];
        for (text, want) in cases {
            assert_eq!(&parse(text), want, "{text:?}");
        }
    }

    #[test]
    fn every_alias_starts_with_a_slash_and_names_are_unique() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
        let mut aliases: Vec<&str> = COMMANDS.iter().flat_map(|c| c.aliases.to_vec()).collect();
        aliases.sort_unstable();
        let count = aliases.len();
        aliases.dedup();
        assert_eq!(aliases.len(), count, "an alias names two commands");
        for c in COMMANDS {
            assert!(c.aliases.iter().all(|a| a.starts_with('/')), "{}", c.name);
            assert!(c.usage.starts_with(c.aliases[0]), "{}", c.name);
        }
    }

    #[test]
    fn status_shows_tokens_once_the_session_has_them() {
        let entry: SessionEntry = serde_json::from_value(serde_json::json!({
            "sessionId": "s1", "createdAt": 1, "updatedAt": 1, "inputTokens": 10, "outputTokens": 5
        }))
        .unwrap();
        assert_eq!(
            status_lines("agent:main:main", Some(&entry), "mock/m", "low", "idle"),
            [
                "session:  agent:main:main",
                "id:       s1",
                "model:    mock/m",
                "thinking: low",
                "tokens:   10 in, 5 out, 15 in context",
                "runs:     idle",
            ]
        );
        assert_eq!(
            status_lines("k", None, "mock/m", "default", "idle")[1..5],
            [
                "id:       (starts with the first message)",
                "model:    mock/m",
                "thinking: default",
                "tokens:   none yet",
            ]
        );
    }
}
